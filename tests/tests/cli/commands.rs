//! The other commands: explain, rules, graph and context.

use super::*;

#[test]
fn explain_and_rules() {
    let out = mzk(&["explain", "mz101"], &repo());
    assert_eq!(out.status.code(), Some(0));
    assert!(stdout(&out).starts_with("# MZ101 unknown-key"));
    // The generated section is a Markdown section of its own.
    assert!(stdout(&out).contains(
        "what you wrote).\n\n## Severity and configuration\n\nDefault severity: **error**"
    ));
    // For a terminal: no Markdown marks, headings underlined, code indented.
    let text = stdout(&mzk(&["explain", "MZ101", "--format", "text"], &repo()));
    assert!(text.starts_with("MZ101 unknown-key\n═════"), "{text}");
    assert!(
        !text.contains("```") && !text.lines().any(|l| l.starts_with('#')),
        "{text}"
    );
    assert!(text.contains("\nExample\n───────\n"), "{text}");
    assert!(
        text.contains("\n        conditon_key: intake_complete\n"),
        "{text}"
    );
    assert!(text.contains("Default severity: error"), "{text}");
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
    assert_eq!(first["label"], "ticket_captured == true");
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
    // The page's meaning in the texts: the exits apart, fallbacks dashed,
    // every filled shape with its text colour.
    assert!(
        dot.contains("label=\"✗ failed\"") && dot.contains("label=\"✓ complete\""),
        "{dot}"
    );
    assert!(
        dot.contains("[label=\"after turn\", style=dashed]"),
        "{dot}"
    );
    assert!(mermaid.contains("-.->|\"batch research\"|"), "{mermaid}");
    assert!(
        mermaid
            .lines()
            .filter(|l| l.trim_start().starts_with("style "))
            .all(|l| l.contains(",color:")),
        "{mermaid}"
    );
    assert_eq!(mzk(&["graph", "docs"], &repo()).status.code(), Some(2));

    // The page: self-contained, with each rule's place for the script.
    let page = stdout(&mzk(&["graph", bundle, "--format", "html"], &repo()));
    assert!(page.starts_with("<!DOCTYPE html>"), "{page}");
    assert!(
        page.contains("\"at\":{\"column\":5,\"line\":3,\"path\":\"transition_graph.yaml\"}"),
        "{page}"
    );
    // Overlays draw on the page only, and need what they draw.
    let refused = mzk(&["graph", bundle, "--coverage"], &repo());
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("add `--format html`"));
    let scratch = mzk_tests::Scratch::new("graph-overlays");
    let copy = scratch.join("SupportDesk");
    mzk_tests::copy_dir(&repo().join(bundle), &copy);
    let no_coverage = mzk(&["graph", ".", "--format", "html", "--coverage"], &copy);
    assert_eq!(no_coverage.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&no_coverage.stderr).contains("`mzk test"));
    let no_run = mzk(&["graph", ".", "--format", "html", "--run", "2026"], &copy);
    assert_eq!(no_run.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&no_run.stderr).contains("no run history"));
}

#[test]
fn graph_of_a_bundle_with_errors_is_printed_and_exits_1() {
    let root = mzk_tests::Scratch::new("graph-errors");
    let bundle = root.join("SupportDesk");
    mzk_tests::copy_dir(&repo().join("bundles/SupportDesk"), &bundle);
    let graph = bundle.join("transition_graph.yaml");
    let text = std::fs::read_to_string(&graph).unwrap();
    std::fs::write(
        &graph,
        text.replacen(
            "target_agent: ClassifierAgent",
            "target_agent: ClasifierAgent",
            1,
        ),
    )
    .unwrap();
    let out = mzk(&["graph", "SupportDesk"], &root);
    assert_eq!(out.status.code(), Some(1));
    // Still drawn, with the misspelt target as it is written.
    let mermaid = stdout(&out);
    assert!(
        mermaid.starts_with("flowchart TD\n") && mermaid.contains("ClasifierAgent"),
        "{mermaid}"
    );
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("has 1 error") && stderr.contains("mzk check SupportDesk"),
        "{stderr}"
    );
    // A clean bundle still exits 0.
    assert_eq!(
        mzk(&["graph", "bundles/SupportDesk"], &repo())
            .status
            .code(),
        Some(0)
    );
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
    // One agent, in the full format, with its whole prompt; an unknown one
    // is a usage error.
    let full = stdout(&mzk(
        &["context", "bundles/SupportDesk", "--agent", "IntakeAgent"],
        &repo(),
    ));
    assert!(full.contains("\n== IntakeAgent (agents.yaml:2)"), "{full}");
    assert!(full.contains("\n   | [ROLE]\n"), "{full}");
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

#[test]
fn context_starts_with_the_agents_by_size_against_the_budget() {
    let dir = bundle_copy("cli", "SupportDesk", "context-table");
    let json: Value = serde_json::from_str(&stdout(&mzk(
        &["context", ".", "--output-format", "json"],
        &dir,
    )))
    .unwrap();
    let mut sizes: Vec<(String, u64)> = json["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["agent"].as_str().unwrap().to_string(),
                a["tokens"].as_u64().unwrap(),
            )
        })
        .collect();
    sizes.sort_by_key(|(_, t)| std::cmp::Reverse(*t));
    // A budget between the largest prompt and the others: only it is over.
    let budget = sizes[0].1 - 1;
    assert!(sizes[1].1 <= budget, "{sizes:?}");
    std::fs::write(
        dir.join("mzk.toml"),
        format!("[context]\nmax-prompt-tokens = {budget}\n"),
    )
    .unwrap();
    let text = stdout(&mzk(&["context", "."], &dir));
    let mut lines = text.lines();
    assert!(lines.next().unwrap().starts_with("AGENT"), "{text}");
    let rows: Vec<&str> = lines.take(sizes.len()).collect();
    let names: Vec<&str> = rows
        .iter()
        .map(|r| r.split_whitespace().next().unwrap())
        .collect();
    let expected: Vec<&str> = sizes.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, expected, "largest first:\n{text}");
    assert!(
        rows[0].contains("OVER") && rows[1..].iter().all(|r| !r.contains("OVER")),
        "{text}"
    );
    assert!(
        text.contains(&format!("budget: {budget} tokens per static prompt")),
        "{text}"
    );
    assert!(text.contains("; 1 agent is over it"), "{text}");
    // Whole prompts only when asked.
    assert!(!text.contains("\n   | "), "{text}");
    assert!(stdout(&mzk(&["context", ".", "--prompts"], &dir)).contains("\n   | [ROLE]"));
}

#[test]
fn graph_json_gives_each_routing_variable_its_domain_and_where_it_comes_from() {
    let json: Value = serde_json::from_str(&stdout(&mzk(
        &[
            "graph",
            "tests/fixtures/domains/GuardNotNone",
            "--format",
            "json",
        ],
        &repo(),
    )))
    .unwrap();
    let variables = json["variables"].as_array().unwrap();
    assert_eq!(variables.len(), 1, "{variables:?}");
    let verdict = &variables[0];
    assert_eq!(verdict["name"], "verdict");
    assert_eq!(verdict["type"], "string");
    assert_eq!(verdict["domain"]["kind"], "known");
    assert_eq!(
        verdict["domain"]["values"],
        serde_json::json!(["publish", "revise", "reject"])
    );
    // Written under `if context_variables is not None:` at line 3.
    assert_eq!(
        verdict["domain"]["sources"][0],
        "`tools/record.py` line 3 writes `JudgeVerdict.verdict` through auto tool `record_verdict`"
    );
    // Unknown, with the reason and where it is.
    let json: Value = serde_json::from_str(&stdout(&mzk(
        &["graph", "tests/fixtures/domains/Opaque", "--format", "json"],
        &repo(),
    )))
    .unwrap();
    let unknown: Vec<&Value> = json["variables"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|v| v["domain"]["kind"] == "unknown")
        .collect();
    assert!(!unknown.is_empty(), "{json}");
    assert!(
        unknown[0]["domain"]["because"]
            .as_str()
            .unwrap()
            .contains("`tools/record.py` line"),
        "{unknown:?}"
    );
}
