//! PyYAML's `fetch_*`: which token starts at the cursor, the simple keys
//! and indentation it opens or closes, and the refusals at that point.

use super::tokens::{Scan, Token, TokenKind, UriOf, YamlError};
use super::{is_blank_or_end, is_space_or_end, is_word, py_repr, Scanner};
use crate::base::limits::MAX_YAML_DEPTH;
use crate::syntax::scalar::ScalarStyle;

impl Scanner<'_> {
    pub(super) fn fetch_more_tokens(&mut self) -> Scan<()> {
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

    pub(super) fn check_document_marker(&self, marker: &str) -> bool {
        self.mark.column == 0 && self.starts_with(marker) && is_blank_or_end(self.peek_at(3))
    }

    pub(super) fn check_plain(&self) -> bool {
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
    pub(super) fn scan_to_next_token(&mut self) {
        loop {
            let end = self.run_end(self.mark.pos as usize, |c| c == ' ');
            self.forward_inline_to(end);
            if self.peek() == '#' {
                let end = self.line_end(self.mark.pos as usize);
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

    pub(super) fn fetch_stream_end(&mut self) -> Scan<()> {
        self.unwind_indent(-1);
        self.remove_possible_simple_key()?;
        self.allow_simple_key = false;
        self.possible_simple_keys.clear();
        let mark = self.mark;
        self.push(TokenKind::StreamEnd, mark);
        self.done = true;
        Ok(())
    }

    pub(super) fn fetch_directive(&mut self) -> Scan<()> {
        self.unwind_indent(-1);
        self.remove_possible_simple_key()?;
        self.allow_simple_key = false;
        let token = self.scan_directive()?;
        self.tokens.push_back(token);
        Ok(())
    }

    pub(super) fn fetch_document_indicator(&mut self, kind: TokenKind) -> Scan<()> {
        self.unwind_indent(-1);
        self.remove_possible_simple_key()?;
        self.allow_simple_key = false;
        self.push_indicator(kind, 3)
    }

    pub(super) fn fetch_flow_collection_start(&mut self, kind: TokenKind) -> Scan<()> {
        self.save_possible_simple_key()?;
        if self.flow_level as usize >= MAX_YAML_DEPTH {
            return Err(self.too_deep());
        }
        self.flow_level += 1;
        self.allow_simple_key = true;
        self.push_indicator(kind, 1)
    }

    pub(super) fn fetch_flow_collection_end(&mut self, kind: TokenKind) -> Scan<()> {
        self.remove_possible_simple_key()?;
        self.flow_level -= 1;
        self.allow_simple_key = false;
        self.push_indicator(kind, 1)
    }

    pub(super) fn fetch_flow_entry(&mut self) -> Scan<()> {
        self.allow_simple_key = true;
        self.remove_possible_simple_key()?;
        self.push_indicator(TokenKind::FlowEntry, 1)
    }

    /// In block context, `-` or `?` may open a collection at this column
    /// (PyYAML refuses it where a simple key could not start).
    fn open_block_collection(&mut self, what: &str, start: TokenKind) -> Scan<()> {
        if self.flow_level != 0 {
            return Ok(());
        }
        if !self.allow_simple_key {
            return Err(YamlError::new(
                None,
                None,
                format!("{what} are not allowed here"),
                self.mark,
            ));
        }
        if self.add_indent(self.mark.column as i32)? {
            let mark = self.mark;
            self.push(start, mark);
        }
        Ok(())
    }

    pub(super) fn fetch_block_entry(&mut self) -> Scan<()> {
        self.open_block_collection("sequence entries", TokenKind::BlockSequenceStart)?;
        self.allow_simple_key = true;
        self.remove_possible_simple_key()?;
        self.push_indicator(TokenKind::BlockEntry, 1)
    }

    pub(super) fn fetch_key(&mut self) -> Scan<()> {
        self.open_block_collection("mapping keys", TokenKind::BlockMappingStart)?;
        self.allow_simple_key = self.flow_level == 0;
        self.remove_possible_simple_key()?;
        self.push_indicator(TokenKind::Key, 1)
    }

    pub(super) fn fetch_value(&mut self) -> Scan<()> {
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
        self.push_indicator(TokenKind::Value, 1)
    }

    pub(super) fn fetch_anchor(&mut self, alias: bool) -> Scan<()> {
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

    pub(super) fn fetch_tag(&mut self) -> Scan<()> {
        self.save_possible_simple_key()?;
        self.allow_simple_key = false;
        let start = self.mark;
        let next = self.peek_at(1);
        let (handle, suffix) = if next == '<' {
            self.forward_n(2);
            let suffix = self.scan_tag_uri(UriOf::Tag, start)?;
            if self.peek() != '>' {
                return Err(self.expected("while parsing a tag", start, "'>'"));
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
            return Err(self.expected("while scanning a tag", start, "' '"));
        }
        self.push(TokenKind::Tag(handle, suffix), start);
        Ok(())
    }

    pub(super) fn fetch_block_scalar(&mut self, style: ScalarStyle) -> Scan<()> {
        self.allow_simple_key = true;
        self.remove_possible_simple_key()?;
        let token = self.scan_block_scalar(style)?;
        self.tokens.push_back(token);
        Ok(())
    }

    pub(super) fn fetch_flow_scalar(&mut self, style: ScalarStyle) -> Scan<()> {
        self.save_possible_simple_key()?;
        self.allow_simple_key = false;
        let token = self.scan_flow_scalar(style)?;
        self.tokens.push_back(token);
        Ok(())
    }

    pub(super) fn fetch_plain(&mut self) -> Scan<()> {
        self.save_possible_simple_key()?;
        self.allow_simple_key = false;
        let token = self.scan_plain();
        self.tokens.push_back(token);
        Ok(())
    }

    // --- directives ---
}
