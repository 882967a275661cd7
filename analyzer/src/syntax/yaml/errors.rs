//! PyYAML's errors as mzk reports them: PyYAML's words (what mozaiks
//! prints when it cannot load the file) at PyYAML's position, with advice
//! for the mistakes people make most.

use super::scanner::YamlError;
use crate::base::TextRange;
use crate::rules::Rule;

/// How every syntax message ends.
pub(super) const FIX: &str = "; fix the YAML syntax here (mozaiks cannot load this file)";

/// The rule, the local byte offset and the message of a reader error.
pub(super) fn describe(text: &str, error: &YamlError) -> (Rule, usize, String) {
    let at = (error.problem_mark.pos as usize).min(text.len());
    if error.too_deep {
        return (
            Rule::NestingTooDeep,
            at,
            "collections are nested too deep here for the YAML parser; no bundle file needs this, so flatten the structure".into(),
        );
    }
    let problem = &error.problem;
    let words = match error.context {
        Some(context) => format!("{context}, {problem}"),
        None => problem.clone(),
    };
    if problem == "found character '\\t' that cannot start any token" {
        let line_start = text[..at].rfind(['\n', '\r']).map_or(0, |i| i + 1);
        let message = if text[line_start..at].bytes().all(|b| b == b' ') {
            format!("{problem}: a tab indents this line, and YAML indents with spaces only{FIX}")
        } else {
            format!("{problem}: YAML as mozaiks reads it allows no tabs outside quoted or block text; use spaces (mozaiks cannot load this file)")
        };
        return (Rule::TabCharacter, at, message);
    }
    let message = if let Some(indicator) = [">", "|"]
        .into_iter()
        .find(|c| *problem == format!("found character '{c}' that cannot start any token"))
    {
        format!("{words}: inside `[]` or `{{}}` a value cannot start with `{indicator}`; quote it (mozaiks cannot load this file)")
    } else if problem.ends_with("that cannot start any token") {
        format!("{words}; quote the value if it is text{FIX}")
    } else if let Some(what) = error
        .context
        .and_then(|c| c.strip_prefix("while scanning an "))
        .filter(|what| matches!(*what, "anchor" | "alias"))
    {
        format!("{words}; {what} names are ASCII letters, digits, `-` and `_`{FIX}")
    } else if error.context == Some("while parsing a block mapping") {
        if problem.ends_with("but found ':'") {
            format!("{words}: this `:` has no key before it; write the key{FIX}")
        } else {
            format!("{words}: this line is not a `key: value` at the mapping's indentation{FIX}")
        }
    } else if error.context == Some("while parsing a block collection") {
        format!("{words}: this line is not a `- item` at the list's indentation{FIX}")
    } else if problem == "mapping values are not allowed here" {
        format!("{words}: a `: ` inside a plain value starts a mapping; quote the value if the `: ` is text{FIX}")
    } else {
        format!("{words}{FIX}")
    };
    (Rule::YamlSyntax, at, message)
}

/// The character at local byte offset `at`, as a local range (empty at a
/// line break or the end).
pub(super) fn char_range(text: &str, at: usize) -> TextRange {
    let end = match text.get(at..).and_then(|rest| rest.chars().next()) {
        Some('\n' | '\r') | None => at,
        Some(c) => at + c.len_utf8(),
    };
    TextRange::new(at as u32, end as u32)
}

#[cfg(test)]
mod tests {
    use super::super::parser::Parser;
    use super::*;

    fn first_error(text: &str) -> (usize, String) {
        let mut parser = Parser::new(text);
        loop {
            match parser.next_event() {
                Ok(Some(_)) => continue,
                Ok(None) => panic!("{text:?} parses"),
                Err(error) => {
                    let (_, at, message) = describe(text, &error);
                    return (at, message);
                }
            }
        }
    }

    #[test]
    fn errors_are_pyyaml_s_at_pyyaml_s_place_with_advice() {
        let (at, message) = first_error("a: b\n\tc: d\n");
        assert_eq!(at, 5);
        assert!(message.contains("a tab indents this line"), "{message}");
        let (at, message) = first_error("a: [>x]\n");
        assert_eq!(at, 4);
        assert!(
            message.contains("a value cannot start with `>`"),
            "{message}"
        );
        let (at, message) = first_error("a: *x.y\n");
        assert_eq!(at, 5);
        assert!(message.contains("alias names are ASCII"), "{message}");
        let (at, message) = first_error("a: b\n: c\n");
        assert_eq!(at, 5);
        assert!(
            message.contains("this `:` has no key before it"),
            "{message}"
        );
        let (at, message) = first_error("description: Note: read this\n");
        assert_eq!(at, 17);
        assert!(
            message.starts_with("mapping values are not allowed here"),
            "{message}"
        );
        // In flow context PyYAML stops a plain value at `?` and refuses it.
        let (at, message) = first_error("default: [what?]\n");
        assert_eq!(at, 14);
        assert!(
            message.starts_with("while parsing a flow sequence, expected ',' or ']', but got '?'"),
            "{message}"
        );
    }
}
