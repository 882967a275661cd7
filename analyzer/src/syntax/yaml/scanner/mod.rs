//! YAML text → tokens, by PyYAML's scanner rules (YAML 1.1 as `safe_load`
//! reads it): its plain-scalar stops in block and flow context, its simple
//! keys (one line, at most 1024 characters), its indentation, its line
//! breaks (`\r\n`, `\r`, `\n`, U+0085, U+2028, U+2029), and its errors at its
//! positions in its words. Every token carries its byte range in the text.
//!
//! Written for mzk after PyYAML's documented behaviour; the differential test
//! (tests/yaml_differential) holds the two together.

mod directives;
mod fetch;
mod scalars;
mod tokens;

use std::collections::VecDeque;

use tokens::Scan;
pub(super) use tokens::{Directive, Mark, Token, TokenKind, YamlError};

use crate::base::limits::MAX_YAML_DEPTH;

struct SimpleKey {
    token_number: usize,
    required: bool,
    mark: Mark,
}

/// Characters after which PyYAML sees "nothing" (end, space, line break).
fn is_blank_or_end(c: char) -> bool {
    matches!(
        c,
        '\0' | ' ' | '\t' | '\r' | '\n' | '\u{85}' | '\u{2028}' | '\u{2029}'
    )
}

/// `\0 \r\n…` without the tab, as several of PyYAML's checks spell it.
fn is_space_or_end(c: char) -> bool {
    matches!(
        c,
        '\0' | ' ' | '\r' | '\n' | '\u{85}' | '\u{2028}' | '\u{2029}'
    )
}

fn is_break_or_end(c: char) -> bool {
    matches!(c, '\0' | '\r' | '\n' | '\u{85}' | '\u{2028}' | '\u{2029}')
}

fn is_break(c: char) -> bool {
    matches!(c, '\r' | '\n' | '\u{85}' | '\u{2028}' | '\u{2029}')
}

fn is_word(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '-' || c == '_'
}

/// Python's `repr()` of a one-character string, as PyYAML's messages show it.
pub(super) fn py_repr(c: char) -> String {
    match c {
        '\0' => "'\\x00'".into(),
        '\t' => "'\\t'".into(),
        '\n' => "'\\n'".into(),
        '\r' => "'\\r'".into(),
        '\'' => "\"'\"".into(),
        '\\' => "'\\\\'".into(),
        c if (c as u32) < 0x20 || c as u32 == 0x7f => format!("'\\x{:02x}'", c as u32),
        c if (0x80..0xa0).contains(&(c as u32)) => format!("'\\x{:02x}'", c as u32),
        '\u{2028}' => "'\\u2028'".into(),
        '\u{2029}' => "'\\u2029'".into(),
        '\u{feff}' => "'\\ufeff'".into(),
        c => format!("'{c}'"),
    }
}

pub(super) struct Scanner<'t> {
    text: &'t str,
    bytes: &'t [u8],
    mark: Mark,
    done: bool,
    flow_level: i32,
    tokens: VecDeque<Token>,
    tokens_taken: usize,
    indent: i32,
    indents: Vec<i32>,
    allow_simple_key: bool,
    /// One possible simple key per flow level (PyYAML's dict), few at once.
    possible_simple_keys: Vec<(i32, SimpleKey)>,
}

impl<'t> Scanner<'t> {
    pub(super) fn new(text: &'t str) -> Scanner<'t> {
        let mut scanner = Scanner {
            text,
            bytes: text.as_bytes(),
            mark: Mark::default(),
            done: false,
            flow_level: 0,
            tokens: VecDeque::new(),
            tokens_taken: 0,
            indent: -1,
            indents: Vec::new(),
            allow_simple_key: true,
            possible_simple_keys: Vec::new(),
        };
        let mark = scanner.mark;
        scanner.tokens.push_back(Token {
            kind: TokenKind::StreamStart,
            start: mark,
            end: mark,
        });
        scanner
    }

    // --- the public side: PyYAML's check_token / peek_token / get_token ---

    pub(super) fn peek_token(&mut self) -> Scan<&Token> {
        while self.need_more_tokens()? {
            self.fetch_more_tokens()?;
        }
        match self.tokens.front() {
            Some(token) => Ok(token),
            None => Err(YamlError::new(
                None,
                None,
                "unexpected end of the token stream".into(),
                self.mark,
            )),
        }
    }

    pub(super) fn next_token(&mut self) -> Scan<Token> {
        self.peek_token()?;
        self.tokens_taken += 1;
        Ok(self.tokens.pop_front().expect("peeked"))
    }

    // --- reading characters ---

    #[inline]
    fn peek(&self) -> char {
        self.char_at(self.mark.pos as usize)
    }

    #[inline]
    fn char_at(&self, pos: usize) -> char {
        match self.bytes.get(pos) {
            None => '\0',
            Some(&b) if b < 0x80 => b as char,
            Some(_) => self.text[pos..].chars().next().unwrap_or('\0'),
        }
    }

    /// The character `k` characters ahead (small `k`).
    #[inline]
    fn peek_at(&self, k: usize) -> char {
        let mut pos = self.mark.pos as usize;
        for _ in 0..k {
            match self.bytes.get(pos) {
                None => return '\0',
                Some(&b) if b < 0x80 => pos += 1,
                Some(_) => pos += self.char_at(pos).len_utf8(),
            }
        }
        self.char_at(pos)
    }

    #[inline]
    fn starts_with(&self, prefix: &str) -> bool {
        self.bytes[self.mark.pos as usize..].starts_with(prefix.as_bytes())
    }

    /// Moves over one character, counting lines as PyYAML does.
    #[inline]
    fn forward(&mut self) {
        let c = self.peek();
        if c == '\0' && self.mark.pos as usize >= self.bytes.len() {
            return;
        }
        self.mark.pos += c.len_utf8() as u32;
        self.mark.index += 1;
        if matches!(c, '\n' | '\u{85}' | '\u{2028}' | '\u{2029}')
            || (c == '\r' && self.peek() != '\n')
        {
            self.mark.line += 1;
            self.mark.column = 0;
        } else {
            self.mark.column += 1;
        }
    }

    fn forward_n(&mut self, n: usize) {
        for _ in 0..n {
            self.forward();
        }
    }

    /// Moves to byte `end` over characters that hold no line break.
    #[inline]
    fn forward_inline_to(&mut self, end: usize) {
        let chars = self.text[self.mark.pos as usize..end].chars().count() as u32;
        self.mark.pos = end as u32;
        self.mark.index += chars;
        self.mark.column += chars;
    }

    /// The byte offset of the line break (or the end) at or after `from`:
    /// bytes compared, and only those that can start U+0085, U+2028 or
    /// U+2029 (0xC2, 0xE2) decoded.
    #[inline]
    fn line_end(&self, from: usize) -> usize {
        let mut pos = from;
        while let Some(&b) = self.bytes.get(pos) {
            match b {
                b'\n' | b'\r' | 0 => break,
                0xC2 | 0xE2 if is_break_or_end(self.char_at(pos)) => break,
                _ => pos += 1,
            }
        }
        pos
    }

    /// The byte offset where the run of characters satisfying `keep` ends.
    #[inline]
    fn run_end(&self, from: usize, keep: impl Fn(char) -> bool) -> usize {
        let mut pos = from;
        while pos < self.bytes.len() {
            let c = self.char_at(pos);
            if !keep(c) {
                break;
            }
            pos += c.len_utf8();
        }
        pos
    }

    /// The rest of a directive's or block scalar header's line: spaces, a
    /// comment, then a line break (or the end), which it consumes.
    fn end_of_line(&mut self, context: &'static str, start: Mark) -> Scan<()> {
        let spaces = self.run_end(self.mark.pos as usize, |c| c == ' ');
        self.forward_inline_to(spaces);
        if self.peek() == '#' {
            let stop = self.line_end(self.mark.pos as usize);
            self.forward_inline_to(stop);
        }
        if !is_break_or_end(self.peek()) {
            return Err(self.expected(context, start, "a comment or a line break"));
        }
        self.scan_line_break();
        Ok(())
    }

    /// Moves over the spaces before `column` (a block scalar's indentation).
    #[inline]
    fn skip_spaces_to_column(&mut self, column: u32) {
        let room = column.saturating_sub(self.mark.column) as usize;
        let pos = self.mark.pos as usize;
        let n = self.bytes[pos..]
            .iter()
            .take(room)
            .take_while(|&&b| b == b' ')
            .count() as u32;
        self.mark.pos += n;
        self.mark.index += n;
        self.mark.column += n;
    }

    fn scan_line_break(&mut self) -> Option<char> {
        if self.bytes.get(self.mark.pos as usize) == Some(&b'\n') {
            // The common case, without decoding.
            self.mark.pos += 1;
            self.mark.index += 1;
            self.mark.line += 1;
            self.mark.column = 0;
            return Some('\n');
        }
        match self.peek() {
            '\r' | '\n' | '\u{85}' => {
                if self.starts_with("\r\n") {
                    self.forward_n(2);
                } else {
                    self.forward();
                }
                Some('\n')
            }
            c @ ('\u{2028}' | '\u{2029}') => {
                self.forward();
                Some(c)
            }
            _ => None,
        }
    }

    fn error(&self, context: &'static str, context_mark: Mark, problem: String) -> YamlError {
        YamlError::new(Some(context), Some(context_mark), problem, self.mark)
    }

    /// PyYAML's "expected X, but found C" at the cursor, C its character.
    fn expected(&self, context: &'static str, context_mark: Mark, what: &str) -> YamlError {
        let found = py_repr(self.peek());
        self.error(
            context,
            context_mark,
            format!("expected {what}, but found {found}"),
        )
    }

    fn too_deep(&self) -> YamlError {
        YamlError {
            too_deep: true,
            ..YamlError::new(
                None,
                None,
                "collections are nested too deep".into(),
                self.mark,
            )
        }
    }

    // --- PyYAML's token machinery ---

    fn need_more_tokens(&mut self) -> Scan<bool> {
        if self.done {
            return Ok(false);
        }
        if self.tokens.is_empty() {
            return Ok(true);
        }
        // The first token may be a simple key: look further.
        self.stale_possible_simple_keys()?;
        Ok(self.next_possible_simple_key() == Some(self.tokens_taken))
    }

    fn next_possible_simple_key(&self) -> Option<usize> {
        self.possible_simple_keys
            .iter()
            .map(|(_, k)| k.token_number)
            .min()
    }

    /// PyYAML's stale_possible_simple_keys: a key that can no longer be one
    /// (another line, or more than 1024 characters back) is dropped; a
    /// required one is an error.
    fn stale_possible_simple_keys(&mut self) -> Scan<()> {
        let (line, index) = (self.mark.line, self.mark.index);
        if let Some((_, key)) = self
            .possible_simple_keys
            .iter()
            .find(|(_, k)| (k.mark.line != line || index - k.mark.index > 1024) && k.required)
        {
            return Err(self.error(
                "while scanning a simple key",
                key.mark,
                "could not find expected ':'".into(),
            ));
        }
        self.possible_simple_keys
            .retain(|(_, k)| k.mark.line == line && index - k.mark.index <= 1024);
        Ok(())
    }

    fn save_possible_simple_key(&mut self) -> Scan<()> {
        let required = self.flow_level == 0 && self.indent == self.mark.column as i32;
        if self.allow_simple_key {
            self.remove_possible_simple_key()?;
            let token_number = self.tokens_taken + self.tokens.len();
            self.possible_simple_keys.push((
                self.flow_level,
                SimpleKey {
                    token_number,
                    required,
                    mark: self.mark,
                },
            ));
        }
        Ok(())
    }

    fn remove_possible_simple_key(&mut self) -> Scan<()> {
        if let Some(at) = self
            .possible_simple_keys
            .iter()
            .position(|(level, _)| *level == self.flow_level)
        {
            let (_, key) = self.possible_simple_keys.remove(at);
            if key.required {
                return Err(self.error(
                    "while scanning a simple key",
                    key.mark,
                    "could not find expected ':'".into(),
                ));
            }
        }
        Ok(())
    }

    fn unwind_indent(&mut self, column: i32) {
        if self.flow_level != 0 {
            return;
        }
        while self.indent > column {
            let mark = self.mark;
            self.indent = self.indents.pop().unwrap_or(-1);
            self.tokens.push_back(Token {
                kind: TokenKind::BlockEnd,
                start: mark,
                end: mark,
            });
        }
    }

    fn add_indent(&mut self, column: i32) -> Scan<bool> {
        if self.indent < column {
            if self.indents.len() >= MAX_YAML_DEPTH {
                return Err(self.too_deep());
            }
            self.indents.push(self.indent);
            self.indent = column;
            return Ok(true);
        }
        Ok(false)
    }

    fn push(&mut self, kind: TokenKind, start: Mark) {
        let end = self.mark;
        self.tokens.push_back(Token { kind, start, end });
    }

    /// A token of `chars` indicator characters at the cursor (`-`, `[`,
    /// `---`): moves over them and queues the token.
    fn push_indicator(&mut self, kind: TokenKind, chars: usize) -> Scan<()> {
        let start = self.mark;
        self.forward_n(chars);
        self.push(kind, start);
        Ok(())
    }
}
