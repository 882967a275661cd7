//! The typed event stream of a run. Every step is an event; the same events
//! are printed live, persisted in the history and streamed to the editor.
//! The JSON form (one object per line, `type` first) is documented in
//! docs/runtime.md.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::status::RunStatus;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    RunStarted {
        run_id: String,
        workflow: String,
        backend: String,
        initial_agent: String,
        /// The initiator's opening text (§1.3).
        seed: String,
        max_turns: u32,
        /// `mozaiks` when the real mozaiks runtime runs the bundle
        /// (`--engine mozaiks`); absent for mzk's own engine.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        engine: Option<String>,
    },
    /// A continuation of a paused run with the user's reply.
    UserMessage {
        text: String,
    },
    TurnStarted {
        agent: String,
        turn: u32,
    },
    /// The system prompt sent for this model call, and its size.
    Prompt {
        agent: String,
        chars: usize,
        text: String,
    },
    ModelResponse {
        agent: String,
        /// The final body (text, or the JSON object of a structured output).
        body: Value,
        /// The tools the model called, in emission order.
        tool_calls: Vec<String>,
        /// True when the synthetic stand-in model produced the reply.
        synthetic: bool,
    },
    ToolCall {
        agent: String,
        tool: String,
        call_id: String,
        arguments: Value,
        /// `llm`, `auto`, `lifecycle:<trigger>` or `middleware`.
        kind: String,
    },
    ToolResult {
        agent: String,
        tool: String,
        call_id: String,
        ok: bool,
        #[serde(skip_serializing_if = "Option::is_none")]
        result: Option<Value>,
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        traceback: Option<String>,
        elapsed_ms: f64,
    },
    /// A write or delete that reached the channel context.
    ContextSet {
        key: String,
        /// Null for a delete.
        value: Value,
        writer: String,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        deleted: bool,
    },
    /// A UI tool (waiting for the user's answer) or surface a tool showed.
    UiTool {
        agent: String,
        tool: String,
        event_id: String,
        awaiting_response: bool,
        payload: Value,
        #[serde(skip_serializing_if = "Option::is_none")]
        response: Option<Value>,
    },
    /// A write the authority policy refused.
    ContextRefused {
        key: String,
        writer: String,
        error: String,
    },
    StructuredOutput {
        agent: String,
        model: String,
        data: Value,
    },
    Transition {
        from: String,
        to: String,
        /// The rule's index in transition_graph.yaml (absent for the opening
        /// hand-over to the initial agent).
        #[serde(skip_serializing_if = "Option::is_none")]
        rule: Option<usize>,
        /// `after_turn`, `condition`, or `start`.
        kind: String,
        /// What the rule tests, as the graph labels it (`verdict == approved`,
        /// `after turn`); absent for the opening hand-over.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        condition: Option<String>,
    },
    Paused {
        agent: String,
        turn: u32,
    },
    /// A task batch starts inside its trigger agent's turn (§6).
    BatchStarted {
        batch: String,
        trigger: String,
        tasks: usize,
    },
    TaskQueued {
        batch: String,
        task: String,
        agent: String,
        depends_on: Vec<String>,
    },
    TaskStarted {
        batch: String,
        task: String,
        attempt: u32,
    },
    TaskAttemptFailed {
        batch: String,
        task: String,
        attempt: u32,
        /// `expired`, `worker_failed`, `structured_output_validation_failed`
        /// or `output_rejected`.
        reason: String,
        error: String,
    },
    TaskFinished {
        batch: String,
        task: String,
        /// completed or failed.
        status: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        failure_kind: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
    BatchFinished {
        batch: String,
        /// completed, partial, completed_with_errors or failed.
        status: String,
        completed: usize,
        failed: usize,
    },
    /// Something the runner notes without changing the run (a skipped file,
    /// a lifecycle tool error).
    Notice {
        message: String,
    },
    RunFinished {
        status: RunStatus,
        /// workflow_complete, workflow_failed, max_turns, no_transition_matched,
        /// awaiting_user_input, turn_failed, interrupted, …
        reason: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        failure_message: Option<String>,
        /// mozaiks' count, which `max_turns` limits: the opening message,
        /// each agent turn and each user reply.
        turns: u32,
        /// The agent turns, as the `turn N` headers number them (absent in
        /// histories written before it was recorded).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        agent_turns: Option<u32>,
        /// The user's replies (absent likewise).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        user_replies: Option<u32>,
        /// Model replies the synthetic stand-in produced in this run (agent
        /// turns and batch tasks); absent when none.
        #[serde(default, skip_serializing_if = "is_zero")]
        synthetic_replies: u32,
    },
}

/// How a run's length is said, one count everywhere: the agent turns the
/// `turn N` headers number, and the user replies between them (mozaiks'
/// own count, which `max_turns` limits, adds the opening message; a turn
/// that failed is a header but not in that count). A run recorded without
/// these counts is said in mozaiks' count.
pub fn turns_phrase(agent_turns: Option<u32>, user_replies: Option<u32>, turns: u32) -> String {
    let (Some(agents), Some(replies)) = (agent_turns, user_replies) else {
        return format!("{turns} turn{}", if turns == 1 { "" } else { "s" });
    };
    let mut phrase = format!("{agents} agent turn{}", if agents == 1 { "" } else { "s" });
    if replies > 0 {
        phrase.push_str(&format!(
            " and {replies} user repl{}",
            if replies == 1 { "y" } else { "ies" }
        ));
    }
    phrase
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl Event {
    pub fn type_name(&self) -> &'static str {
        match self {
            Event::RunStarted { .. } => "run_started",
            Event::UserMessage { .. } => "user_message",
            Event::TurnStarted { .. } => "turn_started",
            Event::Prompt { .. } => "prompt",
            Event::ModelResponse { .. } => "model_response",
            Event::ToolCall { .. } => "tool_call",
            Event::ToolResult { .. } => "tool_result",
            Event::ContextSet { .. } => "context_set",
            Event::ContextRefused { .. } => "context_refused",
            Event::UiTool { .. } => "ui_tool",
            Event::StructuredOutput { .. } => "structured_output",
            Event::Transition { .. } => "transition",
            Event::Paused { .. } => "paused",
            Event::BatchStarted { .. } => "batch_started",
            Event::TaskQueued { .. } => "task_queued",
            Event::TaskStarted { .. } => "task_started",
            Event::TaskAttemptFailed { .. } => "task_attempt_failed",
            Event::TaskFinished { .. } => "task_finished",
            Event::BatchFinished { .. } => "batch_finished",
            Event::Notice { .. } => "notice",
            Event::RunFinished { .. } => "run_finished",
        }
    }

    /// One line for a terminal, or `None` for events only the JSON form shows.
    pub fn human(&self) -> Option<String> {
        fn short(v: &Value) -> String {
            let text = match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
            if one_line.chars().count() > 100 {
                format!("{}…", one_line.chars().take(99).collect::<String>())
            } else {
                one_line
            }
        }
        Some(match self {
            Event::RunStarted {
                run_id,
                workflow,
                backend,
                initial_agent,
                engine,
                ..
            } => match engine {
                Some(engine) => format!(
                    "run {run_id}: {workflow} from {initial_agent} ({backend} model, {engine} engine)"
                ),
                None => format!("run {run_id}: {workflow} from {initial_agent} ({backend} model)"),
            },
            Event::UserMessage { text } => {
                format!("  user: {}", short(&Value::String(text.clone())))
            }
            Event::TurnStarted { agent, turn } => format!("turn {turn}: {agent}"),
            Event::Prompt { .. } => return None,
            Event::ModelResponse {
                body, synthetic, ..
            } => format!(
                "  {}says: {}",
                if *synthetic { "(synthetic) " } else { "" },
                short(body)
            ),
            Event::ToolCall {
                tool,
                arguments,
                kind,
                ..
            } => format!("  calls {tool}({}) [{kind}]", short(arguments)),
            Event::ToolResult {
                tool,
                ok: true,
                result,
                ..
            } => format!(
                "  {tool} → {}",
                result.as_ref().map_or_else(String::new, short)
            ),
            Event::ToolResult { tool, error, .. } => {
                format!("  {tool} failed: {}", error.as_deref().unwrap_or("error"))
            }
            Event::ContextSet {
                key,
                value,
                writer,
                deleted,
            } => {
                if *deleted {
                    format!("  context: {key} deleted ({writer})")
                } else {
                    format!("  context: {key} = {} ({writer})", short(value))
                }
            }
            Event::ContextRefused { error, .. } => format!("  refused: {error}"),
            Event::UiTool {
                tool,
                awaiting_response,
                response,
                ..
            } => match (awaiting_response, response) {
                (true, Some(r)) => format!("  UI {tool} answered: {}", short(r)),
                (true, None) => format!("  UI {tool}: no scripted answer"),
                (false, _) => format!("  UI {tool} shown"),
            },
            Event::StructuredOutput { model, .. } => format!("  output valid against {model}"),
            Event::Transition {
                from,
                to,
                rule,
                kind,
                condition,
            } => match rule {
                Some(i) => format!(
                    "  → {to} (rule {i}: {from}, {})",
                    condition.as_deref().unwrap_or(kind)
                ),
                None => format!("  → {to} ({kind})"),
            },
            Event::Paused { agent, .. } => format!("paused: {agent} handed over to the user"),
            Event::BatchStarted { batch, tasks, .. } => format!(
                "  batch {batch}: {tasks} task{}",
                if *tasks == 1 { "" } else { "s" }
            ),
            Event::TaskQueued { .. } => return None,
            Event::TaskStarted {
                batch,
                task,
                attempt,
            } => format!("    {batch}/{task}: attempt {attempt}"),
            Event::TaskAttemptFailed {
                batch,
                task,
                reason,
                error,
                ..
            } => format!("    {batch}/{task}: {reason}: {error}"),
            Event::TaskFinished {
                batch,
                task,
                status,
                error,
                ..
            } => match error {
                Some(e) => format!("    {batch}/{task}: {status} ({e})"),
                None => format!("    {batch}/{task}: {status}"),
            },
            Event::BatchFinished {
                batch,
                status,
                completed,
                failed,
            } => format!("  batch {batch}: {status} ({completed} completed, {failed} failed)"),
            Event::Notice { message } => format!("  note: {message}"),
            Event::RunFinished {
                status,
                reason,
                error,
                turns,
                agent_turns,
                user_replies,
                synthetic_replies,
                ..
            } => {
                let synthetic = match synthetic_replies {
                    0 => String::new(),
                    1 => " (1 synthetic model reply)".to_string(),
                    n => format!(" ({n} synthetic model replies)"),
                };
                let length = turns_phrase(*agent_turns, *user_replies, *turns);
                match error {
                    Some(e) if e != reason => {
                        format!("{status} ({reason}) after {length}{synthetic}: {e}")
                    }
                    _ => format!("{status} ({reason}) after {length}{synthetic}"),
                }
            }
        })
    }
}
