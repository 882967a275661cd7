//! The run loop (runtime-semantics §1, §2): startup, agent turns, context
//! commits through the authority policy, transition selection, pauses for
//! the user and the end of the run. Each step is an [`Event`].

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mzk_analyzer::model::python::{BindingOwner, BindingTarget};
use mzk_analyzer::model::{Bundle, ConditionType, Tool, TransitionType};
use mzk_analyzer::syntax::expression::{self, Expr};
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use crate::backend::{ModelBackend, ToolExchange, ToolSpec, TurnRequest};
use crate::batches;
use crate::context::{coerce, Bridge, Loader, Pending, Policy};
use crate::events::Event;
use crate::expr::evaluate;
use crate::outputs;
use crate::python::{CallKind, CallOutcome, CallRequest, Worker, WorkerError};
use crate::scenario::{Observed, UserScript};
use crate::value::{exposure_str, py_eq, yaml_to_json};

/// Where events go: the terminal, the history database, the editor.
pub trait EventSink: Send {
    fn emit(&mut self, event: &Event);
    /// The run's state after each settlement step, for resume and history.
    fn checkpoint(&mut self, _state: &RunState) {}
}

/// Collects events in memory (tests, `mzk test`).
#[derive(Default)]
pub struct Recorder {
    pub events: Vec<Event>,
}

impl EventSink for Recorder {
    fn emit(&mut self, event: &Event) {
        self.events.push(event.clone());
    }
}

#[derive(Debug, Clone)]
pub struct RunOptions {
    pub run_id: String,
    /// Overrides orchestrator.max_turns.
    pub max_turns: Option<u32>,
    pub tool_timeout: Duration,
    pub python: PathBuf,
    /// The launch message (§1.3).
    pub message: Option<String>,
    /// Seeds the initial context (after the declared defaults).
    pub context: Map<String, Value>,
    pub user: UserScript,
    /// Starts from this agent instead of orchestrator.initial_agent.
    pub initial_agent: Option<String>,
    pub app_id: String,
    pub user_id: String,
}

impl RunOptions {
    pub fn new(run_id: impl Into<String>, python: PathBuf) -> RunOptions {
        RunOptions {
            run_id: run_id.into(),
            max_turns: None,
            tool_timeout: Duration::from_secs(60),
            python,
            message: None,
            context: Map::new(),
            user: UserScript::default(),
            initial_agent: None,
            app_id: "mzk-local".into(),
            user_id: "anonymous".into(),
        }
    }
}

/// Everything needed to report a run and to continue it after a pause.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunState {
    pub run_id: String,
    pub workflow: String,
    pub backend: String,
    pub context: Map<String, Value>,
    /// Turns as the reference counts them: the opening text, every packet
    /// and every user reply.
    pub turn_count: u32,
    /// `max_turns + 1`.
    pub cap: u32,
    /// running, paused, completed, failed or interrupted.
    pub status: String,
    pub reason: String,
    pub error: Option<String>,
    pub failure_message: Option<String>,
    /// The agent that handed over to the user (paused runs).
    pub paused_after: Option<String>,
    /// The last agent message, for reply rules.
    pub last_message: String,
    /// The agents that took turns, in order.
    pub agents: Vec<String>,
    /// transition_graph.yaml indexes of the rules that fired, in order.
    pub rules: Vec<usize>,
    pub backend_state: Value,
    pub user: UserScript,
    /// Call ids are unique within a run.
    pub calls: u64,
    /// The agent turn under way and its input: a run interrupted during it
    /// re-runs that turn when resumed (runtime-semantics §2.6).
    #[serde(default)]
    pub pending_turn: Option<PendingTurn>,
    /// Replies of the synthetic stand-in model so far.
    #[serde(default)]
    pub synthetic_replies: u32,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PendingTurn {
    pub agent: String,
    pub input: String,
}

impl RunState {
    pub fn observed(&self) -> Observed {
        Observed {
            status: self.status.clone(),
            reason: self.reason.clone(),
            error: self.error.clone(),
            agents: self.agents.clone(),
            context: self.context.clone(),
            rules: self.rules.clone(),
            turns: self.turn_count,
        }
    }

    pub fn is_terminal(&self) -> bool {
        matches!(self.status.as_str(), "completed" | "failed" | "interrupted")
    }
}

#[derive(Debug, Clone)]
enum Target {
    Agent(String),
    User,
    Terminate(String),
}

#[derive(Debug, Clone)]
enum Test {
    Always,
    Equals(String, Value),
    Expression(Expr),
    ToolCalled(String),
}

#[derive(Debug, Clone)]
struct Rule {
    index: usize,
    source: String,
    target: Target,
    test: Test,
    after_turn: bool,
}

fn is_user(name: &str) -> bool {
    name.eq_ignore_ascii_case("user")
}

/// `null` (any case) in an optional text field counts as absent (§2.1).
fn present(name: Option<&mzk_analyzer::model::Name>) -> Option<&str> {
    name.map(|n| n.text.trim())
        .filter(|t| !t.is_empty() && !t.eq_ignore_ascii_case("null"))
}

/// Compiles the graph at run start (§2.1, §2.2): conditions first in YAML
/// order, then the after_turn fallbacks.
fn compile_rules(bundle: &Bundle) -> Result<Vec<Rule>, String> {
    let mut rules = Vec::new();
    for r in &bundle.rules {
        let target_text = r.target.text.trim();
        let target = if target_text.eq_ignore_ascii_case("terminate") {
            let reason = present(r.termination_reason.as_ref()).unwrap_or("workflow_complete");
            Target::Terminate(reason.to_string())
        } else if is_user(target_text) {
            Target::User
        } else if bundle.agent(target_text).is_some() {
            Target::Agent(target_text.to_string())
        } else {
            return Err(format!(
                "transition rule {} targets unknown agent '{target_text}'",
                r.index
            ));
        };
        let test = match (r.transition_type, r.condition_type) {
            (TransitionType::AfterTurn, _) => Test::Always,
            (_, Some(ConditionType::ContextEquals)) => Test::Equals(
                present(r.condition_key.as_ref()).unwrap_or("").to_string(),
                r.condition_value.as_ref().map_or(Value::Null, yaml_to_json),
            ),
            (_, Some(ConditionType::ContextExpression)) => {
                let src = present(r.context_expression.as_ref()).unwrap_or("");
                let (expr, _) = expression::compile(src).map_err(|e| {
                    format!(
                        "transition rule {}: context_expression does not compile: {}",
                        r.index, e.message
                    )
                })?;
                Test::Expression(expr)
            }
            (_, Some(ConditionType::ToolCalled)) => {
                Test::ToolCalled(present(r.tool_name.as_ref()).unwrap_or("").to_string())
            }
            (_, None) => return Err(format!("transition rule {} has no condition_type", r.index)),
        };
        rules.push(Rule {
            index: r.index,
            source: r.source.text.trim().to_string(),
            target,
            after_turn: r.transition_type == TransitionType::AfterTurn,
            test,
        });
    }
    // Stable sort: priority = index for conditions, len + index for fallbacks.
    rules.sort_by_key(|r| (r.after_turn, r.index));
    Ok(rules)
}

enum Next {
    Agent(String),
    User,
    Terminate(String),
    NoMatch,
}

/// The run's workflow name: orchestrator.workflow_name, else the folder's.
pub fn workflow_name(bundle: &Bundle) -> String {
    bundle
        .orchestrator
        .as_ref()
        .and_then(|o| o.workflow_name.as_ref())
        .map_or_else(|| bundle.folder_name.clone(), |n| n.text.clone())
}

/// Model rounds in one turn before the last reply is taken as final.
const MAX_TOOL_ROUNDS: u32 = 10;

/// Why a turn failed: the text after "AG2 turn failed for <agent>: ".
struct TurnFailure(String);

pub struct Engine<'a> {
    bundle: &'a Bundle,
    /// Shared: each tool call's bridge holds it while the engine is borrowed.
    policy: Arc<Policy>,
    rules: Result<Vec<Rule>, String>,
    routed_tools: HashSet<String>,
    backend: Box<dyn ModelBackend + 'a>,
    worker: Worker,
    sink: &'a mut dyn EventSink,
    opts: RunOptions,
    pub state: RunState,
}

impl<'a> Engine<'a> {
    pub fn new(
        bundle: &'a Bundle,
        backend: Box<dyn ModelBackend + 'a>,
        sink: &'a mut dyn EventSink,
        opts: RunOptions,
    ) -> Engine<'a> {
        let workflow = workflow_name(bundle);
        let routed_tools = bundle
            .rules
            .iter()
            .filter(|r| r.condition_type == Some(ConditionType::ToolCalled))
            .filter_map(|r| present(r.tool_name.as_ref()).map(str::to_string))
            .collect();
        let max_turns = opts.max_turns.unwrap_or_else(|| {
            bundle
                .orchestrator
                .as_ref()
                .map_or(50, |o| o.max_turns.clamp(1, u32::MAX as i128 - 1) as u32)
        });
        let state = RunState {
            run_id: opts.run_id.clone(),
            workflow: workflow.clone(),
            backend: backend.name().to_string(),
            cap: max_turns.saturating_add(1),
            status: "running".into(),
            user: opts.user.clone(),
            ..RunState::default()
        };
        Engine {
            bundle,
            policy: Arc::new(Policy::new(bundle, &workflow)),
            rules: compile_rules(bundle),
            routed_tools,
            backend,
            worker: Worker::new(opts.python.clone()),
            sink,
            opts,
            state,
        }
    }

    /// Continues a paused run from its saved state.
    pub fn restore(&mut self, state: RunState) {
        self.backend.restore(&state.backend_state);
        self.state = state;
    }

    fn emit(&mut self, event: Event) {
        if let Event::ModelResponse {
            synthetic: true, ..
        } = &event
        {
            self.state.synthetic_replies += 1;
        }
        self.sink.emit(&event);
    }

    fn checkpoint(&mut self) {
        self.state.backend_state = self.backend.state();
        self.sink.checkpoint(&self.state);
    }

    /// Runs from the start until the run completes, fails or pauses.
    pub async fn start(&mut self) -> &RunState {
        self.initial_context();
        let seed = self.seed();
        let max_turns = self.state.cap - 1;
        let initial = self.initial_agent_name();
        self.emit_started(&initial, &seed, max_turns);
        self.checkpoint();
        if let Err(error) = self.before_chat().await {
            self.fail("failed", &error, None).await;
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
        });
        self.drive(initial, seed).await;
        &self.state
    }

    /// Continues a paused run with the user's reply.
    pub async fn resume(&mut self, reply: &str) -> Result<&RunState, String> {
        if self.state.status != "paused" {
            return Err(format!(
                "run {} is {} and cannot take a reply",
                self.state.run_id, self.state.status
            ));
        }
        self.state.status = "running".into();
        self.user_turn(reply.to_string()).await;
        Ok(&self.state)
    }

    /// Continues a run interrupted during an agent turn (Ctrl-C, a killed
    /// process): the turn is run again from its input, once, as mozaiks
    /// re-runs a pending turn after process loss.
    pub async fn recover(&mut self) -> Result<&RunState, String> {
        let pending = match (self.state.status.as_str(), self.state.pending_turn.clone()) {
            ("interrupted", Some(p)) => p,
            ("interrupted", None) => {
                return Err(format!(
                    "run {} was interrupted outside an agent turn; there is nothing to re-run",
                    self.state.run_id
                ))
            }
            (status, _) => {
                return Err(format!(
                    "run {} is {status}; only an interrupted run is recovered (a paused one takes --reply)",
                    self.state.run_id
                ))
            }
        };
        self.state.status = "running".into();
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

    fn emit_started(&mut self, initial: &str, seed: &str, max_turns: u32) {
        self.emit(Event::RunStarted {
            run_id: self.state.run_id.clone(),
            workflow: self.state.workflow.clone(),
            backend: self.state.backend.clone(),
            initial_agent: initial.to_string(),
            seed: seed.to_string(),
            max_turns,
        });
    }

    fn initial_agent_name(&self) -> String {
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
    fn seed(&self) -> String {
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

    /// §3.1: declared values, the run identity, then the seeded context.
    fn initial_context(&mut self) {
        let mut ctx = Map::new();
        for v in &self.bundle.variables {
            let source = v.source_type.as_ref().map_or("state", |s| s.text.as_str());
            let declared_type = v.declared_type.as_ref().map(|t| t.text.as_str());
            let default = v.default.as_ref().map_or(Value::Null, yaml_to_json);
            let value = match source {
                "state" | "data_reference" => coerce(declared_type, default),
                "config" => v
                    .env_var
                    .as_ref()
                    .and_then(|e| std::env::var(e.text.trim()).ok())
                    .map(|s| coerce(declared_type, Value::String(s)))
                    .unwrap_or_else(|| coerce(declared_type, default)),
                "file" => coerce(declared_type, default),
                "data_entity" => continue,
                _ => Value::Null,
            };
            ctx.insert(v.name.text.clone(), value);
        }
        ctx.insert("workflow_name".into(), json!(self.state.workflow));
        ctx.insert("app_id".into(), json!(self.opts.app_id));
        ctx.insert("chat_id".into(), json!(self.state.run_id));
        ctx.insert("user_id".into(), json!(self.opts.user_id));
        ctx.insert("database_schema_available".into(), json!(false));
        ctx.insert("database_schema_db".into(), Value::Null);
        for (k, v) in &self.opts.context {
            ctx.insert(k.clone(), v.clone());
        }
        self.state.context = ctx;
    }

    fn python_file(&self, owner: BindingOwner) -> Option<PathBuf> {
        let binding = self.bundle.bindings.iter().find(|b| b.owner == owner)?;
        match &binding.target {
            BindingTarget::File(id) => self
                .bundle
                .file(*id)
                .map(|f| self.bundle.dir.join(&f.relative)),
            _ => None,
        }
    }

    /// The file and function a binding calls, when its file was found.
    fn binding(
        &self,
        owner: BindingOwner,
        function: Option<&mzk_analyzer::model::Name>,
    ) -> Option<(PathBuf, String)> {
        let file = self.python_file(owner)?;
        Some((file, function.map(|f| f.text.clone()).unwrap_or_default()))
    }

    fn next_call_id(&mut self) -> String {
        self.state.calls += 1;
        format!("call_{}", self.state.calls)
    }

    /// §1.4 step 5: `before_chat` tools write as the runtime; they may not
    /// change the identity or build-context keys.
    async fn before_chat(&mut self) -> Result<(), String> {
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
                return Err(e);
            }
        }
        for (k, old) in guarded.iter().zip(before) {
            if self.state.context.get(k) != old.as_ref() {
                return Err(format!(
                    "before_chat changed the immutable context key '{k}'"
                ));
            }
        }
        Ok(())
    }

    /// on_start / on_complete: exactly the run identity (§4.5), last entry per trigger.
    async fn lifecycle_simple(&mut self, trigger: &str) {
        let Some(i) = self
            .bundle
            .lifecycle_tools
            .iter()
            .rposition(|t| t.trigger.as_ref().map(|x| x.text.as_str()) == Some(trigger))
        else {
            return;
        };
        let args = json!({
            "app_id": self.opts.app_id,
            "execution_id": self.state.run_id,
            "chat_id": self.state.run_id,
            "user_id": self.opts.user_id,
            "workflow_name": self.state.workflow,
        });
        self.lifecycle_call(i, trigger, args, false).await;
    }

    async fn lifecycle_call(&mut self, i: usize, trigger: &str, args: Value, filter: bool) {
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
        self.commit(pending);
    }

    /// Calls a function and reports the call and its result as events.
    async fn call_traced(
        &mut self,
        request: &CallRequest,
        kind: &str,
        ctx: &mut dyn crate::python::ContextAccess,
    ) -> Result<CallOutcome, WorkerError> {
        let call_id = self.next_call_id();
        self.emit(Event::ToolCall {
            agent: request.agent.clone(),
            tool: request.function.clone(),
            call_id: call_id.clone(),
            arguments: request.args.clone(),
            kind: kind.to_string(),
        });
        let started = Instant::now();
        let result = self.worker.call(request, ctx, self.opts.tool_timeout).await;
        let elapsed_ms = started.elapsed().as_secs_f64() * 1000.0;
        let (ok, value, error, traceback) = match &result {
            Ok(CallOutcome::Returned { value, .. }) => (true, Some(value.clone()), None, None),
            Ok(CallOutcome::Raised { error, traceback }) => {
                (false, None, Some(error.clone()), Some(traceback.clone()))
            }
            Err(e) => (false, None, Some(e.to_string()), None),
        };
        self.emit(Event::ToolResult {
            agent: request.agent.clone(),
            tool: request.function.clone(),
            call_id,
            ok,
            result: value,
            error,
            traceback: traceback.filter(|t| !t.is_empty()),
            elapsed_ms,
        });
        result
    }

    /// Applies committed writes (deletes, then sets) and reports them.
    fn commit(&mut self, pending: BTreeMap<String, Pending>) {
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
    async fn drive(&mut self, mut agent: String, mut input: String) {
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
    async fn settle(
        &mut self,
        from: &str,
        step: Result<(Next, Option<usize>), String>,
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
        let kind = rule
            .and_then(|i| self.bundle.rules.iter().find(|r| r.index == i))
            .map(|r| match r.transition_type {
                TransitionType::AfterTurn => "after_turn",
                TransitionType::Condition => "condition",
            })
            .unwrap_or("none")
            .to_string();
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
                });
                Some(next)
            }
        }
    }

    async fn pause(&mut self, from: &str) {
        self.state.paused_after = Some(from.to_string());
        let last = self.state.last_message.clone();
        if let Some(reply) = self.state.user.next_reply(&last) {
            // Boxed: a scripted reply continues the run from inside the loop.
            Box::pin(self.user_turn(reply)).await;
            return;
        }
        self.state.status = "paused".into();
        self.state.reason = "awaiting_user_input".into();
        self.emit(Event::Paused {
            agent: from.to_string(),
            turn: self.state.turn_count,
        });
        self.finish_event();
    }

    /// A user reply (§2.6): `user_text` triggers, then the user-sourced rules.
    async fn user_turn(&mut self, reply: String) {
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
                self.fail("failed", &e, None).await;
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
    fn select(
        &self,
        speaker: &str,
        routing_tool: Option<&str>,
        user_resolution: bool,
    ) -> Result<(Next, Option<usize>), String> {
        let rules = self.rules.as_ref().map_err(Clone::clone)?;
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

    async fn complete(&mut self, reason: &str) {
        self.state.status = "completed".into();
        self.state.reason = reason.to_string();
        self.lifecycle_simple("on_complete").await;
        self.finish_event();
    }

    /// Ends the run as failed; `on_fail` tools get the failure text.
    async fn fail(&mut self, reason: &str, error: &str, failure_message: Option<String>) {
        self.state.status = "failed".into();
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
            let args = json!({
                "app_id": self.opts.app_id,
                "execution_id": self.state.run_id,
                "chat_id": self.state.run_id,
                "user_id": self.opts.user_id,
                "workflow_name": self.state.workflow,
                "error": text,
            });
            self.lifecycle_call(i, "on_fail", args, true).await;
        }
        self.finish_event();
    }

    fn finish_event(&mut self) {
        self.emit(Event::RunFinished {
            status: self.state.status.clone(),
            reason: self.state.reason.clone(),
            error: self.state.error.clone(),
            failure_message: self.state.failure_message.clone(),
            turns: self.state.turn_count,
            synthetic_replies: self.state.synthetic_replies,
        });
        self.checkpoint();
    }

    /// Marks the run interrupted (Ctrl-C), keeping what was recorded.
    pub fn interrupt(&mut self) {
        if self.state.is_terminal() {
            return;
        }
        self.state.status = "interrupted".into();
        self.state.reason = "interrupted".into();
        self.finish_event();
    }

    pub async fn shutdown(&mut self) {
        self.worker.stop().await;
    }

    /// The system prompt for one call (§1.5 a, b): the static prompt, the
    /// live context exposure, then the agent's prompt middleware.
    /// The static prompt plus the exposure rendered from the live context.
    fn exposed_prompt(&self, agent: &str) -> String {
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

    async fn system_prompt(&mut self, agent: &str) -> String {
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

    fn tools_of(&self, agent: &str) -> Vec<(usize, &'a Tool)> {
        let bundle: &'a Bundle = self.bundle;
        bundle
            .tools
            .iter()
            .enumerate()
            .filter(|(_, t)| t.agents.iter().any(|a| a.text == agent))
            .collect()
    }

    /// A tool as the model sees it: its function's parameters (without
    /// `context_variables`) typed from their annotations.
    fn tool_spec(&self, index: usize, tool: &Tool) -> ToolSpec {
        let name = tool
            .function
            .as_ref()
            .map(|f| f.text.clone())
            .unwrap_or_default();
        let function = self
            .bundle
            .bindings
            .iter()
            .find(|b| b.owner == BindingOwner::Tool(index))
            .and_then(|b| match b.target {
                BindingTarget::File(id) => Some(id),
                _ => None,
            })
            .and_then(|id| self.bundle.python.iter().find(|p| p.file == id))
            .and_then(|p| p.module.functions.iter().find(|f| f.name == name));
        let mut properties = Map::new();
        let mut required = Vec::new();
        for p in function.map(|f| f.params.as_slice()).unwrap_or_default() {
            use mzk_analyzer::syntax::python::ParamKind;
            if p.name == "context_variables"
                || matches!(p.kind, ParamKind::VarPositional | ParamKind::VarKeyword)
            {
                continue;
            }
            properties.insert(p.name.clone(), annotation_schema(p.annotation.as_deref()));
            if !p.has_default {
                required.push(Value::String(p.name.clone()));
            }
        }
        let description = tool
            .description
            .as_ref()
            .map(|d| d.text.clone())
            .or_else(|| function.and_then(|f| f.docstring.clone()))
            .unwrap_or_else(|| name.clone());
        ToolSpec {
            name,
            description,
            parameters: json!({"type": "object", "properties": properties, "required": required}),
        }
    }

    fn is_auto_tool_agent(&self, agent: &str) -> bool {
        self.tools_of(agent).iter().any(|(_, t)| t.auto_tool_call)
    }

    /// One agent turn (§1.5): prompt, model call, tools, output validation,
    /// auto tools, agent-text triggers, the commit.
    async fn agent_turn(
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
            let reply = self.backend.respond(&request).await.map_err(TurnFailure)?;
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
                self.policy.check(key, writer, "set").map_err(TurnFailure)?;
            }
        }
        // The bridge wins a key clash (§1.5 h).
        for (k, v) in pending {
            text_updates.insert(k, v);
        }
        self.commit(text_updates);
        Ok((body, routing_tool))
    }

    async fn task_batches(
        &mut self,
        agent: &str,
        body: &Value,
        pending: &BTreeMap<String, Pending>,
    ) -> Result<(), TurnFailure> {
        let bundle: &'a Bundle = self.bundle;
        for batch in bundle
            .task_batches
            .iter()
            .filter(|b| b.trigger_agent.as_ref().is_some_and(|t| t.text == agent))
        {
            let payload = if batch
                .source_kind
                .as_ref()
                .is_some_and(|k| k.text == "context_variable")
            {
                let mut ctx = self.state.context.clone();
                for (k, op) in pending {
                    match op {
                        Pending::Set(v, _) => {
                            ctx.insert(k.clone(), v.clone());
                        }
                        Pending::Delete(_) => {
                            ctx.remove(k);
                        }
                    }
                }
                Value::Object(ctx)
            } else {
                outputs::parse_body(body)
            };
            let tasks = batches::tasks_of(batch, &payload);
            if tasks.is_empty() {
                self.emit(Event::Notice {
                    message: format!(
                        "task batch {}: no tasks at `{}`; skipped (its status key keeps its value)",
                        batch.id.text,
                        batch.source_path.as_ref().map_or("", |p| p.text.as_str())
                    ),
                });
                continue;
            }
            let prompts: HashMap<String, String> = bundle
                .agents
                .iter()
                .map(|a| (a.name.text.clone(), self.exposed_prompt(&a.name.text)))
                .collect();
            // Task events reach the sink while the batch runs.
            let (events, mut incoming) = tokio::sync::mpsc::unbounded_channel();
            let run = {
                let backend: &dyn ModelBackend = &*self.backend;
                let sink = &mut *self.sink;
                let work = batches::run(bundle, backend, batch, agent, tasks, &prompts, &events);
                tokio::pin!(work);
                loop {
                    tokio::select! {
                        run = &mut work => break run,
                        Some(event) = incoming.recv() => sink.emit(&event),
                    }
                }
            };
            while let Ok(event) = incoming.try_recv() {
                self.emit(event);
            }
            self.state.synthetic_replies += run.synthetic_replies;
            for (key, value) in run.writes {
                self.policy
                    .check(&key, "task_batch", "set")
                    .map_err(TurnFailure)?;
                let mut write = BTreeMap::new();
                write.insert(key, Pending::Set(value, "task_batch".into()));
                self.commit(write);
            }
            if let Some(error) = run.error {
                return Err(TurnFailure(error));
            }
        }
        Ok(())
    }

    /// Runs one tool through the worker, applying an outcome contract when
    /// the tool has one. A raised exception is a tool error; a dead worker
    /// fails the turn.
    async fn run_tool(
        &mut self,
        request: &CallRequest,
        kind: &str,
        pending: &mut BTreeMap<String, Pending>,
    ) -> Result<Result<Value, String>, TurnFailure> {
        let channel = self.state.context.clone();
        let policy = self.policy.clone();
        let mut answers = std::mem::take(&mut self.state.user.tool_responses);
        let mut bridge = Bridge::new(&channel, &policy, pending, None);
        bridge.ui_answers = Some(&mut answers);
        let result = self.call_traced(request, kind, &mut bridge).await;
        let refused = std::mem::take(&mut bridge.refused);
        let shown = std::mem::take(&mut bridge.ui_shown);
        self.state.user.tool_responses = answers;
        for (key, writer, error) in refused {
            self.emit(Event::ContextRefused { key, writer, error });
        }
        for (tool, payload, awaiting_response, event_id, response) in shown {
            self.emit(Event::UiTool {
                agent: request.agent.clone(),
                tool,
                event_id,
                awaiting_response,
                payload,
                response,
            });
        }
        match result {
            Ok(CallOutcome::Returned { value, .. }) => Ok(Ok(value)),
            Ok(CallOutcome::Raised { error, .. }) => Ok(Err(error)),
            Err(e @ WorkerError::Timeout(_)) => Ok(Err(e.to_string())),
            Err(e) => Err(TurnFailure(e.to_string())),
        }
    }

    /// §5.4: the agent's auto tools, in declaration order, with the
    /// validated output's fields as keyword arguments.
    async fn auto_tools(
        &mut self,
        agent: &str,
        data: &Value,
        pending: &mut BTreeMap<String, Pending>,
    ) -> Result<(), TurnFailure> {
        let tools: Vec<(usize, &'a Tool)> = self
            .tools_of(agent)
            .into_iter()
            .filter(|(_, t)| t.auto_tool_call)
            .collect();
        for (i, tool) in tools {
            let Some(file) = self.python_file(BindingOwner::Tool(i)) else {
                self.emit(Event::Notice {
                    message: format!(
                        "auto tool {}: its Python file was not found; skipped",
                        tool.function.as_ref().map_or("?", |f| f.text.as_str())
                    ),
                });
                continue;
            };
            let request = CallRequest {
                file,
                function: tool
                    .function
                    .as_ref()
                    .map(|f| f.text.clone())
                    .unwrap_or_default(),
                agent: agent.to_string(),
                kind: CallKind::Auto {
                    overlay: data.clone(),
                    extras: json!({
                        "chat_id": self.state.run_id,
                        "app_id": self.opts.app_id,
                        "workflow_name": self.state.workflow,
                        "turn_idempotency_key": format!("{}:{}:{agent}:{}", self.state.run_id, self.state.run_id, self.state.turn_count),
                        "agent_name": agent,
                        "agent": agent,
                    }),
                },
                args: data.clone(),
            };
            match &tool.outcome {
                Some(outcome) => self.outcome_call(&request, outcome, pending).await?,
                // A raised auto tool is already reported; the turn goes on (§5.4 step 5).
                None => {
                    let _ = self.run_tool(&request, "auto", pending).await?;
                }
            }
        }
        Ok(())
    }

    /// §4.6: the outcome wrapper around an auto tool.
    async fn outcome_call(
        &mut self,
        request: &CallRequest,
        outcome: &mzk_analyzer::model::Outcome,
        pending: &mut BTreeMap<String, Pending>,
    ) -> Result<(), TurnFailure> {
        let (Some(key), Some(attempts_key), Some(error_value)) = (
            outcome.context_key.as_ref().map(|k| k.text.clone()),
            outcome.attempts_key.as_ref().map(|k| k.text.clone()),
            outcome.error_value.as_ref().map(|k| k.text.clone()),
        ) else {
            return self.run_tool(request, "auto", pending).await.map(|_| ());
        };
        let result_field = outcome
            .result_field
            .as_ref()
            .map_or("status", |f| f.text.as_str())
            .to_string();
        let max_attempts = outcome.max_attempts.max(1) as i64;
        let previous = pending_value(pending, &self.state.context, &key);
        let count = pending_value(pending, &self.state.context, &attempts_key);
        let writer = self.policy.tool_writer(&key).to_string();
        set_pending(pending, &key, json!(error_value), &writer);
        let count = match &count {
            Value::Null => Some(0),
            Value::Number(n) => n.as_i64().filter(|c| *c >= 0),
            _ => None,
        };
        let refusal = match count {
            None => {
                set_pending(pending, &attempts_key, json!(max_attempts), &writer);
                Some("invalid_attempt_state")
            }
            Some(c) if c >= max_attempts => Some("attempts_exhausted"),
            Some(c)
                if c > 0
                    && !outcome
                        .retry_on
                        .iter()
                        .any(|r| previous.as_str() == Some(r.text.as_str())) =>
            {
                Some("retry_not_permitted")
            }
            Some(_) => None,
        };
        let code = match refusal {
            Some(code) => Some(code),
            None => {
                let c = count.unwrap_or(0) + 1;
                set_pending(pending, &attempts_key, json!(c), &writer);
                match self.run_tool(request, "auto", pending).await? {
                    Err(_) => Some("tool_execution_failed"),
                    Ok(result) => {
                        let value = result.get(&result_field).cloned().unwrap_or(Value::Null);
                        if outcome
                            .values
                            .iter()
                            .any(|v| value.as_str() == Some(v.text.as_str()))
                        {
                            let writer = self.policy.tool_writer(&key).to_string();
                            pending.insert(key.clone(), Pending::Set(value, writer));
                            None
                        } else {
                            Some("invalid_tool_outcome")
                        }
                    }
                }
            }
        };
        if let Some(code) = code {
            self.emit(Event::Notice {
                message: format!(
                    "outcome of {}: {key} = {error_value} ({code})",
                    request.function
                ),
            });
        }
        Ok(())
    }
}

/// A key's value as this turn sees it: pending writes over the channel.
fn pending_value(
    pending: &BTreeMap<String, Pending>,
    ctx: &Map<String, Value>,
    key: &str,
) -> Value {
    match pending.get(key) {
        Some(Pending::Set(v, _)) => v.clone(),
        Some(Pending::Delete(_)) => Value::Null,
        None => ctx.get(key).cloned().unwrap_or(Value::Null),
    }
}

fn set_pending(pending: &mut BTreeMap<String, Pending>, key: &str, value: Value, writer: &str) {
    pending.insert(key.to_string(), Pending::Set(value, writer.to_string()));
}

/// The JSON Schema of a Python annotation, as AG2 derives it (loosely: an
/// unknown or missing annotation accepts anything).
fn annotation_schema(annotation: Option<&str>) -> Value {
    let Some(text) = annotation.map(str::trim) else {
        return json!({});
    };
    let nullable = text.contains("None") || text.starts_with("Optional[");
    let base = text
        .trim_start_matches("Optional[")
        .split('|')
        .map(str::trim)
        .find(|part| *part != "None")
        .unwrap_or("")
        .trim_end_matches(']');
    let head = base.split('[').next().unwrap_or("").trim();
    let schema = match head {
        "str" => json!({"type": "string"}),
        "int" => json!({"type": "integer"}),
        "float" => json!({"type": "number"}),
        "bool" => json!({"type": "boolean"}),
        "list" | "List" | "tuple" | "Sequence" => json!({"type": "array"}),
        "dict" | "Dict" | "Mapping" => json!({"type": "object"}),
        _ => json!({}),
    };
    match (nullable, schema.get("type").cloned()) {
        (true, Some(t)) => json!({"type": [t, "null"]}),
        _ => schema,
    }
}

/// §3.7 matching: trimmed, case-insensitive; equals, contains or regex.
fn trigger_matches(t: &mzk_analyzer::model::ContextTrigger, text: &str) -> bool {
    let body = text.trim().to_lowercase();
    if let Some(e) = &t.equals {
        return body == e.text.trim().to_lowercase();
    }
    if let Some(c) = &t.contains {
        return body.contains(&c.text.trim().to_lowercase());
    }
    if let Some(r) = &t.regex {
        return regex::RegexBuilder::new(&r.text)
            .case_insensitive(true)
            .size_limit(1 << 20)
            .build()
            .is_ok_and(|re| re.is_match(text.trim()));
    }
    false
}
