//! Output formats, exit codes and what a check reports.

use super::*;

#[test]
fn examples_pass_with_exit_status_zero() {
    let out = mzk(&["check", "bundles"], &repo());
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    // 12 YAML files and the 6 Python files their tools and middleware bind.
    assert_eq!(
        stdout(&out),
        "0 errors, 0 warnings in 2 bundles (18 files)\n"
    );
}

#[test]
fn errors_give_exit_status_one_and_every_format_reports_them() {
    let root = repo().join("tests/fixtures/tools");
    let concise = mzk(&["check", "--output-format", "concise"], &root);
    assert_eq!(concise.status.code(), Some(1));
    let text = stdout(&concise);
    assert!(
        text.contains("Tooling/tools.yaml:40:5: error[MZ101] unknown key `autotoolcall`"),
        "{text}"
    );
    let errors = text.lines().filter(|l| l.contains(": error[")).count();
    let warnings = text.lines().filter(|l| l.contains(": warning[")).count();
    assert!(errors > 10 && warnings > 0, "{text}");
    assert!(
        text.contains(&format!(
            "\n{errors} errors, {warnings} warnings in 1 bundle (2 files)\n"
        )),
        "{text}"
    );
    // One bundle: no per-bundle lines; what `--fix` would do comes last.
    assert!(
        text.trim_end()
            .lines()
            .last()
            .is_some_and(|l| l.contains("fixable with `mzk check --fix`")),
        "{text}"
    );

    let full = stdout(&mzk(&["check", "Tooling"], &root));
    assert!(
        full.contains("error[MZ101]: unknown key `autotoolcall`"),
        "{full}"
    );
    assert!(full.contains("--> Tooling/tools.yaml:40:5"), "{full}");
    assert!(full.contains("40 |     autotoolcall: true"), "{full}");
    assert!(full.contains("^^^^^^^^^^^^"), "{full}");

    let github = stdout(&mzk(&["check", "--output-format", "github"], &root));
    assert!(
        github.contains("::error file=Tooling/tools.yaml,line=40,col=5,endLine=40,endColumn=17,title=MZ101 unknown-key::unknown key `autotoolcall`"),
        "{github}"
    );
}

#[test]
fn several_bundles_report_errors_first_and_count_each_bundle() {
    let root = repo().join("tests/fixtures/references");
    let out = mzk(&["check", "--output-format", "concise"], &root);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    let findings: Vec<&str> = text
        .lines()
        .filter(|l| l.contains(": error[") || l.contains(": warning["))
        .collect();
    let last_error = findings.iter().rposition(|l| l.contains(": error["));
    let first_warning = findings.iter().position(|l| l.contains(": warning["));
    assert!(
        matches!((last_error, first_warning), (Some(e), Some(w)) if e < w),
        "errors of every bundle before any warning:\n{text}"
    );
    // Each bundle's line in the summary says what its findings are.
    let bundles: std::collections::BTreeSet<&str> = findings
        .iter()
        .filter_map(|l| l.split('/').next())
        .collect();
    assert!(bundles.len() >= 2, "{text}");
    for bundle in bundles {
        let count = |kind: &str| {
            findings
                .iter()
                .filter(|l| l.starts_with(&format!("{bundle}/")) && l.contains(kind))
                .count()
        };
        let (errors, warnings) = (count(": error["), count(": warning["));
        let expected = match (errors, warnings) {
            (e, 0) => format!("{e} error{}", if e == 1 { "" } else { "s" }),
            (0, w) => format!("{w} warning{}", if w == 1 { "" } else { "s" }),
            (e, w) => format!(
                "{e} error{}, {w} warning{}",
                if e == 1 { "" } else { "s" },
                if w == 1 { "" } else { "s" }
            ),
        };
        assert!(
            text.lines().any(|l| l.starts_with("  ")
                && l.trim_start().starts_with(bundle)
                && l.trim_end().ends_with(&expected)),
            "no summary line `{bundle} … {expected}`:\n{text}"
        );
    }
}

#[test]
fn json_output_has_the_documented_shape() {
    let root = repo().join("tests/fixtures/contract");
    // The opt-in context-budget rules add info findings to the errors and warnings.
    let out = mzk(
        &[
            "check",
            "--output-format",
            "json",
            "--extend-select",
            "context-budget",
        ],
        &root,
    );
    assert_eq!(out.status.code(), Some(1));
    let json: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(json["version"], 2);
    let summary = &json["summary"];
    assert_eq!(summary["bundles"], 1);
    assert_eq!(summary["files"], 7);
    let diagnostics = json["diagnostics"].as_array().unwrap();
    let count = |severity: &str| {
        diagnostics
            .iter()
            .filter(|d| d["severity"] == severity)
            .count()
    };
    assert_eq!(summary["errors"].as_u64().unwrap() as usize, count("error"));
    assert_eq!(
        summary["warnings"].as_u64().unwrap() as usize,
        count("warning")
    );
    assert_eq!(summary["info"].as_u64().unwrap() as usize, count("info"));
    assert!(count("warning") > 0 && count("info") > 0);
    assert_eq!(
        count("error") + count("warning") + count("info"),
        diagnostics.len()
    );
    let failure = diagnostics.iter().find(|d| d["code"] == "MZ122").unwrap();
    assert_eq!(failure["name"], "failure-message-key");
    assert_eq!(failure["severity"], "error");
    assert_eq!(failure["path"], "Contract/orchestrator.yaml");
    assert_eq!(failure["range"]["start"]["line"], 5);
    assert_eq!(failure["range"]["start"]["column"], 22);
    assert_eq!(failure["range"]["end"]["column"], 34);
    assert_eq!(
        failure["related"][0]["path"],
        "Contract/context_variables.yaml"
    );
    assert_eq!(failure["related"][0]["message"], "declared here");
    for d in diagnostics {
        let keys: Vec<&str> = d.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            ["code", "fixes", "message", "name", "path", "range", "related", "severity"]
        );
    }
}

#[test]
fn sarif_output_is_sarif_2_1_0_with_rule_help() {
    let root = repo().join("tests/fixtures/scalars");
    let out = mzk(&["check", "--output-format", "sarif"], &root);
    let sarif: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(sarif["version"], "2.1.0");
    let run = &sarif["runs"][0];
    let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
    // Every rule of the registry is described, whatever the run reported.
    assert_eq!(rules.len(), mzk_analyzer::rules::Rule::ALL.len());
    let results = run["results"].as_array().unwrap();
    assert!(!results.is_empty());
    for result in results {
        let index = result["ruleIndex"].as_u64().unwrap() as usize;
        assert_eq!(rules[index]["id"], result["ruleId"]);
        assert!(rules[index]["help"]["markdown"]
            .as_str()
            .unwrap()
            .contains("## Fix"));
        let region = &result["locations"][0]["physicalLocation"]["region"];
        assert!(region["startLine"].as_u64().unwrap() >= 1);
    }
    assert!(results
        .iter()
        .any(|r| r["level"] == "warning" && r["ruleId"] == "MZ117"));
}

/// The SARIF log validates against the official SARIF 2.1.0 JSON Schema
/// (fetched once from crates.io by tests/sarif/fetch_schema.py, pinned by its
/// checksum) for the fixtures (every rule family, with fixes and related
/// locations) and for the clean examples; a log broken on purpose is
/// rejected, so the check can fail.
#[test]
fn sarif_output_validates_against_the_sarif_2_1_0_schema() {
    let fetched = Command::new("python3")
        .arg(repo().join("tests/sarif/fetch_schema.py"))
        .output()
        .expect("python3 runs");
    assert!(
        fetched.status.success(),
        "the SARIF schema could not be fetched: {}",
        String::from_utf8_lossy(&fetched.stderr)
    );
    let path = String::from_utf8(fetched.stdout).unwrap();
    let mut schema: Value =
        serde_json::from_str(&std::fs::read_to_string(path.trim()).unwrap()).unwrap();
    // The published schema's one pattern that is not a valid ECMA-262 regex
    // (a stray `]`), which the validator's check of the schema itself
    // refuses; it constrains the `language` of runs and tool components,
    // which mzk does not write. It is replaced by what it means.
    for definition in ["run", "toolComponent"] {
        let language = &mut schema["definitions"][definition]["properties"]["language"]["pattern"];
        assert_eq!(language, "^[a-zA-Z]{2}|^[a-zA-Z]{2}-[a-zA-Z]{2}]?$");
        *language = "^[a-zA-Z]{2}(-[a-zA-Z]{2})?$".into();
    }
    let validator = jsonschema::draft7::options()
        .should_validate_formats(true)
        .build(&schema)
        .expect("the SARIF schema compiles");
    let problems = |log: &Value| -> Vec<String> {
        validator
            .iter_errors(log)
            .map(|e| format!("{}: {e}", e.instance_path()))
            .collect()
    };
    let mut results = 0;
    let mut fixes = 0;
    for dir in ["tests/fixtures", "bundles"] {
        let out = mzk(
            &["check", "--output-format", "sarif", "."],
            &repo().join(dir),
        );
        let log: Value = serde_json::from_str(&stdout(&out)).unwrap();
        let errors = problems(&log);
        assert!(errors.is_empty(), "{dir}: {errors:#?}");
        for result in log["runs"][0]["results"].as_array().unwrap() {
            results += 1;
            fixes += result
                .get("fixes")
                .map_or(0, |f| f.as_array().unwrap().len());
        }
    }
    // The fixtures exercise what the log can hold, fixes included.
    assert!(results > 200, "{results} results");
    assert!(fixes > 20, "{fixes} fixes");

    let out = mzk(
        &["check", "--output-format", "sarif", "."],
        &repo().join("tests/fixtures/scalars"),
    );
    let mut broken: Value = serde_json::from_str(&stdout(&out)).unwrap();
    broken["runs"][0]["results"][0]["level"] = "fatal".into();
    broken["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"] =
        0.into();
    assert_eq!(problems(&broken).len(), 2, "{:#?}", problems(&broken));
}

#[test]
fn usage_errors_give_exit_status_two() {
    assert_eq!(
        mzk(&["check", "no/such/folder"], &repo()).status.code(),
        Some(2)
    );
    assert_eq!(mzk(&["check", "docs"], &repo()).status.code(), Some(2));
    assert_eq!(
        mzk(&["check", "--output-format", "xml"], &repo())
            .status
            .code(),
        Some(2)
    );
    assert_eq!(mzk(&["explain", "MZ999"], &repo()).status.code(), Some(2));
}

#[test]
fn statistics_and_the_opt_in_note() {
    let root = repo().join("tests/fixtures/prompts");
    // The fixture's own mzk.toml selects the opt-in rules; --select default
    // starts a fresh selection without them.
    let out = stdout(&mzk(
        &["check", "--select", "default", "--statistics"],
        &root,
    ));
    assert!(out.contains("    1  MZ803  prompt-over-budget"), "{out}");
    assert!(!out.contains("MZ804  unused-view-variable"), "{out}");
    assert!(
        out.contains("note: 5 findings of opt-in rules not shown (MZ801 2, MZ804 2, MZ805 1); `--extend-select context-budget,pedantic` shows them"),
        "{out}"
    );
    let json: Value = serde_json::from_str(&stdout(&mzk(
        &["check", "--statistics", "--output-format", "json"],
        &root,
    )))
    .unwrap();
    let counts: Vec<(String, u64)> = json["statistics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["code"].as_str().unwrap().into(),
                s["count"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        counts,
        [
            ("MZ801".to_string(), 2),
            ("MZ804".to_string(), 2),
            ("MZ803".to_string(), 1),
            ("MZ805".to_string(), 1),
        ]
    );
    // An ignored opt-in rule is not counted as held back.
    let out = stdout(&mzk(
        &["check", "--select", "default", "--ignore", "MZ801"],
        &root,
    ));
    assert!(
        out.contains("note: 3 findings of opt-in rules not shown (MZ804 2, MZ805 1)"),
        "{out}"
    );
}

#[test]
fn a_broken_file_never_stops_the_others() {
    let root = repo().join("tests/fixtures/syntax");
    let out = stdout(&mzk(&["check", "--output-format", "concise"], &root));
    // agents.yaml does not parse; orchestrator.yaml is still validated.
    assert!(
        out.contains("Broken/agents.yaml:3:29: error[MZ001]"),
        "{out}"
    );
    assert!(
        out.contains("Broken/orchestrator.yaml:6:1: warning[MZ002]"),
        "{out}"
    );
    assert!(
        out.contains("Broken/ui_config.yaml:1:1: error[MZ010]"),
        "{out}"
    );
}

/// A reader that stops early (`| head`) ends mzk as it ends any Unix tool:
/// by SIGPIPE, with nothing on stderr (no panic, no backtrace).
#[test]
fn a_closed_pipe_ends_the_output_quietly() {
    use std::io::Read;
    use std::os::unix::process::ExitStatusExt;
    use std::process::Stdio;
    for args in [
        &["check", "bundles", "--output-format", "sarif"][..],
        &["explain", "MZ101"][..],
    ] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_mzk-e2e"))
            .args(args)
            .current_dir(repo())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut first = [0u8; 16];
        child.stdout.take().unwrap().read_exact(&mut first).unwrap();
        // The pipe is closed here; the SARIF log (250 KB) is far larger
        // than its buffer, while `explain` may already have finished.
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.is_empty(), "{args:?}: {stderr}");
        if args[0] == "check" {
            assert_eq!(out.status.signal(), Some(13), "{args:?}: {}", out.status);
        } else {
            assert!(
                out.status.success() || out.status.signal() == Some(13),
                "{args:?}: {}",
                out.status
            );
        }
    }
}

/// A file path checks the bundle it belongs to and reports that file only
/// (its cross-file findings included); a file outside any bundle is a usage
/// error.
#[test]
fn files_are_checked_within_their_bundle() {
    let dir = bundle_copy("cli", "SupportDesk", "files");
    let plant = |file: &str, line: &str| {
        let path = dir.join(file);
        let mut text = std::fs::read_to_string(&path).unwrap();
        text.push_str(line);
        std::fs::write(path, text).unwrap();
    };
    plant("orchestrator.yaml", "max_turnz: 5\n");
    plant("context_variables.yaml", "unknown_section: 1\n");
    let concise = |args: &[&str]| {
        let mut all = vec!["check", "--output-format", "concise"];
        all.extend_from_slice(args);
        let out = mzk(&all, dir.root());
        let text = stdout(&out);
        let files: std::collections::BTreeSet<String> = text
            .lines()
            .filter_map(|l| l.split_once(':').map(|(f, _)| f.to_string()))
            .filter(|f| f.starts_with("SupportDesk/"))
            .collect();
        (out.status.code(), files)
    };
    let (code, files) = concise(&["SupportDesk/orchestrator.yaml"]);
    assert_eq!(code, Some(1));
    assert_eq!(files, ["SupportDesk/orchestrator.yaml".to_string()].into());
    let (_, files) = concise(&[
        "SupportDesk/orchestrator.yaml",
        "SupportDesk/context_variables.yaml",
    ]);
    assert_eq!(files.len(), 2, "{files:?}");
    // A file and its bundle's folder: the whole bundle.
    let (_, files) = concise(&["SupportDesk/agents.yaml", "SupportDesk"]);
    assert_eq!(files.len(), 2, "{files:?}");
    // A clean file of a broken bundle passes.
    assert_eq!(
        concise(&["SupportDesk/tools/lookup_plan.py"]),
        (Some(0), Default::default())
    );
    let outside = mzk(&["check", "Cargo.toml"], &repo());
    assert_eq!(outside.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&outside.stderr).contains("not a file of a bundle"));
}

/// Errors print before the warnings they may cause: an unknown rule target
/// (error, transition_graph.yaml) before the agent it strands (warning,
/// agents.yaml, which comes first by file). The name is close to no agent:
/// a near miss is read as the agent it meant, stranding nothing.
#[test]
fn errors_print_before_the_warnings_they_cause() {
    let dir = bundle_copy("cli", "SupportDesk", "order");
    let graph = dir.join("transition_graph.yaml");
    let text = std::fs::read_to_string(&graph).unwrap();
    let broken = text.replacen("target_agent: ClassifierAgent", "target_agent: Zebra", 1);
    assert_ne!(broken, text);
    std::fs::write(&graph, broken).unwrap();
    let out = mzk(
        &["check", "--output-format", "concise", "SupportDesk"],
        dir.root(),
    );
    let text = stdout(&out);
    let severities: Vec<&str> = text
        .lines()
        .filter_map(|l| l.split(": ").nth(1))
        .filter_map(|s| s.split('[').next())
        .collect();
    assert_eq!(severities.first(), Some(&"error"), "{text}");
    assert!(severities.contains(&"warning"), "{text}");
    assert!(
        severities
            .windows(2)
            .all(|w| !(w[0] == "warning" && w[1] == "error")),
        "{text}"
    );
}
