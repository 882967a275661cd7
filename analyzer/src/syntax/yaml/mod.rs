//! YAML text → a tree where every key, value and item carries its byte range,
//! read as PyYAML's `safe_load` reads it (YAML 1.1): its scanner's and
//! parser's rules (`scanner`, `parser`), its composition and construction of
//! scalars, merge keys and aliases (`builder`), and every problem reported as
//! a diagnostic, at PyYAML's position in PyYAML's words, instead of a panic.

mod builder;
mod errors;
mod parser;
mod scanner;
#[cfg(test)]
mod tests;
mod tree;

use builder::Builder;
pub use tree::{Entry, Node, NodeKind, Scalar};

use crate::base::limits::MAX_FILE_BYTES;
use crate::base::{FileId, TextRange};
use crate::diagnostics::Diagnostic;
use crate::rules::Rule;

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
    let mut builder = Builder::new(body, bom as u32, file);
    let outcome = builder.run();
    diagnostics.append(&mut builder.diagnostics);
    match outcome {
        Err(_) => YamlDocument {
            root: None,
            failed: true,
        },
        Ok(root) => YamlDocument {
            failed: builder.stopped,
            root: if builder.stopped { None } else { root },
        },
    }
}

/// PyYAML's reader refuses everything outside
/// `[\x09\x0A\x0D\x20-\x7E\x85\xA0-\uD7FF\uE000-\uFFFD\U00010000-\U0010FFFF]`.
/// In UTF-8 only a few bytes can start such a character: ASCII controls
/// other than tab and line breaks, DEL, 0xC2 (U+0080–U+009F) and 0xEF (U+FFFE, U+FFFF); 32-byte blocks
/// without any of them (nearly all) are passed by a test the compiler
/// vectorizes, and only a flagged block is read character by character.
fn forbidden_char(text: &str) -> Option<(usize, char)> {
    const BLOCK: usize = 32;
    let bytes = text.as_bytes();
    let suspicious = |b: u8| {
        ((b < 0x20) & (b != b'\t') & (b != b'\n') & (b != b'\r'))
            | (b == 0x7F)
            | (b == 0xC2)
            | (b == 0xEF)
    };
    let mut block = 0;
    while block < bytes.len() {
        let end = (block + BLOCK).min(bytes.len());
        let flagged = bytes[block..end]
            .iter()
            .fold(false, |any, &b| any | suspicious(b));
        if flagged {
            // Characters may straddle blocks: read from the block's first
            // character start up to the next block.
            let mut i = block;
            while !text.is_char_boundary(i) {
                i -= 1;
            }
            while i < end {
                let ch = text[i..].chars().next()?;
                if !allowed(ch) {
                    return Some((i, ch));
                }
                i += ch.len_utf8();
            }
        }
        block = end;
    }
    None
}

/// PyYAML's printable characters (a BOM inside the text among them).
fn allowed(ch: char) -> bool {
    matches!(
        ch as u32,
        0x09 | 0x0A | 0x0D | 0x20..=0x7E | 0x85 | 0xA0..=0xD7FF | 0xE000..=0xFFFD | 0x10000..=0x10FFFF
    )
}
