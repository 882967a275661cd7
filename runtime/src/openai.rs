//! A live model behind an OpenAI-compatible chat-completions endpoint
//! (OpenAI, Ollama, vLLM, llama.cpp server): tools as function definitions,
//! structured outputs as a strict `json_schema` response format, retries with
//! backoff on 429 and 5xx, and a timeout per request.

use std::time::Duration;

use serde_json::{json, Map, Value};

use crate::backend::{BackendFuture, ModelBackend, ModelReply, ToolCallSpec, TurnRequest};
use crate::error::Error;

/// Where requests go when no endpoint is named.
const PUBLIC_ENDPOINT: &str = "https://api.openai.com/v1";

#[derive(Debug, Clone)]
pub struct OpenAiConfig {
    /// Up to `/v1` (the request goes to `<base_url>/chat/completions`).
    pub base_url: String,
    pub model: String,
    pub api_key: Option<String>,
    pub timeout: Duration,
    /// Further attempts after a 429, a 5xx or a connection error.
    pub retries: u32,
    /// The first backoff; it doubles per retry (a Retry-After header wins).
    pub backoff: Duration,
}

impl OpenAiConfig {
    /// Flags first, then `MZK_OPENAI_BASE_URL` / `OPENAI_BASE_URL`,
    /// `MZK_MODEL` / `OPENAI_MODEL`, `MZK_OPENAI_API_KEY` / `OPENAI_API_KEY`.
    pub fn resolve(
        base_url: Option<String>,
        model: Option<String>,
        timeout: Duration,
    ) -> Result<OpenAiConfig, Error> {
        let env = |names: &[&str]| {
            names
                .iter()
                .find_map(|n| std::env::var(n).ok().filter(|v| !v.trim().is_empty()))
        };
        let chosen_url = base_url.or_else(|| env(&["MZK_OPENAI_BASE_URL", "OPENAI_BASE_URL"]));
        let model = model
            .or_else(|| env(&["MZK_MODEL", "OPENAI_MODEL"]))
            .ok_or_else(|| {
                Error::Model(
                    "the openai backend needs a model: --model NAME, or MZK_MODEL / OPENAI_MODEL"
                        .into(),
                )
            })?;
        let api_key = env(&["MZK_OPENAI_API_KEY", "OPENAI_API_KEY"]);
        // A local OpenAI-compatible server may take no key; the public
        // endpoint always does, so say so now rather than after a request.
        if chosen_url.is_none() && api_key.is_none() {
            return Err(Error::Model(format!(
                "the openai backend needs an API key for {PUBLIC_ENDPOINT}: set MZK_OPENAI_API_KEY or OPENAI_API_KEY \
                 (or point --endpoint at an OpenAI-compatible server that takes none)"
            )));
        }
        let base_url = chosen_url.unwrap_or_else(|| PUBLIC_ENDPOINT.into());
        Ok(OpenAiConfig {
            base_url: base_url.trim_end_matches('/').to_string(),
            model,
            api_key,
            timeout,
            retries: 3,
            backoff: Duration::from_millis(500),
        })
    }
}

pub struct OpenAiBackend {
    config: OpenAiConfig,
    agent: ureq::Agent,
    /// Registry model name → its strict response schema (None: not strict).
    schemas: std::collections::BTreeMap<String, Option<Value>>,
}

impl OpenAiBackend {
    pub fn new(config: OpenAiConfig, bundle: &mzk_analyzer::model::Bundle) -> OpenAiBackend {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(config.timeout))
            .http_status_as_error(false)
            .build()
            .into();
        let schemas = bundle
            .models
            .iter()
            .map(|m| {
                (
                    m.name.text.clone(),
                    crate::outputs::strict_schema(bundle, &m.name.text),
                )
            })
            .collect();
        OpenAiBackend {
            config,
            agent,
            schemas,
        }
    }

    /// The chat-completions request body for a turn.
    pub fn request_body(&self, request: &TurnRequest) -> Value {
        let mut messages = vec![
            json!({"role": "system", "content": request.system_prompt}),
            json!({"role": "user", "content": request.input}),
        ];
        let mut rounds: Vec<u32> = request.transcript.iter().map(|e| e.round).collect();
        rounds.dedup();
        for round in rounds {
            let calls: Vec<_> = request
                .transcript
                .iter()
                .filter(|e| e.round == round)
                .collect();
            messages.push(json!({
                "role": "assistant",
                "content": null,
                "tool_calls": calls.iter().map(|c| json!({
                    "id": c.call_id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments.to_string()},
                })).collect::<Vec<_>>(),
            }));
            for c in calls {
                messages
                    .push(json!({"role": "tool", "tool_call_id": c.call_id, "content": c.result}));
            }
        }
        let mut body = json!({"model": self.config.model, "messages": messages});
        if !request.tools.is_empty() {
            body["tools"] = request
                .tools
                .iter()
                .map(|t| json!({"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}))
                .collect();
        }
        if let Some(Some(schema)) = request
            .response_model
            .as_ref()
            .and_then(|m| self.schemas.get(m))
        {
            body["response_format"] = json!({
                "type": "json_schema",
                "json_schema": {"name": request.response_model, "schema": schema, "strict": true},
            });
        }
        body
    }
}

/// Reads a chat-completions answer into a reply.
pub fn parse_reply(answer: &Value) -> Result<ModelReply, Error> {
    let message = &answer["choices"][0]["message"];
    if !message.is_object() {
        return Err(Error::Model(format!(
            "the endpoint's answer has no choices[0].message: {}",
            excerpt(&answer.to_string())
        )));
    }
    let tool_calls: Vec<ToolCallSpec> = message["tool_calls"]
        .as_array()
        .map(|calls| {
            calls
                .iter()
                .map(|c| ToolCallSpec {
                    id: c["id"].as_str().map(str::to_string),
                    name: c["function"]["name"].as_str().unwrap_or("").to_string(),
                    arguments: c["function"]["arguments"]
                        .as_str()
                        .and_then(|a| serde_json::from_str(a).ok())
                        .unwrap_or_else(|| Value::Object(Map::new())),
                })
                .collect()
        })
        .unwrap_or_default();
    Ok(ModelReply {
        body: Value::String(message["content"].as_str().unwrap_or("").to_string()),
        needs_tool_results: !tool_calls.is_empty(),
        tool_calls,
        synthetic: false,
    })
}

fn excerpt(text: &str) -> String {
    text.chars().take(300).collect()
}

impl ModelBackend for OpenAiBackend {
    fn name(&self) -> &'static str {
        "openai"
    }

    fn respond<'a>(&'a self, request: &'a TurnRequest) -> BackendFuture<'a> {
        let body = self.request_body(request).to_string();
        let url = format!("{}/chat/completions", self.config.base_url);
        let agent = self.agent.clone();
        let config = self.config.clone();
        Box::pin(async move {
            let mut attempt = 0;
            loop {
                let (agent, target, body, key) = (
                    agent.clone(),
                    url.clone(),
                    body.clone(),
                    config.api_key.clone(),
                );
                let outcome = tokio::task::spawn_blocking(move || {
                    let mut req = agent
                        .post(&target)
                        .header("Content-Type", "application/json");
                    if let Some(key) = key {
                        req = req.header("Authorization", &format!("Bearer {key}"));
                    }
                    match req.send(body.as_str()) {
                        Ok(mut response) => {
                            let status = response.status().as_u16();
                            let retry_after = response
                                .headers()
                                .get("retry-after")
                                .and_then(|v| v.to_str().ok())
                                .and_then(|v| v.trim().parse::<f64>().ok());
                            let text = response.body_mut().read_to_string().unwrap_or_default();
                            Ok((status, retry_after, text))
                        }
                        Err(e) => Err(e.to_string()),
                    }
                })
                .await
                .map_err(|e| Error::Model(e.to_string()))?;
                let retryable = match &outcome {
                    Ok((status, _, _)) => *status == 429 || *status >= 500,
                    Err(_) => true,
                };
                if retryable && attempt < config.retries {
                    let wait = match &outcome {
                        Ok((_, Some(seconds), _)) => {
                            Duration::from_secs_f64(seconds.clamp(0.0, 30.0))
                        }
                        _ => config.backoff * 2u32.pow(attempt),
                    };
                    attempt += 1;
                    tokio::time::sleep(wait).await;
                    continue;
                }
                return match outcome {
                    Err(e) => Err(Error::Model(format!("model endpoint {url}: {e}"))),
                    Ok((status, _, text)) if !(200..300).contains(&status) => Err(Error::Model(
                        format!("model endpoint {url} answered {status}: {}", excerpt(&text)),
                    )),
                    Ok((_, _, text)) => {
                        let answer: Value = serde_json::from_str(&text).map_err(|e| {
                            Error::Model(format!(
                                "model endpoint {url}: unreadable answer ({e}): {}",
                                excerpt(&text)
                            ))
                        })?;
                        parse_reply(&answer)
                    }
                };
            }
        })
    }
}
