//! The tokenizer: Python's token rules for what an expression may hold,
//! collecting the `${}` references and counting brackets as Python's
//! tokenizer does.

use super::{err, ExprError, ExprRef};
use crate::base::limits::MAX_EXPRESSION_BRACKETS;
use crate::syntax::python_strings::{string_literal_end, Unclosed};

/// A token: the parser needs the text only of names and references.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Tok {
    Ref(String),
    Name(String),
    Number,
    Str,
    Op(&'static str),
    End,
}

#[derive(Debug, Clone)]
pub(super) struct Token {
    pub(super) tok: Tok,
    pub(super) start: usize,
    pub(super) end: usize,
}

const OPERATORS: &[&str] = &[
    "**=", "//=", ">>=", "<<=", "...", "==", "!=", "<=", ">=", "//", "**", "<<", ">>", "->", ":=",
    "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "@=", "<", ">", "(", ")", "[", "]", "{", "}",
    ",", ":", ".", ";", "=", "+", "-", "*", "/", "%", "&", "|", "^", "~", "@",
];

fn is_ident_start(c: char) -> bool {
    c == '_' || c.is_alphabetic()
}

fn is_ident(c: char) -> bool {
    c == '_' || c.is_alphanumeric()
}

/// Python's "too many nested parentheses", at the bracket past the limit.
fn too_many_brackets<T>(start: usize, end: usize) -> Result<T, ExprError> {
    err(
        start,
        end,
        format!(
            "too many nested parentheses: Python's parser stops at {MAX_EXPRESSION_BRACKETS} open brackets \
             (`${{name}}` counts as one, since it becomes a call); remove the redundant brackets"
        ),
    )
}

/// The tokens of an expression, ending with `Tok::End`, and its `${}` references.
pub(super) fn tokenize(src: &str) -> Result<(Vec<Token>, Vec<ExprRef>), ExprError> {
    let mut tokens = Vec::new();
    let mut refs = Vec::new();
    let bytes = src.as_bytes();
    let mut i = 0;
    // Brackets open here, as Python's tokenizer counts them.
    let mut open_brackets = 0usize;
    while i < src.len() {
        let c = src[i..].chars().next().unwrap_or(' ');
        if c.is_whitespace() {
            i += c.len_utf8();
            continue;
        }
        let start = i;
        if src[i..].starts_with("${") {
            let Some(close) = src[i + 2..].find('}') else {
                return err(i, src.len(), "`${` is not closed: write `${variable_name}`");
            };
            let inner = &src[i + 2..i + 2 + close];
            let name = inner.trim();
            let valid = name
                .chars()
                .next()
                .is_some_and(|c| c == '_' || c.is_ascii_alphabetic())
                && name.chars().all(|c| c == '_' || c.is_ascii_alphanumeric());
            let end = i + 3 + close;
            if !valid {
                return err(
                    start,
                    end,
                    format!("`${{{inner}}}` must name one variable (a Python identifier); attribute paths and other text are not allowed inside `${{}}`"),
                );
            }
            // `${name}` becomes `__ctx('name')`: one more bracket for an instant.
            if open_brackets >= MAX_EXPRESSION_BRACKETS {
                return too_many_brackets(start, end);
            }
            let lead = inner.len() - inner.trim_start().len();
            refs.push(ExprRef {
                name: name.to_string(),
                start: i + 2 + lead,
                end: i + 2 + lead + name.len(),
            });
            tokens.push(Token {
                tok: Tok::Ref(name.to_string()),
                start,
                end,
            });
            i = end;
            continue;
        }
        if c == '$' {
            return err(i, i + 1, "`$` is only allowed as `${variable_name}`");
        }
        // String literal with an optional prefix.
        let prefix_len = src[i..]
            .chars()
            .take(3)
            .take_while(|c| matches!(c, 'r' | 'R' | 'b' | 'B' | 'u' | 'U' | 'f' | 'F'))
            .count();
        let after_prefix = i + prefix_len;
        if matches!(bytes.get(after_prefix), Some(b'\'' | b'"')) && prefix_len <= 2 {
            let prefix = src[i..after_prefix].to_ascii_lowercase();
            if prefix.contains('f') {
                return err(
                    i,
                    after_prefix + 1,
                    "f-strings are not allowed in context_expression; compare with a plain string",
                );
            }
            let j = match string_literal_end(bytes, after_prefix) {
                Ok(end) => end,
                Err(Unclosed::AtEnd) => return err(start, src.len(), "this string is not closed"),
                Err(Unclosed::AtLineBreak(at)) => {
                    return err(start, at, "this string is not closed on its line")
                }
            };
            tokens.push(Token {
                tok: Tok::Str,
                start,
                end: j,
            });
            i = j;
            continue;
        }
        if c.is_ascii_digit() || (c == '.' && bytes.get(i + 1).is_some_and(u8::is_ascii_digit)) {
            let mut j = i;
            while j < src.len() {
                let ch = bytes[j] as char;
                let prev = if j > i { bytes[j - 1] as char } else { ' ' };
                if ch.is_ascii_alphanumeric()
                    || ch == '_'
                    || ch == '.'
                    || ((ch == '+' || ch == '-')
                        && matches!(prev, 'e' | 'E')
                        && !src[i..j].starts_with("0x"))
                {
                    j += 1;
                } else {
                    break;
                }
            }
            let text = src[i..j].replace('_', "");
            if !valid_number(&text) {
                return err(i, j, format!("`{}` is not a valid number", &src[i..j]));
            }
            tokens.push(Token {
                tok: Tok::Number,
                start,
                end: j,
            });
            i = j;
            continue;
        }
        if is_ident_start(c) {
            let mut j = i;
            while let Some(ch) = src[j..].chars().next() {
                if is_ident(ch) {
                    j += ch.len_utf8();
                } else {
                    break;
                }
            }
            tokens.push(Token {
                tok: Tok::Name(src[i..j].to_string()),
                start,
                end: j,
            });
            i = j;
            continue;
        }
        match OPERATORS.iter().find(|op| src[i..].starts_with(**op)) {
            Some(op) => {
                match *op {
                    "(" | "[" | "{" => {
                        if open_brackets >= MAX_EXPRESSION_BRACKETS {
                            return too_many_brackets(i, i + 1);
                        }
                        open_brackets += 1;
                    }
                    ")" | "]" | "}" => open_brackets = open_brackets.saturating_sub(1),
                    _ => {}
                }
                tokens.push(Token {
                    tok: Tok::Op(op),
                    start,
                    end: i + op.len(),
                });
                i += op.len();
            }
            None => return err(i, i + c.len_utf8(), format!("invalid character `{c}`")),
        }
    }
    tokens.push(Token {
        tok: Tok::End,
        start: src.len(),
        end: src.len(),
    });
    Ok((tokens, refs))
}

fn valid_number(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    let body = lower.strip_suffix('j').unwrap_or(&lower);
    if let Some(hex) = body.strip_prefix("0x") {
        return !hex.is_empty() && hex.chars().all(|c| c.is_ascii_hexdigit());
    }
    if let Some(oct) = body.strip_prefix("0o") {
        return !oct.is_empty() && oct.chars().all(|c| ('0'..='7').contains(&c));
    }
    if let Some(bin) = body.strip_prefix("0b") {
        return !bin.is_empty() && bin.chars().all(|c| c == '0' || c == '1');
    }
    // Python forbids leading zeros in non-zero decimal integers ("010").
    if body.len() > 1
        && body.starts_with('0')
        && body.chars().all(|c| c.is_ascii_digit())
        && body.chars().any(|c| c != '0')
    {
        return false;
    }
    body.parse::<f64>().is_ok() && !body.contains("inf") && !body.contains("nan")
}
