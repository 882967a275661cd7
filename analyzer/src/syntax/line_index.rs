//! Byte offsets inside, editor positions at the edge: converts a byte offset of a
//! file into a line and a column counted in UTF-8 bytes, UTF-16 units or characters.

/// Line starts of one text, for offset → position conversion. Cloning one
/// shares its table (a bundle's model and the file memos hold the same).
#[derive(Debug, Clone)]
pub struct LineIndex {
    /// Byte offset where each line starts; `line_starts[0] == 0`.
    line_starts: std::sync::Arc<[u32]>,
    len: u32,
}

/// A 0-based line and a 0-based column in some unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct LineCol {
    pub line: u32,
    pub col: u32,
}

/// The unit a column is counted in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnUnit {
    Utf8,
    Utf16,
    Char,
}

impl LineIndex {
    pub fn new(text: &str) -> LineIndex {
        let mut line_starts = vec![0u32];
        let bytes = text.as_bytes();
        for i in memchr::memchr2_iter(b'\n', b'\r', bytes) {
            // A lone CR is a line break for PyYAML too; CRLF counts once.
            if bytes[i] == b'\n' || bytes.get(i + 1) != Some(&b'\n') {
                line_starts.push(i as u32 + 1);
            }
        }
        LineIndex {
            line_starts: line_starts.into(),
            len: text.len() as u32,
        }
    }

    pub fn line_count(&self) -> usize {
        self.line_starts.len()
    }

    /// Byte offset where a 0-based line starts (clamped to the end of the text).
    pub fn line_start(&self, line: u32) -> u32 {
        self.line_starts
            .get(line as usize)
            .copied()
            .unwrap_or(self.len)
    }

    /// The 0-based line holding a byte offset.
    pub fn line_of(&self, offset: u32) -> u32 {
        let offset = offset.min(self.len);
        match self.line_starts.binary_search(&offset) {
            Ok(line) => line as u32,
            Err(next) => next as u32 - 1,
        }
    }

    /// Converts a byte offset to a line and a column in `unit`. Offsets inside a
    /// multi-byte character are moved back to its start.
    pub fn position(&self, text: &str, offset: u32, unit: ColumnUnit) -> LineCol {
        let mut offset = offset.min(self.len) as usize;
        while offset > 0 && !text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self.line_of(offset as u32);
        let start = self.line_start(line) as usize;
        let prefix = &text[start..offset];
        let col = match unit {
            ColumnUnit::Utf8 => prefix.len(),
            ColumnUnit::Utf16 => prefix.encode_utf16().count(),
            ColumnUnit::Char => prefix.chars().count(),
        } as u32;
        LineCol { line, col }
    }

    /// Converts a line and a column in `unit` back to a byte offset. A column past
    /// the end of its line is clamped to the line end (before the line break).
    pub fn offset(&self, text: &str, pos: LineCol, unit: ColumnUnit) -> u32 {
        if pos.line as usize >= self.line_starts.len() {
            return self.len;
        }
        let start = self.line_start(pos.line) as usize;
        let end = self.line_start(pos.line + 1) as usize;
        let line = text[start..end].trim_end_matches(['\n', '\r']);
        let mut counted = 0u32;
        for (i, ch) in line.char_indices() {
            if counted >= pos.col {
                return (start + i) as u32;
            }
            counted += match unit {
                ColumnUnit::Utf8 => ch.len_utf8() as u32,
                ColumnUnit::Utf16 => ch.len_utf16() as u32,
                ColumnUnit::Char => 1,
            };
        }
        (start + line.len()) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_in_every_unit() {
        let text = "a: 1\r\né😀: x\nlast";
        let index = LineIndex::new(text);
        assert_eq!(index.line_count(), 3);
        let x = text.find('x').unwrap() as u32;
        assert_eq!(
            index.position(text, x, ColumnUnit::Utf8),
            LineCol { line: 1, col: 8 }
        );
        assert_eq!(
            index.position(text, x, ColumnUnit::Utf16),
            LineCol { line: 1, col: 5 }
        );
        assert_eq!(
            index.position(text, x, ColumnUnit::Char),
            LineCol { line: 1, col: 4 }
        );
        for unit in [ColumnUnit::Utf8, ColumnUnit::Utf16, ColumnUnit::Char] {
            let pos = index.position(text, x, unit);
            assert_eq!(index.offset(text, pos, unit), x);
        }
    }

    #[test]
    fn lone_cr_is_a_line_break_and_offsets_clamp() {
        let text = "a\rb\n";
        let index = LineIndex::new(text);
        assert_eq!(index.line_of(2), 1);
        assert_eq!(
            index.position(text, 99, ColumnUnit::Char),
            LineCol { line: 2, col: 0 }
        );
        assert_eq!(
            index.offset(text, LineCol { line: 0, col: 50 }, ColumnUnit::Utf16),
            1
        );
    }
}
