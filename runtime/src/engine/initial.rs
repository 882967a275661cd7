//! The context a run starts from (runtime-semantics §3.1): the declared
//! values, the run's identity, then the seeded context. The engine starts
//! from it; the engine comparison (`crate::compare`) measures writes
//! against it.

use mzk_analyzer::model::{Bundle, Variable};
use serde_json::{json, Map, Value};

use super::{workflow_name, RunOptions};
use crate::context::coerce;
use crate::value::yaml_to_json;

pub fn initial_context(bundle: &Bundle, opts: &RunOptions) -> Map<String, Value> {
    let mut ctx = Map::new();
    for v in &bundle.variables {
        let source = v.source_type.as_ref().map_or("state", |s| s.text.as_str());
        let declared_type = v.declared_type.as_ref().map(|t| t.text.as_str());
        let default = v.default.as_ref().map_or(Value::Null, yaml_to_json);
        let value = match source {
            "state" | "data_reference" => coerce(declared_type, default),
            // mozaiks 0.2.0 reads the named environment variable and
            // nothing else: its `default` applies only when no env_var is
            // named (variables.py `_resolve_config`), so unset is null.
            "config" => match v.env_var.as_ref().map(|e| e.text.trim()) {
                Some(name) if !name.is_empty() => std::env::var(name)
                    .map(|s| coerce(declared_type, Value::String(s)))
                    .unwrap_or(Value::Null),
                _ => coerce(declared_type, default),
            },
            "file" => coerce(declared_type, default),
            "data_entity" => continue,
            _ => Value::Null,
        };
        ctx.insert(v.name.text.clone(), value);
    }
    ctx.insert("workflow_name".into(), json!(workflow_name(bundle)));
    ctx.insert("app_id".into(), json!(opts.app_id));
    ctx.insert("chat_id".into(), json!(opts.run_id));
    ctx.insert("user_id".into(), json!(opts.user_id));
    ctx.insert("database_schema_available".into(), json!(false));
    ctx.insert("database_schema_db".into(), Value::Null);
    for (k, v) in &opts.context {
        ctx.insert(k.clone(), v.clone());
    }
    ctx
}

/// What mozaiks refuses to start a run without (variables.py
/// `_load_context_async`): a required `runtime` value the host did not
/// supply (here: the seeded context), then a required `config` variable
/// whose environment variable is unset. Its words, for the run's error.
pub fn missing_required(bundle: &Bundle, context: &Map<String, Value>) -> Option<String> {
    let workflow = workflow_name(bundle);
    fn required<'b>(
        bundle: &'b Bundle,
        source: &'static str,
    ) -> impl Iterator<Item = &'b Variable> {
        bundle.variables.iter().filter(move |v| {
            v.source_required == Some(true)
                && v.source_type.as_ref().map(|s| s.text.as_str()) == Some(source)
        })
    }
    if let Some(v) =
        required(bundle, "runtime").find(|v| context.get(&v.name.text).is_none_or(Value::is_null))
    {
        return Some(format!(
            "Required runtime context '{}' is missing for '{workflow}'",
            v.name.text
        ));
    }
    required(bundle, "config")
        .filter_map(|v| v.env_var.as_ref())
        .find(|e| std::env::var(e.text.trim()).is_err())
        .map(|e| format!("Required config variable '{}' is not set", e.text.trim()))
}
