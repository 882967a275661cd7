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

/// A byte range in one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct TextRange {
    pub start: u32,
    pub end: u32,
}

impl TextRange {
    pub fn new(start: u32, end: u32) -> TextRange {
        TextRange { start, end }
    }

    pub fn empty(at: u32) -> TextRange {
        TextRange { start: at, end: at }
    }

    pub fn len(self) -> u32 {
        self.end - self.start
    }

    pub fn is_empty(self) -> bool {
        self.start == self.end
    }

    pub fn cover(self, other: TextRange) -> TextRange {
        TextRange::new(self.start.min(other.start), self.end.max(other.end))
    }
}
