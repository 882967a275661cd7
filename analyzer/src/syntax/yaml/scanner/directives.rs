//! Directives (`%YAML`, `%TAG`), tag handles and URIs, as PyYAML scans them.

use super::tokens::{Directive, Mark, Scan, Token, TokenKind, UriOf, YamlError};
use super::{is_space_or_end, is_word, py_repr, Scanner};

impl Scanner<'_> {
    pub(super) fn scan_directive(&mut self) -> Scan<Token> {
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
                let stop = self.line_end(self.mark.pos as usize);
                self.forward_inline_to(stop);
                (Directive::Other, end)
            }
        };
        // The rest of the line: spaces, a comment, a break.
        self.end_of_line(CONTEXT, start)?;
        Ok(Token {
            kind: TokenKind::Directive(directive),
            start,
            end,
        })
    }

    pub(super) fn scan_directive_name(&mut self, start: Mark) -> Scan<String> {
        let end = self.run_end(self.mark.pos as usize, is_word);
        if end == self.mark.pos as usize {
            return Err(self.expected(
                "while scanning a directive",
                start,
                "alphabetic or numeric character",
            ));
        }
        let name = self.text[self.mark.pos as usize..end].to_string();
        self.forward_inline_to(end);
        if !is_space_or_end(self.peek()) {
            return Err(self.expected(
                "while scanning a directive",
                start,
                "alphabetic or numeric character",
            ));
        }
        Ok(name)
    }

    pub(super) fn scan_yaml_directive_value(&mut self, start: Mark) -> Scan<Directive> {
        let spaces = self.run_end(self.mark.pos as usize, |c| c == ' ');
        self.forward_inline_to(spaces);
        let major = self.scan_yaml_directive_number(start)?;
        if self.peek() != '.' {
            return Err(self.expected("while scanning a directive", start, "a digit or '.'"));
        }
        self.forward();
        let minor = self.scan_yaml_directive_number(start)?;
        if !is_space_or_end(self.peek()) {
            return Err(self.expected("while scanning a directive", start, "a digit or ' '"));
        }
        Ok(Directive::Yaml(major, minor))
    }

    pub(super) fn scan_yaml_directive_number(&mut self, start: Mark) -> Scan<u32> {
        if !self.peek().is_ascii_digit() {
            return Err(self.expected("while scanning a directive", start, "a digit"));
        }
        let end = self.run_end(self.mark.pos as usize, |c| c.is_ascii_digit());
        let number = self.text[self.mark.pos as usize..end]
            .parse::<u32>()
            .unwrap_or(u32::MAX);
        self.forward_inline_to(end);
        Ok(number)
    }

    pub(super) fn scan_tag_directive_value(&mut self, start: Mark) -> Scan<Directive> {
        let spaces = self.run_end(self.mark.pos as usize, |c| c == ' ');
        self.forward_inline_to(spaces);
        let handle = self.scan_tag_handle("while scanning a directive", start)?;
        if self.peek() != ' ' {
            return Err(self.expected("while scanning a directive", start, "' '"));
        }
        let spaces = self.run_end(self.mark.pos as usize, |c| c == ' ');
        self.forward_inline_to(spaces);
        let prefix = self.scan_tag_uri(UriOf::Directive, start)?;
        if !is_space_or_end(self.peek()) {
            return Err(self.expected("while scanning a directive", start, "' '"));
        }
        Ok(Directive::Tag(handle, prefix))
    }

    // --- tags ---

    pub(super) fn scan_tag_handle(&mut self, context: &'static str, start: Mark) -> Scan<String> {
        if self.peek() != '!' {
            return Err(self.expected(context, start, "'!'"));
        }
        let from = self.mark.pos as usize;
        let mut end = from + 1;
        if self.char_at(end) != ' ' {
            end = self.run_end(end, is_word);
            if self.char_at(end) != '!' {
                self.forward_inline_to(end);
                return Err(self.expected(context, start, "'!'"));
            }
            end += 1;
        }
        let handle = self.text[from..end].to_string();
        self.forward_inline_to(end);
        Ok(handle)
    }

    pub(super) fn scan_tag_uri(&mut self, of: UriOf, start: Mark) -> Scan<String> {
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
            return Err(self.expected(of.parsing(), start, "URI"));
        }
        Ok(value)
    }

    pub(super) fn scan_uri_escapes(&mut self, context: &'static str, start: Mark) -> Scan<String> {
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
}
