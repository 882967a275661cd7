//! Fixes: a diagnostic's [`Fix`] intents resolved to text edits against the
//! bundle's current text. Edits touch only the lines they add or remove, in
//! the layout (indentation, list style) the file already uses; when the file's
//! layout does not allow a clean edit (a flow collection, a key sharing its
//! line with a list dash) no fix is offered rather than a clumsy one.

use std::sync::Arc;

use super::{word_range, TextEdit};
use crate::analysis::Analysis;
use crate::base::{memo, FileId, FileKind, TextRange};
use crate::diagnostics::{Applicability, Diagnostic, Fix};
use crate::syntax::{self, Node, YamlDocument};

/// A fix ready to apply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileFix {
    pub title: String,
    pub applicability: Applicability,
    /// Non-overlapping edits, possibly in several files of the bundle.
    pub edits: Vec<TextEdit>,
}

/// The fixes of a diagnostic that apply to the current text, most likely first.
pub fn fixes(analysis: &Analysis, diagnostic: &Diagnostic) -> Vec<FileFix> {
    diagnostic
        .fixes
        .iter()
        .filter_map(|fix| {
            let edits = edits(analysis, diagnostic, fix)?;
            // A file that could not be read to its end is never edited: the
            // analysis behind the fix saw only part of it.
            if edits.iter().any(|e| analysis.incomplete.contains(&e.file)) {
                return None;
            }
            Some(FileFix {
                title: fix.title(),
                applicability: fix.applicability(),
                edits,
            })
        })
        .collect()
}

/// What "fix all" applies — `mzk check --fix` and the editor's
/// `source.fixAll.mzk` alike.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FixAll {
    /// How many diagnostics a fix was chosen for.
    pub fixes: usize,
    /// The chosen fixes' edits, as [`non_overlapping`] keeps them.
    pub edits: Vec<TextEdit>,
}

/// The first fix of each of `diagnostics` that the applicability allows
/// (safe fixes only unless `unsafe_fixes`), each edit once, never two that
/// overlap: the later waits for the next pass.
pub fn fix_all<'a>(
    analysis: &Analysis,
    diagnostics: impl IntoIterator<Item = &'a Diagnostic>,
    unsafe_fixes: bool,
) -> FixAll {
    let chosen: Vec<FileFix> = diagnostics
        .into_iter()
        .filter_map(|d| {
            fixes(analysis, d)
                .into_iter()
                .find(|f| unsafe_fixes || f.applicability == Applicability::Safe)
        })
        .collect();
    FixAll {
        fixes: chosen.len(),
        edits: non_overlapping(chosen.into_iter().flat_map(|f| f.edits)),
    }
}

/// Edits to apply together: sorted by file and position, duplicates (two
/// rules offering the same fix) once, and any edit overlapping an earlier
/// one dropped (it is offered again after the others are applied).
pub fn non_overlapping(edits: impl IntoIterator<Item = TextEdit>) -> Vec<TextEdit> {
    let mut edits: Vec<TextEdit> = edits.into_iter().collect();
    edits.sort_by_key(|e| (e.file, e.range.start, e.range.end));
    edits.dedup();
    let mut kept: Vec<TextEdit> = Vec::with_capacity(edits.len());
    for e in edits {
        let overlaps = kept.last().is_some_and(|last| {
            last.file == e.file
                && (e.range.start < last.range.end
                    // Two insertions at one point would interleave.
                    || (e.range.start == last.range.start && e.range.is_empty()))
        });
        if !overlaps {
            kept.push(e);
        }
    }
    kept
}

fn edits(analysis: &Analysis, diagnostic: &Diagnostic, fix: &Fix) -> Option<Vec<TextEdit>> {
    let edit = match fix {
        Fix::ReplaceWord {
            original,
            replacement,
        } => TextEdit {
            file: diagnostic.file,
            range: word_range(analysis, diagnostic.file, diagnostic.range, original)?,
            new_text: replacement.clone(),
        },
        Fix::RemoveEntry { range, .. } => remove_entry(analysis, diagnostic.file, *range)?,
        Fix::DeclareVariable {
            name,
            ty,
            description,
        } => declare_variable(analysis, name, ty, description)?,
        Fix::AddFallback { source } => add_fallback(analysis, source)?,
        Fix::RemoveSuppression { range, replacement } => {
            remove_suppression(analysis, diagnostic.file, *range, replacement.as_deref())?
        }
    };
    Some(vec![edit])
}

/// Deletes the lines from the key's line to the end of the value's line,
/// when the key starts its line and only a comment follows the value.
fn remove_entry(analysis: &Analysis, file: FileId, range: TextRange) -> Option<TextEdit> {
    let text = &analysis.bundle.file(file)?.text;
    let start = range.start as usize;
    let line_start = line_start(text, start);
    if !text[line_start..start].chars().all(|c| c == ' ') {
        return None;
    }
    let end = after_line(text, range.end as usize)?;
    Some(TextEdit {
        file,
        range: TextRange::new(line_start as u32, end as u32),
        new_text: String::new(),
    })
}

/// Rewrites a suppression comment, or removes it: with its line when the
/// comment is alone on it, else with the spaces before it.
fn remove_suppression(
    analysis: &Analysis,
    file: FileId,
    range: TextRange,
    replacement: Option<&str>,
) -> Option<TextEdit> {
    let text = &analysis.bundle.file(file)?.text;
    if let Some(replacement) = replacement {
        return Some(TextEdit {
            file,
            range,
            new_text: replacement.to_string(),
        });
    }
    let start = range.start as usize;
    let line_start = line_start(text, start);
    let before = &text[line_start..start];
    let range = if before.trim().is_empty() {
        let end = text[start..]
            .find('\n')
            .map_or(text.len(), |i| start + i + 1);
        TextRange::new(line_start as u32, end as u32)
    } else {
        let kept = before.trim_end().len();
        TextRange::new((line_start + kept) as u32, range.end)
    };
    Some(TextEdit {
        file,
        range,
        new_text: String::new(),
    })
}

/// The offset just past the line holding the node that ends at `end`, if
/// only spaces or a comment follow it on that line.
fn after_line(text: &str, end: usize) -> Option<usize> {
    if end > 0 && text.as_bytes().get(end - 1) == Some(&b'\n') {
        return Some(end);
    }
    let rest = &text[end..];
    let line_end = rest.find('\n').map_or(text.len(), |i| end + i + 1);
    let tail = text[end..line_end].trim();
    (tail.is_empty() || tail.starts_with('#')).then_some(line_end)
}

/// Where to insert new lines after a block node: past its last line, with a
/// newline first when the file does not end with one.
fn insertion_after(text: &str, node_end: usize) -> Option<(usize, &'static str)> {
    let at = after_line(text, node_end)?;
    Some(if at == text.len() && !text.ends_with('\n') {
        (at, "\n")
    } else {
        (at, "")
    })
}

/// A name that YAML reads back as the same plain string.
fn plain_name(name: &str) -> bool {
    name.chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn double_quoted(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// One bundle file's tree, parsed again or kept from an earlier fix.
fn parsed(analysis: &Analysis, kind: FileKind) -> Option<(FileId, &str, Arc<YamlDocument>)> {
    let file = analysis.bundle.file_of_kind(kind)?;
    // Trees hold ranges, not file ids: a text's tree serves every file.
    let document = analysis
        .memos
        .fix_trees
        .0
        .get_or(memo::key([file.text.as_ref()]), || {
            syntax::parse(&file.text, file.id, &mut Vec::new())
        });
    if document.failed {
        return None;
    }
    Some((file.id, file.text.as_ref(), document))
}

/// The offset where the line holding `offset` starts.
fn line_start(text: &str, offset: usize) -> usize {
    text[..offset].rfind('\n').map_or(0, |i| i + 1)
}

fn column(text: &str, offset: usize) -> usize {
    offset - line_start(text, offset)
}

/// Adds `name:` with a typed stub as the last entry of `definitions`.
/// Whether the file is written in flow style (`{...}`, as JSON): block lines
/// inserted into it would break it, so insertions are not offered there
/// (the schema-generated property tests found this).
fn flow_root(text: &str, root: Option<&Node>) -> bool {
    root.is_some_and(|node| {
        text.get(node.range.start as usize..)
            .is_some_and(|rest| rest.starts_with(['{', '[']))
    })
}

fn declare_variable(
    analysis: &Analysis,
    name: &str,
    ty: &str,
    description: &str,
) -> Option<TextEdit> {
    if !plain_name(name) {
        return None;
    }
    let (file, text, document) = parsed(analysis, FileKind::ContextVariables)?;
    let root = document.root.as_ref();
    let default = match ty {
        "boolean" => "false",
        "integer" => "0",
        "number" => "0.0",
        _ => "null",
    };
    let stub = |indent: usize, step: usize| {
        let (key, field) = (" ".repeat(indent), " ".repeat(indent + step));
        format!(
            "{key}{name}:\n{field}type: {ty}\n{field}description: {}\n{field}source: {{type: state, default: {default}}}\n",
            double_quoted(description)
        )
    };
    if flow_root(text, root) {
        return None;
    }
    let root_map = match root {
        None => &[][..],
        Some(node) => node
            .as_map()
            .or_else(|| node.is_null().then_some(&[][..]))?,
    };
    let Some(definitions) = root_map
        .iter()
        .find(|e| e.key.as_str() == Some("definitions"))
    else {
        // No `definitions` yet: append the section.
        let (at, newline) = insertion_after(text, text.len())?;
        return Some(TextEdit {
            file,
            range: TextRange::empty(at as u32),
            new_text: format!("{newline}definitions:\n{}", stub(2, 2)),
        });
    };
    let value = &definitions.value;
    match value.as_map() {
        Some(entries) if !entries.is_empty() => {
            if text[value.range.start as usize..].starts_with('{') {
                return None; // a flow mapping
            }
            let first = &entries[0];
            let indent = column(text, first.key.range.start as usize);
            let step = first
                .value
                .as_map()
                .and_then(|m| m.first())
                .map(|e| column(text, e.key.range.start as usize))
                .filter(|c| *c > indent)
                .map_or(2, |c| c - indent);
            let last = entries.last()?;
            let end = last.value.range.end.max(last.key.range.end) as usize;
            let (at, newline) = insertion_after(text, end)?;
            Some(TextEdit {
                file,
                range: TextRange::empty(at as u32),
                new_text: format!("{newline}{}", stub(indent, step)),
            })
        }
        _ if value.is_null() || value.as_map().is_some() => {
            // `definitions:` with nothing, `~` or `{}`: the value becomes a block.
            let key_end = definitions.key.range.end as usize;
            let end = (value.range.end as usize).max(key_end);
            let at = after_line(text, end)?;
            let written = text[key_end..at].trim_start_matches(':').trim();
            if !matches!(written, "" | "~" | "null" | "{}") {
                return None;
            }
            let indent = column(text, definitions.key.range.start as usize) + 2;
            Some(TextEdit {
                file,
                range: TextRange::new(key_end as u32, at as u32),
                new_text: format!(":\n{}", stub(indent, 2)),
            })
        }
        _ => None,
    }
}

/// Adds `source -> user` (after_turn) after the source's last rule, in the
/// layout of the rules around it.
fn add_fallback(analysis: &Analysis, source: &str) -> Option<TextEdit> {
    if !plain_name(source) {
        return None;
    }
    let (file, text, document) = parsed(analysis, FileKind::TransitionGraph)?;
    let root = document.root.as_ref();
    if flow_root(text, root) {
        return None;
    }
    let rule = |first: &str, rest: &str| {
        format!(
            "{first}source_agent: {source}\n{rest}target_agent: user\n{rest}transition_type: after_turn\n{rest}transition_target: RevertToUserTarget\n"
        )
    };
    let rules = root.and_then(|r| r.as_map()).and_then(|m| {
        m.iter()
            .find(|e| e.key.as_str() == Some("transition_rules"))
    });
    let Some(rules) = rules else {
        let (at, newline) = insertion_after(text, text.len())?;
        return Some(TextEdit {
            file,
            range: TextRange::empty(at as u32),
            new_text: format!("{newline}transition_rules:\n{}", rule("  - ", "    ")),
        });
    };
    let items = rules.value.as_seq()?;
    let anchor = items
        .iter()
        .rev()
        .find(|item| item.get("source_agent").and_then(Node::as_str) == Some(source))
        .or_else(|| items.last())?;
    let start = anchor.range.start as usize;
    let line_start = line_start(text, start);
    let prefix = &text[line_start..start];
    // Only the block layout `<spaces>- key: value` is extended.
    if prefix.trim() != "-" || anchor.as_map().is_none() {
        return None;
    }
    let (at, newline) = insertion_after(text, anchor.range.end as usize)?;
    Some(TextEdit {
        file,
        range: TextRange::empty(at as u32),
        new_text: format!(
            "{newline}{}",
            rule(prefix, &" ".repeat(prefix.chars().count()))
        ),
    })
}
