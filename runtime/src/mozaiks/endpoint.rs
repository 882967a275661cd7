//! The OpenAI-compatible chat-completions endpoint mzk serves on 127.0.0.1
//! for one run of the real mozaiks runtime: AG2's own OpenAI client calls it
//! (streaming or not, tools, `response_format`), and each request is answered
//! by the run's model backend — the scenario's script, the synthetic model or
//! a live endpoint — exactly as mzk's own engine would ask it.
//!
//! The driver marks each request with the agent (`X-Mzk-Agent`) and, for a
//! task-batch worker, the task (`X-Mzk-Task`). A scripted reply carries its
//! tool calls and its final body together; AG2 asks twice (the calls, then,
//! with their results, the answer), so the body waits here for the second
//! request of that agent.

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::{json, Map, Value};
use tokio::net::TcpListener;
use tokio::sync::oneshot;

use crate::backend::{ModelBackend, ModelReply, ToolCallSpec, ToolExchange, ToolSpec, TurnRequest};

/// The header naming the agent a request is for.
pub const AGENT_HEADER: &str = "x-mzk-agent";
/// The header naming the task of a task-batch worker's request.
pub const TASK_HEADER: &str = "x-mzk-task";
/// The model name the driver gives AG2 (any name is answered).
pub const MODEL_NAME: &str = "mzk-local";

/// A running endpoint; it stops when dropped.
pub struct Endpoint {
    addr: SocketAddr,
    shared: Arc<Shared>,
    _stop: oneshot::Sender<()>,
}

impl Endpoint {
    /// Listens on 127.0.0.1 (a free port) and answers requests that carry
    /// `key` as their bearer token with `backend`.
    pub async fn serve(backend: Arc<dyn ModelBackend>, key: String) -> std::io::Result<Endpoint> {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            backend,
            authorization: format!("Bearer {key}"),
            call_ids: AtomicU32::new(0),
            conversations: Mutex::new(HashMap::new()),
            synthetic_replies: AtomicU32::new(0),
            requests: AtomicU32::new(0),
        });
        let (stop, mut stopped) = oneshot::channel::<()>();
        let serving = shared.clone();
        tokio::spawn(async move {
            loop {
                let accepted = tokio::select! {
                    accepted = listener.accept() => accepted,
                    _ = &mut stopped => break,
                };
                let Ok((stream, _)) = accepted else { continue };
                let shared = serving.clone();
                tokio::spawn(async move {
                    let service = service_fn(move |request| answer(shared.clone(), request));
                    // A client that hangs up mid-request only ends its own
                    // connection.
                    let _ = http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        Ok(Endpoint {
            addr,
            shared,
            _stop: stop,
        })
    }

    /// The base URL up to `/v1`, as OpenAI clients take it.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// Replies the synthetic model gave so far.
    pub fn synthetic_replies(&self) -> u32 {
        self.shared.synthetic_replies.load(Ordering::Relaxed)
    }

    /// Chat-completions requests answered so far.
    pub fn requests(&self) -> u32 {
        self.shared.requests.load(Ordering::Relaxed)
    }
}

struct Shared {
    backend: Arc<dyn ModelBackend>,
    /// The run's key: another local process cannot use the endpoint (and,
    /// with `--backend openai`, the user's key behind it).
    authorization: String,
    /// Tool-call ids are unique across the run's answers.
    call_ids: AtomicU32,
    /// Per agent (and task): its turn count and a scripted body waiting for
    /// the request that carries the tool results.
    conversations: Mutex<HashMap<(String, Option<String>), Conversation>>,
    synthetic_replies: AtomicU32,
    requests: AtomicU32,
}

#[derive(Default)]
struct Conversation {
    turns: u32,
    pending_body: Option<Value>,
}

type Answer = Response<Full<Bytes>>;

async fn answer(shared: Arc<Shared>, request: Request<Incoming>) -> Result<Answer, Infallible> {
    if request.method() != hyper::Method::POST
        || !request.uri().path().ends_with("/chat/completions")
    {
        return Ok(error_answer(
            StatusCode::NOT_FOUND,
            &format!(
                "mzk's local model endpoint answers POST …/v1/chat/completions only, not {} {}",
                request.method(),
                request.uri().path()
            ),
        ));
    }
    let header = |name: &str| {
        request
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    };
    if header("authorization").as_deref() != Some(shared.authorization.as_str()) {
        return Ok(error_answer(
            StatusCode::UNAUTHORIZED,
            "this endpoint serves one mzk run and answers only its key",
        ));
    }
    let agent = header(AGENT_HEADER);
    let task = header(TASK_HEADER);
    let body = match request.into_body().collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(e) => return Ok(error_answer(StatusCode::BAD_REQUEST, &e.to_string())),
    };
    let chat: Value = match serde_json::from_slice(&body) {
        Ok(v) => v,
        Err(e) => {
            return Ok(error_answer(
                StatusCode::BAD_REQUEST,
                &format!("the request body is not JSON: {e}"),
            ))
        }
    };
    shared.requests.fetch_add(1, Ordering::Relaxed);
    let Some(agent) = agent else {
        return Ok(error_answer(
            StatusCode::BAD_REQUEST,
            "the request names no agent (the X-Mzk-Agent header the driver adds)",
        ));
    };
    let reply = respond(&shared, agent, task, &chat).await;
    Ok(match reply {
        Ok(message) => {
            let stream = chat["stream"].as_bool().unwrap_or(false);
            let usage = chat["stream_options"]["include_usage"]
                .as_bool()
                .unwrap_or(false);
            completion_answer(&message, stream, usage)
        }
        // 400: OpenAI clients retry 5xx by themselves, which would take the
        // script's next reply; a model error is the turn's, as in mzk's engine.
        Err(message) => error_answer(StatusCode::BAD_REQUEST, &message),
    })
}

/// What the assistant says in one completion.
#[derive(Debug, Clone, PartialEq)]
pub struct AssistantMessage {
    pub content: Option<String>,
    pub tool_calls: Vec<ToolCallSpec>,
}

async fn respond(
    shared: &Shared,
    agent: String,
    task: Option<String>,
    chat: &Value,
) -> Result<AssistantMessage, String> {
    let after_tools = chat["messages"]
        .as_array()
        .and_then(|m| m.last())
        .is_some_and(|m| m["role"].as_str() == Some("tool"));
    let key = (agent.clone(), task.clone());
    let turn = {
        let mut conversations = shared
            .conversations
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        let conversation = conversations.entry(key.clone()).or_default();
        if after_tools {
            if let Some(body) = conversation.pending_body.take() {
                return Ok(AssistantMessage {
                    content: Some(content_text(&body)),
                    tool_calls: Vec::new(),
                });
            }
        } else {
            // A new turn: a body kept for a follow-up that never came (the
            // tool ended the turn, an attempt timed out) is not its answer.
            conversation.pending_body = None;
            conversation.turns += 1;
        }
        conversation.turns
    };
    let request = turn_request(agent, task, turn, chat);
    let reply = shared
        .backend
        .respond(&request)
        .await
        .map_err(|e| e.to_string())?;
    if reply.synthetic {
        shared.synthetic_replies.fetch_add(1, Ordering::Relaxed);
    }
    Ok(split_reply(shared, key, reply))
}

/// A scripted reply with tool calls answers with the calls now and keeps
/// its body for the request that brings their results.
fn split_reply(
    shared: &Shared,
    key: (String, Option<String>),
    mut reply: ModelReply,
) -> AssistantMessage {
    for call in &mut reply.tool_calls {
        if call.id.is_none() {
            let n = shared.call_ids.fetch_add(1, Ordering::Relaxed);
            call.id = Some(format!("call_mzk_{n}"));
        }
    }
    if reply.tool_calls.is_empty() {
        return AssistantMessage {
            content: Some(content_text(&reply.body)),
            tool_calls: Vec::new(),
        };
    }
    if !reply.needs_tool_results {
        let mut conversations = shared
            .conversations
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        conversations.entry(key).or_default().pending_body = Some(reply.body);
        return AssistantMessage {
            content: None,
            tool_calls: reply.tool_calls,
        };
    }
    AssistantMessage {
        content: match &reply.body {
            Value::String(s) if s.is_empty() => None,
            body => Some(content_text(body)),
        },
        tool_calls: reply.tool_calls,
    }
}

fn content_text(body: &Value) -> String {
    match body {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A message's text: a string, or the text parts of a content list.
fn message_text(message: &Value) -> String {
    match &message["content"] {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// The backend's view of a chat-completions request: the system prompt, the
/// latest user-side message as the input, the tools offered, the registry
/// model of a `json_schema` response format, and this turn's tool exchanges.
pub fn turn_request(agent: String, task: Option<String>, turn: u32, chat: &Value) -> TurnRequest {
    let messages: &[Value] = chat["messages"].as_array().map_or(&[], Vec::as_slice);
    let system_prompt = messages
        .iter()
        .filter(|m| m["role"].as_str() == Some("system"))
        .map(message_text)
        .collect::<Vec<_>>()
        .join("\n\n");
    // The turn's own exchanges follow the last non-tool, non-assistant message.
    let start = messages
        .iter()
        .rposition(|m| !matches!(m["role"].as_str(), Some("assistant" | "tool")))
        .map_or(0, |i| i + 1);
    let input = start
        .checked_sub(1)
        .and_then(|i| messages.get(i))
        .filter(|m| m["role"].as_str() != Some("system"))
        .map(message_text)
        .unwrap_or_default();
    let mut transcript = Vec::new();
    let mut results: HashMap<String, String> = HashMap::new();
    for m in &messages[start..] {
        if m["role"].as_str() == Some("tool") {
            if let Some(id) = m["tool_call_id"].as_str() {
                results.insert(id.to_string(), message_text(m));
            }
        }
    }
    let mut round = 0;
    for m in &messages[start..] {
        let Some(calls) = m["tool_calls"].as_array() else {
            continue;
        };
        round += 1;
        for call in calls {
            let call_id = call["id"].as_str().unwrap_or_default().to_string();
            transcript.push(ToolExchange {
                round,
                name: call["function"]["name"].as_str().unwrap_or_default().into(),
                arguments: call["function"]["arguments"]
                    .as_str()
                    .and_then(|a| serde_json::from_str(a).ok())
                    .unwrap_or_else(|| Value::Object(Map::new())),
                result: results.get(&call_id).cloned().unwrap_or_default(),
                call_id,
            });
        }
    }
    let tools = chat["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .map(|t| ToolSpec {
                    name: t["function"]["name"].as_str().unwrap_or_default().into(),
                    description: t["function"]["description"]
                        .as_str()
                        .unwrap_or_default()
                        .into(),
                    parameters: t["function"]["parameters"].clone(),
                })
                .collect()
        })
        .unwrap_or_default();
    let response_model = chat["response_format"]["json_schema"]["name"]
        .as_str()
        .map(str::to_string);
    TurnRequest {
        agent,
        system_prompt,
        input,
        tools,
        response_model,
        turn,
        task_kind: None,
        task_id: task,
        transcript,
    }
}

fn tool_calls_json(calls: &[ToolCallSpec]) -> Vec<Value> {
    calls
        .iter()
        .enumerate()
        .map(|(i, c)| {
            json!({
                "index": i,
                "id": c.id.clone().unwrap_or_else(|| format!("call_mzk_{i}")),
                "type": "function",
                "function": {"name": c.name, "arguments": c.arguments.to_string()},
            })
        })
        .collect()
}

/// The completion as one JSON object, or as the server-sent events a
/// streaming client reads (role and content, the tool calls, the finish,
/// the usage when asked for, `[DONE]`).
pub fn completion_body(message: &AssistantMessage, stream: bool, usage: bool) -> String {
    let finish = if message.tool_calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    };
    let calls = tool_calls_json(&message.tool_calls);
    let zero_usage = json!({"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0});
    let envelope = |object: &str, choices: Value| json!({"id": "chatcmpl-mzk", "object": object, "created": 0, "model": MODEL_NAME, "choices": choices});
    if !stream {
        let mut body = envelope(
            "chat.completion",
            json!([{"index": 0, "finish_reason": finish, "message": {
                "role": "assistant",
                "content": message.content,
                "tool_calls": (!calls.is_empty()).then_some(&calls),
            }}]),
        );
        body["usage"] = zero_usage;
        return body.to_string();
    }
    let chunk = |delta: Value, finish: Option<&str>| {
        let mut c = envelope(
            "chat.completion.chunk",
            json!([{"index": 0, "delta": delta, "finish_reason": finish}]),
        );
        if usage {
            c["usage"] = Value::Null;
        }
        format!("data: {c}\n\n")
    };
    let mut out = chunk(
        json!({"role": "assistant", "content": message.content.as_deref().map(|_| "")}),
        None,
    );
    if let Some(content) = message.content.as_deref().filter(|c| !c.is_empty()) {
        out.push_str(&chunk(json!({"content": content}), None));
    }
    if !calls.is_empty() {
        out.push_str(&chunk(json!({"tool_calls": calls}), None));
    }
    out.push_str(&chunk(json!({}), Some(finish)));
    if usage {
        let mut last = envelope("chat.completion.chunk", json!([]));
        last["usage"] = zero_usage;
        out.push_str(&format!("data: {last}\n\n"));
    }
    out.push_str("data: [DONE]\n\n");
    out
}

fn completion_answer(message: &AssistantMessage, stream: bool, usage: bool) -> Answer {
    let content_type = if stream {
        "text/event-stream"
    } else {
        "application/json"
    };
    Response::builder()
        .status(StatusCode::OK)
        .header("content-type", content_type)
        .body(Full::new(Bytes::from(completion_body(
            message, stream, usage,
        ))))
        .unwrap_or_else(|_| Response::new(Full::new(Bytes::new())))
}

fn error_answer(status: StatusCode, message: &str) -> Answer {
    let body = json!({"error": {"message": message, "type": "invalid_request_error", "code": "mzk_model_error"}});
    Response::builder()
        .status(status)
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(body.to_string())))
        .unwrap_or_else(|_| Response::new(Full::new(Bytes::new())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_reads_as_the_turn_mzk_would_ask() {
        let chat = json!({
            "messages": [
                {"role": "system", "content": "You are A."},
                {"role": "user", "content": "hello"},
                {"role": "assistant", "content": null, "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": "{\"q\": 1}"}}]},
                {"role": "tool", "tool_call_id": "c1", "content": "{\"ok\": true}"}
            ],
            "tools": [{"type": "function", "function": {"name": "lookup", "description": "Finds.", "parameters": {"type": "object"}}}],
            "response_format": {"type": "json_schema", "json_schema": {"name": "Verdict", "schema": {}}}
        });
        let request = turn_request("A".into(), Some("t1".into()), 2, &chat);
        assert_eq!(request.system_prompt, "You are A.");
        assert_eq!(request.input, "hello");
        assert_eq!(request.response_model.as_deref(), Some("Verdict"));
        assert_eq!(request.tools[0].name, "lookup");
        assert_eq!(request.task_id.as_deref(), Some("t1"));
        assert_eq!(request.transcript.len(), 1);
        assert_eq!(request.transcript[0].arguments, json!({"q": 1}));
        assert_eq!(request.transcript[0].result, "{\"ok\": true}");
    }

    #[test]
    fn a_stream_carries_content_calls_finish_and_done() {
        let message = AssistantMessage {
            content: None,
            tool_calls: vec![ToolCallSpec {
                id: None,
                name: "save".into(),
                arguments: json!({"x": 1}),
            }],
        };
        let body = completion_body(&message, true, true);
        let events: Vec<&str> = body
            .split("\n\n")
            .filter_map(|e| e.strip_prefix("data: "))
            .collect();
        assert_eq!(events.last(), Some(&"[DONE]"));
        let chunks: Vec<Value> = events[..events.len() - 1]
            .iter()
            .map(|e| serde_json::from_str(e).unwrap())
            .collect();
        let calls = chunks
            .iter()
            .find(|c| !c["choices"][0]["delta"]["tool_calls"].is_null())
            .unwrap();
        assert_eq!(
            calls["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"],
            "{\"x\":1}"
        );
        assert!(chunks
            .iter()
            .any(|c| c["choices"][0]["finish_reason"] == "tool_calls"));
        assert_eq!(chunks.last().unwrap()["usage"]["total_tokens"], 0);
    }

    #[test]
    fn a_whole_completion_is_one_object() {
        let message = AssistantMessage {
            content: Some("{\"a\": 1}".into()),
            tool_calls: Vec::new(),
        };
        let body: Value = serde_json::from_str(&completion_body(&message, false, false)).unwrap();
        assert_eq!(body["choices"][0]["message"]["content"], "{\"a\": 1}");
        assert_eq!(body["choices"][0]["finish_reason"], "stop");
        assert!(body["choices"][0]["message"]["tool_calls"].is_null());
    }
}
