//! The run loop (runtime-semantics §1, §2): startup, agent turns, context
//! commits through the authority policy, transition selection, pauses for
//! the user and the end of the run. Each step is an [`Event`].
//!
//! This file holds the engine's state and options; `lifecycle` starts, resumes
//! and ends runs, `turns` is the turn loop and transition selection (`rules`
//! compiles the graph), `agent_turn` is one agent's turn, `prompts` builds
//! system prompts, `tools` the tool specs and Python calls, `batch_glue` hands
//! task batches to `crate::batches`.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

pub use initial::initial_context;
use mzk_analyzer::model::{Bundle, ConditionType};
use rules::{compile_rules, present, Rule};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::backend::ModelBackend;
use crate::context::Policy;
use crate::error::Error;
use crate::events::Event;
use crate::python::Worker;
use crate::scenario::{Observed, UserScript};
use crate::status::RunStatus;

mod agent_turn;
mod batch_glue;
mod initial;
mod lifecycle;
mod prompts;
mod rules;
mod tools;
mod turns;

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
    /// `mozaiks` for a run of the real runtime (`--engine mozaiks`), which
    /// cannot be continued by mzk's engine; empty for mzk's own.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub engine: String,
    pub context: Map<String, Value>,
    /// Turns as the reference counts them: the opening text, every packet
    /// and every user reply.
    pub turn_count: u32,
    /// `max_turns + 1`.
    pub cap: u32,
    pub status: RunStatus,
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
    /// The user's replies so far (each counts in `turn_count` too).
    #[serde(default)]
    pub user_replies: u32,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PendingTurn {
    pub agent: String,
    pub input: String,
}

impl RunState {
    pub fn observed(&self) -> Observed {
        Observed {
            status: self.status,
            reason: self.reason.clone(),
            error: self.error.clone(),
            agents: self.agents.clone(),
            context: self.context.clone(),
            rules: self.rules.clone(),
            turns: self.turn_count,
        }
    }

    pub fn is_terminal(&self) -> bool {
        self.status.is_terminal()
    }
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
    rules: Result<Vec<Rule>, Error>,
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
            .filter_map(|r| present(r.tool_name.as_deref()).map(str::to_string))
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
            status: RunStatus::Running,
            user: opts.user.clone(),
            ..RunState::default()
        };
        Engine {
            bundle,
            policy: Arc::new(Policy::new(bundle, &workflow)),
            rules: compile_rules(bundle),
            routed_tools,
            backend,
            worker: Worker::for_bundle(opts.python.clone(), &bundle.dir, &workflow),
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
}
