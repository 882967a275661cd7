//! `mzk` as a process: output formats, exit codes, explain and rules.

use std::path::Path;
use std::process::{Command, Output};

use mzk_tests::{bundle_copy, repo};
use serde_json::Value;

fn mzk(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mzk-e2e"))
        .args(args)
        .current_dir(cwd)
        .env("NO_COLOR", "1")
        .output()
        .expect("mzk runs")
}

fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).unwrap()
}

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
        text.ends_with(&format!(
            "{errors} errors, {warnings} warnings in 1 bundle (2 files)\n"
        )),
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
fn explain_and_rules() {
    let out = mzk(&["explain", "mz101"], &repo());
    assert_eq!(out.status.code(), Some(0));
    assert!(stdout(&out).starts_with("# MZ101 unknown-key"));
    // The generated section is a Markdown section of its own.
    assert!(stdout(&out).contains(
        "what you wrote).\n\n## Severity and configuration\n\nDefault severity: **error**"
    ));
    let by_name = stdout(&mzk(&["explain", "duplicate-key"], &repo()));
    assert!(by_name.starts_with("# MZ002 duplicate-key"));
    let rules = stdout(&mzk(&["rules"], &repo()));
    // A header, then a line per rule with its group and default state.
    assert_eq!(
        rules.lines().count(),
        mzk_analyzer::rules::Rule::ALL.len() + 1
    );
    assert!(rules.contains("MZ123  outcome-contract"));
    assert!(rules
        .lines()
        .any(|l| l.starts_with("MZ804  unused-view-variable")
            && l.contains("context-budget  opt-in")));
    assert!(rules
        .lines()
        .any(|l| l.starts_with("MZ508  unbound-tool") && l.contains("correctness     on")));
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

#[test]
fn graph_in_every_format() {
    let bundle = "bundles/SupportDesk";
    let json: Value = serde_json::from_str(&stdout(&mzk(
        &["graph", bundle, "--format", "json"],
        &repo(),
    )))
    .unwrap();
    let nodes = json["nodes"].as_array().unwrap();
    let label = |id: &Value| nodes.iter().find(|n| n["id"] == *id).unwrap()["label"].clone();
    let entry: Vec<&Value> = nodes.iter().filter(|n| n["entry"] == true).collect();
    assert_eq!(entry.len(), 1);
    assert_eq!(entry[0]["label"], "IntakeAgent");
    assert!(
        nodes.iter().any(|n| n["kind"] == "user") && nodes.iter().any(|n| n["kind"] == "terminate")
    );
    // The conveyor's workers run outside the graph.
    let workers: Vec<&Value> = nodes
        .iter()
        .filter(|n| n["task_batch_agent"] == true)
        .collect();
    assert_eq!(workers.len(), 3, "{workers:?}");
    let edges = json["edges"].as_array().unwrap();
    assert_eq!(edges.len(), 9);
    let first = edges.iter().find(|e| e["rule_index"] == 0).unwrap();
    assert_eq!(label(&first["from"]), "IntakeAgent");
    assert_eq!(label(&first["to"]), "ClassifierAgent");
    assert_eq!(first["label"], "ticket_captured == True");
    assert_eq!(first["path"], "transition_graph.yaml");
    assert_eq!(first["range"]["start"]["line"], 3);
    assert_eq!(json["findings"].as_array().unwrap().len(), 0);

    let mermaid = stdout(&mzk(&["graph", bundle], &repo()));
    assert!(mermaid.starts_with("flowchart TD\n"), "{mermaid}");
    assert!(
        mermaid.contains("-->|\"triage_outcome == rejected\"|"),
        "{mermaid}"
    );
    let dot = stdout(&mzk(&["graph", bundle, "--format", "dot"], &repo()));
    assert!(dot.starts_with("digraph workflow {"), "{dot}");
    assert!(dot.contains("shape=doublecircle"), "{dot}");
    assert_eq!(mzk(&["graph", "docs"], &repo()).status.code(), Some(2));
}

#[test]
fn graph_json_lists_routing_findings() {
    let root = repo().join("tests/fixtures/graph");
    let json: Value = serde_json::from_str(&stdout(&mzk(
        &["graph", "Routes", "--format", "json"],
        &root,
    )))
    .unwrap();
    let codes: Vec<&str> = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["code"].as_str().unwrap())
        .collect();
    for code in ["MZ301", "MZ302", "MZ303", "MZ304", "MZ306"] {
        assert!(codes.contains(&code), "{codes:?}");
    }
}

#[test]
fn fix_writes_the_sure_fixes_and_reports_what_remains() {
    let dir = bundle_copy("cli", "SupportDesk", "fix");
    let graph = dir.join("transition_graph.yaml");
    let original = std::fs::read_to_string(&graph).unwrap();
    let broken = original
        .replacen(
            "target_agent: ClassifierAgent",
            "target_agent: ClasifierAgent",
            1,
        )
        .replacen(
            "condition_type: context_equals",
            "condition_type: context_equal",
            1,
        )
        // No agent is close to `Zebra`: this one must stay for the author.
        .replacen("target_agent: ReplyAgent", "target_agent: Zebra", 1);
    assert_ne!(broken, original);
    std::fs::write(&graph, &broken).unwrap();

    // JSON names each fix with its title, applicability and edits.
    let json: Value = serde_json::from_str(&stdout(&mzk(
        &["check", "--output-format", "json", "."],
        &dir,
    )))
    .unwrap();
    let fixes: Vec<(&str, &Value)> = json["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|d| Some((d["code"].as_str().unwrap(), d["fixes"].get(0)?)))
        .collect();
    assert_eq!(fixes.len(), 2, "{fixes:?}");
    assert_eq!(fixes[0].0, "MZ201");
    assert_eq!(
        fixes[0].1["title"],
        "Replace `ClasifierAgent` with `ClassifierAgent`"
    );
    assert_eq!(fixes[0].1["applicability"], "safe");
    let edit = &fixes[0].1["edits"][0];
    assert_eq!(edit["path"], "transition_graph.yaml");
    assert_eq!(edit["new_text"], "ClassifierAgent");
    assert_eq!(edit["range"]["start"]["line"], 4);
    assert_eq!(edit["range"]["start"]["column"], 19);

    let out = mzk(&["check", "--fix", "--output-format", "concise", "."], &dir);
    let stderr = String::from_utf8(out.stderr.clone()).unwrap();
    assert!(stderr.contains("fixed 2 problems in 1 file"), "{stderr}");
    assert_eq!(out.status.code(), Some(1), "`Zebra` remains an error");
    let remaining = stdout(&out);
    assert!(remaining.contains("error[MZ201] `Zebra`"), "{remaining}");
    assert!(!remaining.contains("ClasifierAgent"), "{remaining}");
    assert_eq!(
        std::fs::read_to_string(&graph).unwrap(),
        original.replacen("target_agent: ReplyAgent", "target_agent: Zebra", 1)
    );
}

#[test]
fn unsafe_fixes_apply_only_when_asked() {
    let dir = bundle_copy("cli", "SupportDesk", "unsafe-fixes");
    let graph = dir.join("transition_graph.yaml");
    let original = std::fs::read_to_string(&graph).unwrap();
    let fallback = "  - source_agent: IntakeAgent\n    target_agent: user\n    transition_type: after_turn\n    transition_target: RevertToUserTarget\n";
    let broken = original.replacen(fallback, "", 1).replacen(
        "    condition_value: true\n",
        "    condition_value: true\n    weight: 3\n",
        1,
    );
    std::fs::write(&graph, &broken).unwrap();

    // Safe only: nothing to do, and the full report says how to apply them.
    let out = mzk(&["check", "--fix", "--no-color", "."], &dir);
    let stderr = String::from_utf8(out.stderr.clone()).unwrap();
    assert!(stderr.contains("fixed 0 problems in 0 files"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&graph).unwrap(), broken);
    let report = stdout(&out);
    assert!(
        report.contains(
            "Remove the key `weight` (`mzk check --fix --unsafe-fixes` does it; review the change)"
        ),
        "{report}"
    );
    assert!(
        report.contains("Add an after_turn fallback from `IntakeAgent` back to the user"),
        "{report}"
    );

    let out = mzk(
        &["check", "--fix", "--unsafe-fixes", "--no-color", "."],
        &dir,
    );
    let stderr = String::from_utf8(out.stderr.clone()).unwrap();
    assert!(stderr.contains("fixed 2 problems in 1 file"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&graph).unwrap(), original);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));

    // SARIF carries the same fixes for code-scanning UIs.
    std::fs::write(&graph, &broken).unwrap();
    let sarif: Value = serde_json::from_str(&stdout(&mzk(
        &["check", "--output-format", "sarif", "."],
        &dir,
    )))
    .unwrap();
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    let removal = results
        .iter()
        .find(|r| r["ruleId"] == "MZ101")
        .expect("MZ101 result");
    let change = &removal["fixes"][0]["artifactChanges"][0];
    assert_eq!(change["artifactLocation"]["uri"], "transition_graph.yaml");
    assert_eq!(change["replacements"][0]["insertedContent"]["text"], "");
}

#[test]
fn lsp_process_exits_promptly_after_exit_while_stdin_stays_open() {
    use std::io::Write;
    use std::process::Stdio;
    let mut server = Command::new(env!("CARGO_BIN_EXE_mzk-e2e"))
        .arg("lsp")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("mzk lsp starts");
    let mut stdin = server.stdin.take().unwrap();
    for message in [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}"#,
        r#"{"jsonrpc":"2.0","method":"initialized","params":{}}"#,
        // Emacs sends `"params": null` with shutdown.
        r#"{"jsonrpc":"2.0","id":2,"method":"shutdown","params":null}"#,
        r#"{"jsonrpc":"2.0","method":"exit","params":null}"#,
    ] {
        write!(stdin, "Content-Length: {}\r\n\r\n{message}", message.len()).unwrap();
    }
    stdin.flush().unwrap();
    // `stdin` stays open, as an editor keeps the pipe: the server must still go.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let status = loop {
        if let Some(status) = server.try_wait().unwrap() {
            break status;
        }
        if std::time::Instant::now() > deadline {
            let _ = server.kill();
            panic!("mzk lsp still running 10 s after `exit`");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    assert!(status.success(), "{status}");
    drop(stdin);
}

#[test]
fn the_rules_index_is_generated_from_the_registry() {
    let out = mzk(&["rules", "--format", "markdown"], &repo());
    let committed = std::fs::read_to_string(repo().join("docs/rules/README.md")).unwrap();
    assert_eq!(
        stdout(&out),
        committed,
        "docs/rules/README.md is stale: run `mzk rules --format markdown > docs/rules/README.md`"
    );
    // Every page the index links exists, and every page is in the index.
    for entry in std::fs::read_dir(repo().join("docs/rules")).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if name != "README.md" {
            assert!(
                committed.contains(&format!("]({name})")),
                "{name} is not a rule page"
            );
        }
    }
    let explained = stdout(&mzk(&["explain", "MZ211"], &repo()));
    assert!(explained.starts_with("# MZ211 unused-variable"));
    assert!(explained.contains("Default severity: **warning**"));
    assert!(explained.contains("ignore = [\"MZ211\"]"));
}

#[test]
fn context_shows_each_agents_prompt_and_its_size() {
    let out = mzk(
        &["context", "bundles/SupportDesk", "--output-format", "json"],
        &repo(),
    );
    assert_eq!(out.status.code(), Some(0));
    let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(report["encoding"], "o200k_base");
    let agents = report["agents"].as_array().unwrap();
    assert_eq!(agents.len(), 6);
    let intake = &agents[0];
    assert_eq!(intake["agent"], "IntakeAgent");
    let text = intake["text"].as_str().unwrap();
    assert!(
        text.starts_with("[ROLE]\nYou are the first contact"),
        "{text}"
    );
    assert!(
        text.ends_with("\n\nCUSTOMER_PLAN: None\nDESK_MODE: standard"),
        "{text}"
    );
    assert_eq!(intake["chars"], text.chars().count());
    let tokens = intake["tokens"].as_u64().unwrap();
    assert!(tokens > 0 && tokens < text.len() as u64, "{tokens}");
    assert_eq!(
        intake["tools"],
        serde_json::json!(["capture_ticket", "lookup_plan"])
    );
    let total: u64 = agents.iter().map(|a| a["tokens"].as_u64().unwrap()).sum();
    assert_eq!(report["total"]["tokens"], total);
    // One agent, in the full format; an unknown one is a usage error.
    let full = stdout(&mzk(
        &["context", "bundles/SupportDesk", "--agent", "IntakeAgent"],
        &repo(),
    ));
    assert!(full.starts_with("== IntakeAgent (agents.yaml:2)"), "{full}");
    assert_eq!(
        mzk(
            &["context", "bundles/SupportDesk", "--agent", "Nobody"],
            &repo()
        )
        .status
        .code(),
        Some(2)
    );
}

/// Starts `mzk lsp`, initializes it with `process_id`, and returns it with
/// its input still open.
fn lsp_initialized(process_id: Option<u32>) -> (std::process::Child, std::process::ChildStdin) {
    use std::io::Write;
    use std::process::Stdio;
    let mut server = Command::new(env!("CARGO_BIN_EXE_mzk-e2e"))
        .arg("lsp")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("mzk lsp starts");
    let mut stdin = server.stdin.take().unwrap();
    let pid = process_id.map_or("null".to_string(), |p| p.to_string());
    for message in [
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"processId":{pid},"capabilities":{{}}}}}}"#
        ),
        r#"{"jsonrpc":"2.0","method":"initialized","params":{}}"#.to_string(),
    ] {
        write!(stdin, "Content-Length: {}\r\n\r\n{message}", message.len()).unwrap();
    }
    stdin.flush().unwrap();
    (server, stdin)
}

/// Waits up to 10 s for the server to end on its own.
fn ends_within_ten_seconds(mut server: std::process::Child, why: &str) -> std::process::ExitStatus {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        if let Some(status) = server.try_wait().unwrap() {
            return status;
        }
        if std::time::Instant::now() > deadline {
            let _ = server.kill();
            let _ = server.wait();
            panic!("mzk lsp still running 10 s after {why}");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

#[test]
fn a_killed_client_leaves_no_server_behind() {
    // The client dies: its end of the pipe closes, without shutdown or exit.
    let (server, stdin) = lsp_initialized(None);
    drop(stdin);
    ends_within_ten_seconds(server, "its input closed");
    // The client dies but the pipe stays open (inherited elsewhere): the
    // server watches the `processId` it was given.
    let mut editor = Command::new("sleep").arg("1").spawn().unwrap();
    let (server, stdin) = lsp_initialized(Some(editor.id()));
    editor.wait().unwrap(); // gone, and reaped
    let status = ends_within_ten_seconds(server, "its editor process ended");
    assert!(
        !status.success(),
        "an exit without shutdown reports failure: {status}"
    );
    drop(stdin);
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

/// A misspelt function name (MZ503) and variable type (MZ410) come with the
/// safe fix their message suggests.
#[test]
fn misspelt_function_names_and_types_are_fixed() {
    let out = mzk(
        &[
            "check",
            "--diff",
            "tests/fixtures/rules/MZ503",
            "tests/fixtures/rules/MZ410",
        ],
        &repo(),
    );
    let diff = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{diff}");
    assert!(
        diff.contains("-    function: lookup_custmer\n+    function: lookup_customer\n"),
        "{diff}"
    );
    assert!(
        diff.contains("-    type: boolen\n+    type: boolean\n"),
        "{diff}"
    );
}

/// While one file cannot be read, the others report nothing caused by it and
/// `--fix` touches nothing on the strength of the partial analysis: the
/// suppression that looks unused while agents.yaml is broken is kept, and
/// suppresses its finding again once the file is mended.
#[test]
fn a_broken_file_holds_back_what_depends_on_it_and_fixes_nothing() {
    let dir = bundle_copy("cli", "SupportDesk", "broken-fix");
    let agents = dir.join("agents.yaml");
    let variables = dir.join("context_variables.yaml");
    let original = std::fs::read_to_string(&agents).unwrap();
    let suppressed = std::fs::read_to_string(&variables).unwrap();
    assert!(suppressed.contains("# mzk: ignore[MZ805]"));
    let mut lines: Vec<String> = original.lines().map(str::to_string).collect();
    lines[2] = format!("\t{}", lines[2].trim_start());
    std::fs::write(&agents, lines.join("\n") + "\n").unwrap();

    let out = mzk(
        &[
            "check",
            "--fix",
            "--output-format",
            "concise",
            "SupportDesk",
        ],
        dir.root(),
    );
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    let findings: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("SupportDesk/"))
        .collect();
    assert_eq!(findings.len(), 1, "{text}");
    assert!(
        findings[0].starts_with("SupportDesk/agents.yaml:3:1: error[MZ001] found character '\\t'"),
        "{text}"
    );
    assert!(findings[0].contains("holds back"), "{text}");
    assert_eq!(
        std::fs::read_to_string(&variables).unwrap(),
        suppressed,
        "--fix edited a file on partial knowledge"
    );

    std::fs::write(&agents, &original).unwrap();
    let out = mzk(&["check", "SupportDesk"], dir.root());
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(
        stdout(&out).starts_with("0 errors, 0 warnings"),
        "{}",
        stdout(&out)
    );
}

/// Errors print before the warnings they may cause: an unknown rule target
/// (error, transition_graph.yaml) before the agent it strands (warning,
/// agents.yaml, which comes first by file).
#[test]
fn errors_print_before_the_warnings_they_cause() {
    let dir = bundle_copy("cli", "SupportDesk", "order");
    let graph = dir.join("transition_graph.yaml");
    let text = std::fs::read_to_string(&graph).unwrap();
    std::fs::write(&graph, mzk_tests::misspelt_target(&text)).unwrap();
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
