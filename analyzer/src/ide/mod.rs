//! Editor features as plain data over an [`Analysis`]: definition, references,
//! hover, outline, rename, completion, fixes, folding, selection ranges,
//! document links, semantic tokens, the call hierarchy and the graph view. The language server only
//! converts these to protocol types. One module per feature; navigation lives
//! here because the others build on it.

mod call_hierarchy;
mod completion;
mod fixes;
#[cfg(test)]
pub(crate) mod fixture;
mod folding;
pub mod graph_view;
mod hover;
mod links;
mod outline;
mod rename;
mod selection;
mod semantic;
#[cfg(test)]
pub(crate) mod tests;
#[cfg(test)]
mod tests_layout;

pub use call_hierarchy::{
    incoming_calls, item as call_item, outgoing_calls, prepare_call_hierarchy, Call, CallItem,
};
pub use completion::{completions, CompletionItem, CompletionKind};
pub use fixes::{fix_all, fixes, non_overlapping, FileFix, FixAll};
pub use folding::{folding_ranges, Fold};
pub use hover::hover;
pub use links::{document_links, Link};
pub use outline::{code_lenses, document_symbols, Lens, LensAction, OutlineItem};
pub use rename::{prepare_rename, rename};
pub use selection::selection_ranges;
pub use semantic::{semantic_tokens, SemanticToken, TokenKind};

use crate::analysis::Analysis;
use crate::base::{FileId, TextRange};
use crate::model::symbols::{DefId, SymbolKind};

/// A range in one file of the bundle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileRange {
    pub file: FileId,
    pub range: TextRange,
}

/// `offset` moved back to the start of the character it falls in, and
/// clamped to the file: the features slice the text at it, and an offset
/// from a caller that counted differently must not make them panic.
pub(crate) fn char_offset(analysis: &Analysis, file: FileId, offset: u32) -> u32 {
    let Some(text) = analysis.bundle.file(file).map(|f| f.text.as_ref()) else {
        return offset;
    };
    let mut at = (offset as usize).min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at as u32
}

/// The definition of the symbol under the cursor.
pub fn definition(analysis: &Analysis, file: FileId, offset: u32) -> Option<FileRange> {
    let offset = char_offset(analysis, file, offset);
    let id = analysis.symbols.at(file, offset)?;
    let def = analysis.symbols.definition(id);
    // A tool's name in tools.yaml is also a reference to its Python function.
    if def.kind == SymbolKind::Tool
        || def.kind == SymbolKind::LifecycleTool
        || def.kind == SymbolKind::Middleware
    {
        if let Some(python) = bound_function(analysis, file, offset) {
            return Some(python);
        }
    }
    Some(FileRange {
        file: def.name.file,
        range: def.name.range,
    })
}

/// The Python `def` a `function:` value under the cursor binds to.
fn bound_function(analysis: &Analysis, file: FileId, offset: u32) -> Option<FileRange> {
    let r = analysis.symbols.references.iter().find(|r| {
        r.kind == SymbolKind::PythonFunction
            && r.name.file == file
            && r.name.range.start <= offset
            && offset <= r.name.range.end
    })?;
    match r.resolution {
        crate::model::symbols::Resolution::Definition(id) => {
            let d = analysis.symbols.definition(id);
            Some(FileRange {
                file: d.name.file,
                range: d.name.range,
            })
        }
        _ => None,
    }
}

/// Every place that names the symbol under the cursor.
pub fn references(
    analysis: &Analysis,
    file: FileId,
    offset: u32,
    include_declaration: bool,
) -> Vec<FileRange> {
    let Some(id) = analysis.symbols.at(file, offset) else {
        return Vec::new();
    };
    let mut out: Vec<FileRange> = Vec::new();
    if include_declaration {
        let d = analysis.symbols.definition(id);
        out.push(FileRange {
            file: d.name.file,
            range: d.name.range,
        });
    }
    out.extend(analysis.symbols.references_to(id).map(|r| FileRange {
        file: r.name.file,
        range: r.name.range,
    }));
    out
}

/// The name under the cursor (the definition or the reference).
pub(crate) fn hovered_range(
    analysis: &Analysis,
    id: DefId,
    file: FileId,
    offset: u32,
) -> Option<TextRange> {
    let inside = |f: FileId, r: TextRange| f == file && r.start <= offset && offset <= r.end;
    let def = analysis.symbols.definition(id);
    if inside(def.name.file, def.name.range) {
        return Some(def.name.range);
    }
    analysis
        .symbols
        .references_to(id)
        .find(|r| inside(r.name.file, r.name.range))
        .map(|r| r.name.range)
}

/// An edit replacing a range with new text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextEdit {
    pub file: FileId,
    pub range: TextRange,
    pub new_text: String,
}

/// The range of `word` within `range` of a file: the range itself when it
/// holds exactly the word, else the word's first whole-word occurrence in it.
pub(crate) fn word_range(
    analysis: &Analysis,
    file: FileId,
    range: TextRange,
    word: &str,
) -> Option<TextRange> {
    let text = &analysis.bundle.file(file)?.text;
    let raw = text.get(range.start as usize..range.end as usize)?;
    let at = if raw == word {
        0
    } else {
        whole_word(raw, word)?
    };
    let start = range.start + at as u32;
    Some(TextRange::new(start, start + word.len() as u32))
}

/// The first whole-word occurrence of `word` in `text`.
pub(crate) fn whole_word(text: &str, word: &str) -> Option<usize> {
    let is_word = |c: char| c.is_alphanumeric() || c == '_';
    text.match_indices(word).map(|(i, _)| i).find(|&i| {
        !text[..i].chars().next_back().is_some_and(is_word)
            && !text[i + word.len()..].chars().next().is_some_and(is_word)
    })
}
