//! Runtime benchmarks (issues 6 and 7), medians over repeated runs:
//! - the per-turn overhead of the run loop: a one-agent self-loop bundle
//!   driven for 10,000 turns by the scenario model, no tools;
//! - the round trip of a trivial Python tool call through the persistent
//!   worker, against spawning a Python process per call (the same function);
//! - the cost of committing one event to the SQLite history;
//! - task-batch scheduling: 1,000 tasks with random dependencies and an
//!   instant scripted worker, overhead per task.
//!
//! Run: `cargo run --release -p mzk-bench --bin mzk-runtime-bench [-- --runs N]`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use mzk_analyzer::{analyze_bundle, RealFs};
use mzk_runtime::backend::{BackendFuture, ModelBackend, ModelReply, TurnRequest};
use mzk_runtime::history::History;
use mzk_runtime::python::{CallKind, CallRequest, ContextAccess, Worker};
use mzk_runtime::scenario::ScriptedResponse;
use mzk_runtime::scripted::ScenarioBackend;
use mzk_runtime::{Engine, Event, EventSink, RunOptions, RunState};
use serde_json::{json, Map, Value};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn write(dir: &Path, files: &[(&str, &str)]) {
    for (name, text) in files {
        let path = dir.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
}

/// Counts events without keeping them (the loop's own cost).
#[derive(Default)]
struct Counter(usize);

impl EventSink for Counter {
    fn emit(&mut self, _: &Event) {
        self.0 += 1;
    }
}

fn turn_loop(root: &Path, runs: usize) {
    let dir = root.join("Loop");
    write(
        &dir,
        &[
            ("orchestrator.yaml", "schema_version: mozaiks.orchestrator.v1\nworkflow_name: Loop\nworkflow_startup_mode: AgentDriven\nmax_turns: 500\ninitial_agent: A\n"),
            ("agents.yaml", "agents:\n  - name: A\n    system_message: You loop.\n    structured_outputs_required: false\n"),
            ("transition_graph.yaml", "transition_rules:\n  - source_agent: A\n    target_agent: A\n    transition_type: after_turn\n"),
        ],
    );
    let analysis = analyze_bundle(&RealFs, &dir);
    const TURNS: usize = 10_000;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut per_second = Vec::new();
    for _ in 0..runs {
        let responses: BTreeMap<String, Vec<ScriptedResponse>> = [(
            "A".to_string(),
            vec![ScriptedResponse::Text("ok".into()); TURNS],
        )]
        .into();
        let backend = ScenarioBackend::new(responses, BTreeMap::new(), None);
        let mut sink = Counter::default();
        let mut options = RunOptions::new("bench", PathBuf::from("python3"));
        options.max_turns = Some(TURNS as u32);
        let started = Instant::now();
        let state = rt.block_on(async {
            let mut engine = Engine::new(&analysis.bundle, Box::new(backend), &mut sink, options);
            engine.start().await;
            engine.state.clone()
        });
        let elapsed = started.elapsed().as_secs_f64();
        assert_eq!(state.reason, "max_turns");
        assert_eq!(state.agents.len(), TURNS);
        per_second.push(TURNS as f64 / elapsed);
    }
    let median_rate = median(per_second);
    println!(
        "turn loop (scenario model, no tools, {TURNS} turns): median {median_rate:.0} turns/s = {:.1} us/turn",
        1e6 / median_rate
    );
}

struct NoContext(Map<String, Value>);

impl ContextAccess for NoContext {
    fn get(&mut self, key: &str) -> Option<Value> {
        self.0.get(key).cloned()
    }
    fn set(&mut self, key: &str, value: Value) -> Result<(), mzk_runtime::Error> {
        self.0.insert(key.into(), value);
        Ok(())
    }
    fn delete(&mut self, key: &str) -> Result<(), mzk_runtime::Error> {
        self.0.remove(key);
        Ok(())
    }
    fn snapshot(&mut self) -> Map<String, Value> {
        self.0.clone()
    }
}

fn tool_round_trip(root: &Path) {
    let file = root.join("tools.py");
    std::fs::write(&file, "def echo(x):\n    return x\n").unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let request = CallRequest {
        file: file.clone(),
        function: "echo".into(),
        agent: "A".into(),
        kind: CallKind::Llm,
        args: json!({"x": 1}),
    };
    let latencies = rt.block_on(async {
        let mut worker = Worker::new("python3");
        let mut ctx = NoContext(Map::new());
        for _ in 0..50 {
            worker
                .call(&request, &mut ctx, Duration::from_secs(10))
                .await
                .unwrap();
        }
        let mut out = Vec::new();
        for _ in 0..2_000 {
            let t = Instant::now();
            worker
                .call(&request, &mut ctx, Duration::from_secs(10))
                .await
                .unwrap();
            out.push(t.elapsed().as_secs_f64() * 1e3);
        }
        worker.stop().await;
        out
    });
    let worker_ms = median(latencies);
    let dir = root.display().to_string();
    let mut spawned = Vec::new();
    for _ in 0..30 {
        let t = Instant::now();
        let status = std::process::Command::new("python3")
            .args(["-c", &format!("import sys; sys.path.insert(0, {dir:?}); import tools, json; print(json.dumps(tools.echo(1)))")])
            .output()
            .unwrap();
        assert!(status.status.success());
        spawned.push(t.elapsed().as_secs_f64() * 1e3);
    }
    let spawn_ms = median(spawned);
    println!("tool round trip through the worker (after warm-up, 2,000 calls): median {worker_ms:.3} ms (goal <= 1 ms)");
    println!("python process spawned per call (30 calls): median {spawn_ms:.1} ms");
    println!(
        "ratio (spawn per call / worker): {:.0}x",
        spawn_ms / worker_ms
    );
}

fn sqlite_events(root: &Path, runs: usize) {
    let mut per_event = Vec::new();
    for run in 0..runs {
        let path = root.join(format!("runs-{run}.db"));
        let history = History::open(&path).unwrap();
        history.create_run("r", "W", "b", "scenario").unwrap();
        let event = Event::ModelResponse {
            agent: "A".into(),
            body: json!("a typical short reply from an agent"),
            tool_calls: vec![],
            synthetic: false,
        };
        const N: usize = 5_000;
        let t = Instant::now();
        for _ in 0..N {
            history.append("r", &event).unwrap();
        }
        per_event.push(t.elapsed().as_secs_f64() * 1e6 / N as f64);
        let state = RunState::default();
        let _ = state;
    }
    println!(
        "SQLite history: median {:.1} us per event (5,000 events, each committed, WAL)",
        median(per_event)
    );
}

/// An instant worker: each task's reply is its own id.
struct Instant0;

impl ModelBackend for Instant0 {
    fn name(&self) -> &'static str {
        "bench"
    }
    fn respond<'a>(&'a self, request: &'a TurnRequest) -> BackendFuture<'a> {
        let body = match &request.task_id {
            Some(id) => json!({"task_id": id, "note": "done"}).to_string(),
            None => String::new(),
        };
        Box::pin(async move {
            Ok(ModelReply {
                body: Value::String(body),
                tool_calls: Vec::new(),
                synthetic: false,
                needs_tool_results: false,
            })
        })
    }
}

fn batch_scheduling(root: &Path, runs: usize) {
    let dir = root.join("Batch");
    write(
        &dir,
        &[
            ("orchestrator.yaml", "schema_version: mozaiks.orchestrator.v1\nworkflow_name: Batch\nworkflow_startup_mode: AgentDriven\ninitial_agent: P\n"),
            ("agents.yaml", "agents:\n  - name: P\n    system_message: Plans.\n    structured_outputs_required: false\n  - name: W\n    system_message: Works.\n    structured_outputs_required: true\n"),
            ("transition_graph.yaml", "transition_rules: []\n"),
            ("structured_outputs.yaml", "schema_version: mozaiks.structured_outputs.v1\nregistry:\n  W: Out\nmodels:\n  Out:\n    type: model\n    fields:\n      task_id: {type: str}\n      note: {type: str}\n"),
            ("context_variables.yaml", "definitions:\n  b_results: {type: object, description: r, authority_class: closed_writer_routing_state, writer_ids: [task_batch], source: {type: state, default: {}}}\n  b_status: {type: string, description: s, authority_class: closed_writer_routing_state, writer_ids: [task_batch], source: {type: state, default: pending}}\n"),
            ("extended_orchestration/task_batches.yaml", "version: 1\nconveyors:\n  - id: b\n    decomposition_agent: P\n    execution_agents: [W]\n    concurrency: 4\n    failure_policy: continue_with_available\n"),
        ],
    );
    let analysis = analyze_bundle(&RealFs, &dir);
    let batch = &analysis.bundle.task_batches[0];
    // 1,000 tasks; each depends on up to three earlier ones (a fixed LCG).
    let mut seed: u64 = 42;
    let mut next = || {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 33) as usize
    };
    const TASKS: usize = 1_000;
    let tasks: Vec<Value> = (0..TASKS)
        .map(|i| {
            let deps: Vec<String> = if i == 0 {
                Vec::new()
            } else {
                (0..next() % 4).map(|_| format!("t{}", next() % i)).collect()
            };
            json!({"task_id": format!("t{i}"), "execution_agent": "W", "task_prompt": "work", "depends_on": deps})
        })
        .collect();
    let payload = json!({"DecompositionPlan": {"tasks": tasks}});
    let prompts = std::collections::HashMap::new();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut per_task = Vec::new();
    let mut waves = 0;
    for _ in 0..runs {
        let list = mzk_runtime::batches::tasks_of(batch, &payload);
        // Events are counted as they arrive, as the engine forwards them.
        let (events, mut incoming) = tokio::sync::mpsc::unbounded_channel();
        let t = Instant::now();
        let run = rt.block_on(mzk_runtime::batches::run(
            &analysis.bundle,
            &Instant0,
            batch,
            "P",
            list,
            &prompts,
            &events,
        ));
        per_task.push(t.elapsed().as_secs_f64() * 1e6 / TASKS as f64);
        assert!(run.error.is_none());
        let mut finished = 0;
        while let Ok(e) = incoming.try_recv() {
            if matches!(&e, Event::TaskFinished { status, .. } if status == "completed") {
                finished += 1;
            }
        }
        assert_eq!(finished, TASKS);
        waves = run.writes.len();
    }
    println!(
        "task batch, {TASKS} tasks with random dependencies, instant scripted worker: median {:.1} us scheduling overhead per task ({} result/status writes)",
        median(per_task),
        waves
    );
}

fn main() {
    // SAFETY: the first statement of main; no other thread exists yet.
    unsafe { mzk_allocator::configure() };
    let runs = std::env::args()
        .skip_while(|a| a != "--runs")
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(5usize)
        .max(1);
    let root = std::env::temp_dir().join(format!("mzk-runtime-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).unwrap();
    turn_loop(&root, runs);
    tool_round_trip(&root);
    sqlite_events(&root, runs);
    batch_scheduling(&root, runs);
    let _ = std::fs::remove_dir_all(&root);
}
