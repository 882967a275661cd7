//! The system prompt an agent sees: its sections and the context variables
//! exposed to it.

use std::collections::BTreeMap;

use mzk_analyzer::model::python::BindingOwner;
use serde_json::{json, Value};

use super::Engine;
use crate::context::Bridge;
use crate::python::{CallKind, CallOutcome, CallRequest};
use crate::value::exposure_str;

impl<'a> Engine<'a> {
    /// The system prompt for one call (§1.5 a, b): the static prompt, the
    /// live context exposure, then the agent's prompt middleware.
    /// The static prompt plus the exposure rendered from the live context.
    pub(super) fn exposed_prompt(&self, agent: &str) -> String {
        let Some(a) = self.bundle.agent(agent) else {
            return String::new();
        };
        let composed = mzk_analyzer::prompt::compose_one(self.bundle, a);
        let mut text = composed
            .parts
            .iter()
            .filter(|p| p.label != "context exposure")
            .map(|p| p.text.as_str())
            .collect::<Vec<_>>()
            .join("\n\n");
        if !composed.visible.is_empty() {
            let lines: Vec<String> = composed
                .visible
                .iter()
                .map(|k| {
                    let value = self.state.context.get(k).unwrap_or(&Value::Null);
                    format!("{}: {}", k.to_uppercase(), exposure_str(value))
                })
                .collect();
            text = if text.is_empty() {
                lines.join("\n")
            } else {
                format!("{text}\n\n{}", lines.join("\n"))
            };
        }
        text
    }

    pub(super) async fn system_prompt(&mut self, agent: &str) -> String {
        let mut text = self.exposed_prompt(agent);
        for i in 0..self.bundle.middleware.len() {
            let m = &self.bundle.middleware[i];
            let applies = m
                .agent
                .as_ref()
                .is_some_and(|x| x.text == agent || x.text == "all");
            if !applies {
                continue;
            }
            let Some((file, function)) =
                self.binding(BindingOwner::Middleware(i), m.function.as_ref())
            else {
                continue;
            };
            let request = CallRequest {
                file,
                function,
                agent: agent.to_string(),
                kind: CallKind::Middleware {
                    system_message: text.clone(),
                },
                args: json!({}),
            };
            let mut pending = BTreeMap::new();
            let channel = self.state.context.clone();
            let policy = self.policy.clone();
            let mut bridge = Bridge::new(&channel, &policy, &mut pending, Some("context_bridge"));
            if let Ok(CallOutcome::Returned {
                system_message: Some(updated),
                ..
            }) = self.call_traced(&request, "middleware", &mut bridge).await
            {
                text = updated;
            }
            self.commit(pending);
        }
        text
    }
}
