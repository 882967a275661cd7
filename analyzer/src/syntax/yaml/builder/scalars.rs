//! Scalar nodes: their value resolved and constructed as PyYAML's
//! SafeLoader does, and the tags it knows.

use super::order::{failing_step, Step};
use super::{Builder, Frame};
use crate::base::TextRange;
use crate::rules::Rule;
use crate::syntax::scalar::{
    resolve_implicit, resolve_tagged, Resolved, ScalarError, ScalarStyle, Value,
};
use crate::syntax::yaml::tree::{Node, NodeKind, Scalar};

/// The prefix of YAML's core tags (`!!str` is `tag:yaml.org,2002:str`).
pub(super) const CORE: &str = "tag:yaml.org,2002:";

impl Builder<'_> {
    /// The node of a scalar event; `None` for a merge key (`<<`), whose
    /// value the mapping collects as a merge source.
    pub(super) fn scalar(
        &mut self,
        value: String,
        style: ScalarStyle,
        tag: Option<&str>,
        implicit: bool,
        range: TextRange,
        is_key: bool,
    ) -> Option<Node> {
        // A block scalar's token runs over the line breaks after it.
        let range = match style {
            ScalarStyle::Literal | ScalarStyle::Folded => self.trimmed(range),
            _ => range,
        };
        let resolved = match tag {
            // Untagged plain text, or the non-specific `!`: the resolver
            // reads the value (PyYAML resolves `! '1'` to an int, too).
            None | Some("!") if implicit => match resolve_implicit(&value, is_key) {
                Ok(Some(resolved)) => Ok(resolved),
                Ok(None) => Ok(Resolved::Value(Value::Str(value))),
                Err(error) => Err(error),
            },
            None | Some("!") => Ok(Resolved::Value(Value::Str(value))),
            Some(tag) => match tag.strip_prefix(CORE) {
                Some(suffix) => resolve_tagged(&value, suffix).map(Resolved::Value),
                None => Err(ScalarError(format!(
                    "could not determine a constructor for the tag '{tag}'"
                ))),
            },
        };
        Some(match resolved {
            Ok(Resolved::Value(value)) => Node {
                range,
                kind: NodeKind::Scalar(Scalar { style, value }),
            },
            Ok(Resolved::Merge) if is_key => {
                self.merged = true;
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
                self.report_step(
                    tag.map_or(Step::Construct, failing_step),
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

    /// `range` without the white space at its end.
    fn trimmed(&self, range: TextRange) -> TextRange {
        let start = (range.start - self.base) as usize;
        let end = ((range.end - self.base) as usize).min(self.text.len());
        match self.text.get(start..end) {
            Some(text) => TextRange::new(range.start, range.start + text.trim_end().len() as u32),
            None => range,
        }
    }

    pub(super) fn check_collection_tag(
        &mut self,
        tag: Option<&str>,
        range: TextRange,
        allowed: &[&str],
    ) {
        let Some(tag) = tag.filter(|t| *t != "!") else {
            return;
        };
        if tag
            .strip_prefix(CORE)
            .is_some_and(|suffix| allowed.contains(&suffix))
        {
            return;
        }
        self.report_step(
            failing_step(tag),
            Rule::InvalidScalar,
            range,
            format!(
                "could not determine a constructor for the tag '{tag}'; safe_load only knows the core YAML tags, so remove the tag"
            ),
        );
    }
}
