//! The OpenAI-compatible backend against a local HTTP server that speaks the
//! chat-completions protocol: tools as functions, tool results fed back,
//! a strict json_schema response format, retries on 429 and 5xx.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mzk_analyzer::{analyze_bundle, RealFs};
use mzk_runtime::openai::{OpenAiBackend, OpenAiConfig};
use mzk_runtime::RunStatus;
use mzk_runtime::{Engine, Recorder, RunOptions, RunState};
use serde_json::{json, Value};

/// Each request the server saw: its header lines and its JSON body.
type Seen = Arc<Mutex<Vec<(String, Value)>>>;

/// Serves the queued answers in order, one per connection, and records
/// each request's headers and body.
fn serve(answers: Vec<(u16, &'static str, Value)>) -> (String, Seen) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    std::thread::spawn(move || {
        for (status, extra_header, body) in answers {
            let Ok((stream, _)) = listener.accept() else {
                return;
            };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut headers = String::new();
            let mut length = 0;
            loop {
                let mut line = String::new();
                reader.read_line(&mut line).unwrap();
                if line == "\r\n" || line.is_empty() {
                    break;
                }
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap();
                }
                headers.push_str(&line);
            }
            let mut buf = vec![0; length];
            reader.read_exact(&mut buf).unwrap();
            log.lock()
                .unwrap()
                .push((headers, serde_json::from_slice(&buf).unwrap()));
            let text = body.to_string();
            let mut stream = stream;
            write!(
                stream,
                "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\n{extra_header}Content-Length: {}\r\nConnection: close\r\n\r\n{text}",
                text.len()
            )
            .unwrap();
        }
    });
    (url, seen)
}

fn content(text: &str) -> Value {
    json!({"choices": [{"message": {"role": "assistant", "content": text}}]})
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/runtime")
        .join(name)
}

fn run(bundle: &str, url: String, retries: u32) -> (RunState, Recorder) {
    let analysis = analyze_bundle(&RealFs, &fixture(bundle));
    let config = OpenAiConfig {
        base_url: url,
        model: "test-model".into(),
        api_key: Some("sk-test".into()),
        timeout: Duration::from_secs(10),
        retries,
        backoff: Duration::from_millis(10),
    };
    let backend = OpenAiBackend::new(config, &analysis.bundle);
    let mut recorder = Recorder::default();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let state = rt.block_on(async {
        let mut engine = Engine::new(
            &analysis.bundle,
            Box::new(backend),
            &mut recorder,
            RunOptions::new("openai", PathBuf::from("python3")),
        );
        engine.start().await;
        engine.shutdown().await;
        engine.state.clone()
    });
    (state, recorder)
}

#[test]
fn tools_are_functions_and_their_results_go_back_to_the_model() {
    let tool_call = json!({"choices": [{"message": {"role": "assistant", "content": null, "tool_calls": [
        {"id": "call_abc", "type": "function", "function": {"name": "set_route", "arguments": "{}"}}
    ]}}]});
    let (url, seen) = serve(vec![
        (
            429,
            "Retry-After: 0\r\n",
            json!({"error": {"message": "slow down"}}),
        ),
        (200, "", tool_call),
        (200, "", content("routed")),
        (200, "", content("reviewed")),
    ]);
    let (state, _) = run("ToolWrites", url, 3);
    assert_eq!(state.status, RunStatus::Completed, "{state:?}");
    assert_eq!(state.agents, ["A", "R"]);
    assert_eq!(state.context["route"], "review");
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 4);
    assert_eq!(seen[0].1, seen[1].1, "the retry repeats the request");
    assert!(seen[0]
        .0
        .to_ascii_lowercase()
        .contains("authorization: bearer sk-test"));
    let first = &seen[1].1;
    assert_eq!(first["model"], "test-model");
    assert_eq!(first["messages"][0]["role"], "system");
    assert_eq!(
        first["messages"][1],
        json!({"role": "user", "content": "Start."})
    );
    let tools: Vec<&str> = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(tools, ["set_route", "write_locked"]);
    assert_eq!(
        first["tools"][0]["function"]["parameters"],
        json!({"type": "object", "properties": {}, "required": []}),
        "context_variables is not shown to the model"
    );
    let second = &seen[2].1["messages"];
    assert_eq!(second[2]["tool_calls"][0]["id"], "call_abc");
    assert_eq!(
        second[3],
        json!({"role": "tool", "tool_call_id": "call_abc", "content": "{\"status\":\"ok\"}"})
    );
}

#[test]
fn a_registry_model_is_a_strict_response_format() {
    let (url, seen) = serve(vec![(200, "", content("{\"plan_ready\": true}"))]);
    let (state, _) = run("Outputs", url, 0);
    assert_eq!(state.status, RunStatus::Completed, "{state:?}");
    let body = &seen.lock().unwrap()[0].1;
    assert_eq!(
        body["response_format"],
        json!({"type": "json_schema", "json_schema": {"name": "Plan", "strict": true, "schema": {
            "type": "object",
            "properties": {"plan_ready": {"type": "boolean"}},
            "required": ["plan_ready"],
            "additionalProperties": false
        }}})
    );
    assert!(body.get("tools").is_none());
}

#[test]
fn server_errors_are_retried_then_fail_the_turn() {
    let (url, seen) = serve(vec![
        (500, "", json!({"error": "a"})),
        (502, "", json!({"error": "b"})),
        (503, "", json!({"error": "c"})),
    ]);
    let (state, _) = run("Chain", url.clone(), 2);
    assert_eq!(state.status, RunStatus::Failed);
    let error = state.error.unwrap();
    assert!(
        error.starts_with(&format!(
            "AG2 turn failed for A: model endpoint {url}/chat/completions answered 503"
        )),
        "{error}"
    );
    assert_eq!(seen.lock().unwrap().len(), 3);
}

#[test]
fn an_unreachable_endpoint_is_a_clear_turn_failure() {
    let (state, _) = run("Chain", "http://127.0.0.1:9/v1".into(), 0);
    assert_eq!(state.status, RunStatus::Failed);
    assert!(state
        .error
        .unwrap()
        .contains("model endpoint http://127.0.0.1:9/v1/chat/completions"));
}
