//! Diagnostic output formats of `mzk check`.

use std::fmt::Write as _;
use std::path::Path;

use annotate_snippets::{AnnotationKind, Level, Renderer, Snippet};
use mzk_analyzer::base::{Severity, TextRange};
use mzk_analyzer::diagnostics::{Applicability, Diagnostic};
use mzk_analyzer::model::Bundle;
use mzk_analyzer::rules::Rule;
use mzk_analyzer::syntax::{ColumnUnit, LineIndex};
use mzk_analyzer::{ide, Analysis};
use serde_json::{json, Value};

/// 1-based line and column (Unicode characters).
#[derive(Debug, Clone, Copy)]
pub struct Position {
    pub line: u32,
    pub column: u32,
}

/// A place in a file, ready for display.
#[derive(Debug, Clone)]
pub struct Place<'a> {
    pub path: String,
    pub text: &'a str,
    pub range: TextRange,
    pub start: Position,
    pub end: Position,
}

impl<'a> Place<'a> {
    fn new(
        bundle: &'a Bundle,
        file: mzk_analyzer::base::FileId,
        range: TextRange,
        cwd: &Path,
    ) -> Place<'a> {
        let Some(f) = bundle.file(file) else {
            // Every diagnostic names a bundle file; stay total regardless.
            let origin = Position { line: 1, column: 1 };
            return Place {
                path: display_path(&bundle.dir, cwd),
                text: "",
                range: TextRange::empty(0),
                start: origin,
                end: origin,
            };
        };
        let index: &LineIndex = &f.line_index;
        let at = |offset| {
            let p = index.position(&f.text, offset, ColumnUnit::Char);
            Position {
                line: p.line + 1,
                column: p.col + 1,
            }
        };
        Place {
            start: at(range.start),
            end: at(range.end),
            path: display_path(&bundle.path_of(f), cwd),
            text: &f.text,
            range,
        }
    }
}

/// A diagnostic with its places resolved.
pub struct Located<'a> {
    pub diagnostic: &'a Diagnostic,
    pub place: Place<'a>,
    pub related: Vec<(Place<'a>, &'a str)>,
    /// The fixes offered, most likely first.
    pub fixes: Vec<LocatedFix<'a>>,
}

/// A fix with each edit's place resolved.
pub struct LocatedFix<'a> {
    pub title: String,
    pub applicability: Applicability,
    /// Where to write what (an empty range inserts).
    pub edits: Vec<(Place<'a>, String)>,
}

impl<'a> Located<'a> {
    pub fn new(analysis: &'a Analysis, diagnostic: &'a Diagnostic, cwd: &Path) -> Located<'a> {
        let bundle = &analysis.bundle;
        Located {
            diagnostic,
            place: Place::new(bundle, diagnostic.file, diagnostic.range, cwd),
            related: diagnostic
                .related
                .iter()
                .map(|r| (Place::new(bundle, r.file, r.range, cwd), r.message.as_str()))
                .collect(),
            fixes: ide::fixes(analysis, diagnostic)
                .into_iter()
                .map(|f| LocatedFix {
                    title: f.title,
                    applicability: f.applicability,
                    edits: f
                        .edits
                        .into_iter()
                        .map(|e| (Place::new(bundle, e.file, e.range, cwd), e.new_text))
                        .collect(),
                })
                .collect(),
        }
    }

    fn code(&self) -> &'static str {
        self.diagnostic.rule.code()
    }
}

pub struct Summary {
    pub bundles: usize,
    pub files: usize,
    pub errors: usize,
    pub warnings: usize,
    pub info: usize,
    /// Findings of opt-in rules that were left off, per rule.
    pub opt_in_hidden: std::collections::BTreeMap<Rule, usize>,
    /// What each bundle has, in the order they were checked.
    pub per_bundle: Vec<BundleCount>,
    /// Findings `--fix` fixes, and those only `--unsafe-fixes` adds.
    pub fixable: usize,
    pub unsafe_fixable: usize,
}

/// One bundle's errors and warnings, for the summary.
pub struct BundleCount {
    pub path: String,
    pub errors: usize,
    pub warnings: usize,
}

fn plural(n: usize, word: &str) -> String {
    format!("{n} {word}{}", if n == 1 { "" } else { "s" })
}

fn summary_line(summary: &Summary) -> String {
    let mut line = format!(
        "{} error{}, {} warning{}{} in {} bundle{} ({} files)\n",
        summary.errors,
        if summary.errors == 1 { "" } else { "s" },
        summary.warnings,
        if summary.warnings == 1 { "" } else { "s" },
        if summary.info > 0 {
            format!(", {} info", summary.info)
        } else {
            String::new()
        },
        summary.bundles,
        if summary.bundles == 1 { "" } else { "s" },
        summary.files
    );
    line.push_str(&per_bundle_lines(summary));
    line.push_str(&fixable_line(summary));
    line.push_str(&opt_in_note(summary));
    line
}

/// With several bundles, which of them have findings, those with errors
/// first; empty otherwise.
fn per_bundle_lines(summary: &Summary) -> String {
    let mut with_findings: Vec<&BundleCount> = summary
        .per_bundle
        .iter()
        .filter(|b| b.errors + b.warnings > 0)
        .collect();
    if summary.per_bundle.len() < 2 || with_findings.is_empty() {
        return String::new();
    }
    with_findings.sort_by_key(|b| std::cmp::Reverse(b.errors));
    let width = with_findings
        .iter()
        .map(|b| b.path.chars().count())
        .max()
        .unwrap_or(0);
    with_findings
        .iter()
        .map(|b| {
            let counts = match (b.errors, b.warnings) {
                (0, w) => plural(w, "warning"),
                (e, 0) => plural(e, "error"),
                (e, w) => format!("{}, {}", plural(e, "error"), plural(w, "warning")),
            };
            format!("  {:width$}  {counts}\n", b.path)
        })
        .collect()
}

/// How many findings `--fix` would fix, as ruff says it; empty when none.
fn fixable_line(summary: &Summary) -> String {
    match (summary.fixable, summary.unsafe_fixable) {
        (0, 0) => String::new(),
        (0, u) => format!(
            "{} fixable with `mzk check --fix --unsafe-fixes` (review them: they delete or choose behaviour)\n",
            plural(u, "finding")
        ),
        (f, 0) => format!("{} fixable with `mzk check --fix`\n", plural(f, "finding")),
        (f, u) => format!(
            "{} fixable with `mzk check --fix` ({u} more with `--unsafe-fixes`)\n",
            plural(f, "finding")
        ),
    }
}

/// One line saying how many findings of opt-in rules exist while they are
/// off, and how to see them; empty when there are none.
pub fn opt_in_note(summary: &Summary) -> String {
    if summary.opt_in_hidden.is_empty() {
        return String::new();
    }
    let total: usize = summary.opt_in_hidden.values().sum();
    let per_rule: Vec<String> = summary
        .opt_in_hidden
        .iter()
        .map(|(rule, n)| format!("{} {n}", rule.code()))
        .collect();
    let mut groups: Vec<&str> = summary
        .opt_in_hidden
        .keys()
        .map(|r| r.group().name())
        .collect();
    groups.dedup();
    groups.sort();
    groups.dedup();
    format!(
        "note: {total} finding{} of opt-in rules not shown ({}); `--extend-select {}` shows them\n",
        if total == 1 { "" } else { "s" },
        per_rule.join(", "),
        groups.join(",")
    )
}

/// A count per rule, most frequent first, as `--statistics` prints it.
pub fn statistics(located: &[Located], summary: &Summary, as_json: bool) -> String {
    let mut counts: std::collections::BTreeMap<Rule, usize> = std::collections::BTreeMap::new();
    for l in located {
        *counts.entry(l.diagnostic.rule).or_default() += 1;
    }
    let mut rows: Vec<(Rule, usize)> = counts.into_iter().collect();
    rows.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    if as_json {
        let rows: Vec<Value> = rows
            .iter()
            .map(|(rule, count)| {
                json!({
                    "code": rule.code(),
                    "name": rule.info().name,
                    "group": rule.group().name(),
                    "count": count,
                })
            })
            .collect();
        let hidden: serde_json::Map<String, Value> = summary
            .opt_in_hidden
            .iter()
            .map(|(r, n)| (r.code().to_string(), json!(n)))
            .collect();
        return format!(
            "{}\n",
            serde_json::to_string_pretty(&json!({"statistics": rows, "opt_in_hidden": hidden}))
                .unwrap_or_default()
        );
    }
    let mut out = String::new();
    for (rule, count) in rows {
        let info = rule.info();
        let _ = writeln!(
            out,
            "{count:>5}  {}  {:<30} {}",
            info.code,
            info.name,
            info.severity.as_str()
        );
    }
    out.push_str(&summary_line(summary));
    out
}

/// One line per diagnostic: `path:line:column: severity[CODE] message`.
pub fn concise_lines(located: &[Located]) -> Vec<String> {
    located
        .iter()
        .map(|l| {
            format!(
                "{}:{}:{}: {}[{}] {}",
                l.place.path,
                l.place.start.line,
                l.place.start.column,
                l.diagnostic.severity.as_str(),
                l.code(),
                l.diagnostic.message
            )
        })
        .collect()
}

pub fn concise(located: &[Located], summary: &Summary) -> String {
    let mut out = String::new();
    for line in concise_lines(located) {
        out.push_str(&line);
        out.push('\n');
    }
    out.push_str(&summary_line(summary));
    out
}

/// The lines of a file that a snippet's spans touch: annotate-snippets reads
/// its whole source for every snippet, and a file of prompts is hundreds of
/// kilobytes, so it is given these lines, numbered from where they start.
struct Lines<'t> {
    text: &'t str,
    /// Where the lines start in the file, and the number of the first.
    offset: usize,
    first_line: usize,
}

impl<'t> Lines<'t> {
    fn around(file: &'t str, spans: impl Iterator<Item = std::ops::Range<usize>>) -> Lines<'t> {
        let (mut low, mut high) = (file.len(), 0);
        for span in spans {
            low = low.min(span.start.min(file.len()));
            high = high.max(span.end.min(file.len()));
        }
        let high = high.max(low);
        // The end of a file that ends a line is shown on that line.
        let probe = if low == file.len() && file.ends_with('\n') {
            low - 1
        } else {
            low
        };
        let start = file[..probe].rfind('\n').map_or(0, |i| i + 1);
        let end = file[high..].find('\n').map_or(file.len(), |i| high + i + 1);
        Lines {
            text: &file[start..end],
            offset: start,
            first_line: 1 + file.as_bytes()[..start]
                .iter()
                .filter(|&&b| b == b'\n')
                .count(),
        }
    }

    fn snippet(&self, path: &'t str) -> Snippet<'t, annotate_snippets::Annotation<'t>> {
        Snippet::source(self.text)
            .path(path)
            .line_start(self.first_line)
            .fold(true)
    }

    fn shift(&self, span: std::ops::Range<usize>) -> std::ops::Range<usize> {
        let at = |i: usize| i.saturating_sub(self.offset).min(self.text.len());
        at(span.start)..at(span.end)
    }
}

pub fn full(located: &[Located], summary: &Summary, color: bool) -> String {
    let renderer = if color {
        Renderer::styled()
    } else {
        Renderer::plain()
    };
    let mut out = String::new();
    for l in located {
        let level = match l.diagnostic.severity {
            Severity::Error => Level::ERROR,
            Severity::Warning => Level::WARNING,
            Severity::Info => Level::INFO,
        };
        let span = |p: &Place| p.range.start as usize..p.range.end as usize;
        let same_file: Vec<(&Place, &str)> = l
            .related
            .iter()
            .filter(|(place, _)| place.path == l.place.path)
            .map(|(place, message)| (place, *message))
            .collect();
        let lines = Lines::around(
            l.place.text,
            std::iter::once(span(&l.place)).chain(same_file.iter().map(|(p, _)| span(p))),
        );
        let mut snippet = lines
            .snippet(l.place.path.as_str())
            .annotation(AnnotationKind::Primary.span(lines.shift(span(&l.place))));
        for (place, message) in same_file {
            snippet = snippet.annotation(
                AnnotationKind::Context
                    .span(lines.shift(span(place)))
                    .label(message),
            );
        }
        let mut others = Vec::new();
        for (place, message) in l.related.iter().filter(|(p, _)| p.path != l.place.path) {
            let lines = Lines::around(place.text, std::iter::once(span(place)));
            others.push(
                lines.snippet(place.path.as_str()).annotation(
                    AnnotationKind::Context
                        .span(lines.shift(span(place)))
                        .label(*message),
                ),
            );
        }
        let mut group = level
            .primary_title(l.diagnostic.message.as_str())
            .id(l.code())
            .element(snippet);
        for other in others {
            group = group.element(other);
        }
        let help = format!(
            "`mzk explain {}` documents {}",
            l.code(),
            l.diagnostic.rule.info().name
        );
        for fix in &l.fixes {
            let how = match fix.applicability {
                Applicability::Safe => "`mzk check --fix` does it",
                Applicability::Unsafe => {
                    "`mzk check --fix --unsafe-fixes` does it; review the change"
                }
            };
            group = group.element(Level::HELP.message(format!("{} ({how})", fix.title)));
        }
        group = group.element(Level::HELP.message(help));
        let _ = writeln!(out, "{}\n", renderer.render(&[group]));
    }
    out.push_str(&summary_line(summary));
    out
}

fn range_json(p: &Place) -> Value {
    json!({
        "start": {"line": p.start.line, "column": p.start.column},
        "end": {"line": p.end.line, "column": p.end.column},
    })
}

pub fn json(located: &[Located], summary: &Summary) -> String {
    let diagnostics: Vec<Value> = located
        .iter()
        .map(|l| {
            json!({
                "code": l.code(),
                "name": l.diagnostic.rule.info().name,
                "severity": l.diagnostic.severity.as_str(),
                "path": l.place.path,
                "range": range_json(&l.place),
                "message": l.diagnostic.message,
                "related": l.related.iter().map(|(p, m)| json!({
                    "path": p.path,
                    "range": range_json(p),
                    "message": m,
                })).collect::<Vec<_>>(),
                "fixes": l.fixes.iter().map(|f| json!({
                    "title": f.title,
                    "applicability": f.applicability.as_str(),
                    "edits": f.edits.iter().map(|(p, new_text)| json!({
                        "path": p.path,
                        "range": range_json(p),
                        "new_text": new_text,
                    })).collect::<Vec<_>>(),
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    let value = json!({
        "version": 2,
        "diagnostics": diagnostics,
        "summary": {
            "bundles": summary.bundles,
            "files": summary.files,
            "errors": summary.errors,
            "warnings": summary.warnings,
            "info": summary.info,
            "fixable": summary.fixable,
            "unsafe_fixable": summary.unsafe_fixable,
            "opt_in_hidden": summary
                .opt_in_hidden
                .iter()
                .map(|(r, n)| (r.code().to_string(), json!(n)))
                .collect::<serde_json::Map<String, Value>>(),
        },
    });
    format!(
        "{}\n",
        serde_json::to_string_pretty(&value).unwrap_or_default()
    )
}

fn sarif_level(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "note",
    }
}

fn sarif_region(p: &Place) -> Value {
    json!({
        "startLine": p.start.line,
        "startColumn": p.start.column,
        "endLine": p.end.line,
        "endColumn": p.end.column,
    })
}

fn sarif_location(p: &Place) -> Value {
    json!({
        "physicalLocation": {
            "artifactLocation": {"uri": p.path},
            "region": sarif_region(p),
        }
    })
}

/// SARIF `fixes`: one artifact change per edit (an empty deleted region inserts).
fn sarif_fixes(l: &Located) -> Vec<Value> {
    l.fixes
        .iter()
        .map(|f| {
            json!({
                "description": {"text": format!("{} ({})", f.title, f.applicability.as_str())},
                "artifactChanges": f.edits.iter().map(|(p, new_text)| json!({
                    "artifactLocation": {"uri": p.path},
                    "replacements": [{
                        "deletedRegion": sarif_region(p),
                        "insertedContent": {"text": new_text},
                    }],
                })).collect::<Vec<_>>(),
            })
        })
        .collect()
}

pub fn sarif(located: &[Located]) -> String {
    let rules: Vec<Value> = Rule::ALL
        .iter()
        .map(|r| {
            let info = r.info();
            json!({
                "id": info.code,
                "name": info.name,
                "shortDescription": {"text": info.summary},
                "fullDescription": {"text": info.summary},
                "help": {"text": super::explain(*r), "markdown": super::explain(*r)},
                "defaultConfiguration": {"level": sarif_level(info.severity)},
            })
        })
        .collect();
    let results: Vec<Value> = located
        .iter()
        .map(|l| {
            json!({
                "ruleId": l.code(),
                "ruleIndex": Rule::ALL.iter().position(|r| *r == l.diagnostic.rule),
                "level": sarif_level(l.diagnostic.severity),
                "message": {"text": l.diagnostic.message},
                "locations": [sarif_location(&l.place)],
                "relatedLocations": l.related.iter().enumerate().map(|(i, (p, m))| {
                    let mut loc = sarif_location(p);
                    loc["id"] = json!(i);
                    loc["message"] = json!({"text": m});
                    loc
                }).collect::<Vec<_>>(),
                "fixes": sarif_fixes(l),
            })
        })
        .collect();
    let value = json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "mzk",
                "version": env!("CARGO_PKG_VERSION"),
                "rules": rules,
            }},
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    });
    format!(
        "{}\n",
        serde_json::to_string_pretty(&value).unwrap_or_default()
    )
}

/// GitHub workflow commands: data escapes `%`, CR, LF; properties also `:` and `,`.
fn escape_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

pub fn github(located: &[Located]) -> String {
    let mut out = String::new();
    for l in located {
        let command = match l.diagnostic.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "notice",
        };
        let p = &l.place;
        let _ = writeln!(
            out,
            "::{command} file={},line={},col={},endLine={},endColumn={},title={}::{}",
            escape_property(&p.path),
            p.start.line,
            p.start.column,
            p.end.line,
            p.end.column,
            escape_property(&format!("{} {}", l.code(), l.diagnostic.rule.info().name)),
            escape_data(&l.diagnostic.message)
        );
    }
    out
}

/// A path for display: relative to the current folder when it lies below it.
pub fn display_path(path: &Path, cwd: &Path) -> String {
    let shown = if path.is_absolute() {
        path.strip_prefix(cwd).unwrap_or(path)
    } else {
        path.strip_prefix("./").unwrap_or(path)
    };
    shown.to_string_lossy().replace('\\', "/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_snippet_gets_the_lines_its_spans_touch() {
        let file = "a: 1\nb: two\nc: 3\nd: 4\n";
        let lines = Lines::around(file, [8..11, 15..16].into_iter());
        assert_eq!((lines.text, lines.first_line), ("b: two\nc: 3\n", 2));
        assert_eq!(lines.shift(8..11), 3..6);
        // The end of the file, after its last line break: that last line.
        let end = Lines::around(file, std::iter::once(file.len()..file.len()));
        assert_eq!((end.text, end.first_line), ("d: 4\n", 4));
        assert_eq!(end.shift(file.len()..file.len()), 5..5);
        // A file without a final line break, and an empty one.
        let open = Lines::around("x: [1,\n", std::iter::once(3..8));
        assert_eq!((open.text, open.first_line), ("x: [1,\n", 1));
        let empty = Lines::around("", std::iter::once(0..0));
        assert_eq!((empty.text, empty.first_line), ("", 1));
    }

    #[test]
    fn github_escaping() {
        assert_eq!(escape_data("a%b\nc"), "a%25b%0Ac");
        assert_eq!(escape_property("a:b,c"), "a%3Ab%2Cc");
    }
}
