//! `--engine mozaiks` as processes: the real mozaiks 0.2.0 (the reference's
//! virtualenv, from PyPI) runs an example bundle offline through a pause and
//! a reply with its model served by mzk; `mzk test --engine both` compares
//! the two engines; a Python without mozaiks is one clear message, a failed
//! run in the history and exit status 2.

use std::path::Path;
use std::process::{Command, Output};

use mzk_tests::{copy_dir, reference_python, repo, Scratch};
use serde_json::Value;

fn mzk(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mzk-e2e"))
        .args(args)
        .current_dir(cwd)
        .output()
        .unwrap()
}

fn bundle_copy(name: &str, test: &str) -> Scratch {
    let root = Scratch::new(&format!("engines-{test}"));
    copy_dir(&repo().join("bundles").join(name), &root.join(name));
    root
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn the_real_runtime_runs_a_bundle_through_a_pause_offline() {
    let Some(python) = reference_python() else {
        return;
    };
    let root = bundle_copy("SupportDesk", "pause");
    let out = mzk(
        &[
            "run",
            "SupportDesk",
            "--engine",
            "mozaiks",
            "--python",
            python.to_str().unwrap(),
            "--scenario",
            "SupportDesk/scenarios/happy_path.yaml",
            "--json",
        ],
        &root,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("scenario passed"), "{}", stderr(&out));
    let events: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}")))
        .collect();
    let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(types[0], "run_started");
    assert_eq!(events[0]["engine"], "mozaiks");
    assert_eq!(events[0]["backend"], "scenario");
    for expected in [
        "paused",
        "user_message",
        "tool_call",
        "structured_output",
        "batch_finished",
    ] {
        assert!(types.contains(&expected), "no {expected} in {types:?}");
    }
    let last = events.last().unwrap();
    assert_eq!(last["type"], "run_finished");
    assert_eq!(last["status"], "completed");
    // The history has the run, under the engine's name.
    let listed = mzk(&["runs", "list", "SupportDesk", "--json"], &root);
    let runs: Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(runs[0]["backend"], "scenario@mozaiks", "{runs}");
    assert_eq!(runs[0]["status"], "completed");
}

#[test]
fn both_engines_agree_on_a_chain_and_say_so() {
    let Some(python) = reference_python() else {
        return;
    };
    let root = Scratch::new("engines-both");
    copy_dir(
        &repo().join("tests/fixtures/runtime/Chain"),
        &root.join("Chain"),
    );
    // Only the scenario both engines run alike (the others are in the
    // table of intended differences, docs/engines.md).
    for entry in std::fs::read_dir(root.join("Chain/scenarios")).unwrap() {
        let path = entry.unwrap().path();
        if path.file_name().unwrap() != "completes.yaml" {
            std::fs::remove_file(path).unwrap();
        }
    }
    let out = mzk(
        &[
            "test",
            "Chain",
            "--engine",
            "both",
            "--python",
            python.to_str().unwrap(),
            "--diff-json",
            "diff.json",
        ],
        &root,
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", stderr(&out));
    assert!(stdout.contains("1 passed, 0 failed"), "{stdout}");
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("diff.json")).unwrap()).unwrap();
    let scenario = &report["scenarios"][0];
    assert_eq!(scenario["differences"], Value::Array(Vec::new()));
    assert_eq!(
        scenario["engines"]["mozaiks"]["trace"]["speakers"],
        serde_json::json!(["A", "B"])
    );
    assert_eq!(
        scenario["engines"]["mzk"]["trace"],
        scenario["engines"]["mozaiks"]["trace"]
    );
}

#[test]
fn a_python_without_mozaiks_is_one_clear_error_and_a_failed_run() {
    let root = bundle_copy("Hello", "missing");
    // A Python that exists but has no mozaiks: a fresh virtualenv's.
    let venv = root.join("venv");
    let made = Command::new("python3")
        .args(["-m", "venv", "--without-pip", venv.to_str().unwrap()])
        .status()
        .unwrap();
    assert!(made.success());
    let python = venv.join("bin/python");
    let out = mzk(
        &[
            "run",
            "Hello",
            "--engine",
            "mozaiks",
            "--python",
            python.to_str().unwrap(),
        ],
        &root,
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let shown = format!("{}{}", String::from_utf8_lossy(&out.stdout), stderr(&out));
    assert!(shown.contains("has no mozaiks package"), "{shown}");
    assert!(shown.contains("pip install mozaiks==0.2.0"), "{shown}");
    assert!(!shown.contains("Traceback"), "{shown}");
    let listed = mzk(&["runs", "list", "Hello", "--json"], &root);
    let runs: Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(runs[0]["status"], "failed");
    assert_eq!(runs[0]["reason"], "engine_unavailable");

    // A resumed mozaiks run is refused before anything runs.
    let out = mzk(
        &[
            "run", "Hello", "--engine", "mozaiks", "--resume", "x", "--reply", "y",
        ],
        &root,
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("cannot be resumed"),
        "{}",
        stderr(&out)
    );
}
