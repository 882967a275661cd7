//! Scenario files: a scripted run (model responses per agent, the user's
//! replies, UI tool answers, the initial context and message) and, when
//! stated, the outcome it must reach. mozaiks' own smoke files
//! (smoke_context*.json, smoke_prompt*.txt, smoke_responses*.json) are read
//! into the same shape.

use std::collections::{BTreeMap, VecDeque};
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::backend::ToolCallSpec;
use crate::error::Error;
use crate::status::RunStatus;
use crate::value::{parse_yaml, py_eq};

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    #[serde(default)]
    pub description: Option<String>,
    /// The launch message (joined after orchestrator.initial_message, §1.3).
    #[serde(default)]
    pub message: Option<String>,
    #[serde(default)]
    pub context: Map<String, Value>,
    /// Overrides orchestrator.max_turns.
    #[serde(default)]
    pub max_turns: Option<u32>,
    /// Agent name → its responses, in order.
    #[serde(default)]
    pub responses: BTreeMap<String, Vec<ScriptedResponse>>,
    /// Task id → the worker's responses for that task (task batches).
    #[serde(default)]
    pub task_responses: BTreeMap<String, Vec<ScriptedResponse>>,
    /// What to do when an agent's queue is empty: `synthetic`, or fail (default).
    #[serde(default)]
    pub fallback: Option<String>,
    #[serde(default)]
    pub user: UserScript,
    #[serde(default)]
    pub expect: Option<Expectation>,
}

/// The user's side: replies when the run pauses (the smoke-harness rules:
/// a matching rule first, then the FIFO, then the default).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UserScript {
    #[serde(default)]
    pub replies: VecDeque<String>,
    #[serde(default)]
    pub default: Option<String>,
    #[serde(default)]
    pub rules: Vec<ReplyRule>,
    /// UI tool answers by tool name, component or `*` (a list is a FIFO).
    #[serde(default)]
    pub tool_responses: Map<String, Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReplyRule {
    pub reply: String,
    #[serde(default)]
    pub equals: Option<String>,
    #[serde(default)]
    pub contains: Option<String>,
    #[serde(default)]
    pub regex: Option<String>,
}

impl UserScript {
    /// The reply to a pause after `last_message`, consuming it.
    pub fn next_reply(&mut self, last_message: &str) -> Option<String> {
        let text = last_message.trim().to_lowercase();
        let hit = self.rules.iter().position(|r| {
            r.equals
                .as_ref()
                .is_some_and(|e| e.trim().to_lowercase() == text)
                || r.contains
                    .as_ref()
                    .is_some_and(|c| text.contains(&c.to_lowercase()))
                || r.regex.as_ref().is_some_and(|p| {
                    regex::RegexBuilder::new(p)
                        .case_insensitive(true)
                        .build()
                        .is_ok_and(|re| re.is_match(last_message))
                })
        });
        if let Some(i) = hit {
            return Some(self.rules.remove(i).reply);
        }
        while let Some(reply) = self.replies.pop_front() {
            if !reply.trim().is_empty() {
                return Some(reply);
            }
        }
        self.default.clone()
    }
}

/// The outcome a scenario must reach. Every stated field is compared.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expectation {
    #[serde(default)]
    pub status: Option<String>,
    #[serde(default)]
    pub reason: Option<String>,
    /// The failure text must contain this.
    #[serde(default)]
    pub error: Option<String>,
    /// The agents that took turns, in order.
    #[serde(default)]
    pub agents: Option<Vec<String>>,
    /// Context values at the end (Python equality; null = absent or null).
    #[serde(default)]
    pub context: Map<String, Value>,
    /// Indexes in transition_graph.yaml of the rules that fired, in order.
    #[serde(default)]
    pub rules: Option<Vec<usize>>,
    /// The number of turns counted as the reference counts them.
    #[serde(default)]
    pub turns: Option<u32>,
}

/// What a finished (or paused) run produced, for comparison.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Observed {
    pub status: RunStatus,
    pub reason: String,
    pub error: Option<String>,
    pub agents: Vec<String>,
    pub context: Map<String, Value>,
    pub rules: Vec<usize>,
    pub turns: u32,
}

impl Expectation {
    /// The first difference between what was expected and what happened.
    pub fn first_divergence(&self, seen: &Observed) -> Option<String> {
        if let Some(agents) = &self.agents {
            let n = agents
                .iter()
                .zip(&seen.agents)
                .take_while(|(a, b)| a == b)
                .count();
            if n < agents.len() || n < seen.agents.len() {
                return Some(format!(
                    "turn {}: expected {}, got {}",
                    n + 1,
                    agents.get(n).map_or("no further turn", String::as_str),
                    seen.agents.get(n).map_or("no further turn", String::as_str)
                ));
            }
        }
        if let Some(rules) = &self.rules {
            if rules != &seen.rules {
                return Some(format!(
                    "rules fired: expected {rules:?}, got {:?}",
                    seen.rules
                ));
            }
        }
        if let Some(status) = &self.status {
            if status != seen.status.as_str() {
                return Some(format!("status: expected {status}, got {}", seen.status));
            }
        }
        if let Some(reason) = &self.reason {
            if reason != &seen.reason {
                return Some(format!("reason: expected {reason}, got {}", seen.reason));
            }
        }
        if let Some(error) = &self.error {
            match &seen.error {
                Some(e) if e.contains(error.as_str()) => {}
                other => {
                    return Some(format!(
                        "error: expected one containing {error:?}, got {other:?}"
                    ))
                }
            }
        }
        if let Some(turns) = self.turns {
            if turns != seen.turns {
                return Some(format!("turns: expected {turns}, got {}", seen.turns));
            }
        }
        for (key, expected) in &self.context {
            let actual = seen.context.get(key).unwrap_or(&Value::Null);
            if !py_eq(expected, actual) {
                return Some(format!("context {key}: expected {expected}, got {actual}"));
            }
        }
        None
    }
}

/// A scenario or smoke file's problem, named with the file.
fn in_file(path: &Path, problem: impl std::fmt::Display) -> Error {
    Error::Scenario {
        path: path.to_path_buf(),
        message: problem.to_string(),
    }
}

/// Reads a scenario (YAML or JSON); errors name the file and the problem.
pub fn load(path: &Path) -> Result<Scenario, Error> {
    let text = std::fs::read_to_string(path).map_err(|e| in_file(path, e))?;
    let value = parse_yaml(&text).map_err(|e| in_file(path, e))?;
    let value = if value.is_null() {
        Value::Object(Map::new())
    } else {
        value
    };
    serde_json::from_value(value).map_err(|e| in_file(path, e))
}

/// mozaiks' smoke files in a bundle folder, by suffix (`""` for
/// smoke_context.json, `"_ui"` for smoke_context_ui.json, …): the initial
/// context, the initial message and the user side.
pub fn from_smoke_files(bundle_dir: &Path, suffix: &str) -> Result<Scenario, Error> {
    let mut scenario = Scenario {
        fallback: Some("synthetic".into()),
        ..Scenario::default()
    };
    let mut found = false;
    let context = bundle_dir.join(format!("smoke_context{suffix}.json"));
    if context.is_file() {
        found = true;
        let text = std::fs::read_to_string(&context).map_err(|e| in_file(&context, e))?;
        match crate::value::parse_json(&text) {
            Ok(Value::Object(map)) => scenario.context = map,
            Ok(_) => return Err(in_file(&context, "expected one JSON object")),
            Err(e) => return Err(in_file(&context, e)),
        }
    }
    let prompt = bundle_dir.join(format!("smoke_prompt{suffix}.txt"));
    if prompt.is_file() {
        found = true;
        let text = std::fs::read_to_string(&prompt).map_err(|e| in_file(&prompt, e))?;
        scenario.message = Some(text.trim().to_string()).filter(|t| !t.is_empty());
    }
    let responses = bundle_dir.join(format!("smoke_responses{suffix}.json"));
    if responses.is_file() {
        found = true;
        let text = std::fs::read_to_string(&responses).map_err(|e| in_file(&responses, e))?;
        let value = crate::value::parse_json(&text).map_err(|e| in_file(&responses, e))?;
        let strings = |v: &Value| -> Vec<String> {
            v.as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|s| s.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default()
        };
        scenario.user.replies = strings(&value["input_replies"]).into();
        scenario.user.default = value["default_input_reply"].as_str().map(str::to_string);
        scenario.user.rules = value["assistant_reply_rules"]
            .as_array()
            .map(|rules| {
                rules
                    .iter()
                    .filter_map(|r| {
                        Some(ReplyRule {
                            reply: r["reply"].as_str()?.to_string(),
                            equals: r["equals"].as_str().map(str::to_string),
                            contains: r["contains"].as_str().map(str::to_string),
                            regex: r["regex"].as_str().map(str::to_string),
                        })
                    })
                    .collect()
            })
            .unwrap_or_default();
        if let Some(map) = value["tool_responses"].as_object() {
            scenario.user.tool_responses = map.clone();
        }
    }
    if !found {
        return Err(Error::Scenario {
            path: bundle_dir.to_path_buf(),
            message: format!("has no smoke_context{suffix}.json, smoke_prompt{suffix}.txt or smoke_responses{suffix}.json"),
        });
    }
    Ok(scenario)
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
