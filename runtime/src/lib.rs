//! Runs a Mozaiks workflow bundle locally with mozaiks 0.2.0's semantics
//! (runtime-semantics.md): the turn loop, transitions, context authority,
//! tools in a Python worker, structured outputs, events and a persisted run
//! history. It consumes the analyzer's lowered [`mzk_analyzer::model::Bundle`]
//! and never re-reads the bundle's YAML.

pub mod backend;
pub mod batches;
pub mod choice;
pub mod compare;
pub mod context;
pub mod engine;
pub mod error;
pub mod events;
pub mod expr;
pub mod history;
pub mod mozaiks;
pub mod openai;
pub mod outputs;
pub mod python;
pub mod scenario;
pub mod scripted;
pub mod status;
pub mod suite;
pub mod synthetic;
pub mod value;

pub use engine::{Engine, EventSink, Recorder, RunOptions, RunState};
pub use error::Error;
pub use events::Event;
pub use mozaiks::MozaiksEngine;
pub use status::RunStatus;
