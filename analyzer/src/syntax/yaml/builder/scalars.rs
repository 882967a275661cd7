//! Scalar nodes: their style, their range cut where PyYAML ends them, their
//! value resolved as PyYAML does, and the tags safe_load knows.

use saphyr_parser::ScalarStyle as SaphyrStyle;

use super::super::super::scalar::{
    resolve_plain, resolve_tagged, Resolved, ScalarError, ScalarStyle, Value,
};
use super::super::super::TextRange;
use super::super::tree::{Node, NodeKind, Scalar};
use super::spans::{quoted_range, trim_range};
use super::{Builder, Frame};
use crate::rules::Rule;

impl Builder<'_> {
    /// Where a quoted or block scalar's text lies in `text`, for the tab
    /// check: block scalars start at their content, so extend back over the
    /// indicator line.
    pub(super) fn scalar_extent(&self, range: TextRange, style: ScalarStyle) -> TextRange {
        let range = self.offsets.local_range(range);
        if matches!(style, ScalarStyle::Literal | ScalarStyle::Folded) {
            let before = &self.text[..range.start as usize];
            let line_start = before.rfind('\n').map_or(0, |i| i + 1);
            return TextRange::new(line_start as u32, range.end);
        }
        range
    }

    pub(super) fn scalar(
        &mut self,
        text: &str,
        style: SaphyrStyle,
        tag: Option<&saphyr_parser::Tag>,
        range: TextRange,
        is_key: bool,
    ) -> Option<Node> {
        let style = match style {
            SaphyrStyle::Plain => ScalarStyle::Plain,
            SaphyrStyle::SingleQuoted => ScalarStyle::SingleQuoted,
            SaphyrStyle::DoubleQuoted => ScalarStyle::DoubleQuoted,
            SaphyrStyle::Literal => ScalarStyle::Literal,
            SaphyrStyle::Folded => ScalarStyle::Folded,
        };
        // The parser's spans of quoted scalars run on to the next token (over
        // spaces and comments), and block scalars' into the next line: cut them
        // at the closing quote, or trim.
        let range = match style {
            ScalarStyle::SingleQuoted | ScalarStyle::DoubleQuoted => {
                quoted_range(self.text, self.offsets.base, range)
            }
            _ => trim_range(self.text, self.offsets.base, range),
        };
        let resolved = match tag {
            Some(tag) => match core_tag(tag) {
                // `!` (non-specific) resolves like an untagged plain scalar in PyYAML.
                Some("") if style == ScalarStyle::Plain => resolve_plain(text, is_key),
                Some("") => Ok(Resolved::Value(Value::Str(text.to_string()))),
                Some(suffix) => resolve_tagged(text, suffix).map(Resolved::Value),
                None => Err(ScalarError(format!(
                    "could not determine a constructor for the tag '{}{}'",
                    tag.handle, tag.suffix
                ))),
            },
            None if style == ScalarStyle::Plain => resolve_plain(text, is_key),
            None => Ok(Resolved::Value(Value::Str(text.to_string()))),
        };
        Some(match resolved {
            Ok(Resolved::Value(value)) => Node {
                range,
                kind: NodeKind::Scalar(Scalar { style, value }),
            },
            Ok(Resolved::Merge) if is_key => {
                if let Some(Frame::Map { merge_pending, .. }) = self.stack.last_mut() {
                    *merge_pending = true;
                }
                return None;
            }
            Ok(Resolved::Merge) => {
                self.report(
                    Rule::InvalidScalar,
                    range,
                    "`<<` is the merge key and cannot be a value; quote it ('<<') if you mean the text",
                );
                Node {
                    range,
                    kind: NodeKind::Invalid,
                }
            }
            Err(err) => {
                self.report(
                    Rule::InvalidScalar,
                    range,
                    format!("{}; mozaiks fails to load this file. Quote the value if it is meant as text, or correct it", err.0),
                );
                Node {
                    range,
                    kind: NodeKind::Invalid,
                }
            }
        })
    }

    pub(super) fn check_collection_tag(
        &mut self,
        tag: Option<&saphyr_parser::Tag>,
        range: TextRange,
        allowed: &[&str],
    ) {
        if let Some(tag) = tag {
            match core_tag(tag) {
                Some(s) if s.is_empty() || allowed.contains(&s) => {}
                _ => self.report(
                    Rule::InvalidScalar,
                    range,
                    format!(
                        "could not determine a constructor for the tag '{}{}'; safe_load only knows the core YAML tags, so remove the tag",
                        tag.handle, tag.suffix
                    ),
                ),
            }
        }
    }
}

fn core_tag(tag: &saphyr_parser::Tag) -> Option<&str> {
    if tag.handle == "!!" {
        Some(tag.suffix.as_str())
    } else if (tag.handle == "!" && tag.suffix.is_empty())
        || (tag.handle.is_empty() && tag.suffix == "!")
    {
        Some("")
    } else if tag.handle.is_empty() || tag.handle == "!" {
        tag.suffix.strip_prefix("tag:yaml.org,2002:")
    } else {
        tag.handle
            .strip_prefix("tag:yaml.org,2002:")
            .filter(|rest| rest.is_empty())
            .map(|_| tag.suffix.as_str())
    }
}
