//! The syntax layer: text → spanned YAML tree (and, later, Python symbols).

pub mod expression;
pub mod line_index;
pub mod python;
pub mod python_effects;
pub mod python_keys;
pub(crate) mod python_strings;
pub mod python_validity;
pub mod scalar;
pub mod yaml;

pub use line_index::{ColumnUnit, LineCol, LineIndex};
pub use scalar::{Integer, ScalarStyle, Value};
pub use yaml::{parse, Entry, Node, NodeKind, Scalar, YamlDocument};
