//! From saphyr's spans to byte ranges: its character indices become byte
//! offsets, and scalar spans are cut where the scalar's text ends.

use saphyr_parser::Span;

use super::super::super::TextRange;

/// Converts the parser's character indices to byte offsets.
pub(super) struct Offsets {
    /// For each character of more than one byte: its char index, and the
    /// extra bytes of the multi-byte characters up to and including it.
    /// Real files are nearly all ASCII (AppGenerator's agents.yaml: 236 of
    /// 323,866 characters), so this stays a few entries long where a table
    /// of every character's offset would be the size of the file, rebuilt on
    /// every keystroke.
    wide: Vec<(u32, u32)>,
    /// Where the parsed text starts in the file (after a BOM).
    pub(super) base: u32,
    len: u32,
}

impl Offsets {
    pub(super) fn new(text: &str, base: u32) -> Offsets {
        let bytes = text.as_bytes();
        let mut wide = Vec::new();
        let mut extra = 0u32;
        let mut at = 0;
        while let Some(skip) = bytes[at..].iter().position(|b| !b.is_ascii()) {
            at += skip;
            // A leading byte: its character's length (the text is valid UTF-8).
            let width = match bytes[at] {
                b if b >= 0xF0 => 4,
                b if b >= 0xE0 => 3,
                _ => 2,
            };
            extra += width - 1;
            let char_index = at as u32 + width - extra;
            wide.push((char_index - 1, extra));
            at += width as usize;
        }
        Offsets {
            wide,
            base,
            len: text.len() as u32,
        }
    }

    pub(super) fn byte(&self, char_index: usize) -> u32 {
        let char_index = char_index.min(u32::MAX as usize) as u32;
        // The extra bytes of the wide characters before this one.
        let before = self.wide.partition_point(|(c, _)| *c < char_index);
        let extra = before.checked_sub(1).map_or(0, |i| self.wide[i].1);
        self.base + char_index.saturating_add(extra).min(self.len)
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

#[cfg(test)]
mod tests {
    use super::Offsets;

    #[test]
    fn char_indices_become_the_byte_offsets_of_the_text() {
        for text in [
            "",
            "plain: ascii\n",
            "é",
            "a: é\nb: 😀 x\nc: — ü\n",
            "😀😀é€a",
            "name: Ünïcödé — ✓ 𝄞\r\n  - ok\n",
        ] {
            let offsets = Offsets::new(text, 3);
            let expected: Vec<usize> = text
                .char_indices()
                .map(|(i, _)| i)
                .chain([text.len(), text.len()])
                .collect();
            for (char_index, byte) in expected.into_iter().enumerate() {
                assert_eq!(
                    offsets.byte(char_index),
                    3 + byte as u32,
                    "{text:?} {char_index}"
                );
            }
        }
    }
}
