//! mzk's reading of YAML documents, for the differential test against
//! PyYAML (tests/yaml_differential): reads JSON lines `{"id", "text"}` on
//! stdin and writes one JSON line per document on stdout, in the same order:
//!
//! - `{"id", "error": INDEX, "code", "message"}` when mzk refuses the text
//!   (the YAML layer's first error; INDEX counts characters from the start
//!   of the text, as PyYAML's `Mark.index` does), or
//! - `{"id", "value": V}` with the value mzk reads, in the typed form the
//!   PyYAML side writes too: `null`, a JSON string for `str`, and
//!   `{"bool"|"int"|"float"|"date"|"datetime"|"binary": …}`, lists, and
//!   `{"map": [[key, value], …]}` with Python's dict semantics (a repeated
//!   key keeps its first place and its last value; `1`, `1.0` and `true`
//!   are one key).

use std::io::{BufRead, Write};

use mzk_analyzer::base::{FileId, Severity};
use mzk_analyzer::syntax::{parse, Node, NodeKind, Value};
use serde_json::{json, Value as Json};

fn main() {
    let stdin = std::io::stdin();
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    for line in stdin.lock().lines() {
        let line = line.expect("stdin is readable");
        if line.trim().is_empty() {
            continue;
        }
        let case: Json = serde_json::from_str(&line).expect("a JSON line {id, text}");
        let text = case["text"].as_str().expect("text is a string");
        let answer = read(text);
        let mut answer = answer;
        answer["id"] = case["id"].clone();
        writeln!(out, "{answer}").expect("stdout is writable");
    }
}

fn read(text: &str) -> Json {
    let mut diagnostics = Vec::new();
    let document = parse(text, FileId(0), &mut diagnostics);
    // The YAML layer reports at most one syntax error, which stops it, and
    // the values it cannot construct in the order PyYAML meets them: its
    // first error is the one PyYAML raises.
    let refusal = diagnostics.iter().find(|d| d.severity == Severity::Error);
    if let Some(error) = refusal {
        let index = text[..error.range.start as usize].chars().count();
        return json!({"error": index, "code": error.rule.code(), "message": error.message});
    }
    if document.failed {
        return json!({"error": null, "code": null, "message": "failed without an error"});
    }
    json!({"value": document.root.as_ref().map_or(Json::Null, typed)})
}

fn typed(node: &Node) -> Json {
    match &node.kind {
        NodeKind::Scalar(scalar) => scalar_value(&scalar.value),
        NodeKind::Seq(items) => Json::Array(items.iter().map(typed).collect()),
        NodeKind::Map(entries) => {
            let mut pairs: Vec<(String, Json, Json)> = Vec::new();
            for entry in entries {
                let identity = key_identity(&entry.key);
                let value = typed(&entry.value);
                match pairs.iter_mut().find(|(seen, ..)| *seen == identity) {
                    Some(pair) => pair.2 = value,
                    None => pairs.push((identity, typed(&entry.key), value)),
                }
            }
            json!({"map": pairs.into_iter().map(|(_, k, v)| json!([k, v])).collect::<Vec<_>>()})
        }
        NodeKind::Invalid => json!({"invalid": null}),
    }
}

/// Python's dict-key identity: equal numbers are one key whatever their type.
fn key_identity(key: &Node) -> String {
    match &key.kind {
        NodeKind::Scalar(scalar) => scalar.value.hash_key(),
        _ => typed(key).to_string(),
    }
}

fn scalar_value(value: &Value) -> Json {
    match value {
        Value::Null => Json::Null,
        Value::Bool(b) => json!({"bool": b}),
        Value::Int(i) => json!({"int": i.to_string()}),
        Value::BigInt(digits) => json!({"int": digits}),
        Value::Float(_) => json!({"float": value.python_str()}),
        Value::Str(s) => json!(s),
        Value::Date(d) => json!({"date": d}),
        Value::DateTime(d) => json!({"datetime": d}),
        Value::Binary(bytes) => {
            json!({"binary": bytes.iter().map(|b| format!("{b:02x}")).collect::<String>()})
        }
    }
}
