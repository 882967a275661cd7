//! Outputs that pass validation: the synthetic model's replies, and the
//! strict JSON schema a live model is asked to follow.

use mzk_analyzer::model::{Bundle, ModelKind};
use serde_json::{Map, Value};

use super::{optional_type, MAX_DEPTH};
use crate::value::{py_eq, yaml_to_json};

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
