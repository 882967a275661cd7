//! The part of a Python module that can build names, as a smaller module.
//!
//! Parsing costs more than reading lines, and a repository's tool code is
//! megabytes; yet names are built only on lines that hold a
//! `+`, a `%`, a `{` or a `.format` (concatenations, templates, f-strings).
//! The excerpt keeps those logical lines, the block headers around them
//! (`for` and comprehension headers resolve loop variables, `def`/`class`
//! end a loop variable's scope) and the module-level assignments (the
//! constants and sequences parts are read from), each at its own
//! indentation, so the excerpt parses to the same nodes in the same
//! nesting. Other headers become `if 1:` and a header left without a body
//! gets `pass`, so the excerpt is itself a valid module.

use crate::syntax::python::{assigned_name, logical_lines};

/// The excerpt of `src` and the length of its longest logical line, or
/// `None` when `src` has a lexical or indentation error (the caller then
/// parses the whole file, as its recovery may see more than lines can).
pub(super) fn excerpt(src: &str) -> Option<(String, usize)> {
    let (lines, error) = logical_lines(src);
    if error.is_some() {
        return None;
    }
    // Headers rewritten as `if 1:` only get shorter.
    let longest = lines.iter().map(|l| l.code_bytes()).max().unwrap_or(0);
    let mut out = String::with_capacity(src.len() / 4);
    // Open block headers around the current line.
    let mut open: Vec<Header> = Vec::new();
    for line in &lines {
        while open.last().is_some_and(|h| h.indent >= line.indent) {
            close(open.pop(), &mut out);
        }
        let text = &src[line.start..line.end];
        let is_header = text.ends_with(':');
        let wanted = may_build(text) || (line.indent == 0 && assigned_name(text).is_some());
        if wanted {
            // The headers this line is inside, outermost first.
            for i in 0..open.len() {
                if !open[i].emitted {
                    push_line(&mut out, open[i].indent, &open[i].text);
                    open[i].emitted = true;
                    if i > 0 {
                        open[i - 1].has_body = true;
                    }
                }
            }
            if let Some(parent) = open.last_mut() {
                parent.has_body = true;
            }
        }
        if is_header {
            let header = Header {
                indent: line.indent,
                text: header_text(text, wanted),
                emitted: wanted,
                has_body: false,
            };
            if wanted {
                push_line(&mut out, header.indent, &header.text);
            }
            open.push(header);
        } else if wanted {
            // A decorator is kept as the expression it is: the function it
            // decorates may not be in the excerpt.
            push_line(
                &mut out,
                line.indent,
                text.strip_prefix('@').unwrap_or(text),
            );
        }
    }
    while let Some(header) = open.pop() {
        close(Some(header), &mut out);
    }
    Some((out, longest))
}

/// A block header of the source, as the excerpt writes it.
struct Header {
    indent: usize,
    text: String,
    emitted: bool,
    has_body: bool,
}

/// Ends a header's block: one written without a body gets `pass`.
fn close(header: Option<Header>, out: &mut String) {
    if let Some(h) = header.filter(|h| h.emitted && !h.has_body) {
        push_line(out, h.indent + 1, "pass");
    }
}

fn push_line(out: &mut String, indent: usize, text: &str) {
    out.extend(std::iter::repeat_n(' ', indent));
    out.push_str(text);
    out.push('\n');
}

/// Whether a logical line holds a construct that builds a name: a `+`
/// chain, a `%` template, a `str.format` template (one without fields still
/// names itself) or an f-string (a quote after an `f` prefix; `rf`/`fr`
/// too). Other braces are dict and set displays, which build nothing.
fn may_build(text: &str) -> bool {
    let bytes = text.as_bytes();
    let f_string = |i: usize| {
        let prefix = |j: usize| bytes.get(j).map(u8::to_ascii_lowercase);
        i > 0
            && (prefix(i - 1) == Some(b'f')
                || (prefix(i - 1) == Some(b'r') && i > 1 && prefix(i - 2) == Some(b'f')))
    };
    text.contains("format")
        || bytes
            .iter()
            .enumerate()
            .any(|(i, &b)| matches!(b, b'+' | b'%') || (matches!(b, b'"' | b'\'') && f_string(i)))
}

/// What a header becomes in the excerpt. Loop and scope headers are kept as
/// written; a clause that cannot stand alone (`elif`, `else`, `except`,
/// `case` …) becomes an `if` that keeps its condition where it has one that
/// may build a name, else `if 1:`.
fn header_text(text: &str, may_build_here: bool) -> String {
    let word_end = text
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(text.len());
    let rest = &text[word_end..];
    let standalone = || format!("if{rest}");
    match &text[..word_end] {
        "for" | "def" | "class" | "async" => text.to_string(),
        "if" | "while" | "with" if may_build_here => text.to_string(),
        "elif" | "match" if may_build_here && rest.starts_with(char::is_whitespace) => standalone(),
        _ => "if 1:".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_building_lines_with_their_headers_and_module_assignments() {
        let src = "import os\nPREFIX = \"draft_\"\n\nclass A:\n    x = 1\n    def f(self, ctx, n):\n        if n:\n            return 1\n        elif n + 1:\n            pass\n        for k in KEYS:\n            y = 2\n            ctx.set(PREFIX + k, 1)\n\n@register(\"a_\" + n)\ndef g():\n    return {\"k\": 1}\n\ndef h():\n    return f\"{x}_id\"\n";
        assert_eq!(
            excerpt(src).unwrap().0,
            "PREFIX = \"draft_\"\nclass A:\n    def f(self, ctx, n):\n        if n + 1:\n         pass\n        for k in KEYS:\n            ctx.set(PREFIX + k, 1)\nregister(\"a_\" + n)\ndef h():\n    return f\"{x}_id\"\n"
        );
    }

    #[test]
    fn a_lexical_error_leaves_no_excerpt() {
        assert_eq!(excerpt("x = 'open\n"), None);
        assert_eq!(excerpt("def f():\n  x = 1\n    y = 2\n"), None);
    }
}
