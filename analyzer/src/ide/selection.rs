//! Selection ranges: from the cursor outwards, the scalar (a key or a value),
//! the entry that holds it, the mapping (a list item), the list, the entry of
//! that list, and so on up to the whole file.

use crate::analysis::Analysis;
use crate::base::{FileId, TextRange};
use crate::syntax::{self, Node, NodeKind};

/// The ranges around `offset`, innermost first, each strictly larger than
/// the one before; the last is the whole file.
pub fn selection_ranges(analysis: &Analysis, file: FileId, offset: u32) -> Vec<TextRange> {
    let Some(f) = analysis.bundle.file(file) else {
        return Vec::new();
    };
    let whole = TextRange::new(0, f.text.len() as u32);
    let offset = super::char_offset(analysis, file, offset);
    let mut outer_first = vec![whole];
    if f.kind.is_some() {
        let document = syntax::parse(&f.text, file, &mut Vec::new());
        if let Some(root) = &document.root {
            descend(root, offset, &mut outer_first);
        }
    }
    let mut ranges: Vec<TextRange> = Vec::with_capacity(outer_first.len());
    for range in outer_first.into_iter().rev() {
        // Each range must contain the one before (an alias' node lies
        // elsewhere in the file; equal ranges say nothing new).
        let grows = ranges.last().is_none_or(|inner: &TextRange| {
            range.start <= inner.start && inner.end <= range.end && range != *inner
        });
        if grows {
            ranges.push(range);
        }
    }
    ranges
}

fn contains(range: TextRange, offset: u32) -> bool {
    range.start <= offset && offset <= range.end
}

/// Pushes the ranges of the nodes around `offset` below `node`, outer first.
fn descend(node: &Node, offset: u32, out: &mut Vec<TextRange>) {
    let mut node = node;
    loop {
        if !contains(node.range, offset) {
            return;
        }
        out.push(node.range);
        match &node.kind {
            NodeKind::Map(entries) => {
                let Some(entry) = entries.iter().find(|e| {
                    contains(
                        TextRange::new(e.key.range.start, e.value.range.end.max(e.key.range.end)),
                        offset,
                    )
                }) else {
                    return;
                };
                out.push(TextRange::new(
                    entry.key.range.start,
                    entry.value.range.end.max(entry.key.range.end),
                ));
                if contains(entry.key.range, offset) && !contains(entry.value.range, offset) {
                    out.push(entry.key.range);
                    return;
                }
                node = &entry.value;
            }
            NodeKind::Seq(items) => match items.iter().find(|i| contains(i.range, offset)) {
                Some(item) => node = item,
                None => return,
            },
            NodeKind::Scalar(_) | NodeKind::Invalid => return,
        }
    }
}
