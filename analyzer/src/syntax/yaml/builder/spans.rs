//! From saphyr's spans to byte ranges: its character indices become byte
//! offsets, and scalar spans are cut where the scalar's text ends.

use saphyr_parser::Span;

use super::super::super::TextRange;

/// Converts the parser's character indices to byte offsets.
pub(super) struct Offsets {
    /// Byte offset of each char index; empty for ASCII text (identity).
    table: Vec<u32>,
    /// Where the parsed text starts in the file (after a BOM).
    pub(super) base: u32,
    len: u32,
}

impl Offsets {
    pub(super) fn new(text: &str, base: u32) -> Offsets {
        let table = if text.is_ascii() {
            Vec::new()
        } else {
            text.char_indices().map(|(i, _)| i as u32).collect()
        };
        Offsets {
            table,
            base,
            len: text.len() as u32,
        }
    }

    pub(super) fn byte(&self, char_index: usize) -> u32 {
        let local = if self.table.is_empty() {
            (char_index as u32).min(self.len)
        } else {
            self.table.get(char_index).copied().unwrap_or(self.len)
        };
        self.base + local
    }

    pub(super) fn range(&self, span: &Span) -> TextRange {
        TextRange::new(self.byte(span.start.index()), self.byte(span.end.index()))
    }

    /// A file offset as an offset in the parsed text.
    pub(super) fn local(&self, at: u32) -> usize {
        (at - self.base) as usize
    }

    /// A file range as a range in the parsed text (`range` starts at or
    /// after `base`).
    pub(super) fn local_range(&self, range: TextRange) -> TextRange {
        TextRange::new(range.start - self.base, range.end - self.base)
    }
}

/// The range of a quoted scalar, ending just after its closing quote.
pub(super) fn quoted_range(text: &str, base: u32, range: TextRange) -> TextRange {
    let start = (range.start - base) as usize;
    let end = ((range.end - base) as usize).min(text.len());
    let bytes = text.as_bytes();
    let Some(&quote) = bytes.get(start) else {
        return range;
    };
    let mut i = start + 1;
    while i < end {
        match bytes[i] {
            b'\\' if quote == b'"' => i += 2,
            b'\'' if quote == b'\'' && bytes.get(i + 1) == Some(&b'\'') => i += 2,
            b if b == quote => return TextRange::new(range.start, base + i as u32 + 1),
            _ => i += 1,
        }
    }
    trim_range(text, base, range)
}

pub(super) fn trim_range(text: &str, base: u32, range: TextRange) -> TextRange {
    let start = (range.start - base) as usize;
    let end = ((range.end - base) as usize).min(text.len());
    if start >= end || !text.is_char_boundary(start) || !text.is_char_boundary(end) {
        return range;
    }
    let trimmed = text[start..end].trim_end();
    TextRange::new(range.start, range.start + trimmed.len() as u32)
}

/// The end of the character at `at`; `at` itself at a line break or the end.
pub(super) fn next_char_end(text: &str, at: u32) -> u32 {
    let at = at as usize;
    match text.get(at..).and_then(|rest| rest.chars().next()) {
        Some('\n') | Some('\r') | None => at as u32,
        Some(c) => (at + c.len_utf8()) as u32,
    }
}
