//! What mozaiks passes to an auto tool's parameters: the fields of its
//! agents' registry models, validated by Pydantic (runtime-semantics §5.4),
//! as far as they hold a known set of values.

use super::python::{auto_tool_key, BindingOwner, BindingTarget};
use super::{Bundle, ModelDef, ModelField, ModelKind};
use crate::base::FileId;
use crate::syntax::{NodeKind, Value};

/// Every value of a simple type (no collections).
pub(crate) fn simple(v: &Value) -> bool {
    matches!(
        v,
        Value::Null | Value::Bool(_) | Value::Int(_) | Value::Float(_) | Value::Str(_)
    )
}

/// The values an auto tool's parameter receives from its agents' registry
/// models (runtime-semantics §5.4): every binding of the function must be an
/// auto tool, and the field it fills a literal (or a union of literals), or
/// an `int` field (then the third item is true: any integer).
pub fn param_values(
    bundle: &Bundle,
    file: FileId,
    function: &str,
    param: &str,
) -> Result<(Vec<Value>, String, bool), String> {
    let mut values = Vec::new();
    let mut models = Vec::new();
    let mut bound = 0;
    let mut integers = false;
    for b in &bundle.bindings {
        if b.target != BindingTarget::File(file)
            || b.function.as_ref().map(|f| f.text.as_str()) != Some(function)
        {
            continue;
        }
        bound += 1;
        let BindingOwner::Tool(i) = b.owner else {
            return Err(format!(
                "`{function}` is also bound as a lifecycle tool or middleware"
            ));
        };
        let tool = &bundle.tools[i];
        if !tool.auto_tool_call {
            return Err(format!(
                "tool `{function}` is called by the model, which chooses `{param}`"
            ));
        }
        for agent in &tool.agents {
            let Some(model) = bundle
                .registry_model(&agent.text)
                .and_then(|m| bundle.model(&m.text))
            else {
                return Err(format!(
                    "auto tool `{function}`'s agent `{}` has no registry model",
                    agent.text
                ));
            };
            let Some(field) = model
                .fields
                .iter()
                .find(|f| auto_tool_key(&f.name.text) == auto_tool_key(param))
            else {
                return Err(format!(
                    "no field of `{}` fills `{param}` of `{function}`",
                    model.name.text
                ));
            };
            if let Some(default) = integer_field(field) {
                integers = true;
                values.extend(default);
            } else {
                values.extend(field_values(bundle, field).ok_or_else(|| {
                    format!("`{}.{}` is not a literal", model.name.text, field.name.text)
                })?);
            }
            models.push(model.name.text.clone());
        }
    }
    if bound == 0 || models.is_empty() {
        return Err(format!(
            "`{param}` of `{function}` is not filled by a registry model"
        ));
    }
    models.dedup();
    Ok((values, models.join("`/`"), integers))
}

fn scalar_values(nodes: &[crate::syntax::Node]) -> Option<Vec<Value>> {
    nodes
        .iter()
        .map(|n| n.as_scalar().map(|s| s.value.clone()).filter(simple))
        .collect()
}

fn named_values(bundle: &Bundle, name: &str, depth: usize) -> Option<Vec<Value>> {
    if matches!(name.to_ascii_lowercase().as_str(), "null" | "none") {
        return Some(vec![Value::Null]);
    }
    let def: &ModelDef = bundle.model(name)?;
    match def.kind {
        ModelKind::Literal => scalar_values(&def.values),
        ModelKind::Union if depth < 8 => {
            let mut out = Vec::new();
            for v in &def.variants {
                out.extend(named_values(bundle, &v.text, depth + 1)?);
            }
            Some(out)
        }
        _ => None,
    }
}

/// For an `int` field, which Pydantic validates to an integer: the value it
/// holds when the model omits it (none when it is required). `None` when it
/// is not an `int` field or its default is not an integer or null (Pydantic
/// does not validate defaults).
fn integer_field(field: &ModelField) -> Option<Option<Value>> {
    let ty = field.field_type.as_ref()?.text.as_str();
    if !matches!(ty, "int" | "integer") {
        return None;
    }
    if !field.has_default {
        return Some(None);
    }
    match field.default.as_ref().map(|d| &d.kind) {
        None => Some(Some(Value::Null)),
        Some(NodeKind::Scalar(s)) if matches!(s.value, Value::Int(_) | Value::Null) => {
            Some(Some(s.value.clone()))
        }
        Some(_) => None,
    }
}

/// The values a validated field can hold, when it is a literal.
fn field_values(bundle: &Bundle, field: &ModelField) -> Option<Vec<Value>> {
    let ty = field.field_type.as_ref()?.text.as_str();
    let mut out = match ty {
        "literal" => scalar_values(&field.values)?,
        // Pydantic validates (and converts) to a bool.
        "bool" | "boolean" => vec![Value::Bool(true), Value::Bool(false)],
        "union" => {
            let mut out = Vec::new();
            for v in &field.variants {
                out.extend(named_values(bundle, &v.text, 0)?);
            }
            out
        }
        other => named_values(bundle, other, 0)?,
    };
    if field.has_default {
        match field.default.as_ref().map(|d| &d.kind) {
            None => out.push(Value::Null),
            Some(NodeKind::Scalar(s)) if simple(&s.value) => out.push(s.value.clone()),
            Some(_) => return None,
        }
    }
    Some(out)
}
