//! The persistent Python worker (one per run) that runs tool, lifecycle and
//! middleware functions. Requests and context round trips are JSON lines;
//! a call that outlives its timeout kills the worker (the next call starts a
//! fresh one), and a worker that dies mid-call fails that call with a clear
//! message instead of taking the runner down.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use crate::error::Error;

const WORKER_SOURCE: &str = include_str!("worker.py");
/// Lines of the worker's stderr kept for error messages.
const STDERR_TAIL: usize = 40;

/// How a function is called (runtime-semantics §4.3, §4.5, §4.7, §5.4).
#[derive(Debug, Clone)]
pub enum CallKind {
    /// Called by the model: its JSON arguments by name, `context_variables` injected.
    Llm,
    /// An auto tool: structured-output fields by normalised name, the
    /// read-only `structured_output` overlay, and the run identity extras.
    Auto { overlay: Value, extras: Value },
    /// A lifecycle tool; `filter` keeps only the declared parameters.
    Lifecycle { filter: bool },
    /// Prompt middleware: `fn(capture, history)`.
    Middleware { system_message: String },
}

#[derive(Debug, Clone)]
pub struct CallRequest {
    pub file: PathBuf,
    pub function: String,
    pub agent: String,
    pub kind: CallKind,
    pub args: Value,
}

#[derive(Debug, Clone, PartialEq)]
pub enum CallOutcome {
    Returned {
        value: Value,
        /// Middleware only: the prompt after the function ran.
        system_message: Option<String>,
    },
    /// The function raised; the model sees the error, the turn continues.
    Raised { error: String, traceback: String },
}

#[derive(Debug, Clone, PartialEq)]
pub enum WorkerError {
    /// The interpreter could not be started.
    Spawn(String),
    Timeout(f64),
    /// The process died or broke the protocol mid-call.
    Died(String),
}

impl std::fmt::Display for WorkerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WorkerError::Spawn(e) => write!(f, "could not start the Python worker: {e}"),
            WorkerError::Timeout(s) => write!(f, "the call did not finish within {s} s (the Python worker was stopped; raise --tool-timeout if it needs longer)"),
            WorkerError::Died(e) => write!(f, "the Python worker died: {e}"),
        }
    }
}

/// The runner's side of `context_variables` inside a call.
pub trait ContextAccess: Send {
    fn get(&mut self, key: &str) -> Option<Value>;
    fn set(&mut self, key: &str, value: Value) -> Result<(), Error>;
    fn delete(&mut self, key: &str) -> Result<(), Error>;
    fn snapshot(&mut self) -> serde_json::Map<String, Value>;
    /// A UI tool (`awaiting`) or surface the function shows; the answer is
    /// what the user gave (§4.4).
    fn ui(&mut self, _tool_id: &str, _payload: Value, _awaiting: bool) -> Result<Value, Error> {
        Err(Error::Unavailable("UI tools are not available here".into()))
    }
}

struct Process {
    child: Child,
    stdin: ChildStdin,
    stdout: Lines<BufReader<ChildStdout>>,
}

pub struct Worker {
    python: PathBuf,
    /// The bundle folder and workflow name: tools import as mozaiks imports
    /// them (`workflows.<name>.tools.<stem>`, its sys.path order).
    bundle: Option<(PathBuf, String)>,
    process: Option<Process>,
    stderr_tail: Arc<Mutex<VecDeque<String>>>,
    /// Python's version, once a worker has started.
    pub version: Option<String>,
}

impl Worker {
    pub fn new(python: impl Into<PathBuf>) -> Worker {
        Worker {
            python: python.into(),
            bundle: None,
            process: None,
            stderr_tail: Arc::new(Mutex::new(VecDeque::new())),
            version: None,
        }
    }

    /// A worker for one bundle's tools, imported as mozaiks imports them.
    pub fn for_bundle(python: impl Into<PathBuf>, dir: &Path, workflow: &str) -> Worker {
        let mut worker = Worker::new(python);
        let dir = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
        worker.bundle = Some((dir, workflow.to_string()));
        worker
    }

    /// The interpreter to use for a bundle: `MZK_PYTHON`, else the bundle's
    /// (or its parents') `.venv`/`venv`, else `python3` on PATH.
    pub fn default_python(bundle_dir: &Path) -> PathBuf {
        if let Some(p) = std::env::var_os("MZK_PYTHON") {
            return PathBuf::from(p);
        }
        for dir in bundle_dir.ancestors() {
            for venv in [".venv", "venv"] {
                let candidate = dir.join(venv).join("bin").join("python");
                if candidate.is_file() {
                    return candidate;
                }
            }
        }
        PathBuf::from("python3")
    }

    fn tail(&self) -> String {
        let tail = self
            .stderr_tail
            .lock()
            .map(|t| t.iter().cloned().collect::<Vec<_>>());
        match tail {
            Ok(lines) if !lines.is_empty() => format!("; its last output:\n{}", lines.join("\n")),
            _ => String::new(),
        }
    }

    async fn start(&mut self) -> Result<(), WorkerError> {
        let mut command = Command::new(&self.python);
        if let Some((dir, workflow)) = &self.bundle {
            command
                .env("MZK_BUNDLE_DIR", dir)
                .env("MZK_WORKFLOW", workflow);
        }
        let mut child = command
            .arg("-u")
            .arg("-c")
            .arg(WORKER_SOURCE)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| WorkerError::Spawn(format!("{}: {e}", self.python.display())))?;
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err(WorkerError::Spawn("no pipes to the worker".into()));
        };
        let tail = self.stderr_tail.clone();
        tokio::spawn(async move {
            let mut lines = BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                if let Ok(mut t) = tail.lock() {
                    if t.len() == STDERR_TAIL {
                        t.pop_front();
                    }
                    t.push_back(line);
                }
            }
        });
        let mut process = Process {
            child,
            stdin,
            stdout: BufReader::new(stdout).lines(),
        };
        let ready = tokio::time::timeout(Duration::from_secs(30), process.stdout.next_line()).await;
        match ready {
            Ok(Ok(Some(line))) => {
                let hello: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
                self.version = hello["python"].as_str().map(str::to_string);
            }
            _ => {
                let _ = process.child.kill().await;
                return Err(WorkerError::Spawn(format!(
                    "{} did not start the worker{}",
                    self.python.display(),
                    self.tail()
                )));
            }
        }
        self.process = Some(process);
        Ok(())
    }

    /// Stops the worker (a later call starts a new one).
    pub async fn stop(&mut self) {
        if let Some(mut p) = self.process.take() {
            let _ = p.child.kill().await;
        }
    }

    /// The process id of the running worker (tests kill it to check recovery).
    pub fn pid(&self) -> Option<u32> {
        self.process.as_ref().and_then(|p| p.child.id())
    }

    pub async fn call(
        &mut self,
        request: &CallRequest,
        context: &mut dyn ContextAccess,
        timeout: Duration,
    ) -> Result<CallOutcome, WorkerError> {
        if self.process.is_none() {
            self.start().await?;
        }
        let mut message = json!({
            "op": "call",
            "file": request.file.to_string_lossy(),
            "function": request.function,
            "agent": request.agent,
            "args": request.args,
        });
        match &request.kind {
            CallKind::Llm => message["kind"] = json!("llm"),
            CallKind::Auto { overlay, extras } => {
                message["kind"] = json!("auto");
                message["overlay"] = overlay.clone();
                message["extras"] = extras.clone();
            }
            CallKind::Lifecycle { filter } => {
                message["kind"] = json!("lifecycle");
                message["filter"] = json!(filter);
            }
            CallKind::Middleware { system_message } => {
                message["kind"] = json!("middleware");
                message["system_message"] = json!(system_message);
            }
        }
        let deadline = tokio::time::Instant::now() + timeout;
        let result = tokio::time::timeout_at(deadline, self.exchange(message, context)).await;
        match result {
            Ok(Ok(outcome)) => Ok(outcome),
            Ok(Err(error)) => {
                self.stop().await;
                Err(error)
            }
            Err(_) => {
                self.stop().await;
                Err(WorkerError::Timeout(timeout.as_secs_f64()))
            }
        }
    }

    async fn exchange(
        &mut self,
        message: Value,
        context: &mut dyn ContextAccess,
    ) -> Result<CallOutcome, WorkerError> {
        self.send(&message).await?;
        loop {
            let line = {
                let Some(p) = self.process.as_mut() else {
                    return Err(WorkerError::Died("not running".into()));
                };
                p.stdout.next_line().await
            };
            let line = match line {
                Ok(Some(line)) => line,
                Ok(None) | Err(_) => {
                    let status = match self.process.as_mut() {
                        Some(p) => p
                            .child
                            .wait()
                            .await
                            .map(|s| s.to_string())
                            .unwrap_or_default(),
                        None => String::new(),
                    };
                    // Give the stderr reader a moment to collect the last words.
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    return Err(WorkerError::Died(format!(
                        "it exited ({status}){}",
                        self.tail()
                    )));
                }
            };
            let msg: Value = serde_json::from_str(&line)
                .map_err(|e| WorkerError::Died(format!("unreadable message {line:?}: {e}")))?;
            let key = msg["key"].as_str().unwrap_or("").trim().to_string();
            let reply = match msg["op"].as_str() {
                Some("result") => {
                    return Ok(if msg["ok"].as_bool() == Some(true) {
                        CallOutcome::Returned {
                            value: msg["value"].clone(),
                            system_message: msg["system_message"].as_str().map(str::to_string),
                        }
                    } else {
                        CallOutcome::Raised {
                            error: msg["error"].as_str().unwrap_or("error").to_string(),
                            traceback: msg["traceback"].as_str().unwrap_or("").to_string(),
                        }
                    })
                }
                Some("get") => match context.get(&key) {
                    Some(value) => json!({"ok": true, "found": true, "value": value}),
                    None => json!({"ok": true, "found": false}),
                },
                Some("set") => match context.set(&key, msg["value"].clone()) {
                    Ok(()) => json!({"ok": true}),
                    Err(e) => json!({"ok": false, "error": e.to_string()}),
                },
                Some("delete") => match context.delete(&key) {
                    Ok(()) => json!({"ok": true}),
                    Err(e) => json!({"ok": false, "error": e.to_string()}),
                },
                Some("keys") => {
                    let keys: Vec<String> = context.snapshot().keys().cloned().collect();
                    json!({"ok": true, "value": keys})
                }
                Some("snapshot") => json!({"ok": true, "value": context.snapshot()}),
                Some("ui") => match context.ui(
                    msg["tool_id"].as_str().unwrap_or(""),
                    msg["payload"].clone(),
                    msg["awaiting"].as_bool().unwrap_or(true),
                ) {
                    Ok(value) => json!({"ok": true, "value": value}),
                    Err(e) => json!({"ok": false, "error": e.to_string()}),
                },
                _ => json!({"ok": false, "error": "unknown request"}),
            };
            self.send(&reply).await?;
        }
    }

    async fn send(&mut self, message: &Value) -> Result<(), WorkerError> {
        let Some(p) = self.process.as_mut() else {
            return Err(WorkerError::Died("not running".into()));
        };
        let mut line = message.to_string();
        line.push('\n');
        p.stdin
            .write_all(line.as_bytes())
            .await
            .map_err(|e| WorkerError::Died(format!("cannot write to it: {e}")))?;
        p.stdin
            .flush()
            .await
            .map_err(|e| WorkerError::Died(format!("cannot write to it: {e}")))
    }
}
