//! A batch's task list (§6.2) and the checks made before any task runs
//! (§6.3): owned paths, then the dependency graph, with mozaiks' texts
//! (`task_batches.py` `_normalize_task_items`, `_validate_batch_owned_paths`,
//! `dependency_graph.py` `deterministic_topological_order`).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use mzk_analyzer::model::TaskBatch;
use serde_json::{Map, Value};

use crate::value::{py_repr, truthy};

/// One task as the batch read it from its source.
#[derive(Debug, Clone)]
pub struct Task {
    pub id: String,
    pub agent: Option<String>,
    pub prompt: Option<String>,
    pub kind: Option<String>,
    /// As mozaiks reads them for scheduling (a lone string is not trimmed).
    pub depends_on: Vec<String>,
    /// The item, with its normalised `task_id` written in (as mozaiks does).
    pub item: Map<String, Value>,
}

/// Python's `str()` of a JSON value.
pub(super) fn py_str(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => py_repr(other),
    }
}

/// `str(item.get(field) or "").strip()`, `None` when empty.
pub(super) fn field_text(item: &Map<String, Value>, field: &str) -> Option<String> {
    let text = item
        .get(field)
        .filter(|v| truthy(v))
        .map(py_str)
        .unwrap_or_default();
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_string())
}

/// The value at a dotted path (numeric segments index lists).
fn at_path<'v>(root: &'v Value, path: &str) -> Option<&'v Value> {
    let mut node = root;
    for segment in path.split('.').map(str::trim).filter(|s| !s.is_empty()) {
        node = match node {
            Value::Object(map) => map.get(segment)?,
            Value::Array(items) => items.get(segment.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(node)
}

/// `_task_dependencies`: a string is one dependency (kept as written), list
/// items are stringified and trimmed, anything else is none.
fn dependencies(item: &Map<String, Value>, field: &str) -> Vec<String> {
    match item.get(field) {
        Some(Value::String(s)) if !s.trim().is_empty() => vec![s.clone()],
        Some(Value::Array(list)) => list
            .iter()
            .filter(|d| truthy(d))
            .map(|d| py_str(d).trim().to_string())
            .filter(|d| !d.is_empty())
            .collect(),
        _ => Vec::new(),
    }
}

/// §6.2: the task list of a batch from its source payload. Items that are
/// not objects are skipped but still counted for `task_<n>` ids; an id that
/// is blank once trimmed drops the item.
pub fn tasks_of(batch: &TaskBatch, payload: &Value) -> Vec<Task> {
    let path = batch.source_path.as_ref().map_or("", |p| p.text.as_str());
    let items: Vec<&Value> = match at_path(payload, path) {
        Some(Value::Array(items)) => items.iter().collect(),
        Some(Value::Object(map)) => map.values().collect(),
        _ => Vec::new(),
    };
    items
        .into_iter()
        .enumerate()
        .filter_map(|(n, item)| {
            let mut item = item.as_object()?.clone();
            let raw = ["task_id", "id", "name"]
                .iter()
                .find_map(|k| item.get(*k).filter(|v| truthy(v)).map(py_str))
                .unwrap_or_else(|| format!("task_{}", n + 1));
            let id = raw.trim().to_string();
            if id.is_empty() {
                return None;
            }
            item.insert("task_id".into(), Value::String(id.clone()));
            Some(Task {
                depends_on: dependencies(&item, batch.dependency_field.as_str()),
                agent: field_text(&item, batch.agent_field.as_str()),
                prompt: field_text(&item, batch.prompt_field.as_str()),
                kind: field_text(&item, "kind"),
                id,
                item,
            })
        })
        .collect()
}

/// mozaiks keys its pending tasks by id: a repeated id keeps the first
/// one's place with the last one's item.
pub(super) fn unique_by_id(tasks: Vec<Task>) -> Vec<Task> {
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut out: Vec<Task> = Vec::with_capacity(tasks.len());
    for task in tasks {
        match index.get(&task.id) {
            Some(&i) => out[i] = task,
            None => {
                index.insert(task.id.clone(), out.len());
                out.push(task);
            }
        }
    }
    out
}

fn repr_list(items: &[String]) -> String {
    py_repr(&Value::Array(
        items.iter().cloned().map(Value::String).collect(),
    ))
}

/// §6.3: unknown or self dependencies and cycles, as
/// `deterministic_topological_order` reports them (the first problem only).
pub fn validate_graph(batch_id: &str, tasks: &[Task]) -> Result<(), String> {
    let wrap = |problem: String| {
        format!(
            "task batch {} has unresolved or cyclic dependencies: {problem}",
            py_repr(&Value::String(batch_id.to_string()))
        )
    };
    let ids: HashMap<&str, usize> = tasks
        .iter()
        .enumerate()
        .map(|(i, t)| (t.id.as_str(), i))
        .collect();
    let mut deps_of: Vec<Vec<usize>> = Vec::with_capacity(tasks.len());
    for t in tasks {
        let deps: BTreeSet<String> = t
            .depends_on
            .iter()
            .map(|d| d.trim().to_string())
            .filter(|d| !d.is_empty())
            .collect();
        let missing: Vec<String> = deps
            .iter()
            .filter(|d| !ids.contains_key(d.as_str()))
            .cloned()
            .collect();
        let id = py_repr(&Value::String(t.id.clone()));
        if !missing.is_empty() {
            return Err(wrap(format!(
                "dependency graph item {id} references unknown dependencies: {}",
                repr_list(&missing)
            )));
        }
        if deps.contains(&t.id) {
            return Err(wrap(format!(
                "dependency graph item {id} cannot depend on itself"
            )));
        }
        deps_of.push(deps.iter().map(|d| ids[d.as_str()]).collect());
    }
    // Kahn's algorithm: what it cannot order sits on or behind a cycle.
    let mut waiting: Vec<usize> = deps_of.iter().map(Vec::len).collect();
    let mut dependents: Vec<Vec<usize>> = vec![Vec::new(); tasks.len()];
    for (i, deps) in deps_of.iter().enumerate() {
        for &d in deps {
            dependents[d].push(i);
        }
    }
    let mut ready: Vec<usize> = (0..tasks.len()).filter(|&i| waiting[i] == 0).collect();
    let mut ordered = vec![false; tasks.len()];
    while let Some(i) = ready.pop() {
        ordered[i] = true;
        for &j in &dependents[i] {
            waiting[j] -= 1;
            if waiting[j] == 0 {
                ready.push(j);
            }
        }
    }
    let remaining: BTreeSet<String> = tasks
        .iter()
        .zip(&ordered)
        .filter(|(_, done)| !**done)
        .map(|(t, _)| t.id.clone())
        .collect();
    if remaining.is_empty() {
        Ok(())
    } else {
        let remaining: Vec<String> = remaining.into_iter().collect();
        Err(wrap(format!(
            "dependency cycle detected among items: {}",
            repr_list(&remaining)
        )))
    }
}

/// `_validate_batch_owned_paths` (checked before the batch starts): every
/// task owns paths, and no path has two owners.
pub(super) fn validate_owned_paths(batch_id: &str, tasks: &[Task]) -> Result<(), String> {
    let batch = py_repr(&Value::String(batch_id.to_string()));
    // Per task id (a repeated id keeps its last item, as a dict would).
    let mut owner_paths: Vec<(String, Vec<String>)> = Vec::new();
    for t in tasks {
        let paths = owned_paths(&t.item);
        if paths.is_empty() {
            return Err(format!(
                "task batch {batch} requires owned_paths, but task {} declares none",
                py_repr(&Value::String(t.id.clone()))
            ));
        }
        match owner_paths.iter_mut().find(|(id, _)| *id == t.id) {
            Some(entry) => entry.1 = paths,
            None => owner_paths.push((t.id.clone(), paths)),
        }
    }
    let mut owners: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for (id, paths) in &owner_paths {
        for p in paths {
            owners.entry(p.as_str()).or_default().insert(id.as_str());
        }
    }
    let shared: Vec<(&str, &BTreeSet<&str>)> = owners
        .iter()
        .filter(|(_, ids)| ids.len() > 1)
        .map(|(p, ids)| (*p, ids))
        .collect();
    if shared.is_empty() {
        return Ok(());
    }
    let details = shared
        .iter()
        .map(|(p, ids)| {
            let ids: Vec<String> = ids.iter().map(|s| s.to_string()).collect();
            format!(
                "{}: {}",
                py_repr(&Value::String(p.to_string())),
                repr_list(&ids)
            )
        })
        .collect::<Vec<_>>()
        .join(", ");
    Err(format!(
        "task batch {batch} has owned_paths declared by multiple tasks: {{{details}}}"
    ))
}

/// A task's owned paths: a list's non-blank items, trimmed, without repeats.
/// mozaiks also refuses blank, absolute, `..`, glob and secret-looking
/// paths (`path_ownership.py`); mzk does not check those.
fn owned_paths(item: &Map<String, Value>) -> Vec<String> {
    let Some(Value::Array(list)) = item.get("owned_paths") else {
        return Vec::new();
    };
    let mut out: Vec<String> = Vec::new();
    for p in list {
        let text = if truthy(p) { py_str(p) } else { String::new() };
        let text = text.trim().trim_end_matches('/').to_string();
        if !text.is_empty() && !out.contains(&text) {
            out.push(text);
        }
    }
    out
}

/// `list(task.get("owned_paths") or [])`, stamped on every accepted output.
pub(super) fn owned_paths_stamp(item: &Map<String, Value>) -> Value {
    match item.get("owned_paths") {
        Some(v) if !truthy(v) => Value::Array(Vec::new()),
        Some(Value::Array(list)) => Value::Array(list.clone()),
        Some(Value::String(s)) => {
            Value::Array(s.chars().map(|c| Value::String(c.to_string())).collect())
        }
        Some(Value::Object(map)) => Value::Array(map.keys().cloned().map(Value::String).collect()),
        _ => Value::Array(Vec::new()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn task(id: &str, deps: &[&str], item: Value) -> Task {
        let mut item = item.as_object().cloned().unwrap_or_default();
        item.insert("task_id".into(), json!(id));
        Task {
            id: id.into(),
            agent: None,
            prompt: None,
            kind: None,
            depends_on: deps.iter().map(|d| d.to_string()).collect(),
            item,
        }
    }

    #[test]
    fn graph_errors_read_as_mozaiks_writes_them() {
        let cyclic = [
            task("a", &["b"], json!({})),
            task("b", &["a"], json!({})),
            task("c", &["a"], json!({})),
            task("d", &[], json!({})),
        ];
        // Behind a cycle counts as in it: Kahn's algorithm orders neither.
        assert_eq!(
            validate_graph("rt", &cyclic).unwrap_err(),
            "task batch 'rt' has unresolved or cyclic dependencies: dependency cycle detected among items: ['a', 'b', 'c']"
        );
        let unknown = [task("a", &["z", "y", "z"], json!({}))];
        assert_eq!(
            validate_graph("rt", &unknown).unwrap_err(),
            "task batch 'rt' has unresolved or cyclic dependencies: dependency graph item 'a' references unknown dependencies: ['y', 'z']"
        );
        let itself = [task("a", &[" a "], json!({}))];
        assert_eq!(
            validate_graph("rt", &itself).unwrap_err(),
            "task batch 'rt' has unresolved or cyclic dependencies: dependency graph item 'a' cannot depend on itself"
        );
        assert!(validate_graph(
            "rt",
            &[task("a", &[], json!({})), task("b", &["a"], json!({}))]
        )
        .is_ok());
    }

    #[test]
    fn a_repeated_id_keeps_the_first_place_and_the_last_item() {
        let tasks = unique_by_id(vec![
            task("a", &[], json!({"n": 1})),
            task("b", &[], json!({})),
            task("a", &[], json!({"n": 2})),
        ]);
        let ids: Vec<&str> = tasks.iter().map(|t| t.id.as_str()).collect();
        assert_eq!(ids, ["a", "b"]);
        assert_eq!(tasks[0].item["n"], 2);
    }

    #[test]
    fn owned_paths_are_required_and_exclusive() {
        let none = [task("a", &[], json!({"owned_paths": []}))];
        assert_eq!(
            validate_owned_paths("rt", &none).unwrap_err(),
            "task batch 'rt' requires owned_paths, but task 'a' declares none"
        );
        let shared = [
            task("b", &[], json!({"owned_paths": ["x.py", "y.py"]})),
            task("a", &[], json!({"owned_paths": ["x.py"]})),
        ];
        assert_eq!(
            validate_owned_paths("rt", &shared).unwrap_err(),
            "task batch 'rt' has owned_paths declared by multiple tasks: {'x.py': ['a', 'b']}"
        );
        assert_eq!(owned_paths_stamp(&Map::new()), json!([]));
        assert_eq!(
            owned_paths_stamp(json!({"owned_paths": ["p"]}).as_object().unwrap()),
            json!(["p"])
        );
    }

    #[test]
    fn task_items_are_numbered_counting_every_item() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../tests/fixtures/runtime/BatchFailBatch");
        let analysis = mzk_analyzer::analyze_bundle(&mzk_analyzer::RealFs, &dir);
        let batch = &analysis.bundle.task_batches[0];
        let payload = json!({"DecompositionPlan": {"tasks": [
            "not an object",
            {"execution_agent": "W1", "task_prompt": "p", "depends_on": " a "},
            {"task_id": "  ", "execution_agent": "W1", "task_prompt": "p"},
            {"id": 7, "execution_agent": "W1", "task_prompt": "p", "depends_on": [" a ", null, ""]},
        ]}});
        let tasks = tasks_of(batch, &payload);
        let ids: Vec<&str> = tasks.iter().map(|t| t.id.as_str()).collect();
        assert_eq!(ids, ["task_2", "7"]);
        assert_eq!(tasks[0].item["task_id"], "task_2");
        // A lone string is kept as written; list items are trimmed.
        assert_eq!(tasks[0].depends_on, [" a "]);
        assert_eq!(tasks[1].depends_on, ["a"]);
    }
}
