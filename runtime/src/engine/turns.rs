//! The turn loop: drive agents until a pause or the end, settle each turn's
//! context writes, select the next transition, take the user's reply (one
//! agent's turn itself is `agent_turn`).

use std::collections::BTreeMap;

use mzk_analyzer::model::TransitionType;
use serde_json::Value;

use super::rules::{is_user, present, Next, Target, Test};
use super::tools::trigger_matches;
use super::{Engine, PendingTurn, TurnFailure};
use crate::context::Pending;
use crate::error::Error;
use crate::events::Event;
use crate::expr::evaluate;
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
                // The fold raised inside selection: mozaiks never accepted
                // the envelope, so its turn is not counted.
                self.state.turn_count = self.state.turn_count.saturating_sub(1);
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
            // The fold selects the next speaker before the cap closes the
            // channel (§2.5): the rule fired, then the run ends.
            Next::User | Next::Agent(_) if self.state.turn_count >= self.state.cap => {
                let to = match next {
                    Next::Agent(a) => a,
                    _ => "user".into(),
                };
                self.emit(Event::Transition {
                    from: from.to_string(),
                    to,
                    rule,
                    kind: kind.clone(),
                    condition: condition.clone(),
                });
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
        self.state.user_replies += 1;
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
}
