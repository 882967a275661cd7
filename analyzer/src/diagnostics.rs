//! The diagnostic as every layer produces it: a rule, a file, a byte range, a
//! message that says what is wrong and how to fix it, and related locations.

use crate::base::{FileId, FileKind, Severity, TextRange};
use crate::rules::Rule;

/// A second location that explains a diagnostic (the other end of a reference,
/// the first occurrence of a duplicate).
#[derive(Debug, Clone, PartialEq)]
pub struct Related {
    pub file: FileId,
    pub range: TextRange,
    pub message: String,
}

/// Whether a fix may be applied without the author looking at it, as ruff
/// distinguishes them: `mzk check --fix` and `source.fixAll.mzk` apply only
/// safe fixes; unsafe ones are offered as quick fixes, or applied by
/// `mzk check --fix --unsafe-fixes`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Applicability {
    /// Keeps everything the author wrote and only completes or corrects it.
    Safe,
    /// Deletes what the author wrote, or chooses behaviour for them.
    Unsafe,
}

impl Applicability {
    pub fn as_str(self) -> &'static str {
        match self {
            Applicability::Safe => "safe",
            Applicability::Unsafe => "unsafe",
        }
    }
}

/// A correction a diagnostic offers, as intent; `ide::fixes` turns it into
/// text edits against the bundle's current text.
#[derive(Debug, Clone, PartialEq)]
pub enum Fix {
    /// Within the diagnostic's range, replace the whole word `original` with
    /// `replacement` (a misspelt name with the one it almost certainly meant).
    ReplaceWord {
        original: String,
        replacement: String,
    },
    /// Delete the mapping entry written from `range.start` (its key) to
    /// `range.end` (the end of its value), with its whole lines.
    RemoveEntry { key: String, range: TextRange },
    /// Declare `name` under `definitions` in context_variables.yaml with a
    /// stub of declared type `ty` (one of the canonical type names).
    DeclareVariable {
        name: String,
        ty: &'static str,
        description: String,
    },
    /// Add an `after_turn` rule from `source` back to the user after the
    /// source's last rule in transition_graph.yaml.
    AddFallback { source: String },
    /// Rewrite the suppression comment at `range` (from `#` to its end) as
    /// `replacement`, or remove it (with its line when alone on it).
    RemoveSuppression {
        range: TextRange,
        replacement: Option<String>,
    },
}

impl Fix {
    /// The file kind a fix edits when that is not the file of its
    /// diagnostic (a declaration, a fallback rule).
    pub fn edits_other_file(&self) -> Option<FileKind> {
        match self {
            Fix::DeclareVariable { .. } => Some(FileKind::ContextVariables),
            Fix::AddFallback { .. } => Some(FileKind::TransitionGraph),
            Fix::ReplaceWord { .. } | Fix::RemoveEntry { .. } | Fix::RemoveSuppression { .. } => {
                None
            }
        }
    }

    pub fn applicability(&self) -> Applicability {
        match self {
            Fix::ReplaceWord { .. }
            | Fix::DeclareVariable { .. }
            | Fix::RemoveSuppression { .. } => Applicability::Safe,
            Fix::RemoveEntry { .. } | Fix::AddFallback { .. } => Applicability::Unsafe,
        }
    }

    /// The code action's title.
    pub fn title(&self) -> String {
        match self {
            Fix::ReplaceWord {
                original,
                replacement,
            } => format!("Replace `{original}` with `{replacement}`"),
            Fix::RemoveEntry { key, .. } => format!("Remove the key `{key}`"),
            Fix::DeclareVariable { name, ty, .. } => {
                format!("Declare `{name}` (type {ty}) in context_variables.yaml")
            }
            Fix::AddFallback { source } => {
                format!("Add an after_turn fallback from `{source}` back to the user")
            }
            Fix::RemoveSuppression {
                replacement: None, ..
            } => "Remove the unused suppression comment".into(),
            Fix::RemoveSuppression {
                replacement: Some(r),
                ..
            } => format!("Keep only the used codes: `{r}`"),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Diagnostic {
    pub rule: Rule,
    pub severity: Severity,
    pub file: FileId,
    pub range: TextRange,
    pub message: String,
    pub related: Vec<Related>,
    /// The corrections offered, most likely first.
    pub fixes: Vec<Fix>,
}

impl Diagnostic {
    pub fn new(rule: Rule, file: FileId, range: TextRange, message: impl Into<String>) -> Self {
        Diagnostic {
            rule,
            severity: rule.info().severity,
            file,
            range,
            message: message.into(),
            related: Vec::new(),
            fixes: Vec::new(),
        }
    }

    /// Offers replacing the misspelt `original` with `replacement`, when there is one.
    pub fn with_replacement(mut self, original: &str, replacement: Option<&str>) -> Self {
        if let Some(replacement) = replacement.filter(|r| *r != original) {
            self.fixes.push(Fix::ReplaceWord {
                original: original.to_string(),
                replacement: replacement.to_string(),
            });
        }
        self
    }

    pub fn with_fix(mut self, fix: Fix) -> Self {
        self.fixes.push(fix);
        self
    }

    pub fn with_related(
        mut self,
        file: FileId,
        range: TextRange,
        message: impl Into<String>,
    ) -> Self {
        self.related.push(Related {
            file,
            range,
            message: message.into(),
        });
        self
    }
}

/// Collects diagnostics for one file.
#[derive(Debug)]
pub struct Sink<'a> {
    pub file: FileId,
    pub out: &'a mut Vec<Diagnostic>,
}

impl Sink<'_> {
    pub fn report(&mut self, rule: Rule, range: TextRange, message: impl Into<String>) {
        self.out
            .push(Diagnostic::new(rule, self.file, range, message));
    }

    pub fn push(&mut self, diagnostic: Diagnostic) {
        self.out.push(diagnostic);
    }
}

/// "did you mean" for a misspelt name: the closest candidate by Jaro-Winkler
/// similarity, if it is close enough to be a plausible typo.
pub fn did_you_mean<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let lower = word.to_ascii_lowercase();
    candidates
        .into_iter()
        .map(|c| (c, strsim::jaro_winkler(&lower, &c.to_ascii_lowercase())))
        .filter(|(_, score)| *score >= 0.85)
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(c, _)| c)
}

/// Formats the suffix " (did you mean `x`?)" or nothing.
pub fn suggestion<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    mean_hint(word, did_you_mean(word, candidates))
}

/// The suffix " (did you mean `best`?)" for a suggestion already found, or nothing.
pub fn mean_hint(word: &str, best: Option<&str>) -> String {
    match best {
        Some(best) if best != word => format!(" (did you mean `{best}`?)"),
        _ => String::new(),
    }
}

/// Choices as messages list them: "`a`, `b` or `c`".
pub fn one_of<S: AsRef<str>>(choices: &[S]) -> String {
    let quoted: Vec<String> = choices
        .iter()
        .map(|c| format!("`{}`", c.as_ref()))
        .collect();
    match quoted.len() {
        0 => String::new(),
        1 => quoted[0].clone(),
        n => format!("{} or {}", quoted[..n - 1].join(", "), quoted[n - 1]),
    }
}

/// The order diagnostics are reported in: by file, position, rule and
/// message, without duplicates.
pub fn sort_diagnostics(diagnostics: &mut Vec<Diagnostic>) {
    diagnostics.sort_by(|a, b| {
        (a.file, a.range.start, a.range.end, a.rule, &a.message).cmp(&(
            b.file,
            b.range.start,
            b.range.end,
            b.rule,
            &b.message,
        ))
    });
    diagnostics.dedup();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_close_names_only() {
        let keys = ["condition_key", "condition_value", "tool_name"];
        assert_eq!(did_you_mean("conditon_key", keys), Some("condition_key"));
        assert_eq!(did_you_mean("banana", keys), None);
        assert_eq!(
            suggestion("autotoolcall", ["auto_tool_call"]),
            " (did you mean `auto_tool_call`?)"
        );
    }
}
