//! The graph page (`mzk graph --format html`) in a real browser: Debian's
//! Chromium, headless, driven by playwright-core (tests/browser). For the
//! SupportDesk example, SupportDesk with planted mistakes, a generated
//! bundle of AppGenerator's size (20 agents, 81 rules) and SupportDesk with
//! the coverage and run overlays, in the light and the dark theme, tests/browser/graph_page.mjs checks what a person would:
//! edge labels at least 11 px at the first view and after focusing on an
//! agent, every label on its own edge, no text in the colour it sits on,
//! a click on a rule showing where it is written and its findings, zoom.
//! Screenshots go to target/graph-page-screenshots (docs/graph holds the
//! ones the README shows).
//!
//! `scripts/test.sh` installs Chromium and the test's npm packages and sets
//! `MZK_REQUIRE_BROWSER=1`, so in CI a missing browser fails the test
//! instead of skipping it.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use mzk_tests::{bundle_copy, repo, Scratch};
use serde_json::{json, Value};

const CHROMIUM: &str = "/usr/bin/chromium";

fn browser_available() -> bool {
    let ready = Path::new(CHROMIUM).is_file()
        && repo()
            .join("tests/browser/node_modules/playwright-core")
            .is_dir();
    if !ready && std::env::var_os("MZK_REQUIRE_BROWSER").is_some() {
        panic!(
            "{CHROMIUM} and tests/browser's npm packages are required (MZK_REQUIRE_BROWSER is set); scripts/test.sh installs them"
        );
    }
    if !ready {
        eprintln!("skipped: no {CHROMIUM} or no tests/browser/node_modules (scripts/test.sh installs them)");
    }
    ready
}

/// The page `mzk graph --format html` writes for `bundle`; the exit status
/// says whether the bundle has errors.
fn page(bundle: &Path, out: &Path) -> (PathBuf, Option<i32>) {
    let result = Command::new(env!("CARGO_BIN_EXE_mzk-e2e"))
        .args(["graph", "--format", "html"])
        .arg(bundle)
        .env("NO_COLOR", "1")
        .output()
        .expect("mzk runs");
    let html = String::from_utf8(result.stdout).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"), "{html}");
    // Self-contained: nothing is fetched (the SVG namespace is a name).
    for fetch in ["src=\"http", "href=\"http", "https://", "@import"] {
        assert!(!html.contains(fetch), "the page fetches something: {fetch}");
    }
    std::fs::write(out, html).unwrap();
    (out.to_path_buf(), result.status.code())
}

/// A bundle of AppGenerator's size: 20 agents, each with three conditions
/// and a fallback (to the user, or every fourth to the end), and the user's
/// reply back to the first.
fn generated(root: &Path) -> PathBuf {
    let dir = root.join("Generated");
    std::fs::create_dir_all(&dir).unwrap();
    let agents: Vec<String> = (0..20).map(|i| format!("Stage{i:02}Agent")).collect();
    std::fs::write(
        dir.join("orchestrator.yaml"),
        format!("schema_version: mozaiks.orchestrator.v1\nworkflow_name: Generated\nworkflow_startup_mode: AgentDriven\nmax_turns: 60\ninitial_agent: {}\ninitial_message: \"Start.\"\n", agents[0]),
    )
    .unwrap();
    let mut text = String::from("agents:\n");
    for a in &agents {
        let _ = write!(text, "  - name: {a}\n    system_message: You do step {a}.\n    structured_outputs_required: false\n");
    }
    std::fs::write(dir.join("agents.yaml"), text).unwrap();
    std::fs::write(
        dir.join("context_variables.yaml"),
        "definitions:\n  score:\n    type: integer\n    description: Progress so far.\n    source:\n      type: state\n      default: 0\n",
    )
    .unwrap();
    let mut rules = String::from("transition_rules:\n");
    for (i, a) in agents.iter().enumerate() {
        for (k, step) in [1, 3, 7].iter().enumerate() {
            let target = &agents[(i + step) % agents.len()];
            let _ = write!(rules, "  - source_agent: {a}\n    target_agent: {target}\n    transition_type: condition\n    condition_type: context_expression\n    context_expression: \"${{score}} > {}\"\n", i * 10 + k);
        }
        if i % 4 == 3 {
            let _ = write!(rules, "  - source_agent: {a}\n    target_agent: terminate\n    transition_type: after_turn\n    termination_reason: workflow_complete\n");
        } else {
            let _ = write!(
                rules,
                "  - source_agent: {a}\n    target_agent: user\n    transition_type: after_turn\n"
            );
        }
    }
    let _ = write!(
        rules,
        "  - source_agent: user\n    target_agent: {}\n    transition_type: after_turn\n",
        agents[0]
    );
    std::fs::write(dir.join("transition_graph.yaml"), rules).unwrap();
    dir
}

#[test]
fn the_graph_page_reads_well_in_a_real_browser() {
    if !browser_available() {
        return;
    }
    let scratch = Scratch::new("graph-page");
    // SupportDesk with mistakes: a target that names no agent (an unknown,
    // red node; ClassifierAgent then never reached).
    let planted = bundle_copy("graph-page", "SupportDesk", "planted");
    let graph = planted.join("transition_graph.yaml");
    let text = std::fs::read_to_string(&graph).unwrap();
    let broken = text.replacen("target_agent: ClassifierAgent", "target_agent: Zebra", 1);
    assert_ne!(broken, text);
    std::fs::write(&graph, broken).unwrap();

    let (support_desk, clean) = page(
        &repo().join("bundles/SupportDesk"),
        &scratch.root().join("supportdesk.html"),
    );
    assert_eq!(clean, Some(0));
    let (planted_page, errors) = page(&planted, &scratch.root().join("planted.html"));
    assert_eq!(
        errors,
        Some(1),
        "a bundle with errors exits 1, page and all"
    );
    let (generated_page, clean) = page(
        &generated(scratch.root()),
        &scratch.root().join("generated.html"),
    );
    assert_eq!(clean, Some(0), "the generated bundle is clean");

    // SupportDesk after `mzk test` (coverage) and `mzk run` (a run's path).
    let overlaid = bundle_copy("graph-page", "SupportDesk", "overlays");
    let mzk = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_mzk-e2e"))
            .args(args)
            .current_dir(&*overlaid)
            .env("NO_COLOR", "1")
            .output()
            .expect("mzk runs");
        assert!(
            out.status.success(),
            "mzk {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    mzk(&["test", "."]);
    mzk(&["run", "."]);
    let runs: Value = serde_json::from_str(&mzk(&["runs", "list", "--json", "."])).unwrap();
    let id = runs[0]["id"].as_str().unwrap().to_string();
    // What the overlays must show, from the sources themselves: the run's
    // transitions by rule in its history, the never-fired rules in the
    // saved coverage.
    let shown: Value = serde_json::from_str(&mzk(&["runs", "show", &id, "--json", "."])).unwrap();
    let run_hops = shown["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["event"]["type"] == "transition" && e["event"]["rule"].is_u64())
        .count();
    let coverage: Value = serde_json::from_str(
        &std::fs::read_to_string(overlaid.join(".mzk/coverage.json")).unwrap(),
    )
    .unwrap();
    let never_fired = coverage["rules"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["hits"] == 0)
        .count();
    let overlays_page = scratch.root().join("overlays.html");
    let html = mzk(&[
        "graph",
        ".",
        "--format",
        "html",
        "--coverage",
        "--run",
        &id[..12],
    ]);
    std::fs::write(&overlays_page, html).unwrap();

    let out = repo().join("target/graph-page-screenshots");
    let spec = json!({
        "chromium": CHROMIUM,
        "out": out,
        "pages": [
            {"name": "supportdesk", "file": support_desk, "click_edge": 0, "focus": "ClassifierAgent"},
            // Rule 0 is the one with the unknown target: its MZ201 is shown.
            {"name": "planted-errors", "file": planted_page, "click_edge": 0, "focus": "IntakeAgent"},
            {"name": "generated-20-agents", "file": generated_page, "click_edge": 5, "focus": "Stage03Agent"},
            {"name": "supportdesk-overlays", "file": overlays_page, "focus": "ReplyAgent"},
        ],
    });
    let spec_path = scratch.root().join("spec.json");
    std::fs::write(&spec_path, spec.to_string()).unwrap();
    let run = Command::new("timeout")
        .arg("300")
        .arg("node")
        .arg(repo().join("tests/browser/graph_page.mjs"))
        .arg(&spec_path)
        .current_dir(repo().join("tests/browser"))
        .output()
        .expect("node runs (the README's test command installs it)");
    let stdout = String::from_utf8_lossy(&run.stdout);
    let stderr = String::from_utf8_lossy(&run.stderr);
    let report: Value = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("no report from graph_page.mjs ({e}):\n{stdout}\n{stderr}"));
    println!("{report:#}");
    assert_eq!(report["failures"], json!([]), "{report:#}\n{stderr}");
    assert!(run.status.success(), "{stderr}");
    let pages = report["pages"].as_array().unwrap();
    assert_eq!(pages.len(), 8, "four pages, two themes each: {report:#}");
    // The run's path and the coverage were checked on the overlaid page.
    let overlaid_page = pages
        .iter()
        .find(|p| p["name"] == "supportdesk-overlays-light")
        .unwrap();
    assert!(run_hops >= 3, "{shown}");
    assert_eq!(overlaid_page["run_hops"], run_hops, "{overlaid_page}");
    assert_eq!(overlaid_page["never_fired"], never_fired, "{overlaid_page}");
    for page in pages {
        let name = page["name"].as_str().unwrap();
        for shot in page["screenshots"].as_array().unwrap() {
            let file = Path::new(shot.as_str().unwrap());
            assert!(
                file.metadata().is_ok_and(|m| m.len() > 10_000),
                "{name}: screenshot {} missing or empty",
                file.display()
            );
        }
        assert!(page["first_view_smallest_label_px"].as_f64().unwrap() >= 11.0);
        assert!(page["focus_smallest_label_px"].as_f64().unwrap() >= 11.0);
    }
    // The planted target's finding is on the clicked rule.
    let planted_shown = pages
        .iter()
        .find(|p| p["name"] == "planted-errors-light")
        .unwrap()["clicked"]["shown"]
        .as_str()
        .unwrap();
    assert!(planted_shown.contains("MZ201"), "{planted_shown}");
    assert_eq!(
        pages
            .iter()
            .find(|p| p["name"] == "generated-20-agents-light")
            .unwrap()["edges"],
        81
    );
}
