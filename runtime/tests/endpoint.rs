//! The model endpoint `--engine mozaiks` serves, over real HTTP: a scripted
//! reply's tool calls first, its body once the results come back; streaming
//! and whole answers; errors as 400s a client does not retry; the agent
//! header required.

use std::collections::BTreeMap;
use std::sync::Arc;

use mzk_runtime::backend::ToolCallSpec;
use mzk_runtime::mozaiks::endpoint::Endpoint;
use mzk_runtime::scenario::{FullResponse, ScriptedResponse};
use mzk_runtime::scripted::ScenarioBackend;
use serde_json::{json, Value};

fn backend() -> ScenarioBackend {
    let mut responses = BTreeMap::new();
    responses.insert(
        "A".to_string(),
        vec![
            ScriptedResponse::Full(FullResponse {
                text: Some("captured".into()),
                tool_calls: vec![ToolCallSpec {
                    id: None,
                    name: "capture".into(),
                    arguments: json!({"summary": "printer"}),
                }],
                ..FullResponse::default()
            }),
            ScriptedResponse::Full(FullResponse {
                error: Some("planned failure".into()),
                ..FullResponse::default()
            }),
        ],
    );
    ScenarioBackend::new(responses, BTreeMap::new(), None)
}

fn post(url: &str, agent: Option<&str>, body: &Value) -> (u16, String) {
    post_with_key(url, agent, body, "k1")
}

fn post_with_key(url: &str, agent: Option<&str>, body: &Value, key: &str) -> (u16, String) {
    let agent_client: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let mut request = agent_client
        .post(url)
        .header("content-type", "application/json")
        .header("authorization", &format!("Bearer {key}"));
    if let Some(agent) = agent {
        request = request.header("X-Mzk-Agent", agent);
    }
    let mut response = request.send(body.to_string().as_str()).unwrap();
    let status = response.status().as_u16();
    (status, response.body_mut().read_to_string().unwrap())
}

#[test]
fn a_scripted_turn_is_served_as_ag2_asks_for_it() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let endpoint = rt
        .block_on(Endpoint::serve(Arc::new(backend()), "k1".into()))
        .unwrap();
    let url = format!("{}/chat/completions", endpoint.base_url());
    assert!(url.starts_with("http://127.0.0.1:"));
    let first = json!({"model": "m", "stream": true, "messages": [
        {"role": "system", "content": "You are A."},
        {"role": "user", "content": "hi"}]});
    let (status, body) = post(&url, Some("A"), &first);
    assert_eq!(status, 200);
    assert!(body.contains("\"tool_calls\""), "{body}");
    assert!(body.contains("capture"), "{body}");
    assert!(body.trim_end().ends_with("data: [DONE]"), "{body}");

    // With the tool's result, the same reply's body.
    let second = json!({"model": "m", "messages": [
        {"role": "system", "content": "You are A."},
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": null, "tool_calls": [{"id": "call_mzk_0", "type": "function",
            "function": {"name": "capture", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "call_mzk_0", "content": "ok"}]});
    let (status, body) = post(&url, Some("A"), &second);
    assert_eq!(status, 200);
    let answer: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(answer["choices"][0]["message"]["content"], "captured");

    // The next scripted reply is an error: a 400 the client will not retry.
    let (status, body) = post(&url, Some("A"), &first);
    assert_eq!(status, 400);
    assert!(body.contains("planned failure"), "{body}");

    // A request that names no agent cannot be answered.
    let (status, body) = post(&url, None, &first);
    assert_eq!(status, 400);
    assert!(body.contains("X-Mzk-Agent"), "{body}");
    assert_eq!(endpoint.requests(), 4);
    // Nor one without the run's key.
    let (status, _) = post_with_key(&url, Some("A"), &first, "other");
    assert_eq!(status, 401);
    assert_eq!(endpoint.requests(), 4);
}
