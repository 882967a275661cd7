//! One agent turn (§1.5): the prompt, the model calls (retried for an
//! agent with a registry model), the tools the model calls, the structured
//! output and its auto tools, the task batches, agent-text triggers and the
//! commit of the turn's context writes.

use std::collections::BTreeMap;

use mzk_analyzer::model::python::BindingOwner;
use mzk_analyzer::model::Tool;
use serde_json::Value;

use super::tools::trigger_matches;
use super::{Engine, TurnFailure, MAX_TOOL_ROUNDS};
use crate::backend::{ModelReply, ToolExchange, ToolSpec, TurnRequest};
use crate::context::Pending;
use crate::error::Error;
use crate::events::Event;
use crate::outputs;
use crate::python::{CallKind, CallRequest};

impl<'a> Engine<'a> {
    /// One model call of a turn. An agent with a registry model retries a
    /// call that fails (`outputs::model_call_retries`); others fail at once.
    async fn ask(&mut self, request: &TurnRequest) -> Result<ModelReply, Error> {
        let retries = outputs::model_call_retries(self.bundle, request.response_model.as_deref());
        let mut failed = 0;
        loop {
            match self.backend.respond(request).await {
                Err(e) if failed < retries => {
                    failed += 1;
                    self.emit(Event::Notice {
                        message: format!(
                            "{}'s model call failed ({e}); AG2's RetryMiddleware calls it again ({failed} of {retries} retries)",
                            request.agent
                        ),
                    });
                }
                other => return other,
            }
        }
    }

    /// One agent turn (§1.5): prompt, model call, tools, output validation,
    /// auto tools, agent-text triggers, the commit.
    pub(super) async fn agent_turn(
        &mut self,
        agent: &str,
        input: &str,
    ) -> Result<(Value, Option<String>), TurnFailure> {
        self.state.agents.push(agent.to_string());
        let turn = self.state.agents.len() as u32;
        self.emit(Event::TurnStarted {
            agent: agent.to_string(),
            turn,
        });
        let system_prompt = self.system_prompt(agent).await;
        self.emit(Event::Prompt {
            agent: agent.to_string(),
            chars: system_prompt.chars().count(),
            text: system_prompt.clone(),
        });
        // §4.2: an auto-tool agent is offered no tools.
        let offered: Vec<(usize, &'a Tool)> = if self.is_auto_tool_agent(agent) {
            Vec::new()
        } else {
            self.tools_of(agent)
                .into_iter()
                .filter(|(_, t)| t.bind_to_agent && !t.auto_tool_call)
                .collect()
        };
        let model = self.bundle.registry_model(agent).map(|m| m.text.clone());
        let tools: Vec<ToolSpec> = offered.iter().map(|(i, t)| self.tool_spec(*i, t)).collect();
        let offered_names = if tools.is_empty() {
            "none".to_string()
        } else {
            tools
                .iter()
                .map(|t| t.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut request = TurnRequest {
            agent: agent.to_string(),
            system_prompt,
            input: input.to_string(),
            tools,
            response_model: model.clone(),
            turn,
            task_id: None,
            task_kind: None,
            transcript: Vec::new(),
        };
        let mut pending = BTreeMap::new();
        let mut routing_tool = None;
        // A live model may ask for tools, read their results and ask again;
        // a scripted reply carries its calls and its final body at once.
        let mut round = 0;
        let reply = loop {
            round += 1;
            let reply = self
                .ask(&request)
                .await
                .map_err(|e| TurnFailure(e.to_string()))?;
            self.emit(Event::ModelResponse {
                agent: agent.to_string(),
                body: reply.body.clone(),
                tool_calls: reply.tool_calls.iter().map(|c| c.name.clone()).collect(),
                synthetic: reply.synthetic,
            });
            for call in &reply.tool_calls {
                if routing_tool.is_none() && self.routed_tools.contains(&call.name) {
                    routing_tool = Some(call.name.clone());
                }
                let found = offered
                    .iter()
                    .find(|(_, t)| t.function.as_ref().is_some_and(|f| f.text == call.name))
                    .map(|(i, _)| *i);
                let file = found.and_then(|i| self.python_file(BindingOwner::Tool(i)));
                let result = match file {
                    None => {
                        let call_id = self.next_call_id();
                        let error = format!(
                            "{} is not a tool {agent} can call (offered: {offered_names})",
                            call.name
                        );
                        self.emit(Event::ToolCall {
                            agent: agent.to_string(),
                            tool: call.name.clone(),
                            call_id: call_id.clone(),
                            arguments: call.arguments.clone(),
                            kind: "llm".into(),
                        });
                        self.emit(Event::ToolResult {
                            agent: agent.to_string(),
                            tool: call.name.clone(),
                            call_id,
                            ok: false,
                            result: None,
                            error: Some(error.clone()),
                            traceback: None,
                            elapsed_ms: 0.0,
                        });
                        Err(error)
                    }
                    Some(file) => {
                        let call_request = CallRequest {
                            file,
                            function: call.name.clone(),
                            agent: agent.to_string(),
                            kind: CallKind::Llm,
                            args: call.arguments.clone(),
                        };
                        self.run_tool(&call_request, "llm", &mut pending).await?
                    }
                };
                request.transcript.push(ToolExchange {
                    round,
                    call_id: call
                        .id
                        .clone()
                        .unwrap_or_else(|| format!("call_{round}_{}", call.name)),
                    name: call.name.clone(),
                    arguments: call.arguments.clone(),
                    result: match result {
                        Ok(value) => value.to_string(),
                        Err(error) => format!("Error: {error}"),
                    },
                });
            }
            if reply.needs_tool_results && !reply.tool_calls.is_empty() && round < MAX_TOOL_ROUNDS {
                continue;
            }
            break reply;
        };
        let body = reply.body.clone();
        let empty = match &body {
            Value::String(s) => s.trim().is_empty(),
            Value::Null => true,
            _ => false,
        };
        if empty && routing_tool.is_none() {
            let idle = if self.bundle.tools.iter().any(|t| {
                t.tool_type
                    .as_ref()
                    .is_some_and(|k| k.text.to_ascii_lowercase().replace('-', "_") == "ui_tool")
            }) {
                "an unbounded time (the workflow has a UI_Tool)".to_string()
            } else {
                "300.0 seconds".to_string()
            };
            return Err(TurnFailure(format!(
                "{agent} sent no message and called no routing tool, so no packet was produced; mozaiks would wait {idle} and fail with \"workflow channel made no progress\""
            )));
        }
        if let Some(model) = &model {
            match outputs::validate(self.bundle, model, &body) {
                Ok(data) => {
                    self.emit(Event::StructuredOutput {
                        agent: agent.to_string(),
                        model: model.clone(),
                        data: data.clone(),
                    });
                    self.auto_tools(agent, &data, &mut pending).await?;
                }
                Err(details) => {
                    // mozaiks only logs the details; its error names none.
                    self.emit(Event::Notice {
                        message: format!(
                            "structured output validation failed for {agent}: {details}"
                        ),
                    });
                    return Err(TurnFailure(format!(
                        "structured output validation failed for {agent}: invalid packet output"
                    )));
                }
            }
        }
        // §1.5 g.2: the agent's task batches run inside its turn.
        if let Err(e) = self.task_batches(agent, &body, &pending).await {
            // §1.5 g.3: what the turn wrote so far is checkpointed.
            self.commit(pending);
            return Err(e);
        }
        // §3.7: agent-text triggers ride on this packet.
        let text = match &body {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let mut text_updates = BTreeMap::new();
        for v in &self.bundle.variables {
            for t in v.triggers.iter().filter(|t| {
                t.trigger_type.text == "agent_text"
                    && t.agent.as_ref().is_some_and(|a| a.text == agent)
            }) {
                if trigger_matches(t, &text) {
                    let writer = if t.equals.is_some() {
                        self.policy.text_trigger_writer(&v.name.text)
                    } else {
                        "agent_text"
                    };
                    text_updates.insert(
                        v.name.text.clone(),
                        Pending::Set(Value::Bool(true), writer.to_string()),
                    );
                }
            }
        }
        for (key, op) in &text_updates {
            if let Pending::Set(_, writer) = op {
                self.policy
                    .check(key, writer, "set")
                    .map_err(|e| TurnFailure(e.to_string()))?;
            }
        }
        // The bridge wins a key clash (§1.5 h).
        for (k, v) in pending {
            text_updates.insert(k, v);
        }
        self.commit(text_updates);
        Ok((body, routing_tool))
    }
}
