//! `mzk run` and `mzk runs` as processes: a paused run resumed from another
//! process, a run killed mid-call keeps its history (marked interrupted),
//! a failed run's history is intact, a bundle with errors is refused.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use mzk_tests::{copy_dir, repo};
use serde_json::Value;

fn mzk(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mzk-e2e"))
        .args(args)
        .current_dir(cwd)
        .output()
        .unwrap()
}

/// A private copy of a runtime fixture bundle: returns (root, bundle).
fn fixture_copy(name: &str, test: &str) -> (PathBuf, PathBuf) {
    let root = std::env::temp_dir().join(format!("mzk-runs-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    copy_dir(
        &repo().join("tests/fixtures/runtime").join(name),
        &root.join(name),
    );
    (root.clone(), root.join(name))
}

fn json_lines(out: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}")))
        .collect()
}

fn show(root: &Path, bundle: &str, id: &str) -> Value {
    let out = mzk(&["runs", "show", id, bundle, "--json"], root);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn event_types(shown: &Value) -> Vec<String> {
    shown["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["event"]["type"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_paused_run_resumes_in_another_process_with_its_history() {
    let (root, _) = fixture_copy("PauseResume", "resume");
    // The scripted model, without the user's replies or an expected outcome.
    std::fs::write(root.join("model.yaml"), "responses:\n  A: [question?]\n").unwrap();
    let scenario = "model.yaml";
    let out = mzk(
        &["run", "PauseResume", "--scenario", scenario, "--json"],
        &root,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let events = json_lines(&out);
    let id = events[0]["run_id"].as_str().unwrap().to_string();
    assert_eq!(events.last().unwrap()["status"], "paused");
    assert!(String::from_utf8_lossy(&out.stderr).contains(&format!("--resume {id}")));

    let out = mzk(
        &[
            "run",
            "PauseResume",
            "--scenario",
            scenario,
            "--resume",
            &id,
            "--reply",
            "yes",
            "--json",
        ],
        &root,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let events = json_lines(&out);
    assert_eq!(events[0]["type"], "user_message");
    assert_eq!(events[0]["text"], "yes");
    let last = events.last().unwrap();
    assert_eq!(
        (last["status"].as_str(), last["reason"].as_str()),
        (Some("completed"), Some("workflow_complete"))
    );
    assert_eq!(last["turns"], 3);

    let shown = show(&root, "PauseResume", &id);
    assert_eq!(shown["run"]["status"], "completed");
    assert_eq!(
        event_types(&shown),
        [
            "run_started",
            "transition",
            "turn_started",
            "prompt",
            "model_response",
            "transition",
            "paused",
            "run_finished",
            "user_message",
            "transition",
            "run_finished"
        ]
    );
    // A finished run takes no more replies.
    let out = mzk(
        &[
            "run",
            "PauseResume",
            "--scenario",
            scenario,
            "--resume",
            &id,
            "--reply",
            "again",
        ],
        &root,
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is completed, not paused"));
}

#[test]
fn a_killed_run_keeps_its_history_and_is_marked_interrupted() {
    let (root, bundle) = fixture_copy("Chain", "killed");
    std::fs::write(
        bundle.join("tools.yaml"),
        "tools:\n  - {agent: A, file: slow.py, function: slow, tool_type: Agent_Tool, description: Sleeps.}\n",
    )
    .unwrap();
    std::fs::create_dir_all(bundle.join("tools")).unwrap();
    std::fs::write(
        bundle.join("tools/slow.py"),
        "import time\n\ndef slow():\n    time.sleep(60)\n    return 1\n",
    )
    .unwrap();
    std::fs::write(
        bundle.join("scenarios/slow.yaml"),
        "responses:\n  A: [{tool_calls: [{name: slow}], text: waited}]\n  B: [done]\n",
    )
    .unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_mzk-e2e"))
        .args([
            "run",
            "Chain",
            "--scenario",
            "Chain/scenarios/slow.yaml",
            "--json",
        ])
        .current_dir(&root)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Wait until the tool call is recorded, then kill the runner outright.
    let started = Instant::now();
    let id = loop {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the tool call was never recorded"
        );
        std::thread::sleep(Duration::from_millis(100));
        let out = mzk(&["runs", "list", "Chain", "--json"], &root);
        if !out.status.success() {
            continue;
        }
        let runs: Value = serde_json::from_slice(&out.stdout).unwrap();
        let Some(run) = runs.as_array().and_then(|r| r.first()) else {
            continue;
        };
        let id = run["id"].as_str().unwrap().to_string();
        let shown = show(&root, "Chain", &id);
        if event_types(&shown).iter().any(|t| t == "tool_call") {
            assert_eq!(shown["run"]["status"], "running");
            break id;
        }
    };
    child.kill().unwrap();
    child.wait().unwrap();
    let shown = show(&root, "Chain", &id);
    assert_eq!(shown["run"]["status"], "interrupted");
    let types = event_types(&shown);
    assert_eq!(
        types,
        [
            "run_started",
            "transition",
            "turn_started",
            "prompt",
            "model_response",
            "tool_call",
            "run_finished"
        ]
    );
    let last = &shown["events"].as_array().unwrap()[6]["event"];
    assert_eq!(last["status"], "interrupted");
}

#[test]
fn a_failed_run_keeps_every_event_and_exits_1() {
    let (root, _) = fixture_copy("Outputs", "failed");
    let out = mzk(
        &[
            "run",
            "Outputs",
            "--scenario",
            "Outputs/scenarios/model_error.yaml",
            "--json",
        ],
        &root,
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "an expected failure passes the scenario: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("scenario passed"));
    let events = json_lines(&out);
    let id = events[0]["run_id"].as_str().unwrap().to_string();
    let shown = show(&root, "Outputs", &id);
    assert_eq!(shown["run"]["status"], "failed");
    assert_eq!(
        shown["run"]["error"],
        "AG2 turn failed for A: planned agent failure"
    );
    let stored: Vec<Value> = shown["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["event"].clone())
        .collect();
    assert_eq!(stored, events, "the history holds exactly what was printed");

    // Without its expectation the same failure exits 1.
    std::fs::write(
        root.join("no_expect.yaml"),
        "responses:\n  A: [{error: planned agent failure}]\n",
    )
    .unwrap();
    let out = mzk(&["run", "Outputs", "--scenario", "no_expect.yaml"], &root);
    assert_eq!(out.status.code(), Some(1));
    let list = mzk(&["runs", "list", "Outputs"], &root);
    let text = String::from_utf8_lossy(&list.stdout);
    assert_eq!(text.lines().count(), 2, "{text}");
    assert!(text.lines().all(|l| l.contains("failed")), "{text}");
}

#[test]
fn a_bundle_with_errors_is_not_run() {
    let (root, bundle) = fixture_copy("Chain", "errors");
    std::fs::write(bundle.join("orchestrator.yaml"), "schema_version: mozaiks.orchestrator.v1\nworkflow_name: Chain\nworkflow_startup_mode: Sometimes\n").unwrap();
    let out = mzk(&["run", "Chain"], &root);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("error[MZ"), "{stderr}");
    assert!(stderr.contains("it is not run"), "{stderr}");
    assert!(
        !bundle.join(".mzk/runs.db").exists(),
        "nothing is recorded for a refused bundle"
    );
}

#[test]
fn the_synthetic_model_runs_every_example_offline() {
    for name in ["Hello", "SupportDesk"] {
        let root =
            std::env::temp_dir().join(format!("mzk-runs-{}-synthetic-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        copy_dir(&repo().join("bundles").join(name), &root.join(name));
        let out = mzk(&["run", name, "--json"], &root);
        assert!(
            out.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let events = json_lines(&out);
        assert!(events
            .iter()
            .filter(|e| e["type"] == "model_response")
            .all(|e| e["synthetic"] == true));
        assert!(events.iter().any(|e| e["type"] == "model_response"));
        assert_eq!(events.last().unwrap()["type"], "run_finished");
    }
}

#[test]
fn mzk_test_reports_each_scenario_and_transition_coverage() {
    let out = mzk(&["test", "bundles", "--min-coverage", "100"], &repo());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("  ok   happy_path.yaml"), "{stdout}");
    assert!(
        stdout.contains("coverage bundles/SupportDesk: 9/9 rules (100.0%)"),
        "{stdout}"
    );

    // A wrong expectation fails with the first divergence, and an unfired rule is listed.
    let root = std::env::temp_dir().join(format!("mzk-runs-{}-test", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    copy_dir(
        &repo().join("bundles/SupportDesk"),
        &root.join("SupportDesk"),
    );
    for s in ["needs_details", "no_research", "rejected"] {
        std::fs::remove_file(root.join(format!("SupportDesk/scenarios/{s}.yaml"))).unwrap();
    }
    let happy = root.join("SupportDesk/scenarios/happy_path.yaml");
    let text = std::fs::read_to_string(&happy).unwrap();
    std::fs::write(
        &happy,
        text.replace(
            "[IntakeAgent, IntakeAgent, ClassifierAgent",
            "[IntakeAgent, ClassifierAgent",
        ),
    )
    .unwrap();
    let out = mzk(&["test", "SupportDesk"], &root);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("FAIL happy_path.yaml: turn 2: expected ClassifierAgent, got IntakeAgent"),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "never fired: rule 4 at SupportDesk/transition_graph.yaml:29: ClassifierAgent → user"
        ),
        "{stdout}"
    );

    std::fs::write(&happy, text).unwrap();
    let out = mzk(&["test", "SupportDesk", "--min-coverage", "90"], &root);
    assert_eq!(out.status.code(), Some(1), "6/9 rules is below 90%");
    assert!(String::from_utf8_lossy(&out.stderr).contains("below --min-coverage 90%"));

    let out = mzk(&["test", "SupportDesk", "--coverage-format", "json"], &root);
    assert!(out.status.success());
    let coverage: Value = serde_json::from_slice(&out.stdout).unwrap();
    let b = &coverage["bundles"][0];
    assert_eq!(
        (b["covered"].as_u64(), b["total"].as_u64()),
        (Some(6), Some(9))
    );
    assert_eq!(b["rules"][0]["hits"], 1);
    let out = mzk(&["test", "SupportDesk", "--coverage-format", "lcov"], &root);
    let lcov = String::from_utf8_lossy(&out.stdout);
    assert!(
        lcov.contains("DA:29,0\n") && lcov.contains("LF:9\nLH:6\nend_of_record"),
        "{lcov}"
    );
}
