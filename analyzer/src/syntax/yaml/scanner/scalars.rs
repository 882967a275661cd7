//! Scalars as PyYAML scans them: block (`|`, `>`), quoted (`'`, `"`) and
//! plain, with their folding, escapes and the places a plain scalar stops.

use std::borrow::Cow;

use super::tokens::{Mark, Scan, Token, TokenKind};
use super::{is_blank_or_end, is_break, is_space_or_end, py_repr, Scanner};
use crate::syntax::scalar::ScalarStyle;

/// ASCII bytes that may end a chunk of a plain scalar (`:` only before a
/// blank, or in flow context before `,[]{}`).
const BLOCK_PLAIN_STOPS: [bool; 128] = plain_stops(b"\0 \t\r\n:");
const FLOW_PLAIN_STOPS: [bool; 128] = plain_stops(b"\0 \t\r\n:,?[]{}");

const fn plain_stops(bytes: &[u8]) -> [bool; 128] {
    let mut table = [false; 128];
    let mut i = 0;
    while i < bytes.len() {
        table[bytes[i] as usize] = true;
        i += 1;
    }
    table
}

impl Scanner<'_> {
    pub(super) fn scan_block_scalar(&mut self, style: ScalarStyle) -> Scan<Token> {
        const CONTEXT: &str = "while scanning a block scalar";
        let folded = style == ScalarStyle::Folded;
        let start = self.mark;
        self.forward();
        // Indicators: chomping (`+`/`-`) and indentation (1-9), either order.
        let mut chomping = self.chomping_indicator();
        let increment = self.indentation_indicator(start)?;
        if chomping.is_none() && increment.is_some() {
            chomping = self.chomping_indicator();
        }
        if !is_space_or_end(self.peek()) {
            return Err(self.expected(CONTEXT, start, "chomping or indentation indicators"));
        }
        // The rest of the header line.
        self.end_of_line(CONTEXT, start)?;

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
            let stop = self.line_end(self.mark.pos as usize);
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

    /// A block scalar header's `+` (keep, `Some(true)`) or `-` (strip).
    fn chomping_indicator(&mut self) -> Option<bool> {
        let c = self.peek();
        matches!(c, '+' | '-').then(|| {
            self.forward();
            c == '+'
        })
    }

    /// A block scalar header's indentation indicator, 1 to 9.
    fn indentation_indicator(&mut self, start: Mark) -> Scan<Option<u32>> {
        let Some(digit) = self.peek().to_digit(10) else {
            return Ok(None);
        };
        if digit == 0 {
            return Err(self.error(
                "while scanning a block scalar",
                start,
                "expected indentation indicator in the range 1-9, but found 0".into(),
            ));
        }
        self.forward();
        Ok(Some(digit))
    }

    pub(super) fn at_end(&self) -> bool {
        self.mark.pos as usize >= self.bytes.len()
    }

    pub(super) fn scan_block_scalar_indentation(&mut self) -> (Vec<char>, u32, Mark) {
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

    pub(super) fn scan_block_scalar_breaks(&mut self, indent: u32) -> (Vec<char>, Mark) {
        let mut breaks = Vec::new();
        let mut end = self.mark;
        self.skip_spaces_to_column(indent);
        while is_break(self.peek()) {
            if let Some(b) = self.scan_line_break() {
                breaks.push(b);
            }
            end = self.mark;
            self.skip_spaces_to_column(indent);
        }
        (breaks, end)
    }

    // --- quoted scalars ---

    pub(super) fn scan_flow_scalar(&mut self, style: ScalarStyle) -> Scan<Token> {
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

    pub(super) fn scan_flow_scalar_non_spaces(
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

    pub(super) fn scan_flow_scalar_spaces(&mut self, start: Mark, value: &mut String) -> Scan<()> {
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

    pub(super) fn scan_flow_scalar_breaks(&mut self, start: Mark, value: &mut String) -> Scan<()> {
        let mut breaks = Vec::new();
        self.collect_flow_scalar_breaks(start, &mut breaks)?;
        value.extend(breaks);
        Ok(())
    }

    pub(super) fn collect_flow_scalar_breaks(
        &mut self,
        start: Mark,
        breaks: &mut Vec<char>,
    ) -> Scan<()> {
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

    pub(super) fn scan_plain(&mut self) -> Token {
        let start = self.mark;
        let mut end = start;
        let indent = self.indent + 1;
        let flow = self.flow_level != 0;
        let stops = if flow {
            &FLOW_PLAIN_STOPS
        } else {
            &BLOCK_PLAIN_STOPS
        };
        let mut value = String::new();
        let mut spaces: Option<Cow<'_, str>> = Some(Cow::Borrowed(""));
        loop {
            if self.peek() == '#' {
                break;
            }
            // The chunk ends at a blank, at `: ` (and in flow context at
            // `:` before `,[]{}`), and in flow context at `,?[]{}`. ASCII
            // (nearly all of it) by a table; other characters decoded.
            let mut pos = self.mark.pos as usize;
            while let Some(&b) = self.bytes.get(pos) {
                if b >= 0x80 {
                    let c = self.char_at(pos);
                    if is_blank_or_end(c) {
                        break;
                    }
                    pos += c.len_utf8();
                    continue;
                }
                if stops[b as usize] {
                    if b != b':' {
                        break;
                    }
                    let after = self.char_at(pos + 1);
                    if pos + 1 >= self.bytes.len()
                        || is_blank_or_end(after)
                        || (flow && matches!(after, ',' | '[' | ']' | '{' | '}'))
                    {
                        break;
                    }
                }
                pos += 1;
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
    /// folds it; `None` at a document separator. Borrowed unless line
    /// breaks are kept (most plain scalars end their line: one space).
    pub(super) fn scan_plain_spaces(&mut self) -> Option<Cow<'static, str>> {
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
            if line_break == Some('\n') && breaks.is_empty() {
                return Some(Cow::Borrowed(" "));
            }
            let mut folded = String::new();
            if line_break != Some('\n') {
                folded.extend(line_break);
            }
            folded.extend(breaks);
            Some(Cow::Owned(folded))
        } else {
            Some(Cow::Owned(self.text[from..stop].to_string()))
        }
    }

    pub(super) fn at_document_separator(&self) -> bool {
        (self.starts_with("---") || self.starts_with("...")) && is_blank_or_end(self.peek_at(3))
    }
}
