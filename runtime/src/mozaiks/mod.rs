//! The second engine: the real mozaiks runtime (`--engine mozaiks`). mzk
//! serves the run's model on 127.0.0.1 ([`endpoint`]), starts `driver.py`
//! in the user's Python — where mozaiks 0.2.0 must be installed — and turns
//! what the driver observes inside mozaiks into the same [`Event`]s, run
//! state and history as its own engine. One Python process per run: mozaiks
//! keeps singletons, and a paused run lives in that process, so pauses are
//! answered while it waits (the user script, `--auto-reply`), not in a later
//! `mzk run --resume`.

pub mod endpoint;

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;

use mzk_analyzer::model::Bundle;
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, Command};

use crate::backend::ModelBackend;
use crate::context::ui_answer;
use crate::engine::{workflow_name, EventSink, RunOptions, RunState};
use crate::events::Event;
use crate::status::RunStatus;
use endpoint::{Endpoint, MODEL_NAME};

const DRIVER_SOURCE: &str = include_str!("driver.py");

/// The mozaiks version the driver and mzk's engine are written against.
pub const MOZAIKS_VERSION: &str = "0.2.0";

/// Why a run of the real runtime could not happen at all: mozaiks missing
/// or of another version, a missing dependency. Such a run ends `failed`
/// with this reason and `mzk run` exits with status 2.
pub const ENGINE_UNAVAILABLE: &str = "engine_unavailable";

pub struct MozaiksEngine<'a> {
    bundle: &'a Bundle,
    backend: Arc<dyn ModelBackend>,
    sink: &'a mut dyn EventSink,
    opts: RunOptions,
    pub state: RunState,
    /// A `run_finished` went out (a paused run is finished here too: its
    /// process ends with it).
    finished: bool,
}

impl<'a> MozaiksEngine<'a> {
    pub fn new(
        bundle: &'a Bundle,
        backend: Box<dyn ModelBackend>,
        sink: &'a mut dyn EventSink,
        opts: RunOptions,
    ) -> MozaiksEngine<'a> {
        let state = RunState {
            run_id: opts.run_id.clone(),
            workflow: workflow_name(bundle),
            backend: backend.name().to_string(),
            engine: "mozaiks".into(),
            status: RunStatus::Running,
            user: opts.user.clone(),
            ..RunState::default()
        };
        MozaiksEngine {
            bundle,
            backend: Arc::from(backend),
            sink,
            opts,
            state,
            finished: false,
        }
    }

    /// Runs the bundle to its end (or a pause nobody answers).
    pub async fn start(&mut self) -> &RunState {
        let key = run_key();
        let endpoint = match Endpoint::serve(self.backend.clone(), key.clone()).await {
            Ok(e) => e,
            Err(e) => {
                self.finish_failed(
                    "internal_error",
                    &format!("mzk could not serve the model on 127.0.0.1: {e}"),
                );
                return &self.state;
            }
        };
        let files = match self.write_driver(&endpoint, &key) {
            Ok(files) => files,
            Err(e) => {
                self.finish_failed(
                    "internal_error",
                    &format!("mzk could not write the mozaiks driver: {e}"),
                );
                return &self.state;
            }
        };
        let driver = files.path().join("driver.py");
        let stderr_path = files.path().join("stderr.log");
        let spawned = std::fs::File::create(&stderr_path).and_then(|stderr| {
            let mut command = Command::new(&self.opts.python);
            command
                .arg(&driver)
                .arg(files.path().join("request.json"))
                .current_dir(files.path())
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(stderr)
                .kill_on_drop(true);
            #[cfg(unix)]
            command.process_group(0);
            command.spawn()
        });
        let mut child = match spawned {
            Ok(child) => child,
            Err(e) => {
                self.finish_failed(
                    ENGINE_UNAVAILABLE,
                    &format!(
                        "could not start {} for the mozaiks engine: {e}; pass --python PATH (or set MZK_PYTHON) to an environment with `pip install mozaiks=={MOZAIKS_VERSION}`",
                        self.opts.python.display()
                    ),
                );
                return &self.state;
            }
        };
        // Whatever ends the run — its end, an error, the future dropped on
        // Ctrl-C — the driver's process group goes with it.
        let group = ProcessGroup(child.id());
        self.pump(&mut child, &endpoint).await;
        let status = child.wait().await;
        drop(group);
        if !self.finished {
            let tail = stderr_tail(&stderr_path);
            let exit = status.map_or_else(|e| e.to_string(), |s| s.to_string());
            self.finish_failed(
                "internal_error",
                &format!("the mozaiks runtime stopped before the run ended ({exit}){tail}"),
            );
        }
        &self.state
    }

    /// The request file and the driver, in a folder that goes with the run.
    fn write_driver(&self, endpoint: &Endpoint, key: &str) -> std::io::Result<tempfile::TempDir> {
        let dir = tempfile::Builder::new().prefix("mzk-mozaiks-").tempdir()?;
        std::fs::write(dir.path().join("driver.py"), DRIVER_SOURCE)?;
        let request = json!({
            "bundle": absolute(&self.bundle.dir),
            "workflow": self.state.workflow,
            "base_url": endpoint.base_url(),
            "model": MODEL_NAME,
            "message": self.opts.message,
            "context": self.opts.context,
            "max_turns": self.opts.max_turns,
            "app_id": self.opts.app_id,
            "user_id": self.opts.user_id,
            "chat_id": self.opts.run_id,
            "mozaiks_version": MOZAIKS_VERSION,
            "api_key": key,
            "workspace": dir.path(),
        });
        std::fs::write(dir.path().join("request.json"), request.to_string())?;
        Ok(dir)
    }

    /// Reads the driver's lines until it closes its output, answering pauses.
    async fn pump(&mut self, child: &mut Child, endpoint: &Endpoint) {
        let (Some(stdout), Some(mut stdin)) = (child.stdout.take(), child.stdin.take()) else {
            return;
        };
        let mut lines = BufReader::new(stdout).lines();
        // UI tools answered: the driver echoes each with the answer given
        // (a null answer reads like a new question otherwise).
        let mut answered = std::collections::HashSet::new();
        while let Ok(Some(line)) = lines.next_line().await {
            if line.trim().is_empty() {
                continue;
            }
            let Ok(value) = serde_json::from_str::<Value>(&line) else {
                self.emit(Event::Notice {
                    message: format!("the mozaiks driver wrote an unreadable line: {line}"),
                });
                continue;
            };
            match value["type"].as_str() {
                Some("driver_error") => {
                    let kind = value["kind"].as_str().unwrap_or("internal");
                    let message = value["message"].as_str().unwrap_or("the driver failed");
                    let reason = match kind {
                        "missing_mozaiks" | "wrong_version" | "missing_dependency" => {
                            ENGINE_UNAVAILABLE
                        }
                        _ => "internal_error",
                    };
                    self.finish_failed(reason, message);
                }
                Some("final_context") => {
                    if let Some(context) = value["context"].as_object() {
                        self.state.context = context.clone();
                    }
                }
                _ => match serde_json::from_value::<Event>(value) {
                    Ok(Event::UiTool {
                        tool,
                        payload,
                        awaiting_response: true,
                        response: None,
                        agent,
                        event_id,
                    }) if answered.insert(event_id.clone()) => {
                        // The driver echoes the event with the answer given;
                        // unanswered, this one says so.
                        let answer =
                            ui_answer(&mut self.state.user.tool_responses, &tool, &payload);
                        let line = match &answer {
                            Some(answer) => json!({ "ui_response": answer }),
                            None => json!({ "stop": true }),
                        };
                        if answer.is_none() {
                            self.emit(Event::UiTool {
                                agent,
                                tool,
                                event_id,
                                awaiting_response: true,
                                payload,
                                response: None,
                            });
                        }
                        send(&mut stdin, &line).await;
                    }
                    Ok(event) => {
                        self.state.synthetic_replies = endpoint.synthetic_replies();
                        let paused = matches!(event, Event::Paused { .. });
                        self.observe(event);
                        if paused {
                            self.answer_pause(&mut stdin).await;
                        }
                    }
                    Err(e) => self.emit(Event::Notice {
                        message: format!(
                            "the mozaiks driver sent an event mzk cannot read ({e}): {line}"
                        ),
                    }),
                },
            }
        }
    }

    /// Keeps the run state in step with an event, then passes it on.
    fn observe(&mut self, mut event: Event) {
        match &mut event {
            Event::RunStarted {
                run_id,
                backend,
                max_turns,
                engine,
                ..
            } => {
                *engine = Some("mozaiks".into());
                *run_id = self.state.run_id.clone();
                *backend = self.state.backend.clone();
                self.state.cap = max_turns.saturating_add(1);
            }
            Event::TurnStarted { agent, turn } => {
                // The opening text and one packet per earlier turn, so far.
                self.state.turn_count = self.state.turn_count.max(*turn);
                self.state.agents.push(agent.clone());
            }
            Event::ModelResponse { body, .. } => {
                self.state.last_message = match body {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                }
            }
            Event::ContextSet {
                key,
                value,
                deleted,
                ..
            } => {
                if *deleted {
                    self.state.context.remove(key.as_str());
                } else {
                    self.state.context.insert(key.clone(), value.clone());
                }
            }
            Event::Transition { rule: Some(i), .. } => self.state.rules.push(*i),
            Event::Paused { agent, turn } => {
                self.state.turn_count = *turn;
                self.state.status = RunStatus::Paused;
                self.state.reason = "awaiting_user_input".into();
                self.state.paused_after = Some(agent.clone());
            }
            Event::UserMessage { .. } => {
                self.state.status = RunStatus::Running;
                self.state.paused_after = None;
                self.state.user_replies += 1;
            }
            Event::RunFinished {
                status,
                reason,
                error,
                failure_message,
                turns,
                synthetic_replies,
                ..
            } => {
                self.state.status = *status;
                self.state.reason = reason.clone();
                self.state.error = error.clone();
                self.state.failure_message = failure_message.clone();
                self.state.turn_count = *turns;
                *synthetic_replies = self.state.synthetic_replies;
                self.finished = true;
            }
            _ => {}
        }
        let settles = matches!(
            event,
            Event::RunStarted { .. } | Event::Paused { .. } | Event::RunFinished { .. }
        );
        self.emit(event);
        if settles {
            self.sink.checkpoint(&self.state);
        }
    }

    async fn answer_pause(&mut self, stdin: &mut ChildStdin) {
        let line = match self.state.user.next_reply(&self.state.last_message) {
            Some(reply) => json!({ "reply": reply }),
            None => json!({ "stop": true }),
        };
        send(stdin, &line).await;
    }

    fn emit(&mut self, event: Event) {
        self.sink.emit(&event);
    }

    fn finish_failed(&mut self, reason: &str, error: &str) {
        self.finish(RunStatus::Failed, reason, Some(error.to_string()));
    }

    /// Marks the run interrupted (Ctrl-C); the driver was stopped with it.
    pub fn interrupt(&mut self) {
        if !self.finished {
            self.finish(RunStatus::Interrupted, "interrupted", None);
        }
    }

    /// Ends the run here (the driver said nothing more): its state, the
    /// `run_finished` event and the history.
    fn finish(&mut self, status: RunStatus, reason: &str, error: Option<String>) {
        self.finished = true;
        self.state.status = status;
        self.state.reason = reason.into();
        self.state.error = error.clone();
        self.emit(Event::RunFinished {
            status,
            reason: reason.into(),
            error,
            failure_message: None,
            turns: self.state.turn_count,
            agent_turns: Some(self.state.agents.len() as u32),
            user_replies: Some(self.state.user_replies),
            synthetic_replies: self.state.synthetic_replies,
        });
        self.sink.checkpoint(&self.state);
    }
}

/// One answer line to the driver. A driver that is gone has said why on
/// its way out.
async fn send(stdin: &mut ChildStdin, line: &Value) {
    let _ = stdin.write_all(format!("{line}\n").as_bytes()).await;
    let _ = stdin.flush().await;
}

fn absolute(path: &std::path::Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

/// The driver's process group (it leads it): tools may start processes of
/// their own, and all of them end when this is dropped.
struct ProcessGroup(Option<u32>);

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        #[cfg(unix)]
        if let Some(pid) = self.0 {
            // SAFETY: killpg only sends a signal; the group is the driver's
            // own (process_group(0) made it its leader).
            unsafe {
                libc::killpg(pid as libc::pid_t, libc::SIGKILL);
            }
        }
    }
}

/// A key for this run's endpoint: 128 bits from the standard library's
/// per-instance random hash keys.
fn run_key() -> String {
    use std::hash::{BuildHasher, Hasher};
    let half = || {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u128(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos()),
        );
        h.finish()
    };
    format!("mzk-{:016x}{:016x}", half(), half())
}

/// The driver's last words, for a run that stopped without saying why.
fn stderr_tail(path: &std::path::Path) -> String {
    let bytes = std::fs::read(path).unwrap_or_default();
    let text = String::from_utf8_lossy(&bytes);
    let lines: Vec<&str> = text.lines().rev().take(12).collect();
    if lines.is_empty() {
        return String::new();
    }
    let tail: Vec<&str> = lines.into_iter().rev().collect();
    format!(":\n{}", tail.join("\n"))
}
