//! Value domains of context variables: the finite set of values a variable
//! can hold, when every writer of it is understood (bundle-format §9,
//! runtime-semantics §3–§6). Computed once per bundle ([`Bundle::domains`]).
//!
//! Writers followed: the declared default (coerced by type), booleans, tool
//! outcome contracts, task-batch status keys, `agent_text`/`user_text`
//! triggers (they write `true`), constants written by bound Python code, and
//! `literal` fields of a registry model that reach a parameter of an auto tool
//! which writes it (`context_variables.set("key", param)`). Anything else
//! that may write the variable — a source other than `state`, the user's
//! resume updates, agent text, a UI answer, Python code that is not followed —
//! makes the domain unknown, and nothing is claimed about it.

use super::auto_tool_args::{param_values, simple};
use super::writes::{self, Written};
use super::{authority, Bundle, Variable};
use crate::base::hash::HashMap;
use crate::syntax::{NodeKind, Value};

/// Statuses a task batch writes to its status key (bundle-format §15.3).
pub const BATCH_STATUSES: &[&str] = &[
    "running",
    "completed",
    "partial",
    "completed_with_errors",
    "failed",
];

/// Most values a domain holds before it is treated as unknown.
const MAX_VALUES: usize = 64;

#[derive(Debug, Clone, PartialEq)]
pub enum Domain {
    Known(KnownDomain),
    /// Any integer: a writer copies a registry model's `int` field, which the
    /// model may fill with any integer; every other writer writes integers.
    /// Routing compares it with constants, so the checks partition the
    /// integer line at those constants instead of listing values.
    Integers(IntegerDomain),
    /// Why no finite set of values can be claimed.
    Unknown(String),
}

#[derive(Debug, Clone, PartialEq)]
pub struct KnownDomain {
    /// The values writers (and a non-null default) put there, each once
    /// under Python equality, in the order found.
    pub values: Vec<Value>,
    /// True when the variable may read null without null being listed: it
    /// starts unset (no default, a computed source), or a writer that is
    /// not followed may clear it.
    pub may_be_null: bool,
    /// The declared default when no writer also writes it: a value the
    /// variable holds only until its first write.
    pub initial_only: Option<Value>,
    /// False when the values are only a bound (a declared boolean whose
    /// writers are not all followed): enough to prove a condition can never
    /// hold, not to name a value that certainly occurs.
    pub exact: bool,
    /// Agents whose every turn writes the variable (an auto tool that
    /// writes it unconditionally, or its outcome contract): after their
    /// turn it holds a value written then, whatever path led there.
    pub fresh_for: Vec<String>,
    /// Where the values come from, for hover.
    pub sources: Vec<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct IntegerDomain {
    /// As [`KnownDomain::may_be_null`]: it starts unset, or a writer may
    /// write null (an optional field).
    pub may_be_null: bool,
    /// As [`KnownDomain::fresh_for`].
    pub fresh_for: Vec<String>,
    /// Where the values come from, for hover.
    pub sources: Vec<String>,
}

impl KnownDomain {
    /// Every value a read can see, null included when it starts unset.
    pub fn with_initial(&self) -> Vec<Value> {
        let mut all = self.values.clone();
        if self.may_be_null && !all.contains(&Value::Null) {
            all.push(Value::Null);
        }
        all
    }
}

/// The domains of a bundle's declared variables.
#[derive(Debug, Clone, Default)]
pub struct Domains {
    map: HashMap<String, Domain>,
}

impl Domains {
    pub fn of(&self, name: &str) -> Option<&Domain> {
        self.map.get(name)
    }

    pub fn known(&self, name: &str) -> Option<&KnownDomain> {
        match self.map.get(name) {
            Some(Domain::Known(k)) => Some(k),
            _ => None,
        }
    }

    pub fn compute(bundle: &Bundle) -> Domains {
        let python = writes::read(bundle);
        let index = KeyIndex::of(bundle);
        let facts = authority::Facts::of(bundle);
        let mut map = HashMap::default();
        for var in &bundle.variables {
            if map.contains_key(&var.name.text) {
                continue;
            }
            let auth = authority::infer_with(&facts, var);
            let domain = domain(bundle, &index, var, &auth, &python);
            map.insert(var.name.text.clone(), domain);
        }
        Domains { map }
    }
}

/// Renders a value as a condition_value would be written.
/// A string that YAML would read as another type is quoted (`'true'`).
pub fn show(v: &Value) -> String {
    match v {
        Value::Bool(b) => b.to_string(),
        Value::Null => "null".to_string(),
        Value::Str(s)
            if !matches!(
                crate::syntax::scalar::resolve_plain(s, false),
                Ok(crate::syntax::scalar::Resolved::Value(Value::Str(_)))
            ) =>
        {
            format!("'{s}'")
        }
        other => other.python_str(),
    }
}

struct Acc {
    values: Vec<Value>,
    sources: Vec<String>,
}

impl Acc {
    fn add(&mut self, v: Value) {
        if !self.values.iter().any(|w| w.hash_key() == v.hash_key()) {
            self.values.push(v);
        }
    }
    fn source(&mut self, s: String) {
        if !self.sources.contains(&s) {
            self.sources.push(s);
        }
    }
}

/// The default as the loader coerces it by type (runtime-semantics §3.1).
fn coerce(ty: &str, v: &Value) -> Option<Value> {
    Some(match (ty, v) {
        (_, Value::Null) => Value::Null,
        ("boolean" | "bool", Value::Str(s)) => Value::Bool(matches!(
            s.to_ascii_lowercase().as_str(),
            "1" | "true" | "yes" | "on"
        )),
        ("boolean" | "bool", Value::Bool(b)) => Value::Bool(*b),
        ("boolean" | "bool", Value::Int(i)) => Value::Bool(i.get() != 0),
        ("boolean" | "bool", Value::Float(f)) => Value::Bool(*f != 0.0),
        ("integer" | "int", Value::Bool(b)) => Value::Int((*b as i128).into()),
        ("integer" | "int", Value::Float(f)) if f.is_finite() => {
            Value::Int((f.trunc() as i128).into())
        }
        ("integer" | "int", Value::Str(s)) => s
            .trim()
            .parse::<i128>()
            .map_or_else(|_| v.clone(), |i| Value::Int(i.into())),
        (_, v) if simple(v) => v.clone(),
        _ => return None,
    })
}

/// The tools and batches that name each key, so that every variable does not
/// scan them all.
struct KeyIndex<'b> {
    tools: HashMap<&'b str, Vec<&'b super::Tool>>,
    batches: HashMap<&'b str, Vec<&'b super::TaskBatch>>,
}

impl<'b> KeyIndex<'b> {
    fn of(bundle: &'b Bundle) -> KeyIndex<'b> {
        let mut tools: HashMap<&str, Vec<&super::Tool>> = HashMap::default();
        for t in &bundle.tools {
            if let Some(o) = &t.outcome {
                for k in o.context_key.iter().chain(&o.attempts_key) {
                    let list = tools.entry(k.text.as_str()).or_default();
                    if !list.iter().any(|x| std::ptr::eq(*x, t)) {
                        list.push(t);
                    }
                }
            }
        }
        let mut batches: HashMap<&str, Vec<&super::TaskBatch>> = HashMap::default();
        for b in &bundle.task_batches {
            let keys = b
                .result_status_key
                .iter()
                .chain(&b.result_context_key)
                .chain(
                    b.recovery
                        .iter()
                        .flat_map(|r| [&r.request_key, &r.outcome_key, &r.status_key])
                        .flatten(),
                );
            for k in keys {
                let list = batches.entry(k.text.as_str()).or_default();
                if !list.iter().any(|x| std::ptr::eq(*x, b)) {
                    list.push(b);
                }
            }
        }
        KeyIndex { tools, batches }
    }
}

fn domain(
    bundle: &Bundle,
    index: &KeyIndex<'_>,
    var: &Variable,
    auth: &authority::Authority,
    py: &writes::PythonWrites,
) -> Domain {
    let name = var.name.text.as_str();
    let ty = var
        .declared_type
        .as_ref()
        .map(|t| t.text.to_ascii_lowercase())
        .unwrap_or_default();
    let boolean = matches!(ty.as_str(), "boolean" | "bool");
    let mut acc = Acc {
        values: Vec::new(),
        sources: Vec::new(),
    };
    // The initial value.
    let source = var
        .source_type
        .as_ref()
        .map(|s| s.text.to_ascii_lowercase())
        .unwrap_or_else(|| "state".to_string());
    let initial = match source.as_str() {
        "state" => match &var.default {
            None => Some(Value::Null),
            Some(node) => match &node.kind {
                NodeKind::Scalar(s) => coerce(&ty, &s.value),
                _ => None,
            },
        },
        "computed" | "external" | "build_context" => Some(Value::Null),
        other => {
            return Domain::Unknown(format!("its value comes from its `{other}` source"));
        }
    };
    let Some(initial) = initial else {
        return Domain::Unknown("its default is not a plain value".into());
    };
    let initial_null = initial == Value::Null;
    if boolean {
        acc.add(Value::Bool(true));
        acc.add(Value::Bool(false));
        acc.source("declared `boolean`".into());
    }
    let mut writers = 0usize;
    // A writer copies an `int` field: the variable may hold any integer.
    let mut any_integer = false;
    let mut fresh_for: Vec<String> = Vec::new();
    let mut fresh = |agents: &[super::Name]| {
        for a in agents {
            if !fresh_for.contains(&a.text) {
                fresh_for.push(a.text.clone());
            }
        }
    };
    let mut why_unknown: Option<String> = None;
    let mut note = |why: String| {
        why_unknown.get_or_insert(why);
    };
    // Who may write it besides deterministic code.
    if auth.can_write("live_user_context", false) {
        note("the user's resume `context_updates` may set it".into());
    }
    if auth.can_write("agent_text", false) {
        note("agent text may set it".into());
    }
    for t in &var.triggers {
        match t.trigger_type.text.as_str() {
            "agent_text" | "user_text" => {
                writers += 1;
                acc.add(Value::Bool(true));
                acc.source(format!("`{}` trigger", t.trigger_type.text));
            }
            other => note(format!("its `{other}` trigger writes what the UI answers")),
        }
    }
    for tool in index.tools.get(name).into_iter().flatten() {
        let Some(outcome) = &tool.outcome else {
            continue;
        };
        if outcome.context_key.as_ref().is_some_and(|k| k.text == name) {
            writers += 1;
            for v in &outcome.values {
                acc.add(Value::Str(v.text.clone()));
            }
            if let Some(e) = &outcome.error_value {
                acc.add(Value::Str(e.text.clone()));
            }
            if tool.auto_tool_call {
                fresh(&tool.agents);
            }
            acc.source(format!(
                "outcome of tool `{}`",
                tool.function.as_ref().map_or("?", |f| f.text.as_str())
            ));
        }
        if outcome
            .attempts_key
            .as_ref()
            .is_some_and(|k| k.text == name)
        {
            note("it counts a tool's attempts".into());
        }
    }
    for batch in index.batches.get(name).into_iter().flatten() {
        if batch
            .result_status_key
            .as_ref()
            .is_some_and(|k| k.text == name)
        {
            writers += 1;
            for s in BATCH_STATUSES {
                acc.add(Value::Str((*s).to_string()));
            }
            acc.source(format!("status of task batch `{}`", batch.id.text));
        }
        let other_keys = batch.result_context_key.iter().chain(
            batch
                .recovery
                .iter()
                .flat_map(|r| [&r.request_key, &r.outcome_key, &r.status_key])
                .flatten(),
        );
        for k in other_keys {
            if k.text == name {
                note(format!(
                    "task batch `{}` writes its results there",
                    batch.id.text
                ));
            }
        }
    }
    // Python code: any bound module runs with a bridge that may write the
    // variable when its authority lets tools, hooks or lifecycle code write.
    let python_may_write = !bundle.bindings.is_empty()
        && [
            "deterministic_tool",
            "context_bridge",
            "lifecycle_tool",
            "runtime_system",
        ]
        .iter()
        .any(|w| auth.can_write(w, false));
    if python_may_write {
        if let Some(why) = &py.opaque {
            note(why.clone());
        } else {
            for w in py.writes.get(name).into_iter().flatten() {
                writers += 1;
                if w.unconditional {
                    for t in auto_tools_binding(bundle, w.entry_file, Some(&w.function)) {
                        fresh(&t.agents);
                    }
                }
                let at = &w.at;
                match &w.value {
                    Written::Const(v) => {
                        acc.add(v.clone());
                        acc.source(format!("{at} writes `{}`", show(v)));
                    }
                    Written::Param { function, param } => {
                        match param_values(bundle, w.entry_file, function, param) {
                            Ok((values, model, integers)) => {
                                any_integer |= integers;
                                for v in values {
                                    acc.add(v);
                                }
                                acc.source(format!(
                                    "{at} writes `{model}.{param}` through auto tool `{function}`"
                                ));
                            }
                            Err(why) => note(format!("{at} writes `{param}`: {why}")),
                        }
                    }
                    Written::Other(why) => {
                        note(format!("{at} writes a value mzk does not follow ({why})"));
                    }
                }
            }
        }
    }
    if let Some(why) = why_unknown {
        return unknown_or_boolean(boolean, why);
    }
    let mut initial_only = None;
    if !initial_null {
        if !acc
            .values
            .iter()
            .any(|v| v.hash_key() == initial.hash_key())
        {
            initial_only = Some(initial.clone());
            acc.add(initial.clone());
        }
        acc.source(format!("default `{}`", show(&initial)));
    }
    if writers == 0 {
        // Nothing visible writes it: mozaiks' own code may, so no value is
        // claimed; a declared boolean still holds only booleans.
        return unknown_or_boolean(boolean, "no writer mzk can follow sets it".into());
    }
    if any_integer {
        // Every other value must be an integer (or null) for the interval
        // reading to cover it; a bool or string beside them is not modelled.
        // A declared type that rejects integers fails persistence (§3.5)
        // before routing could read them: not modelled either.
        let int_type = matches!(ty.as_str(), "" | "int" | "integer" | "number");
        if !int_type
            || !acc
                .values
                .iter()
                .all(|v| matches!(v, Value::Int(_) | Value::Null))
        {
            return unknown_or_boolean(boolean, "it holds integers and other values".into());
        }
        return Domain::Integers(IntegerDomain {
            may_be_null: initial_null || acc.values.contains(&Value::Null),
            fresh_for,
            sources: acc.sources,
        });
    }
    if acc.values.len() > MAX_VALUES || !acc.values.iter().all(simple) {
        return Domain::Unknown("too many values".into());
    }
    Domain::Known(KnownDomain {
        values: acc.values,
        may_be_null: initial_null,
        initial_only,
        exact: true,
        fresh_for,
        sources: acc.sources,
    })
}

/// A declared boolean keeps `true`/`false` whatever writes it: values of
/// another type would fail the run when it is persisted (§3.5). This is the
/// domain the routing proofs have always used for booleans.
/// A writer that is not followed may also clear it, so null stays possible.
fn unknown_or_boolean(boolean: bool, why: String) -> Domain {
    if boolean {
        return Domain::Known(KnownDomain {
            values: vec![Value::Bool(true), Value::Bool(false)],
            may_be_null: true,
            initial_only: None,
            exact: false,
            fresh_for: Vec::new(),
            sources: vec![format!(
                "declared `boolean` (other writers not followed: {why})"
            )],
        });
    }
    Domain::Unknown(why)
}

/// The auto tools bound to `function` of `file`.
fn auto_tools_binding<'b>(
    bundle: &'b Bundle,
    file: crate::base::FileId,
    function: Option<&str>,
) -> Vec<&'b super::Tool> {
    use super::python::{BindingOwner, BindingTarget};
    bundle
        .bindings
        .iter()
        .filter(|b| {
            b.target == BindingTarget::File(file)
                && b.function.as_ref().map(|f| f.text.as_str()) == function
        })
        .filter_map(|b| match b.owner {
            BindingOwner::Tool(i) => Some(&bundle.tools[i]),
            _ => None,
        })
        .filter(|t| t.auto_tool_call)
        .collect()
}

#[cfg(test)]
pub(crate) mod tests;
