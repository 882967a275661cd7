//! `mzk run` and `mzk runs` as processes: a paused run resumed from another
//! process, a run killed mid-call keeps its history (marked interrupted),
//! a failed run's history is intact, a bundle with errors is refused.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use mzk_tests::{copy_dir, repo, Scratch};
use serde_json::{json, Value};

fn mzk(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mzk-e2e"))
        .args(args)
        .current_dir(cwd)
        .output()
        .unwrap()
}

/// A private copy of a runtime fixture bundle: returns the folder holding it
/// (the bundle is `<root>/<name>`).
fn fixture_copy(name: &str, test: &str) -> Scratch {
    let root = Scratch::new(&format!("runs-{test}"));
    copy_dir(
        &repo().join("tests/fixtures/runtime").join(name),
        &root.join(name),
    );
    root
}

fn json_lines(out: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}")))
        .collect()
}

/// The events of `mzk ARGS` (given `--json`), which must succeed.
fn run_events(args: &[&str], cwd: &Path) -> Vec<Value> {
    let out = mzk(args, cwd);
    assert!(
        out.status.success(),
        "mzk {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    json_lines(&out)
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
    let root = fixture_copy("PauseResume", "resume");
    // The scripted model, without the user's replies or an expected outcome.
    std::fs::write(
        root.join("model.yaml"),
        "responses:\n  A: [\"question?\"]\n",
    )
    .unwrap();
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

    let events = run_events(
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
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("is completed; a paused run takes --reply")
    );
}

/// Starts `mzk run` on a copy of the Chain fixture whose first tool call
/// sleeps for a minute; returns the root, the child and the run id once the
/// call is recorded.
// The caller waits on the child it gets back.
#[allow(clippy::zombie_processes)]
fn start_slow_run(test: &str) -> (Scratch, std::process::Child, String) {
    let root = fixture_copy("Chain", test);
    let bundle = root.join("Chain");
    std::fs::write(
        bundle.join("tools.yaml"),
        "tools:\n  - {agent: A, file: slow.py, function: slow, tool_type: Agent_Tool, description: Sleeps.}\n",
    )
    .unwrap();
    std::fs::create_dir_all(bundle.join("tools")).unwrap();
    // It sleeps while the `block` file exists.
    std::fs::write(
        bundle.join("tools/slow.py"),
        "import os, time\n\ndef slow():\n    if os.path.exists(os.path.join(os.path.dirname(__file__), 'block')):\n        time.sleep(60)\n    return 1\n",
    )
    .unwrap();
    std::fs::write(bundle.join("tools/block"), "").unwrap();
    std::fs::write(
        bundle.join("scenarios/slow.yaml"),
        "responses:\n  A: [{tool_calls: [{name: slow}], text: waited}]\n  B: [done]\n",
    )
    .unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_mzk-e2e"))
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
    let started = Instant::now();
    loop {
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
            return (root, child, id);
        }
    }
}

#[test]
fn a_killed_run_keeps_its_history_and_is_marked_interrupted() {
    let (root, mut child, id) = start_slow_run("killed");
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
    assert_eq!(
        last["error"],
        "the process running it ended before the run finished"
    );
}

#[test]
fn a_killed_run_resumes_by_running_its_interrupted_turn_again() {
    let (root, mut child, id) = start_slow_run("recover");
    child.kill().unwrap();
    child.wait().unwrap();
    std::fs::remove_file(root.join("Chain/tools/block")).unwrap();
    let events = run_events(
        &[
            "run",
            "Chain",
            "--scenario",
            "Chain/scenarios/slow.yaml",
            "--resume",
            &id,
            "--json",
        ],
        &root,
    );
    assert_eq!(events[0]["type"], "notice");
    assert_eq!(
        events[0]["message"],
        "resuming: A's interrupted turn runs again"
    );
    assert_eq!(
        events[1],
        json!({"type": "turn_started", "agent": "A", "turn": 1})
    );
    let last = events.last().unwrap();
    assert_eq!(
        (last["status"].as_str(), last["turns"].as_u64()),
        (Some("completed"), Some(3))
    );
    let shown = show(&root, "Chain", &id);
    assert_eq!(shown["run"]["status"], "completed");
    let types = event_types(&shown);
    assert_eq!(
        types.iter().filter(|t| *t == "run_finished").count(),
        2,
        "{types:?}"
    );
    // A completed run is not recovered again.
    let out = mzk(
        &[
            "run",
            "Chain",
            "--scenario",
            "Chain/scenarios/slow.yaml",
            "--resume",
            &id,
        ],
        &root,
    );
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn ctrl_c_ends_the_run_as_interrupted_by_the_runner_itself() {
    let (root, mut child, id) = start_slow_run("ctrlc");
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let code = child.wait().unwrap();
    assert_eq!(code.code(), Some(1), "an interrupted run exits 1");
    let shown = show(&root, "Chain", &id);
    assert_eq!(shown["run"]["status"], "interrupted");
    let events = shown["events"].as_array().unwrap();
    let last = &events.last().unwrap()["event"];
    assert_eq!(
        (last["type"].as_str(), last["status"].as_str()),
        (Some("run_finished"), Some("interrupted"))
    );
    assert!(
        last.get("error").is_none(),
        "recorded by the runner, not by orphan detection: {last}"
    );
}

#[test]
fn a_failed_run_keeps_every_event_and_exits_1() {
    let root = fixture_copy("Chain", "failed");
    let out = mzk(
        &[
            "run",
            "Chain",
            "--scenario",
            "Chain/scenarios/model_error_no_retry.yaml",
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
    let shown = show(&root, "Chain", &id);
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
    let out = mzk(&["run", "Chain", "--scenario", "no_expect.yaml"], &root);
    assert_eq!(out.status.code(), Some(1));
    let saved = String::from_utf8_lossy(&out.stderr);
    assert!(
        saved.contains("mzk: saved as run ") && saved.contains("`mzk runs show "),
        "a run says where it is kept: {saved}"
    );
    let list = mzk(&["runs", "list", "Chain"], &root);
    let text = String::from_utf8_lossy(&list.stdout);
    let mut lines = text.lines();
    let header = lines.next().unwrap_or_default();
    for column in [
        "ID", "STATUS", "REASON", "TURNS", "WORKFLOW", "MODEL", "STARTED", "DURATION",
    ] {
        assert!(header.contains(column), "{text}");
    }
    let rows: Vec<&str> = lines.filter(|l| !l.starts_with("  ")).collect();
    assert_eq!(rows.len(), 2, "{text}");
    assert!(
        rows.iter()
            .all(|l| l.contains("failed") && l.contains(" s ago")),
        "{text}"
    );

    // From the folder above the bundle, its one history is found.
    let above = mzk(&["runs", "list", "."], &root);
    assert_eq!(String::from_utf8_lossy(&above.stdout), text);
    // A run is shown by the start of its id when that names one run: the
    // shortest start that tells the two runs apart.
    let other = rows
        .iter()
        .filter_map(|l| l.split_whitespace().next())
        .find(|other| *other != id)
        .expect("the second run")
        .to_string();
    let differs = id
        .chars()
        .zip(other.chars())
        .take_while(|(a, b)| a == b)
        .count();
    let prefix = &id[..=differs];
    let shown = mzk(&["runs", "show", prefix, "Chain"], &root);
    let shown_text = String::from_utf8_lossy(&shown.stdout);
    assert!(
        shown_text.starts_with(&format!("run {id} ")),
        "{shown_text}"
    );
    let ambiguous = mzk(&["runs", "show", "2", "Chain"], &root);
    assert_eq!(ambiguous.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&ambiguous.stderr).contains("begins 2 runs"),
        "{}",
        String::from_utf8_lossy(&ambiguous.stderr)
    );
}

#[test]
fn an_unknown_start_agent_is_refused_before_anything_runs() {
    let root = fixture_copy("Chain", "unknown-agent");
    let out = mzk(&["run", "Chain", "--agent", "b"], &root);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--agent b: ") && stderr.contains("(did you mean `B`?)"),
        "{stderr}"
    );
    assert!(
        !root.join("Chain/.mzk/runs.db").exists(),
        "no history for a run that never started"
    );
    // The reserved `user` is a start too.
    let out = mzk(&["run", "Chain", "--agent", "user"], &root);
    assert_ne!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_tool_that_cannot_import_its_packages_ends_the_run_with_the_way_out() {
    let root = fixture_copy("AutoTools", "missing-module");
    let tool = root.join("AutoTools/tools/decide.py");
    let code = std::fs::read_to_string(&tool).unwrap();
    std::fs::write(&tool, format!("import mzk_absent_package.sub\n{code}")).unwrap();
    let out = mzk(
        &[
            "run",
            "AutoTools",
            "--scenario",
            "AutoTools/scenarios/ready.yaml",
            "--python",
            "python3",
        ],
        &root,
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("mzk: the tools could not import `mzk_absent_package` with python3")
            && stderr.contains("--python PATH or set MZK_PYTHON"),
        "{stderr}"
    );
}

#[test]
fn a_bundle_with_errors_is_not_run() {
    let root = fixture_copy("Chain", "errors");
    let bundle = root.join("Chain");
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
        let root = Scratch::new(&format!("runs-synthetic-{name}"));
        copy_dir(&repo().join("bundles").join(name), &root.join(name));
        let events = run_events(&["run", name, "--json"], &root);
        // Agents' turns, and the batch tasks' worker turns.
        let replies = events
            .iter()
            .filter(|e| e["type"] == "model_response" || e["type"] == "task_started")
            .count();
        assert!(replies > 0);
        assert!(events
            .iter()
            .filter(|e| e["type"] == "model_response")
            .all(|e| e["synthetic"] == true));
        // The summary says how many replies were synthetic, in JSON and for people.
        let last = events.last().unwrap();
        assert_eq!(last["type"], "run_finished");
        assert_eq!(last["synthetic_replies"], replies);
        // Offline, with no script, the example still runs to its end: the
        // synthetic model calls the tool intake's rule waits for, picks the
        // outcome that leads on, and gives the research batch a task.
        assert_eq!(last["status"], "completed", "{name}: {last}");
        assert_eq!(last["reason"], "workflow_complete", "{name}: {last}");
        let human = mzk(&["run", name], &root);
        let text = String::from_utf8_lossy(&human.stdout);
        let said = match replies {
            1 => "(1 synthetic model reply)".to_string(),
            n => format!("({n} synthetic model replies)"),
        };
        assert!(text.contains(&said), "{text}");
        // One count: the closing line counts the agent turns the headers number.
        let headers = text.lines().filter(|l| l.starts_with("turn ")).count();
        let agent_turns = match headers {
            1 => "after 1 agent turn".to_string(),
            n => format!("after {n} agent turns"),
        };
        assert!(text.contains(&agent_turns), "{text}");
        // Every hop names what its rule tested, as the YAML spells it.
        let hops: Vec<&str> = text.lines().filter(|l| l.contains("(rule ")).collect();
        assert!(!hops.is_empty(), "{text}");
        assert!(
            hops.iter().all(|h| !h.trim_end().ends_with(", condition)")),
            "{text}"
        );
        if name == "SupportDesk" {
            assert!(
                text.contains("→ ClassifierAgent (rule 0: IntakeAgent, ticket_captured == true)"),
                "{text}"
            );
        }
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
    assert!(stdout.contains("  ok   happy_path.yaml ("), "{stdout}");
    let summary = stdout.lines().last().unwrap_or_default();
    assert!(
        summary.contains(" passed, 0 failed, ") && summary.ends_with(" s"),
        "{stdout}"
    );
    assert!(
        stdout.contains("coverage bundles/SupportDesk: 9/9 rules (100.0%)"),
        "{stdout}"
    );

    // A wrong expectation fails with the first divergence, and an unfired rule is listed.
    let root = Scratch::new("runs-test");
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
    // The failures again at the end, with their files.
    let recap = &stdout[stdout.find("\nfailures:\n").expect(&stdout)..];
    assert!(
        recap.contains("  SupportDesk/scenarios/happy_path.yaml: turn 2: expected ClassifierAgent, got IntakeAgent"),
        "{stdout}"
    );

    // A bundle without scenarios is one line, not a list of unfired rules.
    copy_dir(&repo().join("bundles/Hello"), &root.join("Hello"));
    std::fs::remove_dir_all(root.join("Hello/scenarios")).unwrap();
    let out = mzk(&["test", "Hello"], &root);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.starts_with("Hello: no scenarios ("), "{stdout}");
    assert!(!stdout.contains("never fired"), "{stdout}");
    assert_eq!(stdout.lines().count(), 2, "{stdout}");

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
    // The same coverage is kept for the language server's hints.
    let saved: Value = serde_json::from_str(
        &std::fs::read_to_string(root.join("SupportDesk/.mzk/coverage.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(saved["scenarios"], 1);
    let hits = |rules: &Value| -> Vec<(Value, Value, Value)> {
        rules
            .as_array()
            .unwrap()
            .iter()
            .map(|r| (r["index"].clone(), r["rule"].clone(), r["hits"].clone()))
            .collect()
    };
    assert_eq!(hits(&saved["rules"]), hits(&b["rules"]));
    let out = mzk(&["test", "SupportDesk", "--coverage-format", "lcov"], &root);
    let lcov = String::from_utf8_lossy(&out.stdout);
    assert!(
        lcov.contains("DA:29,0\n") && lcov.contains("LF:9\nLH:6\nend_of_record"),
        "{lcov}"
    );
}

/// The smoke bundles shipped in the mozaiks 0.2.0 wheel run offline with
/// their own smoke files, their tools importing the real mozaiks package
/// (installed from PyPI by the conformance harness): the UI tool round trip
/// is answered by smoke_responses.json.
#[test]
fn the_real_smoke_bundles_run_with_their_smoke_files_and_mozaiks_installed() {
    let (Some(corpus), Some(python)) = (mzk_tests::corpus(), mzk_tests::reference_python()) else {
        return;
    };
    let root = Scratch::new("runs-smoke");
    let python = python.to_string_lossy().to_string();
    for (bundle, smoke) in [
        ("RuntimeUIPrimitiveSmoke", "--smoke"),
        ("RuntimeToolCallSmoke", "--smoke=_connector"),
        ("RuntimeTaskBatchSmoke", ""),
    ] {
        copy_dir(&corpus.join(bundle), &root.join(bundle));
        let mut args = vec!["run", bundle, "--python", python.as_str(), "--json"];
        if !smoke.is_empty() {
            args.push(smoke);
        }
        let events = run_events(&args, &root);
        let last = events.last().unwrap();
        assert_eq!(
            (last["status"].as_str(), last["reason"].as_str()),
            (Some("completed"), Some("workflow_complete")),
            "{bundle}: {last}"
        );
        assert!(
            events
                .iter()
                .filter(|e| e["type"] == "tool_result")
                .all(|e| e["ok"] == true),
            "{bundle}: a tool failed: {:?}",
            events
                .iter()
                .filter(|e| e["type"] == "tool_result" && e["ok"] == false)
                .collect::<Vec<_>>()
        );
        if bundle == "RuntimeUIPrimitiveSmoke" {
            let approval = events
                .iter()
                .find(|e| e["type"] == "ui_tool" && e["awaiting_response"] == true)
                .expect("the approval card waits for the user");
            assert_eq!(approval["tool"], "ApprovalCard");
            assert_eq!(approval["response"]["action"], "approve");
            assert_eq!(approval["response"]["status"], "submitted");
            assert!(
                events.iter().any(|e| e["type"] == "user_message"),
                "smoke_responses.json answers the pause"
            );
            assert!(events.iter().any(|e| e["type"] == "context_set"
                && e["key"] == "approval_outcome"
                && e["value"] == "approve"));
        }
    }
}

/// The public endpoint without a key is refused at once, before any request
/// (it used to fail on the network after seconds); a named endpoint may
/// take no key.
#[test]
fn the_openai_backend_without_a_key_says_so_at_once() {
    let root = Scratch::new("runs-openai-key");
    copy_dir(&repo().join("bundles/Hello"), &root.join("Hello"));
    let run = |extra: &[&str]| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_mzk-e2e"));
        command
            .args([
                "run",
                "Hello",
                "--backend",
                "openai",
                "--model",
                "gpt-test",
                "--db",
                "runs.db",
            ])
            .args(extra)
            .current_dir(&*root);
        for name in [
            "MZK_OPENAI_API_KEY",
            "OPENAI_API_KEY",
            "MZK_OPENAI_BASE_URL",
            "OPENAI_BASE_URL",
        ] {
            command.env_remove(name);
        }
        let started = Instant::now();
        let out = command.output().unwrap();
        (out, started.elapsed())
    };
    let (out, took) = run(&[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("needs an API key") && stderr.contains("OPENAI_API_KEY"),
        "{stderr}"
    );
    assert!(took < Duration::from_secs(2), "{took:?}");
    // With an endpoint named, no key is needed: the run gets as far as the
    // (closed) port.
    let (out, _) = run(&[
        "--endpoint",
        "http://127.0.0.1:9/v1",
        "--model-timeout",
        "2",
    ]);
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!text.contains("needs an API key"), "{text}");
}

/// `mzk test` names each bundle the same way however it was reached (relative
/// to the current folder), and counts in words that agree with the number.
#[test]
fn test_reports_name_bundles_alike() {
    let root = Scratch::new("runs-test-names");
    copy_dir(&repo().join("bundles/Hello"), &root.join("bundles/Hello"));
    let absolute = root.join("bundles");
    for args in [
        vec!["test", "bundles/Hello"],
        vec!["test", absolute.to_str().unwrap()],
        vec!["test", "./bundles/Hello"],
    ] {
        let out = mzk(&args, &root);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{args:?}: {text}");
        assert!(
            text.lines().any(|l| l == "bundles/Hello (1 scenario)"),
            "{args:?}: {text}"
        );
        assert!(
            text.contains("coverage bundles/Hello: "),
            "{args:?}: {text}"
        );
    }
}

/// `--auto-reply` answers each pause (with a synthetic user's text, or the
/// one given) instead of stopping, so an offline run goes on to its end.
#[test]
fn auto_reply_answers_pauses() {
    let root = fixture_copy("PauseResume", "auto-reply");
    let events = run_events(&["run", "PauseResume", "--json", "--auto-reply"], &root);
    let user: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "user_message")
        .collect();
    assert_eq!(user.len(), 1, "{events:?}");
    assert!(user[0]["text"]
        .as_str()
        .unwrap()
        .starts_with("(synthetic user)"));
    assert_eq!(events.last().unwrap()["status"], "completed");
    let events = run_events(
        &["run", "PauseResume", "--json", "--auto-reply=yes, go on"],
        &root,
    );
    assert!(
        events
            .iter()
            .any(|e| e["type"] == "user_message" && e["text"] == "yes, go on"),
        "{events:?}"
    );
    // Without it the run pauses, as before.
    let events = run_events(&["run", "PauseResume", "--json"], &root);
    assert_eq!(events.last().unwrap()["status"], "paused");
}
