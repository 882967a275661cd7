//! Conversions from the protocol: URIs to paths, positions in the negotiated
//! encoding to rope indices, and `didChange` edits.

use std::path::PathBuf;

use mzk_analyzer::syntax::ColumnUnit;
use ropey::Rope;
use tower_lsp_server::ls_types::{Position, TextDocumentContentChangeEvent, Uri};

pub(crate) fn path_of(uri: &Uri) -> Option<PathBuf> {
    uri.to_file_path().map(|p| p.into_owned())
}

/// LSP position → char index in a rope, in the negotiated unit. Clamped as
/// the protocol says: a character past the end of its line means the line's
/// end (before its line break), a line past the last means the text's end.
pub(crate) fn char_index(rope: &Rope, pos: Position, unit: ColumnUnit) -> usize {
    let line = pos.line as usize;
    if line >= rope.len_lines() {
        return rope.len_chars();
    }
    let line_start = rope.line_to_char(line);
    let text = rope.line(line);
    let mut content = text.len_chars();
    if content > 0 && text.char(content - 1) == '\n' {
        content -= 1;
    }
    if content > 0 && text.char(content - 1) == '\r' {
        content -= 1;
    }
    let content = text.slice(..content);
    let col = pos.character as usize;
    let within = match unit {
        // Inside a surrogate pair, the character it belongs to.
        ColumnUnit::Utf16 => content.utf16_cu_to_char(col.min(content.len_utf16_cu())),
        // Inside a multi-byte character, that character.
        ColumnUnit::Utf8 => content.byte_to_char(col.min(content.len_bytes())),
        ColumnUnit::Char => col.min(content.len_chars()),
    };
    line_start + within
}

/// Applies one change of a `didChange` to a document's text.
pub(crate) fn apply_change(
    text: &mut Rope,
    change: TextDocumentContentChangeEvent,
    unit: ColumnUnit,
) {
    match change.range {
        Some(range) => {
            let start = char_index(text, range.start, unit);
            let end = char_index(text, range.end, unit).max(start);
            text.remove(start..end);
            text.insert(start, &change.text);
        }
        None => *text = Rope::from_str(&change.text),
    }
}

#[cfg(test)]
mod tests {
    use mzk_analyzer::syntax::ColumnUnit;
    use ropey::Rope;
    use tower_lsp_server::ls_types::Position;

    use super::char_index;

    /// Positions past a line's end, past the text's end, inside a surrogate
    /// pair, inside a UTF-8 character and inside a CRLF, in every unit.
    #[test]
    fn positions_are_clamped_as_the_protocol_says() {
        let rope = Rope::from_str("a😀b\r\ncd\n");
        let at = |line, character, unit| char_index(&rope, Position::new(line, character), unit);
        for unit in [ColumnUnit::Utf16, ColumnUnit::Utf8, ColumnUnit::Char] {
            // Past the end of line 0: its end, before the CRLF.
            assert_eq!(at(0, 1_000, unit), 3, "{unit:?}");
            assert_eq!(at(1, u32::MAX, unit), 7, "{unit:?}");
            // Past the last line: the end of the text.
            assert_eq!(at(5, 0, unit), rope.len_chars(), "{unit:?}");
            assert_eq!(at(u32::MAX, u32::MAX, unit), rope.len_chars(), "{unit:?}");
        }
        // Inside the emoji (a surrogate pair; four UTF-8 bytes): the emoji.
        assert_eq!(at(0, 2, ColumnUnit::Utf16), 1);
        assert_eq!(at(0, 3, ColumnUnit::Utf16), 2);
        assert_eq!(at(0, 3, ColumnUnit::Utf8), 1);
        assert_eq!(at(0, 5, ColumnUnit::Utf8), 2);
        // U+2028 and U+0085 end no line for the protocol: `c` is on line 1.
        let rope = Rope::from_str("a\u{2028}b\u{85}\nc");
        let at =
            |line, character| char_index(&rope, Position::new(line, character), ColumnUnit::Char);
        assert_eq!(at(1, 0), 5);
        assert_eq!(at(0, 9), 4);
    }
}
