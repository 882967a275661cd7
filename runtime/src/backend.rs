//! Model backends behind one trait: the scripted scenario, the synthetic
//! stand-in (the offline default) and OpenAI-compatible endpoints.

use std::collections::{BTreeMap, VecDeque};
use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex;

use mzk_analyzer::model::Bundle;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::error::Error;

pub use crate::synthetic::SyntheticBackend;

/// What the runner asks the model for one turn.
#[derive(Debug, Clone)]
pub struct TurnRequest {
    pub agent: String,
    pub system_prompt: String,
    /// The envelope that triggered the turn (§1.5 c).
    pub input: String,
    /// The tools offered to the model.
    pub tools: Vec<ToolSpec>,
    /// The registry model the reply must satisfy.
    pub response_model: Option<String>,
    pub turn: u32,
    /// Set when a task-batch worker runs this turn (§6.4).
    pub task_id: Option<String>,
    /// The task's `kind`, when it has one.
    pub task_kind: Option<String>,
    /// This turn's earlier tool calls and their results, for models that
    /// answer after seeing them.
    pub transcript: Vec<ToolExchange>,
}

/// A tool as a model sees it: a function definition.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    /// JSON Schema of the arguments (from the Python signature).
    pub parameters: Value,
}

/// One tool call of this turn and what it returned.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolExchange {
    /// Which model round asked for it (calls of one round go together).
    pub round: u32,
    pub call_id: String,
    pub name: String,
    pub arguments: Value,
    /// The result as the model reads it (JSON text, or the error).
    pub result: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCallSpec {
    /// The model's id for the call, when it gives one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
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
    /// The model wants the tool results before its final answer (a live
    /// model); scripted replies carry their final body with their calls.
    pub needs_tool_results: bool,
}

pub type BackendFuture<'a> = Pin<Box<dyn Future<Output = Result<ModelReply, Error>> + Send + 'a>>;

/// A model. `respond` takes `&self` so that the tasks of a batch can ask
/// it concurrently.
pub trait ModelBackend: Send + Sync {
    /// `scenario`, `synthetic` or `openai`.
    fn name(&self) -> &'static str;
    /// The reply for one turn; an error fails the turn as a model error would.
    fn respond<'a>(&'a self, request: &'a TurnRequest) -> BackendFuture<'a>;
    /// What must be kept to continue a paused run in another process.
    fn state(&self) -> Value {
        Value::Null
    }
    fn restore(&self, _state: &Value) {}
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
    /// Seconds the model takes to answer (timeouts in tests and demos).
    #[serde(default)]
    pub delay: Option<f64>,
}

/// Queues of scripted responses per agent, and per task id for batch
/// workers (a task's queue is used first); an empty queue falls back to the
/// synthetic model when the scenario allows it, else fails the turn.
pub struct ScenarioBackend {
    queues: Mutex<Queues>,
    fallback: Option<SyntheticBackend>,
}

#[derive(Default)]
struct Queues {
    agents: BTreeMap<String, VecDeque<ScriptedResponse>>,
    tasks: BTreeMap<String, VecDeque<ScriptedResponse>>,
    /// How many were taken from each queue (`task:<id>` for tasks).
    consumed: BTreeMap<String, usize>,
}

impl ScenarioBackend {
    pub fn new(
        responses: BTreeMap<String, Vec<ScriptedResponse>>,
        task_responses: BTreeMap<String, Vec<ScriptedResponse>>,
        fallback: Option<SyntheticBackend>,
    ) -> ScenarioBackend {
        ScenarioBackend {
            queues: Mutex::new(Queues {
                agents: responses.into_iter().map(|(k, v)| (k, v.into())).collect(),
                tasks: task_responses
                    .into_iter()
                    .map(|(k, v)| (k, v.into()))
                    .collect(),
                consumed: BTreeMap::new(),
            }),
            fallback,
        }
    }

    /// The scripted model of a scenario file, with the synthetic model behind
    /// it when the scenario says `fallback: synthetic`.
    pub fn from_scenario(bundle: &Bundle, scenario: &crate::scenario::Scenario) -> ScenarioBackend {
        let fallback = (scenario
            .fallback
            .as_deref()
            .map(crate::choice::BackendKind::parse)
            == Some(Ok(crate::choice::BackendKind::Synthetic)))
        .then(|| SyntheticBackend::new(bundle));
        ScenarioBackend::new(
            scenario.responses.clone(),
            scenario.task_responses.clone(),
            fallback,
        )
    }

    fn take(&self, request: &TurnRequest) -> Option<ScriptedResponse> {
        let mut q = self.queues.lock().unwrap_or_else(|p| p.into_inner());
        let Queues {
            agents,
            tasks,
            consumed,
        } = &mut *q;
        if let Some(task) = &request.task_id {
            if let Some(next) = tasks.get_mut(task).and_then(VecDeque::pop_front) {
                *consumed.entry(format!("task:{task}")).or_default() += 1;
                return Some(next);
            }
        }
        let next = agents.get_mut(&request.agent).and_then(VecDeque::pop_front);
        if next.is_some() {
            *consumed.entry(request.agent.clone()).or_default() += 1;
        }
        next
    }
}

impl ModelBackend for ScenarioBackend {
    fn name(&self) -> &'static str {
        "scenario"
    }

    fn respond<'a>(&'a self, request: &'a TurnRequest) -> BackendFuture<'a> {
        let next = self.take(request);
        let delay = match &next {
            Some(ScriptedResponse::Full(f)) => f.delay.filter(|d| d.is_finite() && *d > 0.0),
            _ => None,
        };
        let reply = match next {
            Some(ScriptedResponse::Text(text)) => Ok(ModelReply {
                body: Value::String(text),
                tool_calls: Vec::new(),
                synthetic: false,
                needs_tool_results: false,
            }),
            Some(ScriptedResponse::Full(full)) => match full.error {
                Some(error) => Err(Error::Model(error)),
                None => Ok(ModelReply {
                    body: match (full.output, full.text) {
                        (Some(output), _) => Value::String(output.to_string()),
                        (None, text) => Value::String(text.unwrap_or_default()),
                    },
                    tool_calls: full.tool_calls,
                    synthetic: false,
                    needs_tool_results: false,
                }),
            },
            None => match self.fallback.as_ref() {
                Some(synthetic) => Ok(synthetic.reply(request)),
                None => Err(Error::Model(format!(
                    "the scenario has no more responses for {} (turn {}); add one under `responses.{}` or set `fallback: synthetic`",
                    request.agent, request.turn, request.agent
                ))),
            },
        };
        Box::pin(async move {
            if let Some(seconds) = delay {
                tokio::time::sleep(std::time::Duration::from_secs_f64(seconds.min(86_400.0))).await;
            }
            reply
        })
    }

    fn state(&self) -> Value {
        let q = self.queues.lock().unwrap_or_else(|p| p.into_inner());
        json!({ "consumed": q.consumed })
    }

    fn restore(&self, state: &Value) {
        let mut q = self.queues.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(consumed) = state["consumed"].as_object() {
            for (key, n) in consumed {
                let n = n.as_u64().unwrap_or(0) as usize;
                let queue = match key.strip_prefix("task:") {
                    Some(task) => q.tasks.get_mut(task),
                    None => q.agents.get_mut(key),
                };
                if let Some(queue) = queue {
                    queue.drain(..n.min(queue.len()));
                }
                q.consumed.insert(key.clone(), n);
            }
        }
    }
}
