//! YAML text → a tree where every key, value and item carries its byte range,
//! with PyYAML's (YAML 1.1, `safe_load`) reading of scalars, merge keys and
//! aliases, and every problem reported as a diagnostic instead of a panic.

mod builder;
mod errors;
#[cfg(test)]
mod tests;
mod tree;

use std::borrow::Cow;

use super::TextRange;
use crate::diagnostics::{Diagnostic, FileId};
use crate::limits::{MAX_FILE_BYTES, MAX_REWRITTEN_SCALARS};
use crate::rules::Rule;
use builder::{Builder, Stop};

pub use tree::{Entry, Node, NodeKind, Scalar};

/// The result of parsing one YAML file.
#[derive(Debug, Clone, PartialEq)]
pub struct YamlDocument {
    /// `None` for an empty document or when the file could not be parsed.
    pub root: Option<Node>,
    /// Set when the file failed to parse (the root is then unusable).
    pub failed: bool,
}

/// Parses YAML text. Problems are pushed to `diagnostics`; the function never
/// panics and its time is linear in the input for all practical purposes.
pub fn parse(text: &str, file: FileId, diagnostics: &mut Vec<Diagnostic>) -> YamlDocument {
    let failed = |diagnostics: &mut Vec<Diagnostic>, rule, range, message: String| {
        diagnostics.push(Diagnostic::new(rule, file, range, message));
        YamlDocument {
            root: None,
            failed: true,
        }
    };
    if text.len() > MAX_FILE_BYTES {
        return failed(
            diagnostics,
            Rule::FileTooLarge,
            TextRange::empty(0),
            format!(
                "file is {} bytes; mzk reads YAML files up to {} bytes. Split it or remove generated content",
                text.len(),
                MAX_FILE_BYTES
            ),
        );
    }
    // A BOM is skipped only at offset 0, as PyYAML does.
    let bom = if text.starts_with('\u{feff}') { 3 } else { 0 };
    let body = &text[bom..];
    if let Some((offset, ch)) = forbidden_char(body) {
        let start = (bom + offset) as u32;
        return failed(
            diagnostics,
            Rule::InvalidEncoding,
            TextRange::new(start, start + ch.len_utf8() as u32),
            format!(
                "unacceptable character #x{:04x}: special characters are not allowed in YAML; remove it or write it as an escape inside a double-quoted string",
                ch as u32
            ),
        );
    }
    // Quoted scalars PyYAML accepts but saphyr refuses (continuation lines
    // indented less than YAML 1.2 asks) are parsed again with their line
    // breaks blanked out, which keeps every offset; their values are then
    // read from the original text.
    let mut parsed: Cow<str> = Cow::Borrowed(body);
    // A BOM inside the document is an ordinary character to PyYAML (part of
    // a plain scalar, say), while saphyr (YAML 1.2) refuses it: saphyr reads
    // a stand-in of the same length, one the text does not contain, and
    // scalar values get the BOM back.
    let bom_stand_in = bom_stand_in(body);
    if let Some(stand_in) = bom_stand_in {
        parsed = Cow::Owned(body.replace('\u{feff}', stand_in.encode_utf8(&mut [0; 4])));
    }
    let mut rewritten = Vec::new();
    loop {
        let mut builder = Builder::new(&parsed, body, bom as u32, file, &rewritten);
        builder.bom_stand_in = bom_stand_in;
        let outcome = builder.run();
        match outcome {
            Err(Stop::AcceptQuoted { start, end }) if rewritten.len() < MAX_REWRITTEN_SCALARS => {
                let blanked: String = parsed[start..end]
                    .chars()
                    .map(|c| if matches!(c, '\n' | '\r') { ' ' } else { c })
                    .collect();
                parsed.to_mut().replace_range(start..end, &blanked);
                rewritten.push(bom as u32 + start as u32);
                continue;
            }
            Err(_) => {
                diagnostics.append(&mut builder.diagnostics);
                return YamlDocument {
                    root: None,
                    failed: true,
                };
            }
            Ok(root) => {
                diagnostics.append(&mut builder.diagnostics);
                check_tabs(body, bom as u32, &builder.exempt, file, diagnostics);
                return YamlDocument {
                    failed: builder.stopped,
                    root: if builder.stopped { None } else { root },
                };
            }
        }
    }
}

/// A character for saphyr to read in place of each BOM inside the document
/// (`None` when there is none): a private-use one of the same UTF-8 length
/// that the text does not hold, so that it maps back without doubt.
fn bom_stand_in(body: &str) -> Option<char> {
    if !body.contains('\u{feff}') {
        return None;
    }
    ('\u{e000}'..='\u{f8ff}').find(|&c| !body.contains(c))
}

/// PyYAML's reader refuses everything outside
/// `[\x09\x0A\x0D\x20-\x7E\x85\xA0-\uD7FF\uE000-\uFFFD\U00010000-\U0010FFFF]`.
fn forbidden_char(text: &str) -> Option<(usize, char)> {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        // Fastest path: sixteen printable ASCII bytes (a check the compiler
        // turns into a few vector instructions).
        if let Some(chunk) = bytes.get(i..i + 16) {
            if chunk.iter().fold(true, |printable, &b| {
                printable & (b.wrapping_sub(0x20) < 0x5F)
            }) {
                i += 16;
                continue;
            }
        }
        let b = bytes[i];
        // Fast path: printable ASCII, tab, LF and CR are always allowed.
        if b < 0x80 {
            if !(b == 0x09 || b == 0x0A || b == 0x0D || (0x20..=0x7E).contains(&b)) {
                return Some((i, b as char));
            }
            i += 1;
            continue;
        }
        let ch = text[i..].chars().next()?;
        let c = ch as u32;
        let allowed = c == 0x85
            || (0xA0..=0xD7FF).contains(&c)
            || (0xE000..=0xFFFD).contains(&c)
            || (0x10000..=0x10FFFF).contains(&c);
        // A BOM later in the file is kept as a character by PyYAML.
        if !allowed && c != 0xFEFF {
            return Some((i, ch));
        }
        i += ch.len_utf8();
    }
    None
}

/// PyYAML accepts no tab outside quoted scalars, block scalar content and
/// comments. saphyr (YAML 1.2) accepts some, so check separately. `exempt`
/// are the builder's ranges in `text` where a tab is legal.
fn check_tabs(
    text: &str,
    base: u32,
    exempt: &[TextRange],
    file: FileId,
    out: &mut Vec<Diagnostic>,
) {
    if !text.contains('\t') {
        return;
    }
    for tab in errors::illegal_tabs(text, exempt) {
        let at = base + tab as u32;
        out.push(Diagnostic::new(
            Rule::TabCharacter,
            file,
            TextRange::new(at, at + 1),
            "found character '\\t' that cannot start any token: YAML as mozaiks reads it allows no tabs outside quoted or block text; indent with spaces",
        ));
    }
}
