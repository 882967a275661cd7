//! YAML text → tokens, by PyYAML's scanner rules (YAML 1.1 as `safe_load`
//! reads it): its plain-scalar stops in block and flow context, its simple
//! keys (one line, at most 1024 characters), its indentation, its line
//! breaks (`\r\n`, `\r`, `\n`, U+0085, U+2028, U+2029), and its errors at its
//! positions in its words. Every token carries its byte range in the text.
//!
//! Written for mzk after PyYAML's documented behaviour; the differential test
//! (tests/yaml_differential) holds the two together.

use std::collections::VecDeque;

use crate::limits::MAX_YAML_DEPTH;
use crate::syntax::scalar::ScalarStyle;

/// A place in the text: its byte offset (what ranges use), and PyYAML's
/// character index, line and column (what its rules use).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) struct Mark {
    pub pos: u32,
    pub index: u32,
    pub line: u32,
    pub column: u32,
}

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Directive {
    Yaml(u32, u32),
    Tag(String, String),
    Other,
}

#[derive(Debug, Clone, PartialEq)]
pub(super) enum TokenKind {
    StreamStart,
    StreamEnd,
    Directive(Directive),
    DocumentStart,
    DocumentEnd,
    BlockSequenceStart,
    BlockMappingStart,
    BlockEnd,
    FlowSequenceStart,
    FlowMappingStart,
    FlowSequenceEnd,
    FlowMappingEnd,
    BlockEntry,
    FlowEntry,
    Key,
    Value,
    Alias(String),
    Anchor(String),
    /// (handle, suffix); no handle for `!<verbatim>` and a lone `!`.
    Tag(Option<String>, String),
    Scalar {
        value: String,
        plain: bool,
        style: ScalarStyle,
    },
}

impl TokenKind {
    /// PyYAML's name of the token as its messages show it (Python's `repr`).
    pub(super) fn id(&self) -> &'static str {
        match self {
            TokenKind::StreamStart => "'<stream start>'",
            TokenKind::StreamEnd => "'<stream end>'",
            TokenKind::Directive(_) => "'<directive>'",
            TokenKind::DocumentStart => "'<document start>'",
            TokenKind::DocumentEnd => "'<document end>'",
            TokenKind::BlockSequenceStart => "'<block sequence start>'",
            TokenKind::BlockMappingStart => "'<block mapping start>'",
            TokenKind::BlockEnd => "'<block end>'",
            TokenKind::FlowSequenceStart => "'['",
            TokenKind::FlowMappingStart => "'{'",
            TokenKind::FlowSequenceEnd => "']'",
            TokenKind::FlowMappingEnd => "'}'",
            TokenKind::BlockEntry => "'-'",
            TokenKind::FlowEntry => "','",
            TokenKind::Key => "'?'",
            TokenKind::Value => "':'",
            TokenKind::Alias(_) => "'<alias>'",
            TokenKind::Anchor(_) => "'<anchor>'",
            TokenKind::Tag(..) => "'<tag>'",
            TokenKind::Scalar { .. } => "'<scalar>'",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub(super) struct Token {
    pub kind: TokenKind,
    pub start: Mark,
    pub end: Mark,
}

/// A refusal, as PyYAML raises it: an optional context ("while scanning a
/// quoted scalar") with its mark, and the problem at the place it names.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct YamlError {
    pub context: Option<&'static str>,
    pub context_mark: Option<Mark>,
    pub problem: String,
    pub problem_mark: Mark,
    /// Nesting past mzk's limit (MZ008), not a PyYAML error.
    pub too_deep: bool,
}

impl YamlError {
    fn new(
        context: Option<&'static str>,
        context_mark: Option<Mark>,
        problem: String,
        at: Mark,
    ) -> Self {
        YamlError {
            context,
            context_mark,
            problem,
            problem_mark: at,
            too_deep: false,
        }
    }
}

type Scan<T> = Result<T, YamlError>;

/// What a URI belongs to: PyYAML words its errors after it.
#[derive(Clone, Copy)]
enum UriOf {
    Tag,
    Directive,
}

impl UriOf {
    fn parsing(self) -> &'static str {
        match self {
            UriOf::Tag => "while parsing a tag",
            UriOf::Directive => "while parsing a directive",
        }
    }

    fn scanning(self) -> &'static str {
        match self {
            UriOf::Tag => "while scanning a tag",
            UriOf::Directive => "while scanning a directive",
        }
    }
}

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

    fn peek(&self) -> char {
        self.char_at(self.mark.pos as usize)
    }

    fn char_at(&self, pos: usize) -> char {
        match self.bytes.get(pos) {
            None => '\0',
            Some(&b) if b < 0x80 => b as char,
            Some(_) => self.text[pos..].chars().next().unwrap_or('\0'),
        }
    }

    /// The character `k` characters ahead (small `k`).
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

    fn starts_with(&self, prefix: &str) -> bool {
        self.bytes[self.mark.pos as usize..].starts_with(prefix.as_bytes())
    }

    /// Moves over one character, counting lines as PyYAML does.
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
    fn forward_inline_to(&mut self, end: usize) {
        let chars = self.text[self.mark.pos as usize..end].chars().count() as u32;
        self.mark.pos = end as u32;
        self.mark.index += chars;
        self.mark.column += chars;
    }

    /// The byte offset where the run of characters satisfying `keep` ends.
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

    fn scan_line_break(&mut self) -> Option<char> {
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

    fn fetch_more_tokens(&mut self) -> Scan<()> {
        self.scan_to_next_token();
        self.stale_possible_simple_keys()?;
        self.unwind_indent(self.mark.column as i32);
        let c = self.peek();
        let at_end = self.mark.pos as usize >= self.bytes.len();
        match c {
            '\0' if at_end => return self.fetch_stream_end(),
            '%' if self.mark.column == 0 => return self.fetch_directive(),
            '-' if self.check_document_marker("---") => {
                return self.fetch_document_indicator(TokenKind::DocumentStart)
            }
            '.' if self.check_document_marker("...") => {
                return self.fetch_document_indicator(TokenKind::DocumentEnd)
            }
            '[' => return self.fetch_flow_collection_start(TokenKind::FlowSequenceStart),
            '{' => return self.fetch_flow_collection_start(TokenKind::FlowMappingStart),
            ']' => return self.fetch_flow_collection_end(TokenKind::FlowSequenceEnd),
            '}' => return self.fetch_flow_collection_end(TokenKind::FlowMappingEnd),
            ',' => return self.fetch_flow_entry(),
            '-' if is_blank_or_end(self.peek_at(1)) => return self.fetch_block_entry(),
            '?' if self.flow_level != 0 || is_blank_or_end(self.peek_at(1)) => {
                return self.fetch_key()
            }
            ':' if self.flow_level != 0 || is_blank_or_end(self.peek_at(1)) => {
                return self.fetch_value()
            }
            '*' => return self.fetch_anchor(true),
            '&' => return self.fetch_anchor(false),
            '!' => return self.fetch_tag(),
            '|' if self.flow_level == 0 => return self.fetch_block_scalar(ScalarStyle::Literal),
            '>' if self.flow_level == 0 => return self.fetch_block_scalar(ScalarStyle::Folded),
            '\'' => return self.fetch_flow_scalar(ScalarStyle::SingleQuoted),
            '"' => return self.fetch_flow_scalar(ScalarStyle::DoubleQuoted),
            _ => {}
        }
        if self.check_plain() {
            return self.fetch_plain();
        }
        Err(self.error(
            "while scanning for the next token",
            self.mark,
            format!("found character {} that cannot start any token", py_repr(c)),
        ))
    }

    fn check_document_marker(&self, marker: &str) -> bool {
        self.mark.column == 0 && self.starts_with(marker) && is_blank_or_end(self.peek_at(3))
    }

    fn check_plain(&self) -> bool {
        let c = self.peek();
        let indicator = is_blank_or_end(c)
            || matches!(
                c,
                '-' | '?'
                    | ':'
                    | ','
                    | '['
                    | ']'
                    | '{'
                    | '}'
                    | '#'
                    | '&'
                    | '*'
                    | '!'
                    | '|'
                    | '>'
                    | '\''
                    | '"'
                    | '%'
                    | '@'
                    | '`'
            );
        !indicator
            || (!is_blank_or_end(self.peek_at(1))
                && (c == '-' || (self.flow_level == 0 && matches!(c, '?' | ':'))))
    }

    /// (A BOM at the very start, which PyYAML skips here, is cut off by
    /// the caller; any other is text.)
    fn scan_to_next_token(&mut self) {
        loop {
            let end = self.run_end(self.mark.pos as usize, |c| c == ' ');
            self.forward_inline_to(end);
            if self.peek() == '#' {
                let end = self.run_end(self.mark.pos as usize, |c| !is_break_or_end(c));
                self.forward_inline_to(end);
            }
            if self.scan_line_break().is_some() {
                if self.flow_level == 0 {
                    self.allow_simple_key = true;
                }
            } else {
                break;
            }
        }
    }

    fn fetch_stream_end(&mut self) -> Scan<()> {
        self.unwind_indent(-1);
        self.remove_possible_simple_key()?;
        self.allow_simple_key = false;
        self.possible_simple_keys.clear();
        let mark = self.mark;
        self.push(TokenKind::StreamEnd, mark);
        self.done = true;
        Ok(())
    }

    fn fetch_directive(&mut self) -> Scan<()> {
        self.unwind_indent(-1);
        self.remove_possible_simple_key()?;
        self.allow_simple_key = false;
        let token = self.scan_directive()?;
        self.tokens.push_back(token);
        Ok(())
    }

    fn fetch_document_indicator(&mut self, kind: TokenKind) -> Scan<()> {
        self.unwind_indent(-1);
        self.remove_possible_simple_key()?;
        self.allow_simple_key = false;
        let start = self.mark;
        self.forward_n(3);
        self.push(kind, start);
        Ok(())
    }

    fn fetch_flow_collection_start(&mut self, kind: TokenKind) -> Scan<()> {
        self.save_possible_simple_key()?;
        if self.flow_level as usize >= MAX_YAML_DEPTH {
            return Err(self.too_deep());
        }
        self.flow_level += 1;
        self.allow_simple_key = true;
        let start = self.mark;
        self.forward();
        self.push(kind, start);
        Ok(())
    }

    fn fetch_flow_collection_end(&mut self, kind: TokenKind) -> Scan<()> {
        self.remove_possible_simple_key()?;
        self.flow_level -= 1;
        self.allow_simple_key = false;
        let start = self.mark;
        self.forward();
        self.push(kind, start);
        Ok(())
    }

    fn fetch_flow_entry(&mut self) -> Scan<()> {
        self.allow_simple_key = true;
        self.remove_possible_simple_key()?;
        let start = self.mark;
        self.forward();
        self.push(TokenKind::FlowEntry, start);
        Ok(())
    }

    fn fetch_block_entry(&mut self) -> Scan<()> {
        if self.flow_level == 0 {
            if !self.allow_simple_key {
                return Err(YamlError::new(
                    None,
                    None,
                    "sequence entries are not allowed here".into(),
                    self.mark,
                ));
            }
            if self.add_indent(self.mark.column as i32)? {
                let mark = self.mark;
                self.push(TokenKind::BlockSequenceStart, mark);
            }
        }
        self.allow_simple_key = true;
        self.remove_possible_simple_key()?;
        let start = self.mark;
        self.forward();
        self.push(TokenKind::BlockEntry, start);
        Ok(())
    }

    fn fetch_key(&mut self) -> Scan<()> {
        if self.flow_level == 0 {
            if !self.allow_simple_key {
                return Err(YamlError::new(
                    None,
                    None,
                    "mapping keys are not allowed here".into(),
                    self.mark,
                ));
            }
            if self.add_indent(self.mark.column as i32)? {
                let mark = self.mark;
                self.push(TokenKind::BlockMappingStart, mark);
            }
        }
        self.allow_simple_key = self.flow_level == 0;
        self.remove_possible_simple_key()?;
        let start = self.mark;
        self.forward();
        self.push(TokenKind::Key, start);
        Ok(())
    }

    fn fetch_value(&mut self) -> Scan<()> {
        if let Some(at) = self
            .possible_simple_keys
            .iter()
            .position(|(level, _)| *level == self.flow_level)
        {
            let (_, key) = self.possible_simple_keys.remove(at);
            let insert_at = key.token_number - self.tokens_taken;
            self.tokens.insert(
                insert_at,
                Token {
                    kind: TokenKind::Key,
                    start: key.mark,
                    end: key.mark,
                },
            );
            if self.flow_level == 0 && self.add_indent(key.mark.column as i32)? {
                self.tokens.insert(
                    insert_at,
                    Token {
                        kind: TokenKind::BlockMappingStart,
                        start: key.mark,
                        end: key.mark,
                    },
                );
            }
            self.allow_simple_key = false;
        } else {
            if self.flow_level == 0 {
                if !self.allow_simple_key {
                    return Err(YamlError::new(
                        None,
                        None,
                        "mapping values are not allowed here".into(),
                        self.mark,
                    ));
                }
                if self.add_indent(self.mark.column as i32)? {
                    let mark = self.mark;
                    self.push(TokenKind::BlockMappingStart, mark);
                }
            }
            self.allow_simple_key = self.flow_level == 0;
            self.remove_possible_simple_key()?;
        }
        let start = self.mark;
        self.forward();
        self.push(TokenKind::Value, start);
        Ok(())
    }

    fn fetch_anchor(&mut self, alias: bool) -> Scan<()> {
        self.save_possible_simple_key()?;
        self.allow_simple_key = false;
        let start = self.mark;
        let what = if alias {
            "while scanning an alias"
        } else {
            "while scanning an anchor"
        };
        self.forward();
        let end = self.run_end(self.mark.pos as usize, is_word);
        if end == self.mark.pos as usize {
            let found = self.peek();
            return Err(self.error(
                what,
                start,
                format!(
                    "expected alphabetic or numeric character, but found {}",
                    py_repr(found)
                ),
            ));
        }
        let name = self.text[self.mark.pos as usize..end].to_string();
        self.forward_inline_to(end);
        let c = self.peek();
        if !(is_blank_or_end(c) || matches!(c, '?' | ':' | ',' | ']' | '}' | '%' | '@' | '`')) {
            return Err(self.error(
                what,
                start,
                format!(
                    "expected alphabetic or numeric character, but found {}",
                    py_repr(c)
                ),
            ));
        }
        let kind = if alias {
            TokenKind::Alias(name)
        } else {
            TokenKind::Anchor(name)
        };
        self.push(kind, start);
        Ok(())
    }

    fn fetch_tag(&mut self) -> Scan<()> {
        self.save_possible_simple_key()?;
        self.allow_simple_key = false;
        let start = self.mark;
        let next = self.peek_at(1);
        let (handle, suffix) = if next == '<' {
            self.forward_n(2);
            let suffix = self.scan_tag_uri(UriOf::Tag, start)?;
            if self.peek() != '>' {
                return Err(self.error(
                    "while parsing a tag",
                    start,
                    format!("expected '>', but found {}", py_repr(self.peek())),
                ));
            }
            self.forward();
            (None, suffix)
        } else if is_blank_or_end(next) {
            self.forward();
            (None, "!".to_string())
        } else {
            // `!handle!suffix` when a second `!` comes before a space.
            let rest_end = self.run_end(self.mark.pos as usize + 1, |c| {
                !is_space_or_end(c) && c != '!'
            });
            let use_handle = self.char_at(rest_end) == '!';
            let handle = if use_handle {
                self.scan_tag_handle("while scanning a tag", start)?
            } else {
                self.forward();
                "!".to_string()
            };
            let suffix = self.scan_tag_uri(UriOf::Tag, start)?;
            (Some(handle), suffix)
        };
        if !is_space_or_end(self.peek()) {
            return Err(self.error(
                "while scanning a tag",
                start,
                format!("expected ' ', but found {}", py_repr(self.peek())),
            ));
        }
        self.push(TokenKind::Tag(handle, suffix), start);
        Ok(())
    }

    fn fetch_block_scalar(&mut self, style: ScalarStyle) -> Scan<()> {
        self.allow_simple_key = true;
        self.remove_possible_simple_key()?;
        let token = self.scan_block_scalar(style)?;
        self.tokens.push_back(token);
        Ok(())
    }

    fn fetch_flow_scalar(&mut self, style: ScalarStyle) -> Scan<()> {
        self.save_possible_simple_key()?;
        self.allow_simple_key = false;
        let token = self.scan_flow_scalar(style)?;
        self.tokens.push_back(token);
        Ok(())
    }

    fn fetch_plain(&mut self) -> Scan<()> {
        self.save_possible_simple_key()?;
        self.allow_simple_key = false;
        let token = self.scan_plain();
        self.tokens.push_back(token);
        Ok(())
    }

    // --- directives ---

    fn scan_directive(&mut self) -> Scan<Token> {
        const CONTEXT: &str = "while scanning a directive";
        let start = self.mark;
        self.forward();
        let name = self.scan_directive_name(start)?;
        let (directive, end) = match name.as_str() {
            "YAML" => {
                let value = self.scan_yaml_directive_value(start)?;
                (value, self.mark)
            }
            "TAG" => {
                let value = self.scan_tag_directive_value(start)?;
                (value, self.mark)
            }
            _ => {
                let end = self.mark;
                let stop = self.run_end(self.mark.pos as usize, |c| !is_break_or_end(c));
                self.forward_inline_to(stop);
                (Directive::Other, end)
            }
        };
        // The rest of the line: spaces, a comment, a break.
        let spaces = self.run_end(self.mark.pos as usize, |c| c == ' ');
        self.forward_inline_to(spaces);
        if self.peek() == '#' {
            let stop = self.run_end(self.mark.pos as usize, |c| !is_break_or_end(c));
            self.forward_inline_to(stop);
        }
        if !is_break_or_end(self.peek()) {
            return Err(self.error(
                CONTEXT,
                start,
                format!(
                    "expected a comment or a line break, but found {}",
                    py_repr(self.peek())
                ),
            ));
        }
        self.scan_line_break();
        Ok(Token {
            kind: TokenKind::Directive(directive),
            start,
            end,
        })
    }

    fn scan_directive_name(&mut self, start: Mark) -> Scan<String> {
        let end = self.run_end(self.mark.pos as usize, is_word);
        if end == self.mark.pos as usize {
            return Err(self.error(
                "while scanning a directive",
                start,
                format!(
                    "expected alphabetic or numeric character, but found {}",
                    py_repr(self.peek())
                ),
            ));
        }
        let name = self.text[self.mark.pos as usize..end].to_string();
        self.forward_inline_to(end);
        if !is_space_or_end(self.peek()) {
            return Err(self.error(
                "while scanning a directive",
                start,
                format!(
                    "expected alphabetic or numeric character, but found {}",
                    py_repr(self.peek())
                ),
            ));
        }
        Ok(name)
    }

    fn scan_yaml_directive_value(&mut self, start: Mark) -> Scan<Directive> {
        let spaces = self.run_end(self.mark.pos as usize, |c| c == ' ');
        self.forward_inline_to(spaces);
        let major = self.scan_yaml_directive_number(start)?;
        if self.peek() != '.' {
            return Err(self.error(
                "while scanning a directive",
                start,
                format!(
                    "expected a digit or '.', but found {}",
                    py_repr(self.peek())
                ),
            ));
        }
        self.forward();
        let minor = self.scan_yaml_directive_number(start)?;
        if !is_space_or_end(self.peek()) {
            return Err(self.error(
                "while scanning a directive",
                start,
                format!(
                    "expected a digit or ' ', but found {}",
                    py_repr(self.peek())
                ),
            ));
        }
        Ok(Directive::Yaml(major, minor))
    }

    fn scan_yaml_directive_number(&mut self, start: Mark) -> Scan<u32> {
        if !self.peek().is_ascii_digit() {
            return Err(self.error(
                "while scanning a directive",
                start,
                format!("expected a digit, but found {}", py_repr(self.peek())),
            ));
        }
        let end = self.run_end(self.mark.pos as usize, |c| c.is_ascii_digit());
        let number = self.text[self.mark.pos as usize..end]
            .parse::<u32>()
            .unwrap_or(u32::MAX);
        self.forward_inline_to(end);
        Ok(number)
    }

    fn scan_tag_directive_value(&mut self, start: Mark) -> Scan<Directive> {
        let spaces = self.run_end(self.mark.pos as usize, |c| c == ' ');
        self.forward_inline_to(spaces);
        let handle = self.scan_tag_handle("while scanning a directive", start)?;
        if self.peek() != ' ' {
            return Err(self.error(
                "while scanning a directive",
                start,
                format!("expected ' ', but found {}", py_repr(self.peek())),
            ));
        }
        let spaces = self.run_end(self.mark.pos as usize, |c| c == ' ');
        self.forward_inline_to(spaces);
        let prefix = self.scan_tag_uri(UriOf::Directive, start)?;
        if !is_space_or_end(self.peek()) {
            return Err(self.error(
                "while scanning a directive",
                start,
                format!("expected ' ', but found {}", py_repr(self.peek())),
            ));
        }
        Ok(Directive::Tag(handle, prefix))
    }

    // --- tags ---

    fn scan_tag_handle(&mut self, context: &'static str, start: Mark) -> Scan<String> {
        if self.peek() != '!' {
            return Err(self.error(
                context,
                start,
                format!("expected '!', but found {}", py_repr(self.peek())),
            ));
        }
        let from = self.mark.pos as usize;
        let mut end = from + 1;
        if self.char_at(end) != ' ' {
            end = self.run_end(end, is_word);
            if self.char_at(end) != '!' {
                self.forward_inline_to(end);
                return Err(self.error(
                    context,
                    start,
                    format!("expected '!', but found {}", py_repr(self.peek())),
                ));
            }
            end += 1;
        }
        let handle = self.text[from..end].to_string();
        self.forward_inline_to(end);
        Ok(handle)
    }

    fn scan_tag_uri(&mut self, of: UriOf, start: Mark) -> Scan<String> {
        let uri_char = |c: char| {
            c.is_ascii_alphanumeric()
                || matches!(
                    c,
                    '-' | ';'
                        | '/'
                        | '?'
                        | ':'
                        | '@'
                        | '&'
                        | '='
                        | '+'
                        | '$'
                        | ','
                        | '_'
                        | '.'
                        | '!'
                        | '~'
                        | '*'
                        | '\''
                        | '('
                        | ')'
                        | '['
                        | ']'
                        | '%'
                )
        };
        let mut value = String::new();
        loop {
            let end = self.run_end(self.mark.pos as usize, |c| uri_char(c) && c != '%');
            value.push_str(&self.text[self.mark.pos as usize..end]);
            self.forward_inline_to(end);
            if self.peek() == '%' {
                value.push_str(&self.scan_uri_escapes(of.scanning(), start)?);
            } else {
                break;
            }
        }
        if value.is_empty() {
            return Err(self.error(
                of.parsing(),
                start,
                format!("expected URI, but found {}", py_repr(self.peek())),
            ));
        }
        Ok(value)
    }

    fn scan_uri_escapes(&mut self, context: &'static str, start: Mark) -> Scan<String> {
        let mark = self.mark;
        let mut codes = Vec::new();
        while self.peek() == '%' {
            self.forward();
            for k in 0..2 {
                if !self.peek_at(k).is_ascii_hexdigit() {
                    let found = self.peek_at(k);
                    return Err(self.error(
                        context,
                        start,
                        format!(
                            "expected URI escape sequence of 2 hexadecimal numbers, but found {}",
                            py_repr(found)
                        ),
                    ));
                }
            }
            let pos = self.mark.pos as usize;
            codes.push(u8::from_str_radix(&self.text[pos..pos + 2], 16).unwrap_or(0));
            self.forward_n(2);
        }
        String::from_utf8(codes).map_err(|_| {
            YamlError::new(
                Some(context),
                Some(start),
                "'utf-8' codec can't decode the escaped bytes: invalid UTF-8".into(),
                mark,
            )
        })
    }

    // --- block scalars ---

    fn scan_block_scalar(&mut self, style: ScalarStyle) -> Scan<Token> {
        const CONTEXT: &str = "while scanning a block scalar";
        let folded = style == ScalarStyle::Folded;
        let start = self.mark;
        self.forward();
        // Indicators: chomping (`+`/`-`) and indentation (1-9), either order.
        let mut chomping: Option<bool> = None;
        let mut increment: Option<u32> = None;
        let c = self.peek();
        if matches!(c, '+' | '-') {
            chomping = Some(c == '+');
            self.forward();
            if let Some(digit) = self.peek().to_digit(10) {
                if digit == 0 {
                    return Err(self.error(
                        CONTEXT,
                        start,
                        "expected indentation indicator in the range 1-9, but found 0".into(),
                    ));
                }
                increment = Some(digit);
                self.forward();
            }
        } else if let Some(digit) = c.to_digit(10) {
            if digit == 0 {
                return Err(self.error(
                    CONTEXT,
                    start,
                    "expected indentation indicator in the range 1-9, but found 0".into(),
                ));
            }
            increment = Some(digit);
            self.forward();
            let c = self.peek();
            if matches!(c, '+' | '-') {
                chomping = Some(c == '+');
                self.forward();
            }
        }
        if !is_space_or_end(self.peek()) {
            return Err(self.error(
                CONTEXT,
                start,
                format!(
                    "expected chomping or indentation indicators, but found {}",
                    py_repr(self.peek())
                ),
            ));
        }
        // The rest of the header line.
        let spaces = self.run_end(self.mark.pos as usize, |c| c == ' ');
        self.forward_inline_to(spaces);
        if self.peek() == '#' {
            let stop = self.run_end(self.mark.pos as usize, |c| !is_break_or_end(c));
            self.forward_inline_to(stop);
        }
        if !is_break_or_end(self.peek()) {
            return Err(self.error(
                CONTEXT,
                start,
                format!(
                    "expected a comment or a line break, but found {}",
                    py_repr(self.peek())
                ),
            ));
        }
        self.scan_line_break();

        let min_indent = (self.indent + 1).max(1) as u32;
        let (mut breaks, indent, mut end) = match increment {
            None => {
                let (breaks, max_indent, end) = self.scan_block_scalar_indentation();
                (breaks, min_indent.max(max_indent), end)
            }
            Some(increment) => {
                let indent = min_indent + increment - 1;
                let (breaks, end) = self.scan_block_scalar_breaks(indent);
                (breaks, indent, end)
            }
        };
        let mut value = String::new();
        let mut line_break: Option<char> = None;
        while self.mark.column == indent && !self.at_end() {
            value.extend(breaks.iter());
            let leading_non_space = !matches!(self.peek(), ' ' | '\t');
            let stop = self.run_end(self.mark.pos as usize, |c| !is_break_or_end(c));
            value.push_str(&self.text[self.mark.pos as usize..stop]);
            self.forward_inline_to(stop);
            line_break = self.scan_line_break();
            let (next_breaks, next_end) = self.scan_block_scalar_breaks(indent);
            breaks = next_breaks;
            end = next_end;
            if self.mark.column == indent && !self.at_end() {
                if folded
                    && line_break == Some('\n')
                    && leading_non_space
                    && !matches!(self.peek(), ' ' | '\t')
                {
                    if breaks.is_empty() {
                        value.push(' ');
                    }
                } else if let Some(b) = line_break {
                    value.push(b);
                }
            } else {
                break;
            }
        }
        if chomping != Some(false) {
            if let Some(b) = line_break {
                value.push(b);
            }
        }
        if chomping == Some(true) {
            value.extend(breaks.iter());
        }
        Ok(Token {
            kind: TokenKind::Scalar {
                value,
                plain: false,
                style,
            },
            start,
            end,
        })
    }

    fn at_end(&self) -> bool {
        self.mark.pos as usize >= self.bytes.len()
    }

    fn scan_block_scalar_indentation(&mut self) -> (Vec<char>, u32, Mark) {
        let mut breaks = Vec::new();
        let mut max_indent = 0;
        let mut end = self.mark;
        while matches!(self.peek(), ' ') || is_break(self.peek()) {
            if self.peek() != ' ' {
                if let Some(b) = self.scan_line_break() {
                    breaks.push(b);
                }
                end = self.mark;
            } else {
                self.forward();
                max_indent = max_indent.max(self.mark.column);
            }
        }
        (breaks, max_indent, end)
    }

    fn scan_block_scalar_breaks(&mut self, indent: u32) -> (Vec<char>, Mark) {
        let mut breaks = Vec::new();
        let mut end = self.mark;
        while self.mark.column < indent && self.peek() == ' ' {
            self.forward();
        }
        while is_break(self.peek()) {
            if let Some(b) = self.scan_line_break() {
                breaks.push(b);
            }
            end = self.mark;
            while self.mark.column < indent && self.peek() == ' ' {
                self.forward();
            }
        }
        (breaks, end)
    }

    // --- quoted scalars ---

    fn scan_flow_scalar(&mut self, style: ScalarStyle) -> Scan<Token> {
        let double = style == ScalarStyle::DoubleQuoted;
        let start = self.mark;
        let quote = self.peek();
        self.forward();
        let mut value = String::new();
        self.scan_flow_scalar_non_spaces(double, start, &mut value)?;
        while self.peek() != quote || self.at_end() {
            self.scan_flow_scalar_spaces(start, &mut value)?;
            self.scan_flow_scalar_non_spaces(double, start, &mut value)?;
        }
        self.forward();
        Ok(Token {
            kind: TokenKind::Scalar {
                value,
                plain: false,
                style,
            },
            start,
            end: self.mark,
        })
    }

    fn scan_flow_scalar_non_spaces(
        &mut self,
        double: bool,
        start: Mark,
        value: &mut String,
    ) -> Scan<()> {
        const DOUBLE: &str = "while scanning a double-quoted scalar";
        loop {
            let stop = self.run_end(self.mark.pos as usize, |c| {
                !matches!(c, '\'' | '"' | '\\') && !is_blank_or_end(c)
            });
            value.push_str(&self.text[self.mark.pos as usize..stop]);
            self.forward_inline_to(stop);
            let c = self.peek();
            if !double && c == '\'' && self.peek_at(1) == '\'' {
                value.push('\'');
                self.forward_n(2);
            } else if (double && c == '\'') || (!double && matches!(c, '"' | '\\')) {
                value.push(c);
                self.forward();
            } else if double && c == '\\' {
                self.forward();
                let c = self.peek();
                let replacement = match c {
                    '0' => Some('\0'),
                    'a' => Some('\u{7}'),
                    'b' => Some('\u{8}'),
                    't' | '\t' => Some('\t'),
                    'n' => Some('\n'),
                    'v' => Some('\u{b}'),
                    'f' => Some('\u{c}'),
                    'r' => Some('\r'),
                    'e' => Some('\u{1b}'),
                    ' ' => Some(' '),
                    '"' => Some('"'),
                    '/' => Some('/'),
                    '\\' => Some('\\'),
                    'N' => Some('\u{85}'),
                    '_' => Some('\u{a0}'),
                    'L' => Some('\u{2028}'),
                    'P' => Some('\u{2029}'),
                    _ => None,
                };
                let digits = match c {
                    'x' => 2,
                    'u' => 4,
                    'U' => 8,
                    _ => 0,
                };
                if let Some(replacement) = replacement {
                    value.push(replacement);
                    self.forward();
                } else if digits > 0 && !self.at_end() {
                    self.forward();
                    for k in 0..digits {
                        let found = self.peek_at(k);
                        if !found.is_ascii_hexdigit() {
                            return Err(self.error(
                                DOUBLE,
                                start,
                                format!(
                                    "expected escape sequence of {digits} hexadecimal numbers, but found {}",
                                    py_repr(found)
                                ),
                            ));
                        }
                    }
                    let pos = self.mark.pos as usize;
                    let code = u32::from_str_radix(&self.text[pos..pos + digits], 16).unwrap_or(0);
                    match char::from_u32(code) {
                        Some(ch) => value.push(ch),
                        // A lone surrogate: Python keeps it in the string;
                        // Rust cannot, so it reads as the replacement character.
                        None if (0xD800..=0xDFFF).contains(&code) => value.push('\u{fffd}'),
                        None => {
                            return Err(self.error(
                                DOUBLE,
                                start,
                                format!("chr() arg not in range(0x110000): escape \\U{code:08X} is no character"),
                            ))
                        }
                    }
                    self.forward_inline_to(pos + digits);
                } else if is_break(c) {
                    self.scan_line_break();
                    self.scan_flow_scalar_breaks(start, value)?;
                } else {
                    return Err(self.error(
                        DOUBLE,
                        start,
                        format!("found unknown escape character {}", py_repr(c)),
                    ));
                }
            } else {
                return Ok(());
            }
        }
    }

    fn scan_flow_scalar_spaces(&mut self, start: Mark, value: &mut String) -> Scan<()> {
        let stop = self.run_end(self.mark.pos as usize, |c| matches!(c, ' ' | '\t'));
        let whitespace_from = self.mark.pos as usize;
        self.forward_inline_to(stop);
        let c = self.peek();
        if self.at_end() {
            return Err(self.error(
                "while scanning a quoted scalar",
                start,
                "found unexpected end of stream".into(),
            ));
        }
        if is_break(c) {
            let line_break = self.scan_line_break();
            let mut breaks = Vec::new();
            self.collect_flow_scalar_breaks(start, &mut breaks)?;
            if line_break != Some('\n') {
                value.extend(line_break);
            } else if breaks.is_empty() {
                value.push(' ');
            }
            value.extend(breaks);
        } else {
            value.push_str(&self.text[whitespace_from..stop]);
        }
        Ok(())
    }

    fn scan_flow_scalar_breaks(&mut self, start: Mark, value: &mut String) -> Scan<()> {
        let mut breaks = Vec::new();
        self.collect_flow_scalar_breaks(start, &mut breaks)?;
        value.extend(breaks);
        Ok(())
    }

    fn collect_flow_scalar_breaks(&mut self, start: Mark, breaks: &mut Vec<char>) -> Scan<()> {
        loop {
            if (self.starts_with("---") || self.starts_with("..."))
                && is_blank_or_end(self.peek_at(3))
            {
                return Err(self.error(
                    "while scanning a quoted scalar",
                    start,
                    "found unexpected document separator".into(),
                ));
            }
            let stop = self.run_end(self.mark.pos as usize, |c| matches!(c, ' ' | '\t'));
            self.forward_inline_to(stop);
            if is_break(self.peek()) {
                breaks.extend(self.scan_line_break());
            } else {
                return Ok(());
            }
        }
    }

    // --- plain scalars ---

    fn scan_plain(&mut self) -> Token {
        let start = self.mark;
        let mut end = start;
        let indent = self.indent + 1;
        let flow = self.flow_level != 0;
        let mut value = String::new();
        let mut spaces: Option<String> = Some(String::new());
        loop {
            if self.peek() == '#' {
                break;
            }
            // The chunk ends at a blank, at `: ` (and in flow context at
            // `:` before `,[]{}`), and in flow context at `,?[]{}`.
            let mut pos = self.mark.pos as usize;
            loop {
                let c = self.char_at(pos);
                if pos >= self.bytes.len() || is_blank_or_end(c) {
                    break;
                }
                if c == ':' {
                    let after = self.char_at(pos + 1);
                    if pos + 1 >= self.bytes.len()
                        || is_blank_or_end(after)
                        || (flow && matches!(after, ',' | '[' | ']' | '{' | '}'))
                    {
                        break;
                    }
                }
                if flow && matches!(c, ',' | '?' | '[' | ']' | '{' | '}') {
                    break;
                }
                pos += c.len_utf8();
            }
            if pos == self.mark.pos as usize {
                break;
            }
            self.allow_simple_key = false;
            if let Some(spaces) = spaces.take() {
                value.push_str(&spaces);
            }
            value.push_str(&self.text[self.mark.pos as usize..pos]);
            self.forward_inline_to(pos);
            end = self.mark;
            spaces = self.scan_plain_spaces();
            match &spaces {
                None => break,
                Some(s) if s.is_empty() => break,
                _ => {}
            }
            if self.peek() == '#' || (!flow && (self.mark.column as i32) < indent) {
                break;
            }
        }
        Token {
            kind: TokenKind::Scalar {
                value,
                plain: true,
                style: ScalarStyle::Plain,
            },
            start,
            end,
        }
    }

    /// The white space after a chunk of a plain scalar, folded as PyYAML
    /// folds it; `None` at a document separator.
    fn scan_plain_spaces(&mut self) -> Option<String> {
        let from = self.mark.pos as usize;
        let stop = self.run_end(from, |c| c == ' ');
        self.forward_inline_to(stop);
        let c = self.peek();
        if is_break(c) {
            let line_break = self.scan_line_break();
            self.allow_simple_key = true;
            if self.at_document_separator() {
                return None;
            }
            let mut breaks = Vec::new();
            while self.peek() == ' ' || is_break(self.peek()) {
                if self.peek() == ' ' {
                    self.forward();
                } else {
                    breaks.extend(self.scan_line_break());
                    if self.at_document_separator() {
                        return None;
                    }
                }
            }
            let mut folded = String::new();
            if line_break != Some('\n') {
                folded.extend(line_break);
            } else if breaks.is_empty() {
                folded.push(' ');
            }
            folded.extend(breaks);
            Some(folded)
        } else {
            Some(self.text[from..stop].to_string())
        }
    }

    fn at_document_separator(&self) -> bool {
        (self.starts_with("---") || self.starts_with("...")) && is_blank_or_end(self.peek_at(3))
    }
}
