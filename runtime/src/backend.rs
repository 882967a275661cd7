//! Model backends behind one trait: the scripted scenario, the synthetic
//! stand-in (the offline default) and OpenAI-compatible endpoints.

use std::collections::{BTreeMap, VecDeque};
use std::future::Future;
use std::pin::Pin;

use mzk_analyzer::model::Bundle;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::outputs;

/// What the runner asks the model for one turn.
#[derive(Debug, Clone)]
pub struct TurnRequest {
    pub agent: String,
    pub system_prompt: String,
    /// The envelope that triggered the turn (§1.5 c).
    pub input: String,
    /// The tools offered to the model (function names).
    pub tools: Vec<String>,
    /// The registry model the reply must satisfy.
    pub response_model: Option<String>,
    pub turn: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCallSpec {
    pub name: String,
    #[serde(default = "empty_object")]
    pub arguments: Value,
}

fn empty_object() -> Value {
    json!({})
}

/// The model's answer for one turn: tool calls in emission order, then the
/// final body.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelReply {
    pub body: Value,
    pub tool_calls: Vec<ToolCallSpec>,
    pub synthetic: bool,
}

pub type BackendFuture<'a> = Pin<Box<dyn Future<Output = Result<ModelReply, String>> + Send + 'a>>;

pub trait ModelBackend: Send {
    /// `scenario`, `synthetic` or `openai`.
    fn name(&self) -> &'static str;
    /// The reply for one turn; an error fails the turn as a model error would.
    fn respond<'a>(&'a mut self, request: &'a TurnRequest) -> BackendFuture<'a>;
    /// What must be kept to continue a paused run in another process.
    fn state(&self) -> Value {
        Value::Null
    }
    fn restore(&mut self, _state: &Value) {}
}

/// One scripted response, as written in a scenario file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ScriptedResponse {
    Text(String),
    Full(FullResponse),
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FullResponse {
    #[serde(default)]
    pub text: Option<String>,
    /// A structured output, sent as its JSON text.
    #[serde(default)]
    pub output: Option<Value>,
    #[serde(default)]
    pub tool_calls: Vec<ToolCallSpec>,
    /// The model call raises this error.
    #[serde(default)]
    pub error: Option<String>,
}

/// Per-agent queues of scripted responses; an empty queue falls back to the
/// synthetic model when the scenario allows it, else fails the turn.
pub struct ScenarioBackend {
    queues: BTreeMap<String, VecDeque<ScriptedResponse>>,
    consumed: BTreeMap<String, usize>,
    fallback: Option<SyntheticBackend>,
}

impl ScenarioBackend {
    pub fn new(
        responses: BTreeMap<String, Vec<ScriptedResponse>>,
        fallback: Option<SyntheticBackend>,
    ) -> ScenarioBackend {
        ScenarioBackend {
            queues: responses.into_iter().map(|(k, v)| (k, v.into())).collect(),
            consumed: BTreeMap::new(),
            fallback,
        }
    }
}

impl ModelBackend for ScenarioBackend {
    fn name(&self) -> &'static str {
        "scenario"
    }

    fn respond<'a>(&'a mut self, request: &'a TurnRequest) -> BackendFuture<'a> {
        let next = self
            .queues
            .get_mut(&request.agent)
            .and_then(VecDeque::pop_front);
        if next.is_some() {
            *self.consumed.entry(request.agent.clone()).or_default() += 1;
        }
        let reply = match next {
            Some(ScriptedResponse::Text(text)) => Ok(ModelReply {
                body: Value::String(text),
                tool_calls: Vec::new(),
                synthetic: false,
            }),
            Some(ScriptedResponse::Full(full)) => match full.error {
                Some(error) => Err(error),
                None => Ok(ModelReply {
                    body: match (full.output, full.text) {
                        (Some(output), _) => Value::String(output.to_string()),
                        (None, text) => Value::String(text.unwrap_or_default()),
                    },
                    tool_calls: full.tool_calls,
                    synthetic: false,
                }),
            },
            None => match self.fallback.as_mut() {
                Some(synthetic) => Ok(synthetic.reply(request)),
                None => Err(format!(
                    "the scenario has no more responses for {} (turn {}); add one under `responses.{}` or set `fallback: synthetic`",
                    request.agent, request.turn, request.agent
                )),
            },
        };
        Box::pin(async move { reply })
    }

    fn state(&self) -> Value {
        json!({ "consumed": self.consumed })
    }

    fn restore(&mut self, state: &Value) {
        if let Some(consumed) = state["consumed"].as_object() {
            for (agent, n) in consumed {
                let n = n.as_u64().unwrap_or(0) as usize;
                if let Some(q) = self.queues.get_mut(agent) {
                    q.drain(..n.min(q.len()));
                }
                self.consumed.insert(agent.clone(), n);
            }
        }
    }
}

/// The offline stand-in model: a structured output that satisfies the
/// agent's registry model (literal fields take values the bundle routes on),
/// or a short text. It calls no LLM tools; auto tools run from its outputs.
#[derive(Clone)]
pub struct SyntheticBackend {
    /// Model name → the synthesized object.
    outputs: BTreeMap<String, Value>,
}

impl SyntheticBackend {
    pub fn new(bundle: &Bundle) -> SyntheticBackend {
        let tested = outputs::tested_values(bundle);
        let outputs = bundle
            .models
            .iter()
            .map(|m| {
                (
                    m.name.text.clone(),
                    outputs::synthesize(bundle, &m.name.text, &tested),
                )
            })
            .collect();
        SyntheticBackend { outputs }
    }

    fn reply(&mut self, request: &TurnRequest) -> ModelReply {
        let body = match request
            .response_model
            .as_ref()
            .and_then(|m| self.outputs.get(m))
        {
            Some(output) => Value::String(output.to_string()),
            None => Value::String(format!("[synthetic reply from {}]", request.agent)),
        };
        ModelReply {
            body,
            tool_calls: Vec::new(),
            synthetic: true,
        }
    }
}

impl ModelBackend for SyntheticBackend {
    fn name(&self) -> &'static str {
        "synthetic"
    }

    fn respond<'a>(&'a mut self, request: &'a TurnRequest) -> BackendFuture<'a> {
        let reply = self.reply(request);
        Box::pin(async move { Ok(reply) })
    }
}
