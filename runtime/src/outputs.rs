//! Structured outputs (§5): a reply is validated against its registry model
//! exactly as mozaiks 0.2.0 does (fence stripped, JSON object required,
//! undeclared keys refused at every depth, lax scalars); `build` makes
//! replies that pass (the synthetic model) and strict JSON schemas.

use mzk_analyzer::model::{Bundle, ModelDef, ModelKind};
use serde_json::{Map, Value};

use crate::error::Error;
use crate::value::{py_eq, py_repr, yaml_to_json};

mod build;

pub use build::{quoted_strings, strict_schema, synthesize, tested_values, Preference};

/// How many times a failed model call of an agent with this registry model
/// is made again. mozaiks wraps every agent that gets a response schema in
/// AG2's `RetryMiddleware(max_retries=2)` (agents/factory.py): up to three
/// calls in all, the last call's error ending the turn; invalid outputs are
/// not retried. With the default OpenAI provider a model that cannot be
/// strict gets no response schema, so no retries.
pub fn model_call_retries(bundle: &Bundle, model: Option<&str>) -> u32 {
    match model {
        Some(m) if strict_schema(bundle, m).is_some() => 2,
        _ => 0,
    }
}

/// The body as mozaiks reads it (§5.2 step 1): a string is trimmed, a code
/// fence removed and parsed as JSON when it parses.
pub fn parse_body(body: &Value) -> Value {
    let Value::String(text) = body else {
        return body.clone();
    };
    let mut text = text.trim();
    if let Some(rest) = text.strip_prefix("```") {
        if let Some(inner) = rest.strip_suffix("```") {
            let inner = inner
                .strip_prefix("json")
                .or_else(|| inner.strip_prefix("JSON"))
                .unwrap_or(inner);
            text = inner.trim();
        }
    }
    serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_string()))
}

/// Validates a reply body against a model: the model's JSON dump, or the
/// errors in Pydantic's style.
pub fn validate(bundle: &Bundle, model: &str, body: &Value) -> Result<Value, Error> {
    let parsed = parse_body(body);
    if !parsed.is_object() {
        return Err(Error::Output(
            "structured output was not a JSON object".into(),
        ));
    }
    let mut errors = Vec::new();
    let out = check_named(bundle, model, &parsed, "", &mut errors, 0);
    if errors.is_empty() {
        Ok(out)
    } else {
        let count = errors.len();
        Err(Error::Output(format!(
            "{count} validation error{} for {model}: {}",
            if count == 1 { "" } else { "s" },
            errors.join("; ")
        )))
    }
}

const MAX_DEPTH: usize = 64;

fn at(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

fn check_named(
    bundle: &Bundle,
    name: &str,
    value: &Value,
    path: &str,
    errors: &mut Vec<String>,
    depth: usize,
) -> Value {
    if depth > MAX_DEPTH {
        errors.push(format!("{path}: nesting too deep"));
        return Value::Null;
    }
    if let Some(def) = bundle.model(name) {
        return check_def(bundle, def, value, path, errors, depth + 1);
    }
    check_type(bundle, name, None, &[], &[], value, path, errors, depth + 1)
}

fn check_def(
    bundle: &Bundle,
    def: &ModelDef,
    value: &Value,
    path: &str,
    errors: &mut Vec<String>,
    depth: usize,
) -> Value {
    match def.kind {
        ModelKind::Literal => {
            let values: Vec<Value> = def.values.iter().map(yaml_to_json).collect();
            check_literal(&values, value, path, errors)
        }
        ModelKind::Union => {
            let variants: Vec<&str> = def.variants.iter().map(|v| v.as_str()).collect();
            check_union(bundle, &variants, value, path, errors, depth)
        }
        ModelKind::Model => {
            let Value::Object(map) = value else {
                errors.push(format!(
                    "{}: Input should be a valid dictionary or instance of {}",
                    display(path),
                    def.name.text
                ));
                return Value::Null;
            };
            let mut out = Map::new();
            for field in &def.fields {
                let name = field.name.as_str();
                let field_path = at(path, name);
                match map.get(name) {
                    Some(v) => {
                        let variants: Vec<&str> =
                            field.variants.iter().map(|v| v.as_str()).collect();
                        let values: Vec<Value> = field.values.iter().map(yaml_to_json).collect();
                        let checked = check_type(
                            bundle,
                            field.field_type.as_ref().map_or("str", |t| t.as_str()),
                            field.items.as_ref().map(|i| i.as_str()),
                            &variants,
                            &values,
                            v,
                            &field_path,
                            errors,
                            depth,
                        );
                        out.insert(name.to_string(), checked);
                    }
                    None if field.has_default
                        || optional_type(field.field_type.as_ref().map(|t| t.as_str())) =>
                    {
                        let default = field.default.as_ref().map_or(Value::Null, yaml_to_json);
                        out.insert(name.to_string(), default);
                    }
                    None => errors.push(format!("{field_path}: Field required")),
                }
            }
            for key in map.keys() {
                if !def.fields.iter().any(|f| f.name.text == *key) {
                    errors.push(format!("{}: Extra inputs are not permitted", at(path, key)));
                }
            }
            Value::Object(out)
        }
    }
}

fn display(path: &str) -> &str {
    if path.is_empty() {
        "(root)"
    } else {
        path
    }
}

fn optional_type(t: Option<&str>) -> bool {
    matches!(
        t,
        Some("optional_str" | "Optional[str]" | "optional_dict" | "optional_list")
    )
}

fn check_literal(values: &[Value], value: &Value, path: &str, errors: &mut Vec<String>) -> Value {
    // Pydantic's literal check is exact on type for strings and booleans.
    let found = values
        .iter()
        .find(|v| std::mem::discriminant(*v) == std::mem::discriminant(value) && py_eq(v, value));
    match found {
        Some(v) => v.clone(),
        None => {
            errors.push(format!(
                "{}: Input should be {}",
                display(path),
                values.iter().map(py_repr).collect::<Vec<_>>().join(" or ")
            ));
            Value::Null
        }
    }
}

fn check_union(
    bundle: &Bundle,
    variants: &[&str],
    value: &Value,
    path: &str,
    errors: &mut Vec<String>,
    depth: usize,
) -> Value {
    if value.is_null()
        && variants
            .iter()
            .any(|v| v.eq_ignore_ascii_case("null") || v.eq_ignore_ascii_case("none"))
    {
        return Value::Null;
    }
    let mut tried = Vec::new();
    for variant in variants
        .iter()
        .filter(|v| !v.eq_ignore_ascii_case("null") && !v.eq_ignore_ascii_case("none"))
    {
        let mut local = Vec::new();
        let out = check_named(bundle, variant, value, path, &mut local, depth);
        if local.is_empty() {
            return out;
        }
        tried.push(format!("{variant} ({})", local.join(", ")));
    }
    errors.push(format!(
        "{}: matches no variant: {}",
        display(path),
        tried.join("; ")
    ));
    Value::Null
}

#[allow(clippy::too_many_arguments)]
fn check_type(
    bundle: &Bundle,
    field_type: &str,
    items: Option<&str>,
    variants: &[&str],
    values: &[Value],
    value: &Value,
    path: &str,
    errors: &mut Vec<String>,
    depth: usize,
) -> Value {
    let mut expect = |what: &str| {
        errors.push(format!("{}: Input should be {what}", display(path)));
        Value::Null
    };
    match field_type {
        "str" | "string" => match value {
            Value::String(_) => value.clone(),
            _ => expect("a valid string"),
        },
        "optional_str" | "Optional[str]" => match value {
            Value::String(_) | Value::Null => value.clone(),
            _ => expect("a valid string"),
        },
        "int" | "integer" => match lax_int(value) {
            Some(i) => Value::from(i),
            None => expect("a valid integer"),
        },
        "float" => match lax_float(value) {
            Some(f) => serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number),
            None => expect("a valid number"),
        },
        "bool" => match lax_bool(value) {
            Some(b) => Value::Bool(b),
            None => expect("a valid boolean"),
        },
        "dict" | "Dict" => match value {
            Value::Object(_) => value.clone(),
            _ => expect("a valid dictionary"),
        },
        "optional_dict" => match value {
            Value::Object(_) | Value::Null => value.clone(),
            _ => expect("a valid dictionary"),
        },
        "List" => match value {
            Value::Array(_) => value.clone(),
            _ => expect("a valid list"),
        },
        "list" | "optional_list" => match value {
            Value::Null if field_type == "optional_list" => Value::Null,
            Value::Array(list) => Value::Array(
                list.iter()
                    .enumerate()
                    .map(|(i, v)| {
                        check_named(
                            bundle,
                            items.unwrap_or("str"),
                            v,
                            &at(path, &i.to_string()),
                            errors,
                            depth,
                        )
                    })
                    .collect(),
            ),
            _ => expect("a valid list"),
        },
        "literal" => check_literal(values, value, path, errors),
        "union" => check_union(bundle, variants, value, path, errors, depth),
        other => {
            if let Some(inner) = other
                .strip_prefix("list[")
                .and_then(|r| r.strip_suffix(']'))
            {
                return check_type(
                    bundle,
                    "list",
                    Some(inner),
                    &[],
                    &[],
                    value,
                    path,
                    errors,
                    depth,
                );
            }
            match bundle.model(other) {
                Some(def) => check_def(bundle, def, value, path, errors, depth + 1),
                None => {
                    errors.push(format!("{}: unknown type `{other}`", display(path)));
                    Value::Null
                }
            }
        }
    }
}

fn lax_int(value: &Value) -> Option<i64> {
    match value {
        Value::Number(n) => n
            .as_i64()
            .or_else(|| n.as_f64().filter(|f| f.fract() == 0.0).map(|f| f as i64)),
        Value::Bool(b) => Some(*b as i64),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

fn lax_float(value: &Value) -> Option<f64> {
    match value {
        Value::Number(n) => n.as_f64(),
        Value::Bool(b) => Some(*b as i64 as f64),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

fn lax_bool(value: &Value) -> Option<bool> {
    match value {
        Value::Bool(b) => Some(*b),
        Value::Number(n) => match n.as_f64() {
            Some(0.0) => Some(false),
            Some(1.0) => Some(true),
            _ => None,
        },
        Value::String(s) => match s.trim().to_ascii_lowercase().as_str() {
            "1" | "true" | "t" | "yes" | "y" | "on" => Some(true),
            "0" | "false" | "f" | "no" | "n" | "off" => Some(false),
            _ => None,
        },
        _ => None,
    }
}
