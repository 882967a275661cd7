//! Structured outputs (§5): a reply is validated against its registry model
//! exactly as mozaiks 0.2.0 does (fence stripped, JSON object required,
//! undeclared keys refused at every depth, lax scalars), and the synthetic
//! model builds replies that pass.

use mzk_analyzer::model::{Bundle, ModelDef, ModelKind};
use serde_json::{Map, Value};

use crate::error::Error;
use crate::value::{py_eq, py_repr, yaml_to_json};

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

/// The quoted strings of an expression (the values it compares with).
pub fn quoted_strings(expression: &str) -> Vec<Value> {
    let mut out = Vec::new();
    let mut rest = expression;
    while let Some(start) = rest.find(['\'', '"']) {
        let quote = &rest[start..start + 1];
        let after = &rest[start + 1..];
        let Some(end) = after.find(quote) else { break };
        out.push(Value::String(after[..end].to_string()));
        rest = &after[end + 1..];
    }
    out
}

/// Values the bundle tests somewhere: `condition_value`s and strings inside
/// `context_expression`s, and tool outcome values. The synthetic model picks
/// these for literal fields so that a synthetic run walks routed edges.
pub fn tested_values(bundle: &Bundle) -> Vec<Value> {
    let mut out = Vec::new();
    for rule in &bundle.rules {
        if let Some(v) = &rule.condition_value {
            out.push(yaml_to_json(v));
        }
        if let Some(expr) = &rule.context_expression {
            out.extend(quoted_strings(expr.as_str()));
        }
    }
    for tool in &bundle.tools {
        if let Some(outcome) = &tool.outcome {
            out.extend(outcome.values.iter().map(|v| Value::String(v.text.clone())));
        }
    }
    out
}

/// Which literal and boolean values the synthetic model picks: `first`
/// in its order (the values that route the agent toward a completed run),
/// then any value the bundle tests (`tested`), then the first allowed.
#[derive(Debug, Clone, Copy, Default)]
pub struct Preference<'a> {
    pub first: &'a [Value],
    pub tested: &'a [Value],
}

/// A value that satisfies the named type: literals and booleans as the
/// preference says, text fields a short text made from the field's name,
/// lists empty, numbers zero, optional fields null.
pub fn synthesize(bundle: &Bundle, model: &str, prefer: Preference<'_>) -> Value {
    synth_named(bundle, model, None, prefer, 0)
}

fn pick_literal(values: &[Value], prefer: Preference<'_>) -> Value {
    prefer
        .first
        .iter()
        .find_map(|p| values.iter().find(|v| same_value(p, v)))
        .or_else(|| {
            values
                .iter()
                .find(|v| prefer.tested.iter().any(|t| py_eq(t, v)))
        })
        .or_else(|| values.first())
        .cloned()
        .unwrap_or(Value::Null)
}

/// Equal and of the same JSON kind (`true` is not `1` here).
fn same_value(a: &Value, b: &Value) -> bool {
    std::mem::discriminant(a) == std::mem::discriminant(b) && py_eq(a, b)
}

/// Non-empty text a reader can tell is made up: `(synthetic) agent message`.
fn synthetic_text(field: Option<&str>) -> Value {
    let what = field.map_or_else(|| "text".to_string(), |f| f.replace('_', " "));
    Value::String(format!("(synthetic) {what}"))
}

fn first_variant(variants: &[mzk_analyzer::model::Name]) -> Option<&str> {
    variants
        .iter()
        .find(|v| !v.text.eq_ignore_ascii_case("null") && !v.text.eq_ignore_ascii_case("none"))
        .map(|v| v.as_str())
}

fn synth_named(
    bundle: &Bundle,
    name: &str,
    field: Option<&str>,
    prefer: Preference<'_>,
    depth: usize,
) -> Value {
    if depth > MAX_DEPTH {
        return Value::Null;
    }
    match bundle.model(name) {
        Some(def) => match def.kind {
            ModelKind::Literal => pick_literal(
                &def.values.iter().map(yaml_to_json).collect::<Vec<_>>(),
                prefer,
            ),
            ModelKind::Union => first_variant(&def.variants).map_or(Value::Null, |v| {
                synth_named(bundle, v, field, prefer, depth + 1)
            }),
            ModelKind::Model => {
                let mut out = Map::new();
                for f in &def.fields {
                    let t = f.field_type.as_ref().map_or("str", |t| t.as_str());
                    let name = Some(f.name.text.as_str());
                    let value = match t {
                        "literal" => pick_literal(
                            &f.values.iter().map(yaml_to_json).collect::<Vec<_>>(),
                            prefer,
                        ),
                        "union" => first_variant(&f.variants).map_or(Value::Null, |v| {
                            synth_named(bundle, v, name, prefer, depth + 1)
                        }),
                        _ if optional_type(Some(t)) => Value::Null,
                        _ => synth_named(bundle, t, name, prefer, depth + 1),
                    };
                    out.insert(f.name.text.clone(), value);
                }
                Value::Object(out)
            }
        },
        None => match name {
            "str" | "string" => synthetic_text(field),
            "int" | "integer" => Value::from(0),
            "float" => Value::from(0.0),
            // A boolean the agent's routing tests, else false.
            "bool" => prefer
                .first
                .iter()
                .find(|v| v.is_boolean())
                .cloned()
                .unwrap_or(Value::Bool(false)),
            "dict" | "Dict" => Value::Object(Map::new()),
            "optional_str" | "Optional[str]" | "optional_dict" | "optional_list" => Value::Null,
            _ => Value::Array(Vec::new()),
        },
    }
}

/// The provider response schema of a registry model (OpenAI `json_schema`
/// with `strict`), or `None` when the model cannot be made strict (an open
/// mapping or an untyped list inside), as mozaiks decides (§1.5 d).
pub fn strict_schema(bundle: &Bundle, model: &str) -> Option<Value> {
    schema_named(bundle, model, 0)
}

fn schema_named(bundle: &Bundle, name: &str, depth: usize) -> Option<Value> {
    if depth > MAX_DEPTH {
        return None;
    }
    let Some(def) = bundle.model(name) else {
        return schema_type(bundle, name, None, &[], &[], depth);
    };
    match def.kind {
        ModelKind::Literal => Some(serde_json::json!({
            "enum": def.values.iter().map(yaml_to_json).collect::<Vec<_>>()
        })),
        ModelKind::Union => {
            let variants: Vec<&str> = def.variants.iter().map(|v| v.as_str()).collect();
            schema_union(bundle, &variants, depth)
        }
        ModelKind::Model => {
            let mut properties = Map::new();
            for f in &def.fields {
                let variants: Vec<&str> = f.variants.iter().map(|v| v.as_str()).collect();
                let values: Vec<Value> = f.values.iter().map(yaml_to_json).collect();
                let schema = schema_type(
                    bundle,
                    f.field_type.as_ref().map_or("str", |t| t.as_str()),
                    f.items.as_ref().map(|i| i.as_str()),
                    &variants,
                    &values,
                    depth + 1,
                )?;
                properties.insert(f.name.text.clone(), schema);
            }
            let required: Vec<Value> = def
                .fields
                .iter()
                .map(|f| Value::String(f.name.text.clone()))
                .collect();
            Some(serde_json::json!({
                "type": "object",
                "properties": properties,
                "required": required,
                "additionalProperties": false,
            }))
        }
    }
}

fn nullable(schema: Value) -> Value {
    serde_json::json!({"anyOf": [schema, {"type": "null"}]})
}

fn schema_union(bundle: &Bundle, variants: &[&str], depth: usize) -> Option<Value> {
    let optional = variants
        .iter()
        .any(|v| v.eq_ignore_ascii_case("null") || v.eq_ignore_ascii_case("none"));
    let mut any = Vec::new();
    for v in variants
        .iter()
        .filter(|v| !v.eq_ignore_ascii_case("null") && !v.eq_ignore_ascii_case("none"))
    {
        any.push(schema_named(bundle, v, depth + 1)?);
    }
    if optional {
        any.push(serde_json::json!({"type": "null"}));
    }
    Some(serde_json::json!({ "anyOf": any }))
}

fn schema_type(
    bundle: &Bundle,
    field_type: &str,
    items: Option<&str>,
    variants: &[&str],
    values: &[Value],
    depth: usize,
) -> Option<Value> {
    use serde_json::json;
    Some(match field_type {
        "str" | "string" => json!({"type": "string"}),
        "int" | "integer" => json!({"type": "integer"}),
        "float" => json!({"type": "number"}),
        "bool" => json!({"type": "boolean"}),
        "optional_str" | "Optional[str]" => nullable(json!({"type": "string"})),
        // Open mappings and untyped lists cannot be strict.
        "dict" | "Dict" | "optional_dict" | "List" => return None,
        "list" => json!({"type": "array", "items": schema_named(bundle, items?, depth + 1)?}),
        "optional_list" => {
            nullable(json!({"type": "array", "items": schema_named(bundle, items?, depth + 1)?}))
        }
        "literal" => json!({ "enum": values }),
        "union" => schema_union(bundle, variants, depth)?,
        other => match other
            .strip_prefix("list[")
            .and_then(|r| r.strip_suffix(']'))
        {
            Some(inner) => {
                json!({"type": "array", "items": schema_named(bundle, inner, depth + 1)?})
            }
            None if bundle.model(other).is_some() => schema_named(bundle, other, depth + 1)?,
            None => return None,
        },
    })
}
