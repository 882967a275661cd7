//! The scripted model: a scenario file's replies, queued per agent and per
//! task, with the synthetic model behind them when the scenario allows it.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Mutex;

use mzk_analyzer::model::Bundle;
use serde_json::{json, Value};

use crate::backend::{BackendFuture, BackendKind, ModelBackend, ModelReply, TurnRequest};
use crate::error::Error;
use crate::scenario::{Scenario, ScriptedResponse};
use crate::synthetic::SyntheticBackend;

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
    pub fn from_scenario(bundle: &Bundle, scenario: &Scenario) -> ScenarioBackend {
        let fallback = (scenario.fallback.as_deref().map(BackendKind::parse)
            == Some(Ok(BackendKind::Synthetic)))
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
