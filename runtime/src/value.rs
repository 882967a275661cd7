//! Context values are JSON (the channel context is a JSON-safe copy, §1.1);
//! rules compare them with Python's semantics, not JSON's (§2.3.2).

use std::cmp::Ordering;

use mzk_analyzer::syntax::{Node, NodeKind, Value as Yaml};
use serde_json::{Map, Value};

use crate::error::Error;

/// A JSON number as Python sees it: `True == 1`, `1 == 1.0`.
fn as_number(value: &Value) -> Option<f64> {
    match value {
        Value::Bool(b) => Some(if *b { 1.0 } else { 0.0 }),
        Value::Number(n) => n.as_f64(),
        _ => None,
    }
}

/// Python's `==` over JSON values.
pub fn py_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Null, Value::Null) => true,
        (Value::String(x), Value::String(y)) => x == y,
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| py_eq(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| py_eq(v, w)))
        }
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(i), Some(j)) => i == j,
            _ => x.as_f64() == y.as_f64(),
        },
        _ => match (as_number(a), as_number(b)) {
            (Some(x), Some(y)) => x == y,
            _ => false,
        },
    }
}

/// Python's truthiness.
pub fn truthy(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
    }
}

/// The Python type name used in Python's error messages.
pub fn py_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "NoneType",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "float",
        Value::Number(_) => "int",
        Value::String(_) => "str",
        Value::Array(_) => "list",
        Value::Object(_) => "dict",
    }
}

/// Python's ordering (`<`), or the TypeError Python raises.
pub fn py_cmp(a: &Value, b: &Value, op: &str) -> Result<Ordering, Error> {
    let unorderable = || {
        Error::Eval(format!(
            "'{op}' not supported between instances of '{}' and '{}'",
            py_type(a),
            py_type(b)
        ))
    };
    match (a, b) {
        (Value::String(x), Value::String(y)) => Ok(x.chars().cmp(y.chars())),
        (Value::Array(x), Value::Array(y)) => {
            for (p, q) in x.iter().zip(y) {
                if !py_eq(p, q) {
                    return py_cmp(p, q, op);
                }
            }
            Ok(x.len().cmp(&y.len()))
        }
        _ => match (as_number(a), as_number(b)) {
            (Some(x), Some(y)) => x.partial_cmp(&y).ok_or_else(unorderable),
            _ => Err(unorderable()),
        },
    }
}

/// Python's `str()` of a value, as the prompt exposure renders it (§3.6):
/// booleans `true`/`false` there, `None` for null, a repr for containers.
pub fn exposure_str(value: &Value) -> String {
    match value {
        Value::Bool(true) => "true".into(),
        Value::Bool(false) => "false".into(),
        Value::String(s) => s.clone(),
        other => py_repr(other),
    }
}

/// Python's `repr()` of a JSON value.
pub fn py_repr(value: &Value) -> String {
    match value {
        Value::Null => "None".into(),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::Number(n) => match n.as_f64() {
            Some(f) if n.is_f64() => mzk_analyzer::syntax::scalar::python_float_repr(f),
            _ => n.to_string(),
        },
        Value::String(s) => {
            let quote = if s.contains('\'') && !s.contains('"') {
                '"'
            } else {
                '\''
            };
            let mut out = String::from(quote);
            for c in s.chars() {
                match c {
                    '\\' => out.push_str("\\\\"),
                    '\n' => out.push_str("\\n"),
                    '\t' => out.push_str("\\t"),
                    '\r' => out.push_str("\\r"),
                    c if c == quote => {
                        out.push('\\');
                        out.push(c);
                    }
                    c => out.push(c),
                }
            }
            out.push(quote);
            out
        }
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(py_repr).collect::<Vec<_>>().join(", ")
        ),
        Value::Object(map) => format!(
            "{{{}}}",
            map.iter()
                .map(|(k, v)| format!("{}: {}", py_repr(&Value::String(k.clone())), py_repr(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// A YAML node as the JSON value PyYAML + `json.dumps` would give
/// (dates and other non-JSON scalars become their Python `str()`).
pub fn yaml_to_json(node: &Node) -> Value {
    match &node.kind {
        NodeKind::Map(entries) => Value::Object(
            entries
                .iter()
                .map(|e| {
                    let key = match yaml_to_json(&e.key) {
                        Value::String(s) => s,
                        other => py_repr(&other),
                    };
                    (key, yaml_to_json(&e.value))
                })
                .collect::<Map<_, _>>(),
        ),
        NodeKind::Seq(items) => Value::Array(items.iter().map(yaml_to_json).collect()),
        NodeKind::Scalar(s) => match &s.value {
            Yaml::Null => Value::Null,
            Yaml::Bool(b) => Value::Bool(*b),
            Yaml::Int(i) => {
                i64::try_from(i.get()).map_or_else(|_| float(i.get() as f64), Value::from)
            }
            Yaml::Float(f) => float(*f),
            other => Value::String(other.python_str()),
        },
        NodeKind::Invalid => Value::Null,
    }
}

fn float(f: f64) -> Value {
    serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)
}

/// Parses a JSON text a user gives the runner (a context file, smoke files);
/// past serde_json's nesting limit the error says so in words.
pub fn parse_json(text: &str) -> Result<Value, Error> {
    serde_json::from_str(text).map_err(|e| {
        Error::Parse(if e.to_string().starts_with("recursion limit exceeded") {
            format!(
                "values are nested more than {} levels deep (line {}, column {}); no run needs this, so flatten the data",
                mzk_analyzer::base::limits::MAX_VALUE_DEPTH,
                e.line(),
                e.column()
            )
        } else {
            e.to_string()
        })
    })
}

/// Parses a YAML text (YAML 1.1, as mozaiks reads it) into JSON; the error
/// names the first problem with its line.
pub fn parse_yaml(text: &str) -> Result<Value, Error> {
    use mzk_analyzer::base::FileId;
    let mut diagnostics = Vec::new();
    let document = mzk_analyzer::syntax::parse(text, FileId(0), &mut diagnostics);
    if let Some(d) = diagnostics
        .iter()
        .find(|d| d.severity == mzk_analyzer::base::Severity::Error)
    {
        let line = text[..(d.range.start as usize).min(text.len())]
            .matches('\n')
            .count()
            + 1;
        return Err(Error::Parse(format!("line {line}: {}", d.message)));
    }
    Ok(document.root.as_ref().map_or(Value::Null, yaml_to_json))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn equality_is_pythons() {
        assert!(py_eq(&json!(true), &json!(1)));
        assert!(py_eq(&json!(false), &json!(0)));
        assert!(py_eq(&json!(1), &json!(1.0)));
        assert!(!py_eq(&json!("true"), &json!(true)));
        assert!(py_eq(&json!([1, {"a": true}]), &json!([1.0, {"a": 1}])));
        assert!(!py_eq(&json!(null), &json!(0)));
    }

    #[test]
    fn truthiness_and_repr() {
        assert!(!truthy(&json!("")) && !truthy(&json!([])) && !truthy(&json!(0.0)));
        assert!(truthy(&json!({"a": 1})));
        assert_eq!(
            py_repr(&json!({"a": [1, 2.5, null, "it's"]})),
            "{'a': [1, 2.5, None, \"it's\"]}"
        );
        assert_eq!(exposure_str(&json!(true)), "true");
        assert_eq!(exposure_str(&json!(null)), "None");
    }

    #[test]
    fn ordering_raises_like_python() {
        assert_eq!(
            py_cmp(&json!(1), &json!(2.5), "<").ok(),
            Some(Ordering::Less)
        );
        let error = py_cmp(&json!(null), &json!(1), "<").unwrap_err();
        assert!(matches!(error, Error::Eval(_)), "{error:?}");
        assert_eq!(
            error.to_string(),
            "'<' not supported between instances of 'NoneType' and 'int'"
        );
    }

    #[test]
    fn yaml_is_read_as_yaml_1_1() {
        assert_eq!(
            parse_yaml("a: yes\nb: 010\nc: '1'\n").unwrap(),
            json!({"a": true, "b": 8, "c": "1"})
        );
        let error = parse_yaml("a: [1,\n").unwrap_err();
        assert!(matches!(error, Error::Parse(_)), "{error:?}");
        assert!(error.to_string().starts_with("line"));
    }
}
