//! Folding ranges of a YAML file: every entry whose value spans several lines
//! (an agent, a rule, a prompt section, a `|` block scalar) and every list
//! item that does, whatever the layout (lists indented under their key or at
//! its column, flow collections written over several lines).

use crate::analysis::Analysis;
use crate::base::{FileId, TextRange};
use crate::syntax::{self, ColumnUnit, Node, NodeKind};

/// Lines `start_line..=end_line` (0-based) fold under the first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Fold {
    pub start_line: u32,
    pub end_line: u32,
}

/// The folds of a YAML file, sorted, each once.
pub fn folding_ranges(analysis: &Analysis, file: FileId) -> Vec<Fold> {
    let Some(f) = analysis.bundle.file(file) else {
        return Vec::new();
    };
    if f.kind.is_none() {
        return Vec::new();
    }
    let document = syntax::parse(&f.text, file, &mut Vec::new());
    let Some(root) = document.root else {
        return Vec::new();
    };
    let line_of = |offset: u32| {
        f.line_index
            .position(&f.text, offset, ColumnUnit::Char)
            .line
    };
    let mut folds = Vec::new();
    let mut add = |range: TextRange| {
        let end = content_end(&f.text, range);
        let (start_line, end_line) = (line_of(range.start), line_of(end));
        if start_line < end_line {
            folds.push(Fold {
                start_line,
                end_line,
            });
        }
    };
    // Aliases repeat their anchor's nodes (ranges included): those are
    // folded where they are written, and the sort below drops the repeats.
    let mut stack: Vec<&Node> = vec![&root];
    while let Some(node) = stack.pop() {
        match &node.kind {
            NodeKind::Map(entries) => {
                for e in entries {
                    add(TextRange::new(
                        e.key.range.start,
                        e.value.range.end.max(e.key.range.end),
                    ));
                    stack.push(&e.value);
                }
            }
            NodeKind::Seq(items) => {
                for item in items {
                    add(item.range);
                    stack.push(item);
                }
            }
            NodeKind::Scalar(_) | NodeKind::Invalid => {}
        }
    }
    folds.sort();
    folds.dedup();
    folds
}

/// The end of `range` without the line breaks and spaces a block scalar
/// keeps after its text, so a fold ends on the last line that shows.
fn content_end(text: &str, range: TextRange) -> u32 {
    let start = (range.start as usize).min(text.len());
    let mut end = (range.end as usize).clamp(start, text.len());
    while end > start && text.as_bytes()[end - 1].is_ascii_whitespace() {
        end -= 1;
    }
    end as u32
}
