//! Runs started from the editor, and the transition coverage of the last
//! `mzk test` shown as inlay hints.

use std::time::Duration;

use mzk_tests::bundle_copy;
use mzk_tests::lsp_client::{uri, Client};
use serde_json::{json, Value};

/// Collects server messages until one satisfies `done`.
async fn collect_until(client: &mut Client, done: impl Fn(&Value) -> bool) -> Vec<Value> {
    let mut seen = Vec::new();
    loop {
        let message = client.next().await;
        let finished = done(&message);
        seen.push(message);
        if finished {
            return seen;
        }
    }
}

fn run_events(messages: &[Value]) -> Vec<String> {
    messages
        .iter()
        .filter(|m| m["method"] == "mzk/runEvent")
        .map(|m| m["params"]["event"]["type"].as_str().unwrap().to_string())
        .collect()
}

fn shows(message: &Value, text: &str) -> bool {
    message["method"] == "window/showMessage"
        && message["params"]["message"]
            .as_str()
            .unwrap()
            .contains(text)
}

#[tokio::test]
async fn runs_from_the_editor_stream_events_ask_the_user_and_can_be_cancelled() {
    let root = mzk_tests::Scratch::new("lsp-runs");
    let dir = root.join("PauseResume");
    mzk_tests::copy_dir(
        &mzk_tests::repo().join("tests/fixtures/runtime/PauseResume"),
        &dir,
    );
    std::fs::write(
        dir.join("model.yaml"),
        "responses:\n  A: [\"question?\", \"again?\"]\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("slow.yaml"),
        "responses:\n  A: [{text: late, delay: 30}]\n",
    )
    .unwrap();
    let (mut client, server, _) = Client::start_with(json!({
        "processId": null,
        "capabilities": {"window": {"workDoneProgress": true}},
        "initializationOptions": {"run": {"backend": "synthetic"}},
    }))
    .await;
    let folder = dir.to_string_lossy().to_string();
    let scenario = json!({"scenario": dir.join("model.yaml").to_string_lossy()});

    // 1. The client answers the pause: the run completes in one go.
    client
        .answers
        .insert("mzk/askUser".into(), json!({"text": "yes"}));
    let started = client
        .request(
            "workspace/executeCommand",
            json!({"command": "mzk.runWorkflow", "arguments": [folder, scenario]}),
        )
        .await;
    let run_id = started["runId"].as_str().unwrap().to_string();
    let messages = collect_until(&mut client, |m| shows(m, "completed")).await;
    assert_eq!(
        run_events(&messages),
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
    assert!(messages
        .iter()
        .filter(|m| m["method"] == "mzk/runEvent")
        .all(|m| m["params"]["runId"] == run_id.as_str()));
    let ask = client
        .server_requests
        .iter()
        .find(|r| r["method"] == "mzk/askUser")
        .expect("asked");
    assert_eq!(ask["params"]["prompt"], "A asks: question?");
    assert!(client
        .server_requests
        .iter()
        .any(|r| r["method"] == "window/workDoneProgress/create"));
    let progress: Vec<&str> = messages
        .iter()
        .filter(|m| m["method"] == "$/progress")
        .map(|m| m["params"]["value"]["kind"].as_str().unwrap())
        .collect();
    assert_eq!(progress.first(), Some(&"begin"));
    assert_eq!(progress.last(), Some(&"end"));
    assert!(progress.contains(&"report"));
    let summary = messages.last().unwrap()["params"]["message"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        summary,
        format!("mzk: run {run_id} of PauseResume: completed (workflow_complete) after 1 agent turn and 1 user reply")
    );

    // 2. No answer: the server says how to reply, and mzk.reply continues the run.
    client
        .answers
        .insert("mzk/askUser".into(), json!({"text": null}));
    let started = client
        .request(
            "workspace/executeCommand",
            json!({"command": "mzk.runFromAgent", "arguments": [folder, "A", scenario]}),
        )
        .await;
    let run_id = started["runId"].as_str().unwrap().to_string();
    collect_until(&mut client, |m| shows(m, "waits for your reply")).await;
    collect_until(&mut client, |m| shows(m, "paused (awaiting_user_input)")).await;
    client
        .request(
            "workspace/executeCommand",
            json!({"command": "mzk.reply", "arguments": [run_id, "yes"]}),
        )
        .await;
    let messages = collect_until(&mut client, |m| shows(m, "completed")).await;
    assert_eq!(
        run_events(&messages).first().map(String::as_str),
        Some("user_message")
    );

    // 3. Cancelled mid-turn: interrupted, and the history keeps it.
    let started = client
        .request(
            "workspace/executeCommand",
            json!({"command": "mzk.runWorkflow", "arguments": [folder, {"scenario": dir.join("slow.yaml").to_string_lossy()}]}),
        )
        .await;
    let slow = started["runId"].as_str().unwrap().to_string();
    collect_until(&mut client, |m| {
        m["method"] == "mzk/runEvent" && m["params"]["event"]["type"] == "prompt"
    })
    .await;
    client
        .request(
            "workspace/executeCommand",
            json!({"command": "mzk.cancelRun", "arguments": [slow]}),
        )
        .await;
    collect_until(&mut client, |m| shows(m, "interrupted")).await;
    let history = mzk_runtime::history::History::open(&dir.join(".mzk/runs.db")).unwrap();
    let runs = history.list(10).unwrap();
    let statuses: Vec<(&str, &str)> = runs
        .iter()
        .map(|r| (r.id.as_str(), r.status.as_str()))
        .collect();
    assert!(
        statuses.contains(&(slow.as_str(), "interrupted")),
        "{statuses:?}"
    );
    assert!(
        statuses.contains(&(run_id.as_str(), "completed")),
        "{statuses:?}"
    );

    // Unknown runs and bundles with errors are refused with a reason.
    let refused = client
        .request_raw(
            "workspace/executeCommand",
            json!({"command": "mzk.reply", "arguments": ["nope", "x"]}),
        )
        .await;
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no run `nope`"),
        "{refused}"
    );
    std::fs::write(dir.join("orchestrator.yaml"), "schema_version: mozaiks.orchestrator.v1\nworkflow_name: PauseResume\nworkflow_startup_mode: Sometimes\n").unwrap();
    let orchestrator = uri(&dir.join("orchestrator.yaml"));
    client
        .open(
            &orchestrator,
            1,
            &std::fs::read_to_string(dir.join("orchestrator.yaml")).unwrap(),
        )
        .await;
    client.diagnostics(&orchestrator, Some(1)).await;
    let refused = client
        .request_raw(
            "workspace/executeCommand",
            json!({"command": "mzk.runWorkflow", "arguments": [folder]}),
        )
        .await;
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("error"),
        "{refused}"
    );
    client.stop(server).await;
}

/// After `mzk test`, each rule of transition_graph.yaml shows how often it
/// fired; the server watches the coverage file and asks the client to refresh
/// its hints; a rule edited since the test shows no stale count.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn transition_coverage_of_the_last_mzk_test_shows_as_inlay_hints() {
    let dir = bundle_copy("lsp", "SupportDesk", "coverage");
    let root = dir.root().to_path_buf();
    let graph = dir.join("transition_graph.yaml");
    let graph_uri = uri(&graph);
    let text = std::fs::read_to_string(&graph).unwrap();
    let (mut client, server, init) = Client::start_with(json!({
        "processId": null,
        "capabilities": {"workspace": {"inlayHint": {"refreshSupport": true}}},
        "workspaceFolders": [{"uri": uri(&root), "name": "w"}],
    }))
    .await;
    assert_eq!(init["capabilities"]["inlayHintProvider"], true);
    client.open(&graph_uri, 1, &text).await;
    let whole = json!({"textDocument": {"uri": graph_uri},
        "range": {"start": {"line": 0, "character": 0}, "end": {"line": 10_000, "character": 0}}});
    // No test has run: no hints.
    assert_eq!(
        client
            .request("textDocument/inlayHint", whole.clone())
            .await,
        Value::Null
    );

    let out = std::process::Command::new(env!("CARGO_BIN_EXE_mzk-e2e"))
        .args(["test", "."])
        .current_dir(&*dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let scenarios = mzk_runtime::suite::scenario_files(&dir).len();
    // The server sees the coverage file appear and asks for a refresh.
    let started = std::time::Instant::now();
    while !client
        .server_requests
        .iter()
        .any(|r| r["method"] == "workspace/inlayHint/refresh")
    {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "no refresh request"
        );
        let _ = tokio::time::timeout(Duration::from_millis(200), client.next()).await;
    }

    let hints = client
        .request("textDocument/inlayHint", whole.clone())
        .await;
    let hints = hints.as_array().unwrap();
    let rule_lines: Vec<usize> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| l.trim_start().starts_with("- source_agent"))
        .map(|(i, _)| i)
        .collect();
    assert_eq!(hints.len(), rule_lines.len(), "{hints:#?}");
    for (hint, line) in hints.iter().zip(&rule_lines) {
        assert_eq!(hint["position"]["line"], *line);
        assert_eq!(
            hint["position"]["character"],
            text.lines().nth(*line).unwrap().encode_utf16().count()
        );
        let label = hint["label"].as_str().unwrap();
        assert!(label.starts_with("fired "), "{label}");
        assert!(
            label.ends_with(&format!("in {scenarios} scenarios")),
            "{label}"
        );
    }

    // The first rule never fired; the second was edited since the test.
    let path = mzk_runtime::suite::Coverage::path(&dir);
    let mut coverage: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    coverage["rules"][0]["hits"] = 0.into();
    coverage["rules"][1]["rule"] = "Someone → Else (after turn)".into();
    std::fs::write(&path, coverage.to_string()).unwrap();
    let hints = client.request("textDocument/inlayHint", whole).await;
    let hints = hints.as_array().unwrap();
    assert_eq!(hints.len(), rule_lines.len() - 1, "{hints:#?}");
    assert_eq!(
        hints[0]["label"],
        format!("never fired in {scenarios} scenarios")
    );
    assert_eq!(hints[1]["position"]["line"], rule_lines[2]);
    client.stop(server).await;
}
