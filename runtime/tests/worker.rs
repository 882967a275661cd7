//! The Python worker: binding, sync and async functions, exceptions,
//! timeouts, a worker killed mid-call, and refused context writes.

use std::path::PathBuf;
use std::time::Duration;

use mzk_runtime::python::{CallKind, CallOutcome, CallRequest, ContextAccess, Worker, WorkerError};
use mzk_runtime::Error;
use serde_json::{json, Map, Value};

const TOOLS: &str = r#"
import asyncio, time

def add(a, b):
    return a + b

async def slow_echo(text, delay=0.01):
    await asyncio.sleep(delay)
    return {"echo": text}

def fails():
    raise ValueError("bad input")

def sleeps(seconds):
    time.sleep(seconds)
    return "woke"

def writes(context_variables=None):
    context_variables.set("allowed", 1)
    try:
        context_variables.set("forbidden", 2)
    except Exception as e:
        return {"refused": type(e).__name__ + ": " + str(e), "seen": context_variables.get("allowed")}
    return {"refused": None}

def prints():
    print("this goes to stderr, not into the protocol")
    return "ok"

def auto(phase_agents, agent_name=None, context_variables=None):
    return {"phase_agents": phase_agents, "agent_name": agent_name,
            "overlay": context_variables.get("structured_output")}

def hook(app_id, error):
    return [app_id, error]

def middleware(capture, history):
    capture.update_system_message(capture.system_message + " (rewritten for " + capture.name + ")")
"#;

struct Ctx {
    values: Map<String, Value>,
}

impl ContextAccess for Ctx {
    fn get(&mut self, key: &str) -> Option<Value> {
        self.values.get(key).cloned()
    }
    fn set(&mut self, key: &str, value: Value) -> Result<(), Error> {
        if key == "forbidden" {
            return Err(Error::Denied(format!(
                "context_authority.rejected workflow=W key={key} writer=context_bridge op=set"
            )));
        }
        self.values.insert(key.into(), value);
        Ok(())
    }
    fn delete(&mut self, key: &str) -> Result<(), Error> {
        self.values.remove(key);
        Ok(())
    }
    fn snapshot(&mut self) -> Map<String, Value> {
        self.values.clone()
    }
}

/// Written once per process, under cargo's scratch folder for tests (so
/// nothing is left in the system's temporary folder), by a rename: tests run
/// in parallel, in this process and others, and must never import a
/// half-written file.
fn tools_file() -> PathBuf {
    static FILE: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    FILE.get_or_init(|| {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("worker");
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("tools.py");
        let partial = dir.join(format!("tools.py.{}", std::process::id()));
        std::fs::write(&partial, TOOLS).unwrap();
        std::fs::rename(&partial, &file).unwrap();
        file
    })
    .clone()
}

fn request(function: &str, kind: CallKind, args: Value) -> CallRequest {
    CallRequest {
        file: tools_file(),
        function: function.into(),
        agent: "A".into(),
        kind,
        args,
    }
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn ctx() -> Ctx {
    Ctx { values: Map::new() }
}

const SECOND: Duration = Duration::from_secs(10);

#[test]
fn sync_and_async_functions_with_arguments_by_name() {
    rt().block_on(async {
        let mut w = Worker::new("python3");
        let r = w
            .call(
                &request("add", CallKind::Llm, json!({"a": 2, "b": 3})),
                &mut ctx(),
                SECOND,
            )
            .await;
        assert_eq!(
            r,
            Ok(CallOutcome::Returned {
                value: json!(5),
                system_message: None
            })
        );
        let r = w
            .call(
                &request("slow_echo", CallKind::Llm, json!({"text": "hi"})),
                &mut ctx(),
                SECOND,
            )
            .await;
        assert_eq!(
            r,
            Ok(CallOutcome::Returned {
                value: json!({"echo": "hi"}),
                system_message: None
            })
        );
        // Prints do not corrupt the protocol.
        let r = w
            .call(
                &request("prints", CallKind::Llm, json!({})),
                &mut ctx(),
                SECOND,
            )
            .await;
        assert_eq!(
            r,
            Ok(CallOutcome::Returned {
                value: json!("ok"),
                system_message: None
            })
        );
        let pid = w.pid();
        let _ = w
            .call(
                &request("add", CallKind::Llm, json!({"a": 1, "b": 1})),
                &mut ctx(),
                SECOND,
            )
            .await;
        assert_eq!(w.pid(), pid, "one worker serves every call");
        w.stop().await;
    });
}

#[test]
fn an_exception_is_a_tool_error_with_its_traceback() {
    rt().block_on(async {
        let mut w = Worker::new("python3");
        let r = w.call(&request("fails", CallKind::Llm, json!({})), &mut ctx(), SECOND).await;
        let Ok(CallOutcome::Raised { error, traceback }) = r else { panic!("{r:?}") };
        assert_eq!(error, "ValueError: bad input");
        assert!(traceback.contains("tools.py") && traceback.contains("raise ValueError"), "{traceback}");
        // A wrong argument is Python's own TypeError, and the worker lives on.
        let r = w.call(&request("add", CallKind::Llm, json!({"a": 1})), &mut ctx(), SECOND).await;
        assert!(matches!(r, Ok(CallOutcome::Raised { ref error, .. }) if error.starts_with("TypeError")), "{r:?}");
        let r = w.call(&request("add", CallKind::Llm, json!({"a": 1, "b": 1})), &mut ctx(), SECOND).await;
        assert!(matches!(r, Ok(CallOutcome::Returned { .. })));
        // A model may not pass context_variables itself.
        let r = w.call(&request("writes", CallKind::Llm, json!({"context_variables": {}})), &mut ctx(), SECOND).await;
        assert!(matches!(r, Ok(CallOutcome::Raised { ref error, .. }) if error.contains("tool_context_override")), "{r:?}");
        w.stop().await;
    });
}

#[test]
fn a_call_past_its_timeout_stops_the_worker_and_the_next_call_gets_a_new_one() {
    rt().block_on(async {
        let mut w = Worker::new("python3");
        let r = w
            .call(
                &request("sleeps", CallKind::Llm, json!({"seconds": 30})),
                &mut ctx(),
                Duration::from_millis(500),
            )
            .await;
        assert_eq!(r, Err(WorkerError::Timeout(0.5)));
        assert_eq!(w.pid(), None);
        let r = w
            .call(
                &request("add", CallKind::Llm, json!({"a": 1, "b": 2})),
                &mut ctx(),
                SECOND,
            )
            .await;
        assert_eq!(
            r,
            Ok(CallOutcome::Returned {
                value: json!(3),
                system_message: None
            })
        );
        w.stop().await;
    });
}

#[test]
fn a_worker_killed_mid_call_fails_that_call_clearly() {
    rt().block_on(async {
        let mut w = Worker::new("python3");
        let _ = w
            .call(
                &request("add", CallKind::Llm, json!({"a": 1, "b": 2})),
                &mut ctx(),
                SECOND,
            )
            .await;
        let pid = w.pid().expect("running");
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            let _ = std::process::Command::new("kill")
                .arg("-9")
                .arg(pid.to_string())
                .status();
        });
        let r = w
            .call(
                &request("sleeps", CallKind::Llm, json!({"seconds": 30})),
                &mut ctx(),
                SECOND,
            )
            .await;
        let Err(WorkerError::Died(message)) = r else {
            panic!("{r:?}")
        };
        assert!(message.contains("exited"), "{message}");
        let r = w
            .call(
                &request("add", CallKind::Llm, json!({"a": 2, "b": 2})),
                &mut ctx(),
                SECOND,
            )
            .await;
        assert_eq!(
            r,
            Ok(CallOutcome::Returned {
                value: json!(4),
                system_message: None
            })
        );
        w.stop().await;
    });
}

#[test]
fn context_writes_go_through_the_runner_which_may_refuse_them() {
    rt().block_on(async {
        let mut w = Worker::new("python3");
        let mut c = ctx();
        let r = w.call(&request("writes", CallKind::Llm, json!({})), &mut c, SECOND).await;
        assert_eq!(
            r,
            Ok(CallOutcome::Returned {
                value: json!({"refused": "ContextAuthorityError: context_authority.rejected workflow=W key=forbidden writer=context_bridge op=set", "seen": 1}),
                system_message: None
            })
        );
        assert_eq!(c.values.get("allowed"), Some(&json!(1)));
        assert_eq!(c.values.get("forbidden"), None);
        w.stop().await;
    });
}

#[test]
fn auto_lifecycle_and_middleware_binding() {
    rt().block_on(async {
        let mut w = Worker::new("python3");
        let data = json!({"PhaseAgents": ["X"], "extra_field": 1});
        let auto = CallKind::Auto {
            overlay: data.clone(),
            extras: json!({"agent_name": "A", "chat_id": "c"}),
        };
        let r = w
            .call(&request("auto", auto, data.clone()), &mut ctx(), SECOND)
            .await;
        assert_eq!(
            r,
            Ok(CallOutcome::Returned {
                value: json!({"phase_agents": ["X"], "agent_name": "A", "overlay": data}),
                system_message: None
            })
        );
        // Lifecycle keywords are filtered to the declared parameters.
        let args = json!({"app_id": "app", "error": "boom", "chat_id": "c"});
        let r = w
            .call(
                &request("hook", CallKind::Lifecycle { filter: true }, args),
                &mut ctx(),
                SECOND,
            )
            .await;
        assert_eq!(
            r,
            Ok(CallOutcome::Returned {
                value: json!(["app", "boom"]),
                system_message: None
            })
        );
        let mw = CallKind::Middleware {
            system_message: "base".into(),
        };
        let r = w
            .call(&request("middleware", mw, json!({})), &mut ctx(), SECOND)
            .await;
        assert_eq!(
            r,
            Ok(CallOutcome::Returned {
                value: Value::Null,
                system_message: Some("base (rewritten for A)".into())
            })
        );
        w.stop().await;
    });
}

#[test]
fn a_missing_interpreter_is_a_clear_error() {
    rt().block_on(async {
        let mut w = Worker::new("/nonexistent/python3");
        let r = w
            .call(
                &request("add", CallKind::Llm, json!({})),
                &mut ctx(),
                SECOND,
            )
            .await;
        assert!(
            matches!(r, Err(WorkerError::Spawn(ref m)) if m.contains("/nonexistent/python3")),
            "{r:?}"
        );
    });
}
