//! Settings: which rules run and how loud they are, from `mzk.toml` or the
//! `[tool.mzk]` table of `pyproject.toml`, found by walking up from each
//! bundle (the nearest wins; in one folder `mzk.toml` wins over
//! `pyproject.toml`), and the command line on top. `analysis::analyze`
//! applies it once the checks have run, together with the suppression
//! comments of its files, so the checks themselves never know about either;
//! the prompt checks, whose thresholds are settings, run just before with
//! the `[context]` limits.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use globset::{Glob, GlobMatcher};

use crate::base::fs::FileSystem;
use crate::base::Severity;
use crate::diagnostics::{did_you_mean, mean_hint, sort_diagnostics, Diagnostic};
use crate::model::Bundle;
use crate::prompt::PromptLimits;
use crate::rules::{Group, Rule, Selector};
use crate::suppression::{self, Suppressions};

/// The keys a configuration may hold.
const KEYS: &[&str] = &[
    "select",
    "extend-select",
    "ignore",
    "severity",
    "exclude",
    "per-file-ignores",
    "context",
];

/// The keys of the `[context]` table.
const CONTEXT_KEYS: &[&str] = &[
    "max-prompt-tokens",
    "duplicate-min-chars",
    "near-duplicate-similarity",
];

/// A problem in a configuration file or option.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    pub path: Option<PathBuf>,
    /// 1-based, when known.
    pub line: Option<usize>,
    pub message: String,
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (&self.path, self.line) {
            (Some(path), Some(line)) => write!(f, "{}:{line}: {}", path.display(), self.message),
            (Some(path), None) => write!(f, "{}: {}", path.display(), self.message),
            _ => write!(f, "{}", self.message),
        }
    }
}

/// Rule selection and severities for the bundles under one configuration.
#[derive(Debug, Clone)]
pub struct Config {
    /// The file it was read from; `None` for the defaults.
    pub path: Option<PathBuf>,
    /// Globs are relative to this folder (the configuration file's).
    pub root: PathBuf,
    select: Vec<Selector>,
    extend_select: Vec<Selector>,
    ignore: Vec<Selector>,
    severity: Vec<(Rule, Severity)>,
    exclude: Vec<GlobMatcher>,
    per_file_ignores: Vec<(GlobMatcher, Vec<Selector>)>,
    /// Thresholds of the prompt checks (`[context]`).
    pub prompt_limits: PromptLimits,
}

/// Command-line options layered over the file: `--select` starts a fresh
/// selection (the file's `select`, `extend-select` and `ignore` no longer
/// count), `--extend-select` and `--ignore` add to what is there.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    pub select: Option<Vec<String>>,
    pub extend_select: Vec<String>,
    pub ignore: Vec<String>,
}

impl Config {
    /// The default rules (`mzk rules` lists which) at their default severity.
    pub fn defaults(root: &Path) -> Config {
        Config {
            path: None,
            root: root.to_path_buf(),
            select: vec![Selector::Default],
            extend_select: Vec::new(),
            ignore: Vec::new(),
            severity: Vec::new(),
            exclude: Vec::new(),
            per_file_ignores: Vec::new(),
            prompt_limits: PromptLimits::default(),
        }
    }

    /// The configuration that governs `dir`: the nearest `mzk.toml`, or
    /// `pyproject.toml` with a `[tool.mzk]` table, in `dir` or above it.
    pub fn discover(fs: &dyn FileSystem, dir: &Path) -> Result<Config, ConfigError> {
        for folder in dir.ancestors() {
            let own = folder.join("mzk.toml");
            if let Ok(bytes) = fs.read(&own) {
                return Config::parse(&own, &String::from_utf8_lossy(&bytes), false);
            }
            let pyproject = folder.join("pyproject.toml");
            if let Ok(bytes) = fs.read(&pyproject) {
                let text = String::from_utf8_lossy(&bytes);
                if has_tool_mzk(&text) {
                    return Config::parse(&pyproject, &text, true);
                }
            }
        }
        Ok(Config::defaults(dir))
    }

    /// Reads a configuration file (`in_pyproject`: the `[tool.mzk]` table).
    pub fn parse(path: &Path, text: &str, in_pyproject: bool) -> Result<Config, ConfigError> {
        let error = |line: Option<usize>, message: String| ConfigError {
            path: Some(path.to_path_buf()),
            line,
            message,
        };
        let document: toml::Table = text.parse().map_err(|e: toml::de::Error| {
            let line = e
                .span()
                .map(|s| text[..s.start.min(text.len())].lines().count().max(1));
            error(line, format!("not valid TOML: {}", e.message()))
        })?;
        let table = if in_pyproject {
            match document.get("tool").and_then(|t| t.get("mzk")) {
                Some(toml::Value::Table(t)) => t.clone(),
                _ => toml::Table::new(),
            }
        } else {
            document
        };
        let line_of = |key: &str| key_line(text, key);
        let root = path.parent().unwrap_or(Path::new("")).to_path_buf();
        let mut config = Config::defaults(&root);
        config.path = Some(path.to_path_buf());
        for (key, value) in &table {
            let list = |value: &toml::Value| -> Result<Vec<String>, ConfigError> {
                let items = value.as_array().ok_or_else(|| {
                    error(line_of(key), format!("`{key}` must be a list of strings"))
                })?;
                items
                    .iter()
                    .map(|v| {
                        v.as_str().map(str::to_string).ok_or_else(|| {
                            error(line_of(key), format!("`{key}` must be a list of strings"))
                        })
                    })
                    .collect()
            };
            let selectors = |value: &toml::Value| -> Result<Vec<Selector>, ConfigError> {
                list(value)?
                    .iter()
                    .map(|s| {
                        Selector::parse(s).ok_or_else(|| error(line_of(key), unknown_selector(s)))
                    })
                    .collect()
            };
            match key.as_str() {
                "select" => config.select = selectors(value)?,
                "extend-select" => config.extend_select = selectors(value)?,
                "ignore" => config.ignore = selectors(value)?,
                "severity" => {
                    let table = value.as_table().ok_or_else(|| {
                        error(line_of(key), "`severity` must be a table of CODE = \"error\" | \"warning\" | \"info\"".into())
                    })?;
                    for (code, level) in table {
                        let rule = Rule::lookup(code)
                            .ok_or_else(|| error(line_of(code), unknown_selector(code)))?;
                        let severity = match level.as_str() {
                            Some("error") => Severity::Error,
                            Some("warning") => Severity::Warning,
                            Some("info") => Severity::Info,
                            _ => {
                                return Err(error(
                                    line_of(code),
                                    format!("the severity of {code} must be \"error\", \"warning\" or \"info\""),
                                ))
                            }
                        };
                        config.severity.push((rule, severity));
                    }
                }
                "exclude" => {
                    config.exclude = list(value)?
                        .iter()
                        .map(|g| glob(g).map_err(|m| error(line_of(key), m)))
                        .collect::<Result<_, _>>()?;
                }
                "per-file-ignores" => {
                    let table = value.as_table().ok_or_else(|| {
                        error(
                            line_of(key),
                            "`per-file-ignores` must be a table of \"GLOB\" = [\"CODE\", ...]"
                                .into(),
                        )
                    })?;
                    for (pattern, codes) in table {
                        let matcher = glob(pattern).map_err(|m| error(line_of(pattern), m))?;
                        let codes = selectors(codes)?;
                        config.per_file_ignores.push((matcher, codes));
                    }
                }
                "context" => {
                    config.prompt_limits =
                        prompt_limits(value).map_err(|(k, m)| error(line_of(&k), m))?;
                }
                other => {
                    return Err(error(
                        line_of(other),
                        format!(
                            "unknown key `{other}`{}; the keys are {}",
                            mean_hint(other, did_you_mean(other, KEYS.iter().copied())),
                            KEYS.join(", ")
                        ),
                    ))
                }
            }
        }
        Ok(config)
    }

    /// Applies command-line options.
    pub fn with_overrides(mut self, overrides: &Overrides) -> Result<Config, ConfigError> {
        let parse = |codes: &[String]| -> Result<Vec<Selector>, ConfigError> {
            codes
                .iter()
                .map(|c| {
                    Selector::parse(c).ok_or_else(|| ConfigError {
                        path: None,
                        line: None,
                        message: unknown_selector(c),
                    })
                })
                .collect()
        };
        if let Some(select) = &overrides.select {
            self.select = parse(select)?;
            self.extend_select.clear();
            self.ignore.clear();
        }
        self.extend_select.extend(parse(&overrides.extend_select)?);
        self.ignore.extend(parse(&overrides.ignore)?);
        Ok(self)
    }

    /// Whether `rule` runs at all: the most specific matching selector
    /// decides, and on a tie `ignore` wins.
    pub fn enabled(&self, rule: Rule) -> bool {
        let best = |selectors: &[Selector]| {
            selectors
                .iter()
                .filter(|s| s.matches(rule))
                .map(Selector::specificity)
                .max()
        };
        let on = best(&self.select).max(best(&self.extend_select));
        let off = best(&self.ignore);
        match (on, off) {
            (Some(on), Some(off)) => on > off,
            (Some(_), None) => true,
            _ => false,
        }
    }

    /// Whether the bundle folder `dir` is excluded.
    pub fn excludes(&self, dir: &Path) -> bool {
        let relative = dir.strip_prefix(&self.root).unwrap_or(dir);
        self.exclude.iter().any(|g| {
            relative
                .ancestors()
                .any(|a| !a.as_os_str().is_empty() && g.is_match(a))
        })
    }

    fn ignored_in_file(&self, rule: Rule, path: &Path) -> bool {
        let relative = path.strip_prefix(&self.root).unwrap_or(path);
        self.per_file_ignores
            .iter()
            .any(|(g, codes)| g.is_match(relative) && codes.iter().any(|c| c.matches(rule)))
    }

    fn severity_of(&self, rule: Rule) -> Option<Severity> {
        self.severity
            .iter()
            .rev()
            .find(|(r, _)| *r == rule)
            .map(|(_, s)| *s)
    }

    /// Drops what the selection and suppressions turn off, sets severities,
    /// and reports unused or unreadable suppression comments (MZ901, MZ902).
    /// `analysis::analyze` calls it, after the prompt checks.
    /// `complete` is false while a file of the bundle cannot be read: then
    /// cross-file findings are held back (see `analysis::hold_back`), and a
    /// suppression may only look unused because its finding was held.
    /// `opt_in_hidden` gets the count of each opt-in rule's findings left off.
    pub(crate) fn apply(
        &self,
        bundle: &Bundle,
        complete: bool,
        diagnostics: &mut Vec<Diagnostic>,
        opt_in_hidden: &mut BTreeMap<Rule, usize>,
    ) {
        opt_in_hidden.clear();
        let mut suppressions: Vec<Suppressions> = bundle
            .files
            .iter()
            .map(|f| suppression::scan(f.id, &f.text))
            .collect();
        let mut kept = Vec::with_capacity(diagnostics.len());
        for mut d in std::mem::take(diagnostics) {
            let path = bundle
                .file(d.file)
                .map_or_else(|| bundle.dir.clone(), |f| bundle.path_of(f));
            let enabled = self.enabled(d.rule);
            if self.ignored_in_file(d.rule, &path) {
                continue;
            }
            let file = bundle.file(d.file);
            let line = file.map_or(0, |f| {
                f.line_index
                    .position(&f.text, d.range.start, crate::syntax::ColumnUnit::Utf8)
                    .line as usize
            });
            // A suppression of a rule that is off is not reported as unused
            // (MZ901 only judges enabled rules), so consulting it here only
            // keeps a suppressed finding out of the opt-in count.
            if let Some(s) = suppressions.get_mut(d.file.0 as usize) {
                if s.suppress(d.rule, line) {
                    continue;
                }
            }
            if !enabled {
                if !d.rule.default_enabled() && !self.ignore.iter().any(|s| s.matches(d.rule)) {
                    *opt_in_hidden.entry(d.rule).or_default() += 1;
                }
                continue;
            }
            if let Some(severity) = self.severity_of(d.rule) {
                d.severity = severity;
            }
            kept.push(d);
        }
        for s in &suppressions {
            for d in s.findings(|rule| self.enabled(rule)) {
                if self.enabled(d.rule) && (complete || d.rule.reads_only_its_file()) {
                    let mut d = d;
                    if let Some(severity) = self.severity_of(d.rule) {
                        d.severity = severity;
                    }
                    kept.push(d);
                }
            }
        }
        sort_diagnostics(&mut kept);
        *diagnostics = kept;
    }
}

/// Reads the `[context]` table; an error names the key it is about.
fn prompt_limits(value: &toml::Value) -> Result<PromptLimits, (String, String)> {
    let table = value.as_table().ok_or_else(|| {
        (
            "context".to_string(),
            format!(
                "`context` must be a table with the keys {}",
                CONTEXT_KEYS.join(", ")
            ),
        )
    })?;
    let mut limits = PromptLimits::default();
    for (key, value) in table {
        let count = || -> Result<usize, (String, String)> {
            value
                .as_integer()
                .filter(|n| *n > 0)
                .map(|n| n as usize)
                .ok_or_else(|| {
                    (
                        key.clone(),
                        format!("`{key}` must be a positive whole number"),
                    )
                })
        };
        match key.as_str() {
            "max-prompt-tokens" => limits.max_prompt_tokens = count()?,
            "duplicate-min-chars" => limits.duplicate_min_chars = count()?,
            "near-duplicate-similarity" => {
                limits.near_duplicate_similarity = value
                    .as_float()
                    .or_else(|| value.as_integer().map(|n| n as f64))
                    .filter(|x| (0.0..=1.0).contains(x) && *x > 0.0)
                    .ok_or_else(|| {
                        (
                            key.clone(),
                            format!("`{key}` must be a number above 0 and at most 1 (1: identical sections only)"),
                        )
                    })?;
            }
            other => {
                return Err((
                    other.to_string(),
                    format!(
                        "unknown key `{other}` in `[context]`{}; the keys are {}",
                        mean_hint(other, did_you_mean(other, CONTEXT_KEYS.iter().copied())),
                        CONTEXT_KEYS.join(", ")
                    ),
                ))
            }
        }
    }
    Ok(limits)
}

fn unknown_selector(text: &str) -> String {
    let codes = Rule::ALL.iter().map(|r| r.code());
    format!(
        "`{text}` is not a rule code, code prefix or group{} (`mzk rules` lists them; `ALL` selects every rule, `default` the rules on by default, and the groups are {})",
        mean_hint(text, did_you_mean(text, codes.chain(Group::ALL.iter().map(|g| g.name())))),
        Group::ALL.iter().map(|g| g.name()).collect::<Vec<_>>().join(", ")
    )
}

fn glob(pattern: &str) -> Result<GlobMatcher, String> {
    Glob::new(pattern)
        .map(|g| g.compile_matcher())
        .map_err(|e| format!("`{pattern}` is not a valid glob: {e}"))
}

/// Whether a pyproject.toml has a `[tool.mzk]` table (a cheap look first:
/// most pyproject files are not about mzk).
fn has_tool_mzk(text: &str) -> bool {
    text.contains("tool.mzk")
        && text
            .parse::<toml::Table>()
            .ok()
            .is_some_and(|t| t.get("tool").and_then(|t| t.get("mzk")).is_some())
}

/// The 1-based line where `key` is written (`key =` or `"key" =`), if found.
fn key_line(text: &str, key: &str) -> Option<usize> {
    text.lines()
        .position(|line| {
            let line = line.trim_start();
            let rest = line
                .strip_prefix(key)
                .or_else(|| line.strip_prefix(&format!("\"{key}\"")))
                .or_else(|| line.strip_prefix(&format!("'{key}'")));
            rest.is_some_and(|r| r.trim_start().starts_with('='))
        })
        .map(|i| i + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Config, ConfigError> {
        Config::parse(Path::new("/w/mzk.toml"), text, false)
    }

    #[test]
    fn selection_by_code_prefix_and_specificity() {
        let config = parse(
            "select = [\"MZ3\", \"MZ1\"]\nignore = [\"MZ30\"]\nextend-select = [\"MZ305\"]\n",
        )
        .unwrap();
        assert!(config.enabled(Rule::UnknownKey));
        assert!(!config.enabled(Rule::UnreachableAgent)); // MZ301 under the ignored MZ30
        assert!(config.enabled(Rule::PauseWithoutUserRule)); // MZ305 more specific than MZ30
        assert!(!config.enabled(Rule::UnknownAgent)); // MZ2 not selected
        let all = parse("ignore = [\"MZ211\"]").unwrap();
        assert!(all.enabled(Rule::UnknownKey) && !all.enabled(Rule::UnusedVariable));
    }

    #[test]
    fn unknown_keys_and_codes_are_errors_with_a_line_and_a_hint() {
        let e = parse("select = [\"MZ1\"]\nselct = [\"MZ2\"]\n").unwrap_err();
        assert_eq!(e.line, Some(2));
        assert!(e.message.contains("did you mean `select`"), "{}", e.message);
        let e = parse("ignore = [\"MZ999\"]").unwrap_err();
        assert!(
            e.message.contains("`MZ999` is not a rule code"),
            "{}",
            e.message
        );
        let e = parse("[severity]\nMZ301 = \"loud\"\n").unwrap_err();
        assert_eq!(e.line, Some(2));
        let e = parse("select = [").unwrap_err();
        assert!(e.message.starts_with("not valid TOML"), "{}", e.message);
    }

    #[test]
    fn context_limits() {
        let config =
            parse("[context]\nmax-prompt-tokens = 2000\nnear-duplicate-similarity = 1\n").unwrap();
        assert_eq!(config.prompt_limits.max_prompt_tokens, 2000);
        assert_eq!(config.prompt_limits.near_duplicate_similarity, 1.0);
        assert_eq!(config.prompt_limits.duplicate_min_chars, 400);
        let e = parse("[context]\nmax-prompt-token = 2000\n").unwrap_err();
        assert_eq!(e.line, Some(2));
        assert!(
            e.message.contains("did you mean `max-prompt-tokens`"),
            "{}",
            e.message
        );
        for bad in [
            "max-prompt-tokens = 0",
            "max-prompt-tokens = \"big\"",
            "near-duplicate-similarity = 1.5",
        ] {
            let e = parse(&format!("[context]\n{bad}\n")).unwrap_err();
            assert_eq!(e.line, Some(2), "{bad}: {}", e.message);
        }
        assert!(parse("context = 3").is_err());
    }

    #[test]
    fn pyproject_table_and_globs() {
        let text = "[project]\nname = \"x\"\n[tool.mzk]\nexclude = [\"drafts/**\"]\n[tool.mzk.per-file-ignores]\n\"**/tools/*.py\" = [\"MZ505\"]\n";
        assert!(has_tool_mzk(text));
        let config = Config::parse(Path::new("/w/pyproject.toml"), text, true).unwrap();
        assert!(config.excludes(Path::new("/w/drafts/Old")));
        assert!(!config.excludes(Path::new("/w/live/New")));
        assert!(config.ignored_in_file(Rule::ToolSignature, Path::new("/w/B/tools/a.py")));
        assert!(!config.ignored_in_file(Rule::ToolSignature, Path::new("/w/B/tools.yaml")));
    }

    #[test]
    fn discovery_takes_the_nearest_file_and_mzk_toml_before_pyproject() {
        let mut fs = crate::MemoryFs::new();
        fs.insert("/w/mzk.toml", "ignore = [\"MZ2\"]");
        fs.insert("/w/pyproject.toml", "[tool.mzk]\nignore = [\"MZ3\"]");
        fs.insert("/w/flows/pyproject.toml", "[project]\nname = \"x\"\n");
        fs.insert("/w/flows/Desk/orchestrator.yaml", "");
        fs.insert("/w/other/pyproject.toml", "[tool.mzk]\nignore = [\"MZ4\"]");
        fs.insert("/w/other/Desk/orchestrator.yaml", "");
        // A pyproject without [tool.mzk] is passed over; in /w, mzk.toml wins.
        let config = Config::discover(&fs, Path::new("/w/flows/Desk")).unwrap();
        assert_eq!(config.path.as_deref(), Some(Path::new("/w/mzk.toml")));
        assert!(!config.enabled(Rule::UnknownAgent) && config.enabled(Rule::UnreachableAgent));
        // The nearest [tool.mzk] wins over the root's mzk.toml.
        let config = Config::discover(&fs, Path::new("/w/other/Desk")).unwrap();
        assert_eq!(
            config.path.as_deref(),
            Some(Path::new("/w/other/pyproject.toml"))
        );
        assert!(config.enabled(Rule::UnknownAgent) && !config.enabled(Rule::ConditionValueType));
        // Nothing anywhere: every rule.
        let empty = crate::MemoryFs::new();
        let config = Config::discover(&empty, Path::new("/x/Desk")).unwrap();
        assert!(config.path.is_none());
        assert!(Rule::ALL
            .iter()
            .all(|r| config.enabled(*r) == r.default_enabled()));
    }

    #[test]
    fn groups_are_selectors_and_opt_in_rules_are_off_by_default() {
        let defaults = parse("").unwrap();
        assert!(defaults.enabled(Rule::UnusedVariable) && defaults.enabled(Rule::PromptOverBudget));
        assert!(!defaults.enabled(Rule::UnusedViewVariable));
        assert!(!defaults.enabled(Rule::DuplicatedPromptSection));
        let budget = parse("extend-select = [\"context-budget\"]").unwrap();
        assert!(
            budget.enabled(Rule::UnusedViewVariable) && budget.enabled(Rule::UnboundedExposure)
        );
        assert!(!budget.enabled(Rule::DuplicatedPromptSection));
        // A code is more specific than a group.
        let one = parse("extend-select = [\"context-budget\"]\nignore = [\"MZ805\"]").unwrap();
        assert!(one.enabled(Rule::UnusedViewVariable) && !one.enabled(Rule::UnboundedExposure));
        // A group can be ignored, and `default` selected explicitly.
        let quiet = parse("select = [\"default\", \"pedantic\"]\nignore = [\"hygiene\"]").unwrap();
        assert!(quiet.enabled(Rule::DuplicatedPromptSection) && !quiet.enabled(Rule::UnusedModel));
        assert!(quiet.enabled(Rule::UnknownKey));
        // `ALL` is every rule, opt-in ones included.
        let all = parse("select = [\"ALL\"]").unwrap();
        assert!(Rule::ALL.iter().all(|r| all.enabled(*r)));
        let e = parse("extend-select = [\"pedantics\"]").unwrap_err();
        assert!(
            e.message.contains("did you mean `pedantic`"),
            "{}",
            e.message
        );
    }

    #[test]
    fn command_line_overrides() {
        let config = parse("select = [\"MZ1\"]").unwrap();
        let wide = config
            .clone()
            .with_overrides(&Overrides {
                select: Some(vec!["ALL".into()]),
                ignore: vec!["MZ2".into()],
                ..Overrides::default()
            })
            .unwrap();
        assert!(wide.enabled(Rule::UnreachableAgent) && !wide.enabled(Rule::UnknownAgent));
        assert!(config
            .with_overrides(&Overrides {
                ignore: vec!["MZ99".into()],
                ..Overrides::default()
            })
            .is_err());
    }
}
