//! Where two runs of one scenario part ways: mzk's engine against the real
//! mozaiks runtime (`mzk test --engine both`, the runtime conformance stage).
//! A run is reduced to what a bundle author reasons about — who spoke, which
//! rule fired, which tools were called with what, what reached the context,
//! how it ended — and each aspect is compared on its own, so one early
//! difference does not hide the others.

use serde::Serialize;
use serde_json::{Map, Value};

use crate::engine::RunState;
use crate::events::Event;

/// The comparable outline of one run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Trace {
    /// The agents that took turns, in order.
    pub speakers: Vec<String>,
    /// transition_graph.yaml indexes of the rules that fired, in order.
    pub rules: Vec<usize>,
    /// `agent: tool(arguments)` for each tool the model called (the calls
    /// of one reply sorted) and `agent: tool (auto)` for each auto tool, in
    /// order.
    pub tool_calls: Vec<String>,
    /// `key = value` for each write that changed the context, in order.
    pub context_writes: Vec<String>,
    /// The context at the end of the run.
    pub final_context: Map<String, Value>,
    pub status: String,
    pub reason: String,
    pub error: Option<String>,
    pub turns: u32,
}

impl Trace {
    /// The outline of a run that started from `initial` (the declared
    /// context, the identity and the seeds).
    pub fn of(state: &RunState, events: &[Event], initial: &Map<String, Value>) -> Trace {
        let mut tool_calls = Vec::new();
        let mut context_writes = Vec::new();
        // Writes are compared as changes: mozaiks' bridge sets unchanged
        // values again with each packet, mzk's does not.
        let mut current = initial.clone();
        // The calls of one model reply, compared as a set: AG2 runs them
        // concurrently and mozaiks reports them in the order they start.
        let mut reply_calls: Vec<String> = Vec::new();
        for event in events {
            if !matches!(event, Event::ToolCall { kind, .. } if kind == "llm")
                && !matches!(event, Event::ToolResult { .. })
            {
                reply_calls.sort();
                tool_calls.append(&mut reply_calls);
            }
            match event {
                Event::ToolCall {
                    agent,
                    tool,
                    arguments,
                    kind,
                    ..
                } if kind == "llm" => {
                    reply_calls.push(format!("{agent}: {tool}({})", canonical(arguments)));
                }
                Event::ToolCall {
                    agent, tool, kind, ..
                } if kind == "auto" => {
                    // By name: mzk reports the structured output it hands
                    // the tool, mozaiks the keyword arguments it binds from
                    // it (only those the function declares); the function
                    // receives the same either way.
                    tool_calls.push(format!("{agent}: {tool} (auto)"));
                }
                Event::ContextSet {
                    key, deleted: true, ..
                } if current.remove(key).is_some() => {
                    context_writes.push(format!("{key} deleted"));
                }
                Event::ContextSet { deleted: true, .. } => {}
                Event::ContextSet { key, value, .. } => {
                    let value = comparable(value);
                    if current.get(key) != Some(&value) {
                        context_writes.push(format!("{key} = {}", canonical(&value)));
                        current.insert(key.clone(), value);
                    }
                }
                _ => {}
            }
        }
        reply_calls.sort();
        tool_calls.append(&mut reply_calls);
        Trace {
            speakers: state.agents.clone(),
            rules: state.rules.clone(),
            tool_calls,
            context_writes,
            final_context: state
                .context
                .iter()
                .map(|(k, v)| (k.clone(), comparable(v)))
                .collect(),
            status: state.status.to_string(),
            reason: state.reason.clone(),
            error: state.error.clone(),
            turns: state.turn_count,
        }
    }
}

/// A value as both engines can produce it: AG2's task lifecycle record
/// (timestamps, random ids) that mozaiks adds to each task result is left
/// out (docs/engines.md).
fn comparable(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| k.as_str() != "_ag2_task_lifecycle")
                .map(|(k, v)| (k.clone(), comparable(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(comparable).collect()),
        other => other.clone(),
    }
}

/// JSON with object keys sorted, so equal values print alike.
fn canonical(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let inner: Vec<String> = keys
                .into_iter()
                .map(|k| format!("{}: {}", Value::String(k.clone()), canonical(&map[k])))
                .collect();
            format!("{{{}}}", inner.join(", "))
        }
        Value::Array(items) => {
            let inner: Vec<String> = items.iter().map(canonical).collect();
            format!("[{}]", inner.join(", "))
        }
        other => other.to_string(),
    }
}

/// One aspect in which two runs differ.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Difference {
    /// `speakers`, `rules`, `tool_calls`, `context_writes`,
    /// `final_context`, `status`, `reason`, `error` or `turns`.
    pub aspect: &'static str,
    /// Where it starts, for sequences (1-based).
    pub at: Option<usize>,
    pub mzk: String,
    pub mozaiks: String,
}

impl std::fmt::Display for Difference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.at {
            Some(at) => write!(
                f,
                "{} differ from #{at}: mzk {} | mozaiks {}",
                self.aspect, self.mzk, self.mozaiks
            ),
            None => write!(
                f,
                "{}: mzk {} | mozaiks {}",
                self.aspect, self.mzk, self.mozaiks
            ),
        }
    }
}

/// Every aspect in which `mozaiks` differs from `mzk`, in the order a
/// reader follows a run.
pub fn differences(mzk: &Trace, mozaiks: &Trace) -> Vec<Difference> {
    let mut out = Vec::new();
    sequence(&mut out, "speakers", &mzk.speakers, &mozaiks.speakers);
    let rules = |r: &[usize]| r.iter().map(usize::to_string).collect::<Vec<_>>();
    sequence(
        &mut out,
        "rules",
        &rules(&mzk.rules),
        &rules(&mozaiks.rules),
    );
    sequence(&mut out, "tool_calls", &mzk.tool_calls, &mozaiks.tool_calls);
    sequence(
        &mut out,
        "context_writes",
        &mzk.context_writes,
        &mozaiks.context_writes,
    );
    final_context(&mut out, &mzk.final_context, &mozaiks.final_context);
    scalar(&mut out, "status", &mzk.status, &mozaiks.status);
    scalar(&mut out, "reason", &mzk.reason, &mozaiks.reason);
    let error = |e: &Option<String>| e.clone().unwrap_or_else(|| "none".into());
    scalar(
        &mut out,
        "error",
        &error(&mzk.error),
        &error(&mozaiks.error),
    );
    scalar(
        &mut out,
        "turns",
        &mzk.turns.to_string(),
        &mozaiks.turns.to_string(),
    );
    out
}

/// The keys whose final values differ, with each side's value.
fn final_context(
    out: &mut Vec<Difference>,
    mzk: &Map<String, Value>,
    mozaiks: &Map<String, Value>,
) {
    let keys: std::collections::BTreeSet<&String> = mzk.keys().chain(mozaiks.keys()).collect();
    let differing: Vec<&String> = keys
        .into_iter()
        .filter(|k| mzk.get(*k) != mozaiks.get(*k))
        .collect();
    if differing.is_empty() {
        return;
    }
    let list = |c: &Map<String, Value>| {
        differing
            .iter()
            .map(|k| format!("{k} = {}", c.get(*k).map_or("absent".into(), canonical)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    out.push(Difference {
        aspect: "final_context",
        at: None,
        mzk: list(mzk),
        mozaiks: list(mozaiks),
    });
}

fn scalar(out: &mut Vec<Difference>, aspect: &'static str, mzk: &str, mozaiks: &str) {
    if mzk != mozaiks {
        out.push(Difference {
            aspect,
            at: None,
            mzk: mzk.to_string(),
            mozaiks: mozaiks.to_string(),
        });
    }
}

/// The first position where two sequences differ, with what each has from
/// there on (a few items).
fn sequence(out: &mut Vec<Difference>, aspect: &'static str, mzk: &[String], mozaiks: &[String]) {
    let Some(at) = (0..mzk.len().max(mozaiks.len())).find(|&i| mzk.get(i) != mozaiks.get(i)) else {
        return;
    };
    let rest = |items: &[String]| {
        let shown: Vec<&str> = items.iter().skip(at).take(3).map(String::as_str).collect();
        match (shown.is_empty(), items.len() > at + 3) {
            (true, _) => "(nothing more)".to_string(),
            (false, true) => format!("{}, …", shown.join(", ")),
            (false, false) => shown.join(", "),
        }
    };
    out.push(Difference {
        aspect,
        at: Some(at + 1),
        mzk: rest(mzk),
        mozaiks: rest(mozaiks),
    });
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{differences, Trace};

    fn trace(speakers: &[&str], writes: &[&str], status: &str) -> Trace {
        Trace {
            speakers: speakers.iter().map(|s| s.to_string()).collect(),
            rules: vec![0],
            tool_calls: Vec::new(),
            context_writes: writes.iter().map(|s| s.to_string()).collect(),
            final_context: serde_json::Map::new(),
            status: status.into(),
            reason: "workflow_complete".into(),
            error: None,
            turns: 3,
        }
    }

    #[test]
    fn equal_runs_have_no_differences() {
        let a = trace(&["A", "B"], &["k = 1"], "completed");
        assert!(differences(&a, &a.clone()).is_empty());
    }

    #[test]
    fn each_aspect_is_reported_from_where_it_parts() {
        let mzk = trace(&["A", "B", "C"], &["k = 1", "j = 2"], "completed");
        let mozaiks = trace(&["A", "C"], &["k = 1"], "failed");
        let found = differences(&mzk, &mozaiks);
        let aspects: Vec<&str> = found.iter().map(|d| d.aspect).collect();
        assert_eq!(aspects, ["speakers", "context_writes", "status"]);
        assert_eq!(found[0].at, Some(2));
        assert_eq!(found[0].mzk, "B, C");
        assert_eq!(found[0].mozaiks, "C");
        assert_eq!(found[1].mozaiks, "(nothing more)");
        assert_eq!(
            found[2].to_string(),
            "status: mzk completed | mozaiks failed"
        );
    }

    #[test]
    fn writes_are_changes_and_task_lifecycle_records_are_left_out() {
        use crate::engine::RunState;
        use crate::events::Event;
        let set = |key: &str, value: serde_json::Value| Event::ContextSet {
            key: key.into(),
            value,
            writer: "w".into(),
            deleted: false,
        };
        let initial = json!({"plan": null, "flag": false});
        let events = [
            set("flag", json!(false)),
            set("plan", json!("gold")),
            set("plan", json!("gold")),
            set("r", json!({"a": {"x": 1, "_ag2_task_lifecycle": {"t": 9}}})),
        ];
        let trace = Trace::of(&RunState::default(), &events, initial.as_object().unwrap());
        assert_eq!(
            trace.context_writes,
            [r#"plan = "gold""#, r#"r = {"a": {"x": 1}}"#]
        );
    }

    #[test]
    fn the_calls_of_one_reply_compare_as_a_set() {
        use crate::engine::RunState;
        use crate::events::Event;
        let call = |tool: &str| Event::ToolCall {
            agent: "A".into(),
            tool: tool.into(),
            call_id: tool.into(),
            arguments: json!({}),
            kind: "llm".into(),
        };
        let result = |tool: &str| Event::ToolResult {
            agent: "A".into(),
            tool: tool.into(),
            call_id: tool.into(),
            ok: true,
            result: None,
            error: None,
            traceback: None,
            elapsed_ms: 0.0,
        };
        let turn = Event::TurnStarted {
            agent: "A".into(),
            turn: 2,
        };
        let empty = serde_json::Map::new();
        let state = RunState::default();
        let mzk = [
            call("b"),
            result("b"),
            call("a"),
            result("a"),
            turn.clone(),
            call("c"),
        ];
        let mozaiks = [
            call("a"),
            call("b"),
            result("a"),
            result("b"),
            turn,
            call("c"),
        ];
        let (mzk, mozaiks) = (
            Trace::of(&state, &mzk, &empty),
            Trace::of(&state, &mozaiks, &empty),
        );
        assert_eq!(mzk.tool_calls, ["A: a({})", "A: b({})", "A: c({})"]);
        assert!(differences(&mzk, &mozaiks).is_empty());
    }

    #[test]
    fn arguments_compare_whatever_their_key_order() {
        assert_eq!(
            super::canonical(&json!({"b": 1, "a": [{"d": 2, "c": 3}]})),
            r#"{"a": [{"c": 3, "d": 2}], "b": 1}"#
        );
    }
}
