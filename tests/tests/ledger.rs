//! The findings ledger (tests/ledger/mozaiks-0.2.0.txt): every finding
//! `mzk check` reports by default on the 15 real bundles mozaiks 0.2.0 ships,
//! each with a reviewed verdict, in the spirit of ruff's ecosystem check. Any
//! change of findings on real bundles — a new one, a lost one, a changed
//! message — fails here and shows up in review. The corpus is fetched as the
//! conformance suite fetches it (tests/conformance/run.py --print-corpus, from
//! PyPI, cached); when it cannot be had, the test fails: it never skips.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use mzk_tests::repo;
use serde_json::Value;

/// The default output must stay readable: at most this many lines.
const MAX_DEFAULT_LINES: usize = 1_500;

/// The ledger never skips: without the real bundles it fails, whatever the
/// environment says.
fn corpus() -> PathBuf {
    mzk_tests::corpus().expect("the real bundles of mozaiks 0.2.0 are needed for the ledger")
}

fn mzk(corpus: &Path, args: &[&str]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_mzk-e2e"))
        .arg("check")
        .arg(".")
        .args(args)
        .current_dir(corpus)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(
        matches!(output.status.code(), Some(0 | 1)),
        "mzk check failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// The ledger: (finding line → verdict line) in file order, and the opt-in counts.
struct Ledger {
    findings: Vec<(String, String)>,
    opt_in: BTreeMap<String, usize>,
}

fn read_ledger() -> Ledger {
    let text = std::fs::read_to_string(repo().join("tests/ledger/mozaiks-0.2.0.txt")).unwrap();
    let mut findings: Vec<(String, String)> = Vec::new();
    let mut opt_in = BTreeMap::new();
    for line in text.lines() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        if let Some(rest) = line.strip_prefix("opt-in ") {
            let (code, count) = rest.split_once(' ').expect("opt-in CODE COUNT");
            opt_in.insert(code.to_string(), count.trim().parse().expect("a count"));
        } else if let Some(verdict) = line.strip_prefix("  ") {
            let last = findings.last_mut().expect("a verdict follows its finding");
            assert!(last.1.is_empty(), "two verdicts for `{}`", last.0);
            last.1 = verdict.to_string();
        } else {
            findings.push((line.to_string(), String::new()));
        }
    }
    Ledger { findings, opt_in }
}

/// `CODE path:line:column message`, as the ledger lists findings.
fn finding_lines(report: &Value) -> Vec<String> {
    report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            format!(
                "{} {}:{}:{} {}",
                d["code"].as_str().unwrap(),
                d["path"].as_str().unwrap(),
                d["range"]["start"]["line"],
                d["range"]["start"]["column"],
                d["message"].as_str().unwrap()
            )
        })
        .collect()
}

#[test]
fn default_findings_on_the_real_bundles_match_the_reviewed_ledger() {
    let corpus = corpus();
    let ledger = read_ledger();
    let report: Value = serde_json::from_str(&mzk(&corpus, &["--output-format", "json"])).unwrap();
    let actual = finding_lines(&report);

    let mut problems = Vec::new();
    for (finding, verdict) in &ledger.findings {
        let reason = verdict
            .strip_prefix("true: ")
            .or_else(|| verdict.strip_prefix("accepted: "));
        if reason.is_none_or(|r| r.trim().len() < 40) {
            problems.push(format!(
                "no verdict (`true: why` or `accepted: why`, one line) for:\n  {finding}"
            ));
        }
    }
    let listed: Vec<&str> = ledger.findings.iter().map(|(f, _)| f.as_str()).collect();
    for finding in &actual {
        if !listed.contains(&finding.as_str()) {
            problems.push(format!(
                "reported but not in the ledger (review it, then add it with a verdict):\n  {finding}"
            ));
        }
    }
    for finding in &listed {
        if !actual.iter().any(|a| a == finding) {
            problems.push(format!(
                "in the ledger but no longer reported (a lost true finding, or a fixed message?):\n  {finding}"
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "the findings on the real bundles changed (tests/ledger/mozaiks-0.2.0.txt):\n{}",
        problems.join("\n")
    );
    // Nothing is printed by default that is not a warning or an error.
    assert_eq!(report["summary"]["info"], 0, "info findings are opt-in");

    // The opt-in rules still find what they found, and the default run says
    // how many findings they hold back.
    let hidden: BTreeMap<String, usize> = report["summary"]["opt_in_hidden"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v.as_u64().unwrap() as usize))
        .collect();
    assert_eq!(
        hidden, ledger.opt_in,
        "the default run's count of opt-in findings"
    );
    let selected: Value = serde_json::from_str(&mzk(
        &corpus,
        &[
            "--extend-select",
            "pedantic,context-budget",
            "--statistics",
            "--output-format",
            "json",
        ],
    ))
    .unwrap();
    let counts: BTreeMap<String, usize> = selected["statistics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["code"].as_str().unwrap().to_string(),
                s["count"].as_u64().unwrap() as usize,
            )
        })
        .filter(|(code, _)| ledger.opt_in.contains_key(code))
        .collect();
    assert_eq!(counts, ledger.opt_in, "the opt-in rules, selected");
}

#[test]
fn the_default_output_on_the_real_bundles_stays_short() {
    let corpus = corpus();
    let full = mzk(&corpus, &["--no-color"]);
    let lines = full.lines().count();
    assert!(
        lines <= MAX_DEFAULT_LINES,
        "`mzk check --no-color` prints {lines} lines on the real bundles (at most {MAX_DEFAULT_LINES})"
    );
    assert!(
        full.contains("note: ") && full.contains("of opt-in rules not shown"),
        "the default run says how many opt-in findings it holds back:\n{}",
        &full[full.len().saturating_sub(400)..]
    );
}

/// The Python name scan parses an excerpt of each module (the lines that can
/// build a name, with their block headers and the module-level assignments):
/// on every Python file of the real bundles and of this repository it finds
/// exactly the names a parse of the whole file finds.
#[test]
fn the_python_excerpt_builds_what_the_whole_module_builds() {
    use mzk_analyzer::syntax::python_keys::{scan, scan_whole};
    let roots = [
        corpus(),
        repo().join("bundles"),
        repo().join("tests/fixtures"),
    ];
    let (mut files, mut building) = (0, 0);
    for root in &roots {
        for (path, bytes) in mzk_tests::files_under(root) {
            if path.extension().is_some_and(|e| e == "py") {
                let src = String::from_utf8_lossy(&bytes);
                let whole = scan_whole(&src);
                assert_eq!(scan(&src), whole, "{}", root.join(&path).display());
                files += 1;
                building += usize::from(!whole.is_empty());
            }
        }
    }
    // The corpus holds hundreds of modules, dozens of which build names.
    assert!(
        files >= 200 && building >= 15,
        "{files} files, {building} building names"
    );
}
