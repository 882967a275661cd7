//! mzk's analyzer: Mozaiks workflow bundles → a typed model and diagnostics.
//!
//! Layers, data flowing one way: [`syntax`] (spanned YAML) → [`schema`] (one
//! declarative description per file kind) → [`model`] (the typed `Bundle`) →
//! [`checks`] (cross-file rules), all reading files through [`base::fs`];
//! [`analysis::analyze`] runs them with the settings and the caller's
//! [`cache`]. See ARCHITECTURE.md.

pub mod analysis;
pub mod base;
pub mod cache;
pub mod checks;
pub mod config;
pub mod diagnostics;
pub mod graph;
pub mod host;
pub mod ide;
pub mod model;
pub mod prompt;
pub mod rules;
pub mod schema;
pub mod suppression;
pub mod syntax;
pub mod tokens;
pub mod workspace;

pub use analysis::{analyze, analyze_bundle, analyze_bundles, discover_bundles, Analysis};
pub use base::fs::{FileSystem, MemoryFs, RealFs};
pub use cache::{AnalysisCache, Memos};
pub use config::{Config, ConfigError, Overrides};
pub use host::{AnalysisHost, ConfigSource, OnConfigError};
