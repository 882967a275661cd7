//! Document links: the `file:` (or `filename:`) value of a tool, lifecycle
//! tool or middleware leads to the Python file it resolves to, as mozaiks
//! resolves it (the bundle, its `tools/`, the workflows root's `_shared/`).

use crate::analysis::Analysis;
use crate::base::{FileId, TextRange};
use crate::model::python::BindingTarget;

/// A range of a file that leads to another file of the bundle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Link {
    pub range: TextRange,
    pub target: FileId,
}

/// The links in `file`, in source order. Paths that resolve nowhere have no
/// link (their diagnostic says what was tried).
pub fn document_links(analysis: &Analysis, file: FileId) -> Vec<Link> {
    let mut links: Vec<Link> = analysis
        .bundle
        .bindings
        .iter()
        .filter_map(|binding| {
            let path = binding.path.as_ref().filter(|p| p.file == file)?;
            match binding.target {
                BindingTarget::File(target) => Some(Link {
                    range: path.range,
                    target,
                }),
                _ => None,
            }
        })
        .collect();
    links.sort_by_key(|l| (l.range.start, l.range.end));
    links.dedup();
    links
}
