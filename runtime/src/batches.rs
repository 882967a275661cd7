//! Task batches (runtime-semantics §6): after a trigger agent's validated
//! output, its batches run their tasks as a dependency graph in waves, each
//! task asking its worker agent through the model backend, with retries,
//! validation feedback, timeouts and the reference's failure policies.
//! Results and status are written as the `task_batch` writer.
//!
//! `graph` reads the task list and checks it before anything runs; `task`
//! runs one task through its attempts; this file schedules the waves and
//! shapes the results as mozaiks' `_execute_one_batch` does.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU32, Ordering};

use futures_util::stream::{self, StreamExt};
use mzk_analyzer::model::{Bundle, TaskBatch};
use serde_json::{json, Map, Value};

use crate::backend::ModelBackend;
use crate::events::Event;
use crate::value::{py_repr, truthy};

mod graph;
mod task;

pub use graph::{tasks_of, validate_graph, Task};

/// A failed task, as mozaiks' `TaskBatchFailure` records it.
#[derive(Debug, Clone)]
struct Failure {
    kind: &'static str,
    error: String,
    worker_agent: String,
    attempts: u32,
    /// Only a recovery batch's first rejection can be corrected later.
    recoverable: bool,
    rejected_output: Option<Value>,
    /// The task's dependencies that failed (dependency_blocked).
    blocked_by: Vec<String>,
}

impl Failure {
    fn new(kind: &'static str, error: String) -> Failure {
        Failure {
            kind,
            error,
            worker_agent: String::new(),
            attempts: 0,
            recoverable: false,
            rejected_output: None,
            blocked_by: Vec::new(),
        }
    }

    fn to_json(&self, task_id: &str) -> Value {
        json!({
            "task_id": task_id,
            "status": "failed",
            "failure_kind": self.kind,
            "error": self.error,
            "worker_agent": self.worker_agent,
            "attempts": self.attempts,
            "recoverable": self.recoverable,
            "rejected_output": self.rejected_output,
            "blocked_by": self.blocked_by,
        })
    }
}

/// Where a batch's events go as they happen (the engine forwards them to
/// its sink while the batch runs).
pub type Events = tokio::sync::mpsc::UnboundedSender<Event>;

/// What a finished batch wrote and whether it failed the turn.
pub struct BatchRun {
    /// Each write: key, value (writer `task_batch`), in order.
    pub writes: Vec<(String, Value)>,
    /// Set when the batch fails its trigger's turn.
    pub error: Option<String>,
    /// Worker replies the synthetic stand-in produced.
    pub synthetic_replies: u32,
}

/// Settled tasks, each map in the order its tasks settled (mozaiks' dicts
/// keep insertion order; `_meta` lists them so).
#[derive(Default)]
struct Settled {
    completed: HashMap<String, Value>,
    completed_order: Vec<String>,
    failed: HashMap<String, Failure>,
    failed_order: Vec<String>,
}

impl Settled {
    fn complete(&mut self, id: &str, output: Value) {
        self.completed_order.push(id.to_string());
        self.completed.insert(id.to_string(), output);
    }

    fn fail(&mut self, id: &str, failure: Failure) {
        self.failed_order.push(id.to_string());
        self.failed.insert(id.to_string(), failure);
    }

    fn settled(&self, id: &str) -> bool {
        self.completed.contains_key(id) || self.failed.contains_key(id)
    }

    /// `_build_batch_outputs`: the outputs by task id, `_failed`, `_meta`.
    fn outputs(&self, batch: &TaskBatch, task_count: usize, status: &str, key: &str) -> Value {
        let mut map = Map::new();
        for id in &self.completed_order {
            map.insert(id.clone(), self.completed[id].clone());
        }
        if !self.failed.is_empty() {
            let failed: Map<String, Value> = self
                .failed_order
                .iter()
                .map(|id| (id.clone(), self.failed[id].to_json(id)))
                .collect();
            map.insert("_failed".into(), Value::Object(failed));
        }
        map.insert(
            "_meta".into(),
            json!({
                "batch_id": batch.id.text,
                "status": status,
                "task_count": task_count,
                "concurrency": batch.execution.concurrency,
                "completed_tasks": self.completed_order,
                "failed_tasks": self.failed_order,
                "result_context_key": key,
            }),
        );
        Value::Object(map)
    }
}

/// A task's end: completed, or failed with its failure.
fn task_finished(events: &Events, batch: &str, task: &str, failure: Option<&Failure>) {
    let _ = events.send(Event::TaskFinished {
        batch: batch.to_string(),
        task: task.to_string(),
        status: if failure.is_some() {
            "failed"
        } else {
            "completed"
        }
        .into(),
        failure_kind: failure.map(|f| f.kind.to_string()),
        error: failure.map(|f| f.error.clone()),
    });
}

/// The batch's writes and events as it goes.
struct Writer<'a> {
    out: BatchRun,
    synthetic: &'a AtomicU32,
    batch: &'a TaskBatch,
    events: &'a Events,
    task_count: usize,
    result_key: Option<String>,
    status_key: Option<String>,
}

impl Writer<'_> {
    fn status(&mut self, status: &str) {
        if let Some(k) = &self.status_key {
            self.out.writes.push((k.clone(), json!(status)));
        }
    }

    fn results(&mut self, settled: &Settled, status: &str) {
        if let Some(k) = &self.result_key {
            let value = settled.outputs(self.batch, self.task_count, status, k);
            self.out.writes.push((k.clone(), value));
        }
    }

    /// `persist(status)`: the outputs so far, then the status.
    fn persist(&mut self, settled: &Settled, status: &str) {
        self.results(settled, status);
        self.status(status);
    }

    fn finished(&self, status: &str, settled: &Settled) {
        let _ = self.events.send(Event::BatchFinished {
            batch: self.batch.id.text.clone(),
            status: status.into(),
            completed: settled.completed.len(),
            failed: settled.failed.len(),
        });
    }

    /// The batch raises: the status key says failed and the turn fails.
    fn raise(mut self, settled: &Settled, error: String) -> BatchRun {
        self.status("failed");
        self.finished("failed", settled);
        self.out.error = Some(error);
        self.out.synthetic_replies = self.synthetic.load(Ordering::Relaxed);
        self.out
    }
}

/// Runs one batch over its tasks.
pub async fn run(
    bundle: &Bundle,
    backend: &dyn ModelBackend,
    batch: &TaskBatch,
    trigger: &str,
    tasks: Vec<Task>,
    base_prompts: &HashMap<String, String>,
    events: &Events,
) -> BatchRun {
    let batch_id = batch.id.text.clone();
    let task_count = tasks.len();
    let synthetic = AtomicU32::new(0);
    let mut w = Writer {
        synthetic: &synthetic,
        out: BatchRun {
            synthetic_replies: 0,
            writes: Vec::new(),
            error: None,
        },
        batch,
        events,
        task_count,
        result_key: batch.result_context_key.as_ref().map(|k| k.text.clone()),
        status_key: batch.result_status_key.as_ref().map(|k| k.text.clone()),
    };
    // Checked before the batch starts: nothing is written.
    if batch.execution.require_owned_paths {
        if let Err(e) = graph::validate_owned_paths(&batch_id, &tasks) {
            w.out.error = Some(e);
            return w.out;
        }
    }
    let tasks = graph::unique_by_id(tasks);
    let _ = events.send(Event::BatchStarted {
        batch: batch_id.clone(),
        trigger: trigger.to_string(),
        tasks: task_count,
    });
    for t in &tasks {
        let _ = events.send(Event::TaskQueued {
            batch: batch_id.clone(),
            task: t.id.clone(),
            agent: t.agent.clone().unwrap_or_default(),
            depends_on: t.depends_on.clone(),
        });
    }
    let mut settled = Settled::default();
    if let Err(e) = validate_graph(&batch_id, &tasks) {
        return w.raise(&settled, e);
    }
    // Only a recovery batch records its (empty) evidence before the first wave.
    if batch.recovery.is_some() {
        w.persist(&settled, "running");
    }
    let cx = task::TaskContext {
        events,
        synthetic: &synthetic,
        bundle,
        backend,
        batch,
        base_prompts,
        timeout_seconds: batch.execution.timeout_seconds.unwrap_or(120),
        attempts: batch.execution.retry_limit + 1,
    };
    let fail_batch = batch.execution.failure_policy == "fail_batch";
    let mut pending: HashSet<&str> = tasks.iter().map(|t| t.id.as_str()).collect();
    while !pending.is_empty() {
        // A task whose dependencies have all settled runs when they all
        // completed, and is drained as blocked when one of them failed.
        let (blocked, ready): (Vec<&Task>, Vec<&Task>) = tasks
            .iter()
            .filter(|t| pending.contains(t.id.as_str()))
            .filter(|t| t.depends_on.iter().all(|d| settled.settled(d)))
            .partition(|t| t.depends_on.iter().any(|d| settled.failed.contains_key(d)));
        for t in &blocked {
            pending.remove(t.id.as_str());
            let blocked_by: Vec<String> = t
                .depends_on
                .iter()
                .filter(|d| settled.failed.contains_key(*d))
                .cloned()
                .collect();
            let f = Failure {
                worker_agent: t
                    .item
                    .get(batch.agent_field.as_str())
                    .filter(|v| truthy(v))
                    .map(graph::py_str)
                    .unwrap_or_default(),
                blocked_by: blocked_by.clone(),
                ..Failure::new(
                    "dependency_blocked",
                    format!("dependency '{}' failed", blocked_by[0]),
                )
            };
            task_finished(events, &batch_id, &t.id, Some(&f));
            settled.fail(&t.id, f);
        }
        if ready.is_empty() {
            if !blocked.is_empty() {
                continue;
            }
            // Dependencies that can never settle (a lone string with spaces
            // around it names no task once scheduling compares it as written).
            let unresolved: Map<String, Value> = tasks
                .iter()
                .filter(|t| pending.contains(t.id.as_str()))
                .map(|t| (t.id.clone(), json!(t.depends_on)))
                .collect();
            let error = format!(
                "task batch {} has unresolved or cyclic dependencies: {}",
                py_repr(&json!(batch_id)),
                py_repr(&Value::Object(unresolved))
            );
            return w.raise(&settled, error);
        }
        // The futures are built first: a lazy `map` closure held across the
        // await would make the future not Send.
        let mut attempts = Vec::with_capacity(ready.len());
        for (i, t) in ready.iter().enumerate() {
            let deps: Map<String, Value> = t
                .depends_on
                .iter()
                .filter_map(|d| settled.completed.get(d).map(|o| (d.clone(), o.clone())))
                .collect();
            let cx = &cx;
            attempts.push(async move { (i, task::run_task(cx, t, deps).await) });
        }
        // Settled in the order they finish, as mozaiks records them.
        let mut running =
            stream::iter(attempts).buffer_unordered(batch.execution.concurrency.max(1));
        let mut wave_failures: Vec<(usize, String)> = Vec::new();
        while let Some((i, result)) = running.next().await {
            let t = ready[i];
            pending.remove(t.id.as_str());
            match result {
                Ok(output) => {
                    task_finished(events, &batch_id, &t.id, None);
                    settled.complete(&t.id, output);
                }
                Err(f) => {
                    task_finished(events, &batch_id, &t.id, Some(&f));
                    wave_failures.push((i, f.error.clone()));
                    settled.fail(&t.id, f);
                }
            }
        }
        drop(running);
        // fail_batch raises after the wave, at its first failed task in
        // declaration order.
        if let Some((i, error)) = wave_failures.into_iter().min_by_key(|(i, _)| *i) {
            if fail_batch {
                // mozaiks' persist("failed") writes the outputs and the
                // status, which its raise writes again: once here.
                w.results(&settled, "failed");
                let error = format!(
                    "task batch {} failed at task {}: {error}",
                    py_repr(&json!(batch_id)),
                    py_repr(&json!(ready[i].id))
                );
                return w.raise(&settled, error);
            }
        }
        // Between waves the partial outputs are visible (§6.3).
        if !pending.is_empty() {
            w.persist(&settled, "running");
        }
    }
    let status = match (
        settled.failed.is_empty(),
        batch.execution.failure_policy.as_str(),
    ) {
        (true, _) => "completed",
        (false, "continue_with_available") => "partial",
        (false, _) => "completed_with_errors",
    };
    w.persist(&settled, status);
    w.finished(status, &settled);
    w.out.synthetic_replies = synthetic.load(Ordering::Relaxed);
    w.out
}
