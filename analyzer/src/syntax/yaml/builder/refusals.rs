//! Where PyYAML and saphyr disagree on what is an error: saphyr's first
//! error reported as PyYAML words it, and what saphyr accepts in a scalar
//! but PyYAML refuses.

use saphyr_parser::{Event, Parser, ScalarStyle as SaphyrStyle};

use super::super::super::TextRange;
use super::super::errors::{self, Verdict};
use super::{Builder, Stop};
use crate::rules::Rule;

impl Builder<'_> {
    /// Reports the error saphyr stopped at (a character index), where and
    /// as PyYAML reports it.
    pub(super) fn syntax_error(&mut self, char_index: usize, info: &str) -> Stop {
        let at = self.offsets.byte(char_index);
        // The parser's own depth guard (flow collections nest in its
        // recursion, before any event reaches us).
        if info.contains("recursion limit") {
            let range = self.char_range(at - self.offsets.base);
            self.report(
                Rule::NestingTooDeep,
                range,
                "collections are nested too deep here for the YAML parser; no bundle file needs this, so flatten the structure",
            );
            return Stop::Failed;
        }
        // PyYAML composes the whole document before constructing a value, so
        // a syntax error hides the values that could not be constructed.
        self.diagnostics.retain(|d| d.rule != Rule::InvalidScalar);
        let base = self.offsets.base;
        match errors::explain(self.text, info, self.offsets.local(at), &self.exempt) {
            Verdict::AcceptQuoted { start, end } => Stop::AcceptQuoted { start, end },
            Verdict::Error { range, message } => {
                self.report(
                    Rule::YamlSyntax,
                    TextRange::new(range.start + base, range.end + base),
                    message,
                );
                Stop::Failed
            }
        }
    }

    /// What saphyr accepts in a scalar and PyYAML does not, as (local byte
    /// offset, message): a plain scalar starting with `>` or `|` inside `[]`
    /// or `{}`, and double-quoted escapes outside PyYAML's table.
    pub(super) fn pyyaml_refuses(
        &self,
        value: &str,
        style: SaphyrStyle,
        range: TextRange,
        is_key: bool,
    ) -> Option<(u32, String)> {
        let local = self.offsets.local(range.start);
        let first = self.text[local..].chars().next()?;
        match style {
            // An empty key before `:` (YAML 1.2 allows it; PyYAML only
            // after an explicit `?`).
            SaphyrStyle::Plain
                if is_key
                    && value.is_empty()
                    && first == ':'
                    && !self.text[..local].trim_end().ends_with('?') =>
            {
                let context = match self.in_flow() {
                    true => "while parsing a flow node, expected the node content",
                    false => "while parsing a block mapping, expected <block end>",
                };
                Some((
                    local as u32,
                    format!("{context}, but found ':': this `:` has no key before it; write the key{}", errors::FIX),
                ))
            }
            SaphyrStyle::Plain if matches!(first, '>' | '|') && self.in_flow() => Some((
                local as u32,
                format!("while scanning for the next token, found character '{first}' that cannot start any token: inside `[]` or `{{}}` a value cannot start with `{first}`; quote it (mozaiks cannot load this file)"),
            )),
            SaphyrStyle::DoubleQuoted if first == '"' => {
                let end = self.offsets.local(range.end).min(self.text.len());
                if !self.text[local..end].contains('\\') {
                    return None;
                }
                errors::scan_quoted(self.text, local).err().map(|(at, problem)| {
                    (at as u32, format!("while scanning a double-quoted scalar, {problem}{}", errors::FIX))
                })
            }
            _ => None,
        }
    }

    /// The value of a quoted scalar that was parsed with its line breaks
    /// blanked: its original text, read alone (at the top level no
    /// indentation is required, which is how PyYAML reads it in place).
    pub(super) fn original_quoted(&self, start: u32) -> Option<String> {
        let local = self.offsets.local(start);
        let end = errors::scan_quoted(self.original, local).ok()?;
        Parser::new_from_str(&self.original[local..end])
            .find_map(|next| match next {
                Ok((Event::Scalar(value, ..), _)) => Some(Ok(value.into_owned())),
                Ok(_) => None,
                Err(_) => Some(Err(())),
            })?
            .ok()
    }
}
