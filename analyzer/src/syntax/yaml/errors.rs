//! Syntax errors as PyYAML reports them. mozaiks loads YAML with PyYAML, so
//! its verdict, the position of the offending character and its wording are
//! what an author sees at run time; saphyr (which builds our tree) often stops
//! elsewhere with other words. Here its stop is re-read with PyYAML's scanner
//! rules: the first tab PyYAML trips on, quoted scalars (escapes, end of
//! stream, and the under-indented continuation lines PyYAML accepts),
//! block scalar headers, anchor names, and PyYAML's wording for the rest.

use super::TextRange;

/// What to do about the error saphyr stopped at.
pub(super) enum Verdict {
    /// PyYAML rejects the file too: report this (local byte offsets).
    Error { range: TextRange, message: String },
    /// PyYAML accepts the quoted scalar saphyr refused (its continuation lines
    /// are indented less than YAML 1.2 asks): the scalar spans these bytes,
    /// from the opening quote to just after the closing one.
    AcceptQuoted { start: usize, end: usize },
}

/// Characters that end an anchor or alias name in PyYAML.
const NAME_END: &str = "\0 \t\r\n\u{85}\u{2028}\u{2029}?:,]}%@`";
/// How every syntax message ends.
pub(super) const FIX: &str = "; fix the YAML syntax here (mozaiks cannot load this file)";
const LINE_END: &str = "\0\r\n\u{85}\u{2028}\u{2029}";

/// Re-reads the error saphyr reported with `info` at byte `at` of `text`.
/// `legal_tabs` are the byte ranges (local) where tabs were legal so far.
pub(super) fn explain(text: &str, info: &str, at: usize, legal_tabs: &[TextRange]) -> Verdict {
    let at = at.min(text.len());
    // PyYAML scans in order and stops at the first tab outside quoted and
    // block text, so one before saphyr's stop is the error it reports.
    // saphyr's own complaints about tabs may stop before the tab.
    let tabs_from_anywhere = info.contains("tab");
    if let Some(tab) = illegal_tabs(text, legal_tabs)
        .next()
        .filter(|&t| t < at || tabs_from_anywhere)
    {
        let line_start = text[..tab].rfind('\n').map_or(0, |i| i + 1);
        let message = if text[line_start..tab].bytes().all(|b| b == b' ') {
            "found character '\\t' that cannot start any token: a tab indents this line, and YAML indents with spaces only; fix the YAML syntax here (mozaiks cannot load this file)"
        } else {
            "found character '\\t' that cannot start any token: YAML as mozaiks reads it allows no tabs outside quoted or block text; use spaces (mozaiks cannot load this file)"
        };
        return error(tab, text, message);
    }
    let here = text[at..].chars().next();
    if info.contains("quoted scalar") && matches!(here, Some('"' | '\'')) {
        return match scan_quoted(text, at) {
            Ok(end) if info.contains("invalid indentation") && !is_simple_key(text, end) => {
                Verdict::AcceptQuoted { start: at, end }
            }
            Ok(_) => error(at, text, translate(info)),
            Err((pos, problem)) => error(
                pos,
                text,
                format!("while scanning a quoted scalar, {problem}{FIX}"),
            ),
        };
    }
    if info.contains("block scalar") && matches!(here, Some('|' | '>')) {
        let (pos, problem) = block_header_error(text, at);
        return error(
            pos,
            text,
            format!("while scanning a block scalar, {problem}{FIX}"),
        );
    }
    if matches!(here, Some('&' | '*')) {
        if let Some((pos, problem)) = name_error(text, at) {
            return error(pos, text, format!("{problem}{FIX}"));
        }
    }
    error(token_start(text, info, at), text, translate(info))
}

fn error(at: usize, text: &str, message: impl Into<String>) -> Verdict {
    let end = text[at..]
        .chars()
        .next()
        .filter(|c| !matches!(c, '\n' | '\r'))
        .map_or(at, |c| at + c.len_utf8());
    Verdict::Error {
        range: TextRange::new(at as u32, end as u32),
        message: message.into(),
    }
}

/// saphyr reports some errors after the token PyYAML names: a `-` entry
/// where a key was expected is one (PyYAML: "expected <block end>, but found
/// '-'", at the dash).
fn token_start(text: &str, info: &str, at: usize) -> usize {
    if !info.contains("did not find expected key") {
        return at;
    }
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let before = text[line_start..at].trim_end_matches(' ');
    match before.strip_suffix('-') {
        Some(indent) if indent.bytes().all(|b| b == b' ') => line_start + indent.len(),
        _ => at,
    }
}

/// saphyr's wording, said the way PyYAML (and so mozaiks' error) says it.
fn translate(info: &str) -> String {
    let pyyaml = if info.contains("mapping values are not allowed") {
        "mapping values are not allowed here"
    } else if info.contains("did not find expected key") {
        "while parsing a block mapping, expected <block end>, but found another token: this line is not a `key: value` at the mapping's indentation"
    } else if info.contains("did not find expected '-' indicator") {
        "while parsing a block collection, expected <block end>, but found another token: this line is not a `- item` at the list's indentation"
    } else if info.contains("found unknown anchor") {
        "found undefined alias: no `&anchor` of this name comes before it"
    } else if info.contains("simple key expect ':'") {
        "while scanning a simple key, could not find expected ':'"
    } else if info.contains("misplaced bracket") {
        "expected <block end>, but found a closing bracket that closes no `[` or `{`"
    } else if info.contains("illegal placement of ':'") {
        "while parsing a flow collection, expected ',' or a closing bracket, but got ':'"
    } else if let Some(found) = info.strip_prefix("unexpected character: `") {
        let ch = found.trim_end_matches('\'');
        return format!(
            "found character '{ch}' that cannot start any token; quote the value if it is text{FIX}"
        );
    } else {
        info
    };
    format!("{pyyaml}{FIX}")
}

/// Tabs PyYAML refuses (outside quoted and block text and comments), the
/// first of each line, in order.
pub(super) fn illegal_tabs<'a>(
    text: &'a str,
    legal: &'a [TextRange],
) -> impl Iterator<Item = usize> + 'a {
    let mut offset = 0usize;
    text.split_inclusive('\n').filter_map(move |line| {
        let line_start = offset;
        offset += line.len();
        if !line.contains('\t') {
            return None;
        }
        let mut prev_space = true;
        for (i, ch) in line.char_indices() {
            let at = line_start + i;
            let inside = legal
                .iter()
                .any(|r| r.start as usize <= at && at < r.end as usize);
            if ch == '#' && prev_space && !inside {
                return None;
            }
            if ch == '\t' && !inside {
                return Some(at);
            }
            prev_space = ch == ' ' || ch == '\t';
        }
        None
    })
}

/// Scans a quoted scalar from its opening quote as PyYAML does: the byte after
/// the closing quote, or PyYAML's problem (position, words).
pub(super) fn scan_quoted(text: &str, quote_at: usize) -> Result<usize, (usize, String)> {
    let quote = text.as_bytes()[quote_at];
    let mut chars = text[quote_at + 1..].char_indices().peekable();
    let abs = |i: usize| quote_at + 1 + i;
    let mut line_start = false;
    while let Some((i, ch)) = chars.next() {
        if line_start {
            line_start = false;
            let rest = &text[abs(i)..];
            if (rest.starts_with("---") || rest.starts_with("..."))
                && rest[3..]
                    .chars()
                    .next()
                    .is_none_or(|c| " \t\r\n".contains(c))
            {
                return Err((abs(i), "found unexpected document separator".into()));
            }
        }
        match ch {
            '\n' => line_start = true,
            '\'' if quote == b'\'' => {
                if chars.peek().map(|&(_, c)| c) == Some('\'') {
                    chars.next();
                } else {
                    return Ok(abs(i) + 1);
                }
            }
            '"' if quote == b'"' => return Ok(abs(i) + 1),
            '\\' if quote == b'"' => {
                let Some((j, esc)) = chars.next() else {
                    break;
                };
                let digits = match esc {
                    'x' => 2,
                    'u' => 4,
                    'U' => 8,
                    '0' | 'a' | 'b' | 't' | '\t' | 'n' | 'v' | 'f' | 'r' | 'e' | ' ' | '"'
                    | '\\' | '/' | 'N' | '_' | 'L' | 'P' => 0,
                    '\n' => {
                        line_start = true;
                        0
                    }
                    '\r' | '\u{85}' | '\u{2028}' | '\u{2029}' => 0,
                    other => {
                        return Err((
                            abs(j),
                            format!("found unknown escape character {}", py_repr(other)),
                        ))
                    }
                };
                for _ in 0..digits {
                    match chars.next() {
                        Some((_, c)) if c.is_ascii_hexdigit() => {}
                        Some((k, c)) => {
                            return Err((
                                abs(k),
                                format!(
                                    "expected escape sequence of {digits} hexadecimal numbers, but found {}",
                                    py_repr(c)
                                ),
                            ))
                        }
                        None => break,
                    }
                }
            }
            _ => {}
        }
    }
    Err((text.len(), "found unexpected end of stream".into()))
}

/// A quoted scalar followed by `:` is a key, and PyYAML refuses keys that
/// span lines: such a scalar is not accepted.
fn is_simple_key(text: &str, end: usize) -> bool {
    let rest = text[end..].trim_start_matches([' ', '\t']);
    rest.starts_with(':')
}

/// The first problem PyYAML finds in a block scalar header (`|`, `>`, their
/// chomping and indentation indicators and the rest of the line).
fn block_header_error(text: &str, indicator_at: usize) -> (usize, String) {
    let mut pos = indicator_at + 1;
    let peek = |pos: usize| text[pos..].chars().next().unwrap_or('\0');
    let mut seen_chomp = false;
    let mut seen_digit = false;
    for _ in 0..2 {
        match peek(pos) {
            '+' | '-' if !seen_chomp => seen_chomp = true,
            '0' if !seen_digit => {
                return (
                    pos,
                    "expected indentation indicator in the range 1-9, but found 0".into(),
                )
            }
            '1'..='9' if !seen_digit => seen_digit = true,
            _ => break,
        }
        pos += 1;
    }
    let ch = peek(pos);
    if ch != ' ' && !LINE_END.contains(ch) {
        return (
            pos,
            format!(
                "expected chomping or indentation indicators, but found {}",
                py_repr(ch)
            ),
        );
    }
    while peek(pos) == ' ' {
        pos += 1;
    }
    let ch = peek(pos);
    (
        pos,
        format!(
            "expected a comment or a line break, but found {}",
            py_repr(ch)
        ),
    )
}

/// PyYAML's check of an anchor (`&name`) or alias (`*name`) at `at`: names
/// are ASCII letters, digits, `-` and `_`, followed by a space, a line end
/// or one of `?:,]}%@` and the backquote.
pub(super) fn name_error(text: &str, at: usize) -> Option<(usize, String)> {
    let what = match text.as_bytes().get(at) {
        Some(b'&') => "anchor",
        Some(b'*') => "alias",
        _ => return None,
    };
    let name_len = text[at + 1..]
        .bytes()
        .take_while(|b| b.is_ascii_alphanumeric() || *b == b'-' || *b == b'_')
        .count();
    let pos = at + 1 + name_len;
    let ch = text[pos..].chars().next().unwrap_or('\0');
    if name_len > 0 && NAME_END.contains(ch) {
        return None;
    }
    Some((
        pos,
        format!(
            "while scanning an {what}, expected alphabetic or numeric character, but found {}; {what} names are ASCII letters, digits, `-` and `_`",
            py_repr(ch)
        ),
    ))
}

/// Where the anchor (`&`) of an anchored node whose properties start at
/// `start` is written: there, or after its tag (`!tag &name`).
pub(super) fn anchor_at(text: &str, start: usize) -> Option<usize> {
    let rest = text.get(start..)?;
    if rest.starts_with('&') {
        return Some(start);
    }
    if !rest.starts_with('!') {
        return None;
    }
    let tag_end = rest.find([' ', '\t', '\n', '\r'])?;
    let gap = rest[tag_end..].len()
        - rest[tag_end..]
            .trim_start_matches([' ', '\t', '\n', '\r'])
            .len();
    let at = start + tag_end + gap;
    text[at..].starts_with('&').then_some(at)
}

/// Python's `repr` of a one-character string, as PyYAML's messages show it.
fn py_repr(ch: char) -> String {
    match ch {
        '\0' => "'\\x00'".into(),
        '\t' => "'\\t'".into(),
        '\n' => "'\\n'".into(),
        '\r' => "'\\r'".into(),
        '\'' => "\"'\"".into(),
        '\\' => "'\\\\'".into(),
        c => format!("'{c}'"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn explained(text: &str, info: &str, at: usize) -> (usize, String) {
        match explain(text, info, at, &[]) {
            Verdict::Error { range, message } => (range.start as usize, message),
            Verdict::AcceptQuoted { .. } => panic!("accepted"),
        }
    }

    #[test]
    fn quoted_scalars_end_or_fail_where_pyyaml_says() {
        assert_eq!(scan_quoted("a: \"x\\\"y\" b", 3), Ok(9));
        assert_eq!(scan_quoted("a: 'it''s' b", 3), Ok(10));
        assert_eq!(scan_quoted("a: 'x\nb: 1\n", 3).unwrap_err().0, 11);
        let (at, message) = scan_quoted("a: \"\\q\"", 3).unwrap_err();
        assert_eq!(
            (at, message.as_str()),
            (5, "found unknown escape character 'q'")
        );
        assert!(scan_quoted("a: \"\\x4g\"", 3)
            .unwrap_err()
            .1
            .contains("2 hexadecimal"));
        assert_eq!(scan_quoted("a: 'x\n--- y'", 3).unwrap_err().0, 6);
    }

    #[test]
    fn headers_anchors_and_dashes() {
        assert_eq!(block_header_error("a: |x\n", 3).0, 4);
        assert_eq!(block_header_error("a: >  t\n", 3).0, 6);
        assert!(block_header_error("a: |0\n", 3).1.contains("range 1-9"));
        assert_eq!(name_error("a: &\n", 3).map(|e| e.0), Some(4));
        assert_eq!(name_error("a: *x.y\n", 3).map(|e| e.0), Some(5));
        assert_eq!(name_error("a: &ok b\n", 3), None);
        assert_eq!(anchor_at("a: &b.c z", 3), Some(3));
        assert_eq!(anchor_at("a: !t\n  &b.c z", 3), Some(8));
        assert_eq!(anchor_at("a: !t&x z", 3), None);
        let (at, message) = explained(
            "a: b\n- c\n",
            "while parsing a block mapping, did not find expected key",
            7,
        );
        assert_eq!(at, 5);
        assert!(message.contains("<block end>"));
    }

    #[test]
    fn the_first_tab_wins_and_accepted_quotes_are_recognised() {
        let (at, message) = explained(
            "a:\n\tb: 1\nc: d: e\n",
            "mapping values are not allowed in this context",
            13,
        );
        assert_eq!(at, 3);
        assert!(message.contains("'\\t'"));
        assert!(matches!(
            explain(
                "a: \"x\ny\"\n",
                "invalid indentation in quoted scalar",
                3,
                &[]
            ),
            Verdict::AcceptQuoted { start: 3, end: 8 }
        ));
        // A multi-line quoted key stays an error, as in PyYAML.
        assert!(matches!(
            explain(
                "\"x\ny\": 1\n",
                "invalid indentation in quoted scalar",
                0,
                &[]
            ),
            Verdict::Error { .. }
        ));
    }
}
