//! The channel context, its authority policy (bundle-format §9, inferred by
//! the analyzer) and the per-turn bridge tools write through (§3.4).

use std::collections::{BTreeMap, HashMap};

use mzk_analyzer::model::authority::{self, Authority};
use mzk_analyzer::model::Bundle;
use serde_json::{Map, Value};

use crate::error::Error;
use crate::python::ContextAccess;

/// Who may write what.
#[derive(Debug, Clone, Default)]
pub struct Policy {
    workflow: String,
    declared: HashMap<String, (Authority, bool)>,
}

impl Policy {
    pub fn new(bundle: &Bundle, workflow: &str) -> Policy {
        let facts = authority::Facts::of(bundle);
        let declared = bundle
            .variables
            .iter()
            .map(|v| {
                let build_context = v
                    .source_type
                    .as_ref()
                    .is_some_and(|s| s.text == "build_context");
                (
                    v.name.text.clone(),
                    (authority::infer_with(&facts, v), build_context),
                )
            })
            .collect();
        Policy {
            workflow: workflow.to_string(),
            declared,
        }
    }

    /// `Ok` when `writer` may `op` (set or delete) `key`; else the reference's error text.
    pub fn check(&self, key: &str, writer: &str, op: &str) -> Result<(), Error> {
        let key = key.trim();
        if key.is_empty() {
            return Err(Error::Denied(format!(
                "context_authority.empty_key workflow={} writer={writer}",
                self.workflow
            )));
        }
        if writer == "runtime_system" {
            return Ok(());
        }
        let Some((authority, build_context)) = self.declared.get(key) else {
            return Err(Error::Denied(format!(
                "context_authority.unknown_key workflow={} key={key} writer={writer} op={op}",
                self.workflow
            )));
        };
        if authority.can_write(writer, *build_context) {
            Ok(())
        } else {
            Err(Error::Denied(format!(
                "context_authority.rejected workflow={} key={key} writer={writer} op={op}",
                self.workflow
            )))
        }
    }

    /// The writer a tool's bridge write is attributed to (§3.3): the
    /// deterministic tool writer when the key lists it, else the bridge.
    pub fn tool_writer(&self, key: &str) -> &'static str {
        match self.declared.get(key.trim()) {
            Some((a, _)) if a.writers.iter().any(|w| w == "deterministic_tool") => {
                "deterministic_tool"
            }
            _ => "context_bridge",
        }
    }

    /// The writer of an agent-text trigger update (§3.7).
    pub fn text_trigger_writer(&self, key: &str) -> &'static str {
        match self.declared.get(key) {
            Some((a, _)) if a.writers.iter().any(|w| w == "sentinel_text_trigger") => {
                "sentinel_text_trigger"
            }
            _ => "agent_text",
        }
    }
}

/// A pending bridge operation and the writer it is attributed to.
#[derive(Debug, Clone, PartialEq)]
pub enum Pending {
    Set(Value, String),
    Delete(String),
}

/// One turn's view of the context for tools: reads see the channel plus
/// this turn's pending writes; writes are checked, then kept pending until
/// the packet commits.
pub struct Bridge<'a> {
    pub channel: &'a Map<String, Value>,
    pub policy: &'a Policy,
    pub pending: &'a mut BTreeMap<String, Pending>,
    /// Set for auto tools: `structured_output` reads this, writes to it fail.
    pub writer_override: Option<&'static str>,
    /// Refusals seen during the call, reported as events.
    pub refused: Vec<(String, String, String)>,
    /// The scripted answers to UI tools (`user.tool_responses`), when the
    /// caller may show UI.
    pub ui_answers: Option<&'a mut Map<String, Value>>,
    /// UI tools and surfaces shown during the call: (tool id, payload,
    /// awaiting, event id, answer).
    pub ui_shown: Vec<(String, Value, bool, String, Option<Value>)>,
}

/// The scripted answer for a UI tool (§7.6 lookup order, lower-cased keys;
/// a list is a FIFO; objects get `status: submitted` unless they say).
pub fn ui_answer(
    answers: &mut Map<String, Value>,
    tool_id: &str,
    payload: &Value,
) -> Option<Value> {
    let candidates = [
        Some(tool_id.to_string()),
        payload["component_type"].as_str().map(str::to_string),
        payload["workflow_primitive"].as_str().map(str::to_string),
        Some("*".to_string()),
    ];
    for candidate in candidates.into_iter().flatten() {
        let key = answers
            .keys()
            .find(|k| k.to_lowercase() == candidate.to_lowercase())
            .cloned();
        let Some(key) = key else { continue };
        let answer = match answers.get_mut(&key) {
            Some(Value::Array(queue)) if !queue.is_empty() => queue.remove(0),
            Some(Value::Array(_)) => continue,
            Some(other) => other.clone(),
            None => continue,
        };
        return Some(match answer {
            Value::Object(mut map) => {
                map.entry("status")
                    .or_insert_with(|| Value::String("submitted".into()));
                Value::Object(map)
            }
            other => other,
        });
    }
    None
}

impl<'a> Bridge<'a> {
    pub fn new(
        channel: &'a Map<String, Value>,
        policy: &'a Policy,
        pending: &'a mut BTreeMap<String, Pending>,
        writer_override: Option<&'static str>,
    ) -> Bridge<'a> {
        Bridge {
            channel,
            policy,
            pending,
            writer_override,
            refused: Vec::new(),
            ui_answers: None,
            ui_shown: Vec::new(),
        }
    }

    fn writer_for(&self, key: &str) -> &'static str {
        self.writer_override
            .unwrap_or_else(|| self.policy.tool_writer(key))
    }
}

impl ContextAccess for Bridge<'_> {
    fn get(&mut self, key: &str) -> Option<Value> {
        match self.pending.get(key) {
            Some(Pending::Set(v, _)) => Some(v.clone()),
            Some(Pending::Delete(_)) => None,
            None => self.channel.get(key).cloned(),
        }
    }

    fn set(&mut self, key: &str, value: Value) -> Result<(), Error> {
        let writer = self.writer_for(key);
        if let Err(e) = self.policy.check(key, writer, "set") {
            self.refused
                .push((key.to_string(), writer.to_string(), e.to_string()));
            return Err(e);
        }
        self.pending.insert(
            key.trim().to_string(),
            Pending::Set(value, writer.to_string()),
        );
        Ok(())
    }

    fn delete(&mut self, key: &str) -> Result<(), Error> {
        let writer = self.writer_for(key);
        if let Err(e) = self.policy.check(key, writer, "delete") {
            self.refused
                .push((key.to_string(), writer.to_string(), e.to_string()));
            return Err(e);
        }
        if self.get(key).is_some() {
            self.pending
                .insert(key.trim().to_string(), Pending::Delete(writer.to_string()));
        }
        Ok(())
    }

    fn ui(&mut self, tool_id: &str, payload: Value, awaiting: bool) -> Result<Value, Error> {
        let n = self.ui_shown.len() + 1;
        let event_id = format!("{tool_id}_{:08x}", (n as u32).wrapping_mul(0x9e37_79b9));
        if !awaiting {
            self.ui_shown
                .push((tool_id.to_string(), payload, false, event_id.clone(), None));
            return Ok(Value::String(event_id));
        }
        let answer = self
            .ui_answers
            .as_deref_mut()
            .and_then(|answers| ui_answer(answers, tool_id, &payload));
        self.ui_shown.push((
            tool_id.to_string(),
            payload,
            true,
            event_id.clone(),
            answer.clone(),
        ));
        match answer {
            Some(Value::Object(mut map)) => {
                map.insert("ui_event_id".into(), Value::String(event_id));
                Ok(Value::Object(map))
            }
            Some(other) => Ok(other),
            None => Err(Error::Unavailable(format!(
                "UI tool {tool_id} waits for the user, and the run has no scripted answer: add `user.tool_responses.{tool_id}` (or `*`) to the scenario; mozaiks would wait without a timeout"
            ))),
        }
    }

    fn snapshot(&mut self) -> Map<String, Value> {
        let mut out = self.channel.clone();
        for (k, p) in self.pending.iter() {
            match p {
                Pending::Set(v, _) => {
                    out.insert(k.clone(), v.clone());
                }
                Pending::Delete(_) => {
                    out.remove(k);
                }
            }
        }
        out
    }
}

/// A context container written by the runtime itself (`before_chat` tools
/// see the loader container, writer `runtime_system`).
pub struct Loader<'a> {
    pub values: &'a mut Map<String, Value>,
}

impl ContextAccess for Loader<'_> {
    fn get(&mut self, key: &str) -> Option<Value> {
        self.values.get(key).cloned()
    }
    fn set(&mut self, key: &str, value: Value) -> Result<(), Error> {
        self.values.insert(key.trim().to_string(), value);
        Ok(())
    }
    fn delete(&mut self, key: &str) -> Result<(), Error> {
        self.values.remove(key);
        Ok(())
    }
    fn snapshot(&mut self) -> Map<String, Value> {
        self.values.clone()
    }
}

/// §3.1 coercion of a `state` default by its declared type.
pub fn coerce(declared_type: Option<&str>, value: Value) -> Value {
    match (declared_type, &value) {
        (Some("boolean" | "bool"), Value::String(s)) => Value::Bool(matches!(
            s.trim().to_ascii_lowercase().as_str(),
            "1" | "true" | "yes" | "on"
        )),
        (Some("boolean" | "bool"), Value::Null) => Value::Null,
        (Some("boolean" | "bool"), other) => Value::Bool(crate::value::truthy(other)),
        (Some("integer" | "int"), Value::String(s)) => {
            s.trim().parse::<i64>().map(Value::from).unwrap_or(value)
        }
        (Some("integer" | "int"), Value::Number(n)) if n.is_f64() => n
            .as_f64()
            .map(|f| Value::from(f.trunc() as i64))
            .unwrap_or(value),
        (Some("integer" | "int"), Value::Bool(b)) => Value::from(*b as i64),
        _ => value,
    }
}
