//! The turn loop: drive agents until a pause or the end, settle each turn's
//! context writes, select the next transition, take the user's reply.

use std::collections::BTreeMap;

use mzk_analyzer::model::python::BindingOwner;
use mzk_analyzer::model::{Tool, TransitionType};
use serde_json::Value;

use super::rules::{is_user, present, Next, Target, Test};
use super::tools::trigger_matches;
use super::{Engine, PendingTurn, TurnFailure, MAX_TOOL_ROUNDS};
use crate::backend::{ToolExchange, ToolSpec, TurnRequest};
use crate::context::Pending;
use crate::error::Error;
use crate::events::Event;
use crate::expr::evaluate;
use crate::outputs;
use crate::python::{CallKind, CallRequest};
use crate::status::RunStatus;
use crate::value::py_eq;

impl<'a> Engine<'a> {
    /// Applies committed writes (deletes, then sets) and reports them.
    pub(super) fn commit(&mut self, pending: BTreeMap<String, Pending>) {
        for (key, op) in &pending {
            if let Pending::Delete(writer) = op {
                self.state.context.remove(key);
                self.emit(Event::ContextSet {
                    key: key.clone(),
                    value: Value::Null,
                    writer: writer.clone(),
                    deleted: true,
                });
            }
        }
        for (key, op) in pending {
            if let Pending::Set(value, writer) = op {
                self.state.context.insert(key.clone(), value.clone());
                self.emit(Event::ContextSet {
                    key,
                    value,
                    writer,
                    deleted: false,
                });
            }
        }
    }

    /// The agents' turns until the run ends or pauses.
    pub(super) async fn drive(&mut self, mut agent: String, mut input: String) {
        loop {
            // Saved before the turn: a process lost during it resumes here.
            self.state.pending_turn = Some(PendingTurn {
                agent: agent.clone(),
                input: input.clone(),
            });
            self.checkpoint();
            let outcome = self.agent_turn(&agent, &input).await;
            self.state.pending_turn = None;
            let (body, routing_tool) = match outcome {
                Ok(packet) => packet,
                Err(TurnFailure(e)) => {
                    let error = format!("AG2 turn failed for {agent}: {e}");
                    self.fail("turn_failed", &error, None).await;
                    return;
                }
            };
            self.state.turn_count += 1;
            let text = match &body {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            self.state.last_message = text.clone();
            let step = self.select(&agent, routing_tool.as_deref(), false);
            match self.settle(&agent, step).await {
                Some(next) => {
                    agent = next;
                    input = text;
                }
                None => return,
            }
        }
    }

    /// What follows a selection: the next agent, or `None` when the run
    /// ended or paused (a scripted user reply continues it).
    pub(super) async fn settle(
        &mut self,
        from: &str,
        step: Result<(Next, Option<usize>), Error>,
    ) -> Option<String> {
        let (next, rule) = match step {
            Ok(x) => x,
            Err(e) => {
                let error = if is_user(from) {
                    format!("AG2 turn failed for user: {e}")
                } else {
                    format!("AG2 turn failed for {from}: {e}")
                };
                self.fail("turn_failed", &error, None).await;
                return None;
            }
        };
        if let Some(index) = rule {
            self.state.rules.push(index);
        }
        // Plain values, not closures: the future stays Send (no
        // higher-ranked closures held across awaits).
        let fired = rule.and_then(|i| self.bundle.rules.iter().find(|r| r.index == i));
        let kind = fired
            .map(|r| match r.transition_type {
                TransitionType::AfterTurn => "after_turn",
                TransitionType::Condition => "condition",
            })
            .unwrap_or("none")
            .to_string();
        let condition = fired.map(|r| mzk_analyzer::graph::edge_label(self.bundle, r));
        match next {
            Next::NoMatch => {
                self.fail("no_transition_matched", "no_transition_matched", None)
                    .await;
                None
            }
            Next::Terminate(reason) => {
                self.emit(Event::Transition {
                    from: from.to_string(),
                    to: "terminate".into(),
                    rule,
                    kind: kind.clone(),
                    condition: condition.clone(),
                });
                if reason == "workflow_failed" {
                    let failure_message = self
                        .bundle
                        .orchestrator
                        .as_ref()
                        .and_then(|o| present(o.failure_message_key.as_ref()))
                        .and_then(|k| self.state.context.get(k))
                        .and_then(Value::as_str)
                        .map(|s| s.trim().to_string())
                        .filter(|s| !s.is_empty());
                    self.fail("workflow_failed", "workflow_failed", failure_message)
                        .await;
                } else {
                    self.complete(&reason).await;
                }
                None
            }
            _ if self.state.turn_count >= self.state.cap => {
                self.fail("max_turns", "max_turns", None).await;
                None
            }
            Next::User => {
                self.emit(Event::Transition {
                    from: from.to_string(),
                    to: "user".into(),
                    rule,
                    kind: kind.clone(),
                    condition: condition.clone(),
                });
                self.pause(from).await;
                None
            }
            Next::Agent(next) => {
                self.emit(Event::Transition {
                    from: from.to_string(),
                    to: next.clone(),
                    rule,
                    kind: kind.clone(),
                    condition: condition.clone(),
                });
                Some(next)
            }
        }
    }

    pub(super) async fn pause(&mut self, from: &str) {
        self.state.paused_after = Some(from.to_string());
        let last = self.state.last_message.clone();
        if let Some(reply) = self.state.user.next_reply(&last) {
            // Boxed: a scripted reply continues the run from inside the loop.
            Box::pin(self.user_turn(reply)).await;
            return;
        }
        self.state.status = RunStatus::Paused;
        self.state.reason = "awaiting_user_input".into();
        self.emit(Event::Paused {
            agent: from.to_string(),
            turn: self.state.turn_count,
        });
        self.finish_event();
    }

    /// A user reply (§2.6): `user_text` triggers, then the user-sourced rules.
    pub(super) async fn user_turn(&mut self, reply: String) {
        let reply = if reply.trim().is_empty() {
            ".".to_string()
        } else {
            reply
        };
        self.emit(Event::UserMessage {
            text: reply.clone(),
        });
        let mut updates = BTreeMap::new();
        for v in &self.bundle.variables {
            for t in v
                .triggers
                .iter()
                .filter(|t| t.trigger_type.text == "user_text")
            {
                if trigger_matches(t, &reply) {
                    updates.insert(
                        v.name.text.clone(),
                        Pending::Set(Value::Bool(true), "live_user_context".into()),
                    );
                }
            }
        }
        for key in updates.keys() {
            if let Err(e) = self.policy.check(key, "live_user_context", "set") {
                self.fail("failed", &e.to_string(), None).await;
                return;
            }
        }
        self.commit(updates);
        self.state.turn_count += 1;
        self.state.last_message = reply.clone();
        let step = self.select("user", None, false);
        if let Some(next) = self.settle("user", step).await {
            Box::pin(self.drive(next, reply)).await;
        }
    }

    /// §2.5: the first rule (by priority) of this source whose test holds.
    pub(super) fn select(
        &self,
        speaker: &str,
        routing_tool: Option<&str>,
        user_resolution: bool,
    ) -> Result<(Next, Option<usize>), Error> {
        let rules = self
            .rules
            .as_ref()
            .map_err(|e| Error::Graph(e.to_string()))?;
        for rule in rules {
            let source_matches = if is_user(speaker) {
                is_user(&rule.source)
            } else {
                rule.source == speaker
            };
            if !source_matches {
                continue;
            }
            let holds = match &rule.test {
                Test::Always => !user_resolution,
                Test::Equals(key, value) => {
                    py_eq(self.state.context.get(key).unwrap_or(&Value::Null), value)
                }
                Test::Expression(expr) => evaluate(expr, &self.state.context)?,
                Test::ToolCalled(tool) => routing_tool == Some(tool.as_str()),
            };
            if holds {
                let next = match &rule.target {
                    Target::Agent(a) => Next::Agent(a.clone()),
                    Target::User => Next::User,
                    Target::Terminate(r) => Next::Terminate(r.clone()),
                };
                return Ok((next, Some(rule.index)));
            }
        }
        Ok((Next::NoMatch, None))
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
                .backend
                .respond(&request)
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
                    return Err(TurnFailure(format!(
                        "structured output validation failed for {agent}: invalid packet output ({details})"
                    )))
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
