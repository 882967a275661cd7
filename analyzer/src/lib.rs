//! mzk's analyzer: Mozaiks workflow bundles → a typed model and diagnostics.
//!
//! Layers, data flowing one way: [`syntax`] (spanned YAML) → [`schema`] (one
//! declarative description per file kind) → [`model`] (the typed `Bundle`) →
//! [`checks`] (cross-file rules). See ARCHITECTURE.md.

pub mod diagnostics;
pub mod rules;
pub mod syntax;
pub mod schema;
pub mod analysis;
pub mod checks;
pub mod model;

pub use analysis::{analyze_bundle, discover_bundles, Analysis, FileSystem, RealFs};
