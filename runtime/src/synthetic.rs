//! The offline stand-in model, for runs without a model or a script. Its
//! replies are plainly made up (`(synthetic) agent message`) but steer the
//! run the way the bundle's routing needs, so that a workflow can be seen
//! running to its end offline:
//!
//! - a structured output satisfies the agent's registry model, and its
//!   literal and boolean fields take the values the agent's rules test,
//!   those whose rule leads nearest to a completed run first;
//! - when the agent's rules test a variable that one of its LLM tools writes
//!   (as the tool's module is read statically), the reply calls that tool,
//!   with arguments made from the tool's parameter schema.

use std::collections::HashMap;
use std::sync::Arc;

use mzk_analyzer::model::python::BindingTarget;
use mzk_analyzer::model::{Bundle, ConditionType};
use serde_json::{Map, Value};

use crate::backend::{BackendFuture, ModelBackend, ModelReply, ToolCallSpec, TurnRequest};
use crate::outputs::{self, Preference};
use crate::value::yaml_to_json;

#[derive(Clone)]
pub struct SyntheticBackend {
    bundle: Arc<Bundle>,
    /// Every value a rule or an outcome tests.
    tested: Vec<Value>,
    /// Per agent: the values its rules test, nearest to completion first.
    preferred: HashMap<String, Vec<Value>>,
    /// Per agent: the variables its condition rules read.
    routing_keys: HashMap<String, Vec<String>>,
    /// Per tool name: the variables its module writes with a literal key.
    tool_writes: HashMap<String, Vec<String>>,
}

/// The number of rule hops from each node (an agent, or `user`) to a rule
/// that ends the run as completed; nodes that cannot get there are absent.
fn hops_to_completion(bundle: &Bundle) -> HashMap<String, usize> {
    let mut hops: HashMap<String, usize> = HashMap::new();
    for rule in &bundle.rules {
        let failed = rule
            .termination_reason
            .as_ref()
            .is_some_and(|r| r.text == "workflow_failed");
        if rule.target.text == "terminate" && !failed {
            hops.insert(rule.source.text.clone(), 1);
        }
    }
    // Relaxation until nothing shortens (at most one round per node).
    loop {
        let mut changed = false;
        for rule in &bundle.rules {
            let Some(&next) = hops.get(&rule.target.text) else {
                continue;
            };
            let via = next + 1;
            let known = hops.get(&rule.source.text).copied();
            if known.is_none_or(|k| via < k) {
                hops.insert(rule.source.text.clone(), via);
                changed = true;
            }
        }
        if !changed {
            return hops;
        }
    }
}

impl SyntheticBackend {
    pub fn new(bundle: &Bundle) -> SyntheticBackend {
        let hops = hops_to_completion(bundle);
        let mut ranked: HashMap<String, Vec<(usize, Value)>> = HashMap::new();
        let mut routing_keys: HashMap<String, Vec<String>> = HashMap::new();
        for rule in &bundle.rules {
            let source = rule.source.text.clone();
            let distance = if rule.target.text == "terminate" {
                let failed = rule
                    .termination_reason
                    .as_ref()
                    .is_some_and(|r| r.text == "workflow_failed");
                if failed {
                    usize::MAX
                } else {
                    0
                }
            } else {
                hops.get(&rule.target.text)
                    .copied()
                    .unwrap_or(usize::MAX - 1)
            };
            let values = match rule.condition_type {
                Some(ConditionType::ContextEquals) => {
                    rule.condition_value.iter().map(yaml_to_json).collect()
                }
                Some(ConditionType::ContextExpression) => rule
                    .context_expression
                    .as_ref()
                    .map(|e| outputs::quoted_strings(&e.text))
                    .unwrap_or_default(),
                _ => Vec::new(),
            };
            ranked
                .entry(source.clone())
                .or_default()
                .extend(values.into_iter().map(|v| (distance, v)));
            let keys = routing_keys.entry(source).or_default();
            keys.extend(rule.condition_key.iter().map(|k| k.text.clone()));
            keys.extend(rule.expression_refs.iter().map(|k| k.text.clone()));
        }
        let preferred = ranked
            .into_iter()
            .map(|(agent, mut values)| {
                values.sort_by_key(|(d, _)| *d);
                (agent, values.into_iter().map(|(_, v)| v).collect())
            })
            .collect();
        let mut tool_writes: HashMap<String, Vec<String>> = HashMap::new();
        for binding in &bundle.bindings {
            let (Some(function), BindingTarget::File(file)) = (&binding.function, &binding.target)
            else {
                continue;
            };
            if let Some(python) = bundle.python.iter().find(|p| p.file == *file) {
                tool_writes
                    .entry(function.text.clone())
                    .or_default()
                    .extend(python.module.context_writes.iter().map(|(k, _)| k.clone()));
            }
        }
        SyntheticBackend {
            tested: outputs::tested_values(bundle),
            bundle: Arc::new(bundle.clone()),
            preferred,
            routing_keys,
            tool_writes,
        }
    }

    pub(crate) fn reply(&self, request: &TurnRequest) -> ModelReply {
        let no_values = Vec::new();
        let prefer = Preference {
            first: self.preferred.get(&request.agent).unwrap_or(&no_values),
            tested: &self.tested,
        };
        let body = match &request.response_model {
            Some(model) if self.bundle.model(model).is_some() => {
                let mut output = outputs::synthesize(&self.bundle, model, prefer);
                if request.task_id.is_none() {
                    self.plan_tasks(&request.agent, model, &mut output, prefer);
                }
                // A task worker's reply names its task (§6.4 step 6).
                if let Some(map) = output.as_object_mut() {
                    for (field, value) in
                        [("task_id", &request.task_id), ("kind", &request.task_kind)]
                    {
                        if let (Some(slot), Some(v)) = (map.get_mut(field), value) {
                            *slot = Value::String(v.clone());
                        }
                    }
                }
                Value::String(output.to_string())
            }
            _ => Value::String(format!("(synthetic) reply from {}", request.agent)),
        };
        ModelReply {
            body,
            tool_calls: self.routing_calls(request),
            synthetic: true,
            needs_tool_results: false,
        }
    }

    /// A task batch this agent triggers from its structured output gets one
    /// task, for its first execution agent: with no task the batch is
    /// skipped and its status never routes on.
    fn plan_tasks(&self, agent: &str, model: &str, output: &mut Value, prefer: Preference<'_>) {
        let bundle = &self.bundle;
        for batch in &bundle.task_batches {
            let triggered = batch
                .trigger_agent
                .as_ref()
                .is_some_and(|a| a.text == agent);
            let from_output = batch
                .source_kind
                .as_ref()
                .is_none_or(|k| k.text == "structured_output");
            let (Some(path), Some(worker)) =
                (&batch.source_path, batch.allowed_execution_agents.first())
            else {
                continue;
            };
            if !triggered || !from_output {
                continue;
            }
            let segments: Vec<&str> = path.text.split('.').collect();
            let Some(item_model) = item_model(bundle, model, &segments) else {
                continue;
            };
            let Some(Value::Array(tasks)) = segments
                .iter()
                .try_fold(&mut *output, |at, key| at.get_mut(*key))
            else {
                continue;
            };
            if !tasks.is_empty() {
                continue;
            }
            let mut task = outputs::synthesize(bundle, &item_model, prefer);
            if let Some(task) = task.as_object_mut() {
                task.insert(
                    batch.agent_field.text.clone(),
                    Value::String(worker.text.clone()),
                );
                task.insert(
                    batch.prompt_field.text.clone(),
                    Value::String(format!("(synthetic) the work of {}", batch.id.text)),
                );
                if let Some(deps) = task.get_mut(&batch.dependency_field.text) {
                    if deps.is_array() {
                        *deps = Value::Array(Vec::new());
                    }
                }
            }
            tasks.push(task);
        }
    }

    /// Calls of the offered tools that write a variable the agent's rules
    /// read, once each per turn.
    fn routing_calls(&self, request: &TurnRequest) -> Vec<ToolCallSpec> {
        if request.task_id.is_some() || !request.transcript.is_empty() {
            return Vec::new();
        }
        let Some(keys) = self.routing_keys.get(&request.agent) else {
            return Vec::new();
        };
        request
            .tools
            .iter()
            .filter(|tool| {
                self.tool_writes
                    .get(&tool.name)
                    .is_some_and(|written| written.iter().any(|w| keys.contains(w)))
            })
            .map(|tool| ToolCallSpec {
                id: None,
                name: tool.name.clone(),
                arguments: arguments(&tool.parameters),
            })
            .collect()
    }
}

/// The model of the items of the list at `path` inside `model`
/// (`DecompositionPlan.tasks` → `ResearchTask`).
fn item_model(bundle: &Bundle, model: &str, path: &[&str]) -> Option<String> {
    let (last, walk) = path.split_last()?;
    let mut current = bundle.model(model)?;
    for segment in walk {
        let field = current.fields.iter().find(|f| f.name.text == *segment)?;
        current = bundle.model(field.field_type.as_ref()?.as_str())?;
    }
    let field = current.fields.iter().find(|f| f.name.text == *last)?;
    if let Some(items) = &field.items {
        return Some(items.text.clone());
    }
    let declared = field.field_type.as_ref()?.as_str();
    let inner = declared
        .strip_prefix("list[")
        .or_else(|| declared.strip_prefix("List["))?
        .strip_suffix(']')?;
    Some(inner.to_string())
}

/// Arguments for a JSON Schema of parameters: every required one, with a
/// value of its type.
fn arguments(schema: &Value) -> Value {
    let mut out = Map::new();
    let properties = schema["properties"].as_object();
    let required = schema["required"].as_array();
    for name in required.into_iter().flatten().filter_map(Value::as_str) {
        let property = properties.and_then(|p| p.get(name)).unwrap_or(&Value::Null);
        let kind = property["type"].as_str().unwrap_or("string");
        let value = match kind {
            "integer" => Value::from(1),
            "number" => Value::from(1.0),
            "boolean" => Value::Bool(true),
            "array" => Value::Array(Vec::new()),
            "object" => Value::Object(Map::new()),
            _ => Value::String(format!("(synthetic) {}", name.replace('_', " "))),
        };
        out.insert(name.to_string(), value);
    }
    Value::Object(out)
}

impl ModelBackend for SyntheticBackend {
    fn name(&self) -> &'static str {
        "synthetic"
    }

    fn respond<'a>(&'a self, request: &'a TurnRequest) -> BackendFuture<'a> {
        let reply = self.reply(request);
        Box::pin(async move { Ok(reply) })
    }
}
