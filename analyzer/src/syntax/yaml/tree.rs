//! The tree the builder makes: nodes with their byte ranges, PyYAML's
//! values, and Python's `str()`/`repr()` of them.

use crate::base::TextRange;
use crate::syntax::scalar::{ScalarStyle, Value};

#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub range: TextRange,
    pub kind: NodeKind,
}

#[derive(Debug, Clone, PartialEq)]
pub enum NodeKind {
    Scalar(Scalar),
    Seq(Vec<Node>),
    Map(Vec<Entry>),
    /// A value that could not be constructed; already reported, so later layers
    /// stay silent about it.
    Invalid,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Scalar {
    pub style: ScalarStyle,
    pub value: Value,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub key: Node,
    pub value: Node,
}

impl Node {
    pub fn as_map(&self) -> Option<&[Entry]> {
        match &self.kind {
            NodeKind::Map(entries) => Some(entries),
            _ => None,
        }
    }

    pub fn as_seq(&self) -> Option<&[Node]> {
        match &self.kind {
            NodeKind::Seq(items) => Some(items),
            _ => None,
        }
    }

    pub fn as_scalar(&self) -> Option<&Scalar> {
        match &self.kind {
            NodeKind::Scalar(s) => Some(s),
            _ => None,
        }
    }

    /// The string value of a string scalar.
    pub fn as_str(&self) -> Option<&str> {
        self.as_scalar().and_then(|s| s.value.as_str())
    }

    pub fn is_null(&self) -> bool {
        matches!(
            &self.kind,
            NodeKind::Scalar(Scalar {
                value: Value::Null,
                ..
            })
        )
    }

    /// Looks up a string key in a mapping; the last occurrence wins, as in PyYAML.
    pub fn get(&self, key: &str) -> Option<&Node> {
        self.entry(key).map(|e| &e.value)
    }

    pub fn entry(&self, key: &str) -> Option<&Entry> {
        self.as_map()?
            .iter()
            .rev()
            .find(|e| e.key.as_str() == Some(key))
    }

    /// A short description of what the node is, for messages.
    pub fn type_name(&self) -> &'static str {
        match &self.kind {
            NodeKind::Scalar(s) => s.value.type_name(),
            NodeKind::Seq(_) => "list",
            NodeKind::Map(_) => "mapping",
            NodeKind::Invalid => "invalid value",
        }
    }

    /// Collections nested in this node, itself included (0 for a scalar).
    /// Like every recursive pass over a tree, it relies on the nesting limit.
    pub(super) fn height(&self) -> usize {
        match &self.kind {
            NodeKind::Seq(items) => 1 + items.iter().map(Node::height).max().unwrap_or(0),
            NodeKind::Map(entries) => {
                1 + entries
                    .iter()
                    .map(|e| e.key.height().max(e.value.height()))
                    .max()
                    .unwrap_or(0)
            }
            _ => 0,
        }
    }

    pub(super) fn size(&self) -> usize {
        match &self.kind {
            NodeKind::Seq(items) => 1 + items.iter().map(Node::size).sum::<usize>(),
            NodeKind::Map(entries) => {
                1 + entries
                    .iter()
                    .map(|e| e.key.size() + e.value.size())
                    .sum::<usize>()
            }
            _ => 1,
        }
    }

    /// Python's `str()` of the value this node loads as (used by lax text fields).
    pub fn python_str(&self) -> String {
        match &self.kind {
            NodeKind::Scalar(s) => s.value.python_str(),
            _ => self.python_repr(),
        }
    }

    fn python_repr(&self) -> String {
        match &self.kind {
            NodeKind::Scalar(s) => s.value.python_repr(),
            NodeKind::Seq(items) => {
                let parts: Vec<String> = items.iter().map(Node::python_repr).collect();
                format!("[{}]", parts.join(", "))
            }
            NodeKind::Map(entries) => {
                let parts: Vec<String> = entries
                    .iter()
                    .map(|e| format!("{}: {}", e.key.python_repr(), e.value.python_repr()))
                    .collect();
                format!("{{{}}}", parts.join(", "))
            }
            NodeKind::Invalid => "None".into(),
        }
    }
}
