//! What a run asks a model and what it answers: the one trait every model
//! backend implements (the scenario's scripted replies in `scripted`, the
//! synthetic stand-in, the offline default, in `synthetic`, OpenAI-compatible
//! endpoints in `openai`), and the names they are chosen by.

use std::future::Future;
use std::pin::Pin;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::error::Error;

/// What the runner asks the model for one turn.
#[derive(Debug, Clone)]
pub struct TurnRequest {
    pub agent: String,
    pub system_prompt: String,
    /// The envelope that triggered the turn (§1.5 c).
    pub input: String,
    /// The tools offered to the model.
    pub tools: Vec<ToolSpec>,
    /// The registry model the reply must satisfy.
    pub response_model: Option<String>,
    pub turn: u32,
    /// Set when a task-batch worker runs this turn (§6.4).
    pub task_id: Option<String>,
    /// The task's `kind`, when it has one.
    pub task_kind: Option<String>,
    /// This turn's earlier tool calls and their results, for models that
    /// answer after seeing them.
    pub transcript: Vec<ToolExchange>,
}

/// A tool as a model sees it: a function definition.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    /// JSON Schema of the arguments (from the Python signature).
    pub parameters: Value,
}

/// One tool call of this turn and what it returned.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolExchange {
    /// Which model round asked for it (calls of one round go together).
    pub round: u32,
    pub call_id: String,
    pub name: String,
    pub arguments: Value,
    /// The result as the model reads it (JSON text, or the error).
    pub result: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCallSpec {
    /// The model's id for the call, when it gives one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    pub name: String,
    #[serde(default = "empty_object")]
    pub arguments: Value,
}

fn empty_object() -> Value {
    json!({})
}

/// The model's answer for one turn: tool calls in emission order, then the
/// final body.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelReply {
    pub body: Value,
    pub tool_calls: Vec<ToolCallSpec>,
    pub synthetic: bool,
    /// The model wants the tool results before its final answer (a live
    /// model); scripted replies carry their final body with their calls.
    pub needs_tool_results: bool,
}

pub type BackendFuture<'a> = Pin<Box<dyn Future<Output = Result<ModelReply, Error>> + Send + 'a>>;

/// A model. `respond` takes `&self` so that the tasks of a batch can ask
/// it concurrently.
pub trait ModelBackend: Send + Sync {
    /// `scenario`, `synthetic` or `openai`.
    fn name(&self) -> &'static str;
    /// The reply for one turn; an error fails the turn as a model error would.
    fn respond<'a>(&'a self, request: &'a TurnRequest) -> BackendFuture<'a>;
    /// What must be kept to continue a paused run in another process.
    fn state(&self) -> Value {
        Value::Null
    }
    fn restore(&self, _state: &Value) {}
}

/// A model backend, by the name settings and flags use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BackendKind {
    /// The scenario file's scripted replies.
    Scenario,
    /// The offline stand-in that steers a run toward completion.
    Synthetic,
    /// An OpenAI-compatible endpoint.
    Openai,
}

impl BackendKind {
    pub const ALL: [BackendKind; 3] = [
        BackendKind::Scenario,
        BackendKind::Synthetic,
        BackendKind::Openai,
    ];

    pub fn name(self) -> &'static str {
        match self {
            BackendKind::Scenario => "scenario",
            BackendKind::Synthetic => "synthetic",
            BackendKind::Openai => "openai",
        }
    }

    pub fn names() -> [&'static str; 3] {
        BackendKind::ALL.map(BackendKind::name)
    }

    pub fn parse(name: &str) -> Result<BackendKind, String> {
        BackendKind::ALL
            .into_iter()
            .find(|kind| kind.name() == name)
            .ok_or_else(|| {
                format!(
                    "unknown run backend `{name}` ({})",
                    BackendKind::names().join(", ")
                )
            })
    }
}
