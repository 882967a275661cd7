//! Suppression comments, in YAML and Python files alike:
//!
//! - `# mzk: ignore[MZ301, MZ2]` at the end of a line suppresses those codes
//!   (or code prefixes) for diagnostics that start on that line; on a line of
//!   its own, for the next line that is not blank or a comment;
//! - `# mzk: ignore-file[MZ301]` before the first line of content suppresses
//!   them in the whole file.
//!
//! Comments are found line by line (a `#` at the start of a line or after
//! whitespace), which is what both languages' comment rules come to outside
//! multi-line strings.

use crate::base::{FileId, TextRange};
use crate::diagnostics::{Diagnostic, Fix};
use crate::rules::{Rule, Selector};

/// One suppression comment.
#[derive(Debug)]
struct Comment {
    /// From `#` to the end of the comment.
    range: TextRange,
    file_level: bool,
    /// The line it applies to (0-based); unused for file-level comments.
    target: usize,
    /// Each code as written, with whether it suppressed something.
    codes: Vec<(String, Selector, bool)>,
}

/// The suppression comments of one file, and what was wrong with them.
#[derive(Debug)]
pub struct Suppressions {
    file: FileId,
    comments: Vec<Comment>,
    invalid: Vec<Diagnostic>,
}

/// Finds the suppression comments of a file.
pub fn scan(file: FileId, text: &str) -> Suppressions {
    let mut out = Suppressions {
        file,
        comments: Vec::new(),
        invalid: Vec::new(),
    };
    if !text.contains("mzk:") {
        return out;
    }
    let lines: Vec<(usize, &str)> = {
        let mut offset = 0;
        text.split_inclusive('\n')
            .map(|l| {
                let start = offset;
                offset += l.len();
                (start, l.trim_end_matches(['\n', '\r']))
            })
            .collect()
    };
    let comment_only = |l: &str| {
        let t = l.trim_start();
        t.is_empty() || t.starts_with('#')
    };
    let mut before_content = true;
    for (i, &(start, line)) in lines.iter().enumerate() {
        let hash = line.char_indices().find(|&(j, c)| {
            c == '#'
                && (j == 0 || line[..j].ends_with([' ', '\t']))
                && line[j + 1..].trim_start().starts_with("mzk:")
        });
        let own_line = comment_only(line);
        if let Some((j, _)) = hash {
            let body = line[j + 1..].trim_start()["mzk:".len()..].trim();
            let range = TextRange::new((start + j) as u32, (start + line.trim_end().len()) as u32);
            // On a line of its own, the comment is about the next line of content.
            let target = if own_line {
                (i + 1..lines.len())
                    .find(|&k| !comment_only(lines[k].1))
                    .unwrap_or(usize::MAX)
            } else {
                i
            };
            out.read(body, range, target, before_content);
        }
        if !own_line {
            before_content = false;
        }
    }
    out
}

impl Suppressions {
    fn invalid(&mut self, range: TextRange, message: String) {
        self.invalid.push(Diagnostic::new(
            Rule::InvalidSuppression,
            self.file,
            range,
            message,
        ));
    }

    /// Reads the comment `# mzk: <body>` written at `range`, which covers
    /// the line `target` (0-based) unless it is file-level.
    fn read(&mut self, body: &str, range: TextRange, target: usize, before_content: bool) {
        let (file_level, rest) = if let Some(rest) = body.strip_prefix("ignore-file") {
            (true, rest)
        } else if let Some(rest) = body.strip_prefix("ignore") {
            (false, rest)
        } else {
            self.invalid(
                range,
                format!("`# mzk: {body}` is not a directive mzk knows; write `# mzk: ignore[CODE]` or `# mzk: ignore-file[CODE]`"),
            );
            return;
        };
        let Some(list) = rest
            .trim_start()
            .strip_prefix('[')
            .and_then(|r| r.split_once(']'))
            .map(|(codes, _)| codes)
        else {
            self.invalid(
                range,
                "a suppression needs the codes it suppresses, e.g. `# mzk: ignore[MZ301]`; mzk never suppresses everything on a line".into(),
            );
            return;
        };
        if file_level && !before_content {
            self.invalid(
                range,
                "`ignore-file` must come before the first line of content (with the other comments at the top of the file); move it up".into(),
            );
            return;
        }
        let mut codes = Vec::new();
        for code in list.split(',').map(str::trim).filter(|c| !c.is_empty()) {
            match Selector::parse(code) {
                Some(selector) if code != "ALL" => codes.push((code.to_string(), selector, false)),
                _ => self.invalid(
                    range,
                    format!("`{code}` in this suppression is not a rule code or code prefix (`mzk rules` lists them); fix or remove it"),
                ),
            }
        }
        if codes.is_empty() {
            return;
        }
        self.comments.push(Comment {
            range,
            file_level,
            target,
            codes,
        });
    }

    /// Whether a diagnostic of `rule` starting on `line` is suppressed; marks
    /// the codes that suppress it as used.
    pub fn suppress(&mut self, rule: Rule, line: usize) -> bool {
        let mut suppressed = false;
        for comment in &mut self.comments {
            if !comment.file_level && comment.target != line {
                continue;
            }
            for (_, selector, used) in &mut comment.codes {
                if selector.matches(rule) {
                    *used = true;
                    suppressed = true;
                }
            }
        }
        suppressed
    }

    /// MZ902 for unreadable comments, and MZ901 for each comment with codes
    /// that suppressed nothing (codes whose rules are all turned off are not
    /// judged), with the fix that drops them.
    pub fn findings(&self, enabled: impl Fn(Rule) -> bool) -> Vec<Diagnostic> {
        let mut out = self.invalid.clone();
        for comment in &self.comments {
            let judged = |selector: &Selector| {
                Rule::ALL
                    .iter()
                    .any(|r| selector.matches(*r) && enabled(*r))
            };
            let unused: Vec<&str> = comment
                .codes
                .iter()
                .filter(|(_, s, used)| !used && judged(s))
                .map(|(c, _, _)| c.as_str())
                .collect();
            if unused.is_empty() {
                continue;
            }
            let keep: Vec<String> = comment
                .codes
                .iter()
                .filter(|(c, _, _)| !unused.contains(&c.as_str()))
                .map(|(c, _, _)| c.clone())
                .collect();
            let directive = if comment.file_level {
                "ignore-file"
            } else {
                "ignore"
            };
            let message = format!(
                "this suppression of {} suppresses nothing: no such diagnostic {}; remove {}",
                unused
                    .iter()
                    .map(|c| format!("`{c}`"))
                    .collect::<Vec<_>>()
                    .join(", "),
                if comment.file_level {
                    "in this file"
                } else {
                    "on the line it covers"
                },
                if keep.is_empty() {
                    "the comment"
                } else if unused.len() == 1 {
                    "the code"
                } else {
                    "the codes"
                }
            );
            out.push(
                Diagnostic::new(Rule::UnusedSuppression, self.file, comment.range, message)
                    .with_fix(Fix::RemoveSuppression {
                        range: comment.range,
                        replacement: (!keep.is_empty())
                            .then(|| format!("# mzk: {directive}[{}]", keep.join(", "))),
                    }),
            );
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_own_line_and_file_level_comments() {
        let text = "# mzk: ignore-file[MZ211]\nkey: 1  # mzk: ignore[MZ101, MZ3]\n# mzk: ignore[MZ2]\n\n# other comment\nnext: 2\n";
        let mut s = scan(FileId(0), text);
        assert!(s.invalid.is_empty(), "{:?}", s.invalid);
        assert!(s.suppress(Rule::UnusedVariable, 40)); // file level, any line
        assert!(s.suppress(Rule::UnknownKey, 1));
        assert!(!s.suppress(Rule::UnknownKey, 2));
        assert!(s.suppress(Rule::UnknownAgent, 5)); // own-line comment covers line 5
        assert!(!s.suppress(Rule::UnknownAgent, 3));
        let findings = s.findings(|_| true);
        // MZ3 on line 1 was never used.
        assert_eq!(findings.len(), 1, "{findings:?}");
        assert_eq!(findings[0].rule, Rule::UnusedSuppression);
        assert!(matches!(
            &findings[0].fixes[0],
            Fix::RemoveSuppression { replacement: Some(r), .. } if r == "# mzk: ignore[MZ101]"
        ));
        // With MZ3 turned off it is not judged.
        assert!(s.findings(|r| !r.code().starts_with("MZ3")).is_empty());
    }

    #[test]
    fn unreadable_comments_are_reported() {
        let text = "a: 1  # mzk: ignore\nb: 2  # mzk: ignore[MZ31]\nc: 3  # mzk: ignroe[MZ101]\n# mzk: ignore-file[MZ101]\n";
        let s = scan(FileId(0), text);
        let messages: Vec<&str> = s.invalid.iter().map(|d| d.message.as_str()).collect();
        assert_eq!(messages.len(), 4, "{messages:?}");
        assert!(messages[0].contains("needs the codes"));
        assert!(messages[1].contains("`MZ31`"));
        assert!(messages[2].contains("not a directive"));
        assert!(messages[3].contains("before the first line of content"));
    }

    #[test]
    fn a_hash_inside_a_word_is_not_a_comment() {
        let s = scan(FileId(0), "url: http://x/#mzk:ignore[MZ101]\n");
        assert!(s.comments.is_empty() && s.invalid.is_empty());
    }
}
