//! Start, resume and recovery of a run, the lifecycle tool calls
//! (before_chat, after_chat, on_start …) and its end: complete, fail, shut down.

use std::collections::BTreeMap;

use mzk_analyzer::model::python::BindingOwner;
use serde_json::{json, Map, Value};

use super::rules::{is_user, present, Next};
use super::{Engine, RunState};
use crate::context::{Bridge, Loader};
use crate::error::Error;
use crate::events::Event;
use crate::python::{CallKind, CallRequest, WorkerError};
use crate::status::RunStatus;

impl<'a> Engine<'a> {
    /// Runs from the start until the run completes, fails or pauses.
    pub async fn start(&mut self) -> &RunState {
        // mozaiks refuses before it has a context (or a run) at all.
        let context = super::initial_context(self.bundle, &self.opts);
        let missing = super::initial::missing_required(self.bundle, &context);
        if missing.is_none() {
            self.state.context = context;
        }
        let seed = self.seed();
        let max_turns = self.state.cap - 1;
        let initial = self.initial_agent_name();
        self.emit_started(&initial, &seed, max_turns);
        self.checkpoint();
        if let Some(error) = missing {
            // Refused while loading the context: before mozaiks has a
            // lifecycle manager, so no on_fail tool runs.
            self.state.status = RunStatus::Failed;
            self.state.reason = "internal_error".into();
            self.state.error = Some(error);
            self.finish_event();
            return &self.state;
        }
        if let Err(error) = self.before_chat().await {
            self.fail("failed", &error.to_string(), None).await;
            return &self.state;
        }
        if let Err(e) = &self.rules {
            let error = format!("internal_error: {e}");
            self.fail("internal_error", &error, None).await;
            return &self.state;
        }
        let initial = if is_user(&initial) {
            // §1.4 step 7: the user-sourced rules pick the real first agent.
            match self.select("user", None, true) {
                Ok((Next::Agent(a), _)) => a,
                _ => initial,
            }
        } else {
            initial
        };
        if initial.is_empty() {
            self.fail(
                "failed",
                "AG2NetworkRunner requires initial_agent_name",
                None,
            )
            .await;
            return &self.state;
        }
        if self.bundle.agent(&initial).is_none() {
            let error = format!("initial agent '{initial}' is not registered");
            self.fail("failed", &error, None).await;
            return &self.state;
        }
        self.lifecycle_simple("on_start").await;
        self.state.turn_count = 1;
        self.emit(Event::Transition {
            from: "user".into(),
            to: initial.clone(),
            rule: None,
            kind: "start".into(),
            condition: None,
        });
        self.drive(initial, seed).await;
        &self.state
    }

    /// Continues a paused run with the user's reply.
    pub async fn resume(&mut self, reply: &str) -> Result<&RunState, Error> {
        if self.state.status != RunStatus::Paused {
            return Err(Error::RunState(format!(
                "run {} is {} and cannot take a reply",
                self.state.run_id, self.state.status
            )));
        }
        self.state.status = RunStatus::Running;
        self.user_turn(reply.to_string()).await;
        Ok(&self.state)
    }

    /// Continues a run interrupted during an agent turn (Ctrl-C, a killed
    /// process): the turn is run again from its input, once, as mozaiks
    /// re-runs a pending turn after process loss.
    pub async fn recover(&mut self) -> Result<&RunState, Error> {
        let pending = match (self.state.status, self.state.pending_turn.clone()) {
            (RunStatus::Interrupted, Some(p)) => p,
            (RunStatus::Interrupted, None) => {
                return Err(Error::RunState(format!(
                    "run {} was interrupted outside an agent turn; there is nothing to re-run",
                    self.state.run_id
                )))
            }
            (status, _) => {
                return Err(Error::RunState(format!(
                    "run {} is {status}; only an interrupted run is recovered (a paused one takes --reply)",
                    self.state.run_id
                )))
            }
        };
        self.state.status = RunStatus::Running;
        self.state.reason.clear();
        self.state.error = None;
        self.emit(Event::Notice {
            message: format!("resuming: {}'s interrupted turn runs again", pending.agent),
        });
        // The interrupted turn was counted in `agents` when it began.
        if self.state.agents.last() == Some(&pending.agent) {
            self.state.agents.pop();
        }
        self.drive(pending.agent, pending.input).await;
        Ok(&self.state)
    }

    pub(super) fn emit_started(&mut self, initial: &str, seed: &str, max_turns: u32) {
        self.emit(Event::RunStarted {
            run_id: self.state.run_id.clone(),
            workflow: self.state.workflow.clone(),
            backend: self.state.backend.clone(),
            initial_agent: initial.to_string(),
            seed: seed.to_string(),
            max_turns,
            engine: None,
        });
    }

    pub(super) fn initial_agent_name(&self) -> String {
        self.opts
            .initial_agent
            .clone()
            .or_else(|| {
                self.bundle
                    .orchestrator
                    .as_ref()
                    .and_then(|o| present(o.initial_agent.as_ref()))
                    .map(str::to_string)
            })
            .unwrap_or_default()
    }

    /// §1.3: initial_message then the launch message, blank-line joined.
    pub(super) fn seed(&self) -> String {
        let configured = self
            .bundle
            .orchestrator
            .as_ref()
            .and_then(|o| o.initial_message.as_ref())
            .map(|m| m.text.trim().to_string());
        let parts: Vec<String> = [configured, self.opts.message.clone()]
            .into_iter()
            .flatten()
            .map(|p| p.trim().to_string())
            .filter(|p| !p.is_empty())
            .collect();
        if parts.is_empty() {
            ".".into()
        } else {
            parts.join("\n\n")
        }
    }

    /// §1.4 step 5: `before_chat` tools write as the runtime; they may not
    /// change the identity or build-context keys.
    pub(super) async fn before_chat(&mut self) -> Result<(), Error> {
        let guarded: Vec<String> = ["workflow_name", "app_id", "chat_id", "user_id"]
            .iter()
            .map(|s| s.to_string())
            .chain(
                self.bundle
                    .variables
                    .iter()
                    .filter(|v| {
                        v.source_type
                            .as_ref()
                            .is_some_and(|s| s.text == "build_context")
                    })
                    .map(|v| v.name.text.clone()),
            )
            .collect();
        let before: Vec<Option<Value>> = guarded
            .iter()
            .map(|k| self.state.context.get(k).cloned())
            .collect();
        for i in 0..self.bundle.lifecycle_tools.len() {
            let tool = &self.bundle.lifecycle_tools[i];
            if tool.trigger.as_ref().map(|t| t.text.as_str()) != Some("before_chat") {
                continue;
            }
            let function = tool
                .function
                .as_ref()
                .map(|f| f.text.clone())
                .unwrap_or_default();
            let Some(file) = self.python_file(BindingOwner::Lifecycle(i)) else {
                self.emit(Event::Notice {
                    message: format!(
                        "before_chat tool {function}: its file was not found; skipped"
                    ),
                });
                continue;
            };
            let request = CallRequest {
                file,
                function: function.clone(),
                agent: String::new(),
                kind: CallKind::Lifecycle { filter: true },
                args: json!({}),
            };
            let mut ctx = self.state.context.clone();
            let result = self
                .call_traced(
                    &request,
                    "lifecycle:before_chat",
                    &mut Loader { values: &mut ctx },
                )
                .await;
            let old = std::mem::replace(&mut self.state.context, ctx);
            for (k, v) in self.state.context.clone() {
                if old.get(&k) != Some(&v) {
                    self.emit(Event::ContextSet {
                        key: k,
                        value: v,
                        writer: "runtime_system".into(),
                        deleted: false,
                    });
                }
            }
            if let Err(WorkerError::Spawn(e)) = result {
                return Err(Error::Worker(e));
            }
        }
        for (k, old) in guarded.iter().zip(before) {
            if self.state.context.get(k) != old.as_ref() {
                return Err(Error::Worker(format!(
                    "before_chat changed the immutable context key '{k}'"
                )));
            }
        }
        Ok(())
    }

    /// on_start / on_complete: exactly the run identity (§4.5), last entry per trigger.
    pub(super) async fn lifecycle_simple(&mut self, trigger: &str) {
        let Some(i) = self
            .bundle
            .lifecycle_tools
            .iter()
            .rposition(|t| t.trigger.as_ref().map(|x| x.text.as_str()) == Some(trigger))
        else {
            return;
        };
        let args = Value::Object(self.run_identity());
        self.lifecycle_call(i, trigger, args, false).await;
    }

    /// The run identity every lifecycle tool gets (§4.5).
    fn run_identity(&self) -> Map<String, Value> {
        let mut identity = Map::new();
        identity.insert("app_id".into(), json!(self.opts.app_id));
        identity.insert("execution_id".into(), json!(self.state.run_id));
        identity.insert("chat_id".into(), json!(self.state.run_id));
        identity.insert("user_id".into(), json!(self.opts.user_id));
        identity.insert("workflow_name".into(), json!(self.state.workflow));
        identity
    }

    pub(super) async fn lifecycle_call(
        &mut self,
        i: usize,
        trigger: &str,
        args: Value,
        filter: bool,
    ) {
        let function = self.bundle.lifecycle_tools[i].function.as_ref();
        let Some((file, function)) = self.binding(BindingOwner::Lifecycle(i), function) else {
            return;
        };
        let request = CallRequest {
            file,
            function,
            agent: String::new(),
            kind: CallKind::Lifecycle { filter },
            args,
        };
        let mut pending = BTreeMap::new();
        let channel = self.state.context.clone();
        let policy = self.policy.clone();
        let mut bridge = Bridge::new(&channel, &policy, &mut pending, Some("context_bridge"));
        let _ = self
            .call_traced(&request, &format!("lifecycle:{trigger}"), &mut bridge)
            .await;
        if trigger == "on_fail" {
            // mozaiks 0.2.0 runs on_fail after the channel has closed, on a
            // copy of its context: the writes never reach the run
            // (orchestration_patterns.py, after the runner returns).
            for key in pending.keys() {
                self.emit(Event::Notice {
                    message: format!(
                        "on_fail tool {} wrote `{key}`, which mozaiks drops: on_fail runs after the run's context is final",
                        request.function
                    ),
                });
            }
            return;
        }
        self.commit(pending);
    }

    pub(super) async fn complete(&mut self, reason: &str) {
        self.state.status = RunStatus::Completed;
        self.state.reason = reason.to_string();
        self.lifecycle_simple("on_complete").await;
        self.finish_event();
    }

    /// Ends the run as failed; `on_fail` tools get the failure text.
    pub(super) async fn fail(
        &mut self,
        reason: &str,
        error: &str,
        failure_message: Option<String>,
    ) {
        self.state.status = RunStatus::Failed;
        self.state.reason = reason.to_string();
        self.state.error = Some(error.to_string());
        self.state.failure_message = failure_message.clone();
        let text = failure_message.unwrap_or_else(|| error.to_string());
        let ids: Vec<usize> = self
            .bundle
            .lifecycle_tools
            .iter()
            .enumerate()
            .filter(|(_, t)| t.trigger.as_ref().map(|x| x.text.as_str()) == Some("on_fail"))
            .map(|(i, _)| i)
            .collect();
        for i in ids {
            let mut args = self.run_identity();
            args.insert("error".into(), Value::String(text.clone()));
            self.lifecycle_call(i, "on_fail", Value::Object(args), true)
                .await;
        }
        self.finish_event();
    }

    pub(super) fn finish_event(&mut self) {
        self.emit(Event::RunFinished {
            status: self.state.status,
            reason: self.state.reason.clone(),
            error: self.state.error.clone(),
            failure_message: self.state.failure_message.clone(),
            turns: self.state.turn_count,
            agent_turns: Some(self.state.agents.len() as u32),
            user_replies: Some(self.state.user_replies),
            synthetic_replies: self.state.synthetic_replies,
        });
        self.checkpoint();
    }

    /// Marks the run interrupted (Ctrl-C), keeping what was recorded.
    pub fn interrupt(&mut self) {
        if self.state.is_terminal() {
            return;
        }
        self.state.status = RunStatus::Interrupted;
        self.state.reason = "interrupted".into();
        self.finish_event();
    }

    pub async fn shutdown(&mut self) {
        self.worker.stop().await;
    }
}
