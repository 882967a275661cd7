//! Applies a file's schema description to its YAML tree: reports every
//! violation (not only the first) and returns the normalised values that the
//! model layer lowers.

use super::normalized::{Item, Norm, Obj, ObjField};
use super::{Object, RuleContext};
use crate::base::{FileId, FileKind};
use crate::diagnostics::{did_you_mean, Diagnostic, Fix};
use crate::rules::Rule;

mod text;
mod values;
use crate::base::TextRange;
use crate::syntax::{Entry, Node, NodeKind, ScalarStyle, Value};

/// Validates a parsed file against its kind's schema. `root` is `None` for an
/// empty file. Returns the root object (possibly partial) unless the root itself
/// is unusable. The tree is consumed: each value is released once validated,
/// so a large file's tree and its validated objects are not both held whole.
pub fn validate_file(
    kind: FileKind,
    root: Option<Node>,
    file: FileId,
    out: &mut Vec<Diagnostic>,
) -> Option<Obj> {
    let schema = super::file_schema(kind);
    let empty = || Node {
        range: TextRange::empty(0),
        kind: NodeKind::Map(Vec::new()),
    };
    let mut root = match root {
        None => empty(),
        Some(node) if node.is_null() => empty(),
        Some(node) if node.as_map().is_some() => node,
        Some(node) if matches!(node.kind, NodeKind::Invalid) => return None,
        Some(node) => {
            // The reference treats some falsy roots as `{}` (task_batches.yaml: every
            // falsy root; orchestrator.yaml in the per-file check).
            let falsy = is_falsy(&node);
            if falsy && kind == FileKind::TaskBatches {
                empty()
            } else {
                out.push(Diagnostic::new(
                    Rule::RootNotMapping,
                    file,
                    node.range,
                    format!(
                        "{} must contain a mapping at its root, found a {}; write `key: value` pairs ({} documents the keys)",
                        schema.kind.path(),
                        node.type_name(),
                        schema.kind.path()
                    ),
                ));
                return None;
            }
        }
    };
    let mut validator = Validator { file, out };
    let anchor = root
        .as_map()
        .and_then(|m| m.first())
        .map_or(TextRange::empty(0), |e| e.key.range);
    Some(validator.object(&mut root, schema.root, anchor))
}

fn is_falsy(node: &Node) -> bool {
    match &node.kind {
        NodeKind::Scalar(s) => match &s.value {
            Value::Null => true,
            Value::Bool(b) => !b,
            Value::Int(i) => i.get() == 0,
            Value::Float(f) => *f == 0.0,
            Value::Str(s) => s.is_empty(),
            _ => false,
        },
        NodeKind::Seq(items) => items.is_empty(),
        NodeKind::Map(entries) => entries.is_empty(),
        NodeKind::Invalid => false,
    }
}

struct Validator<'a> {
    file: FileId,
    out: &'a mut Vec<Diagnostic>,
}

/// Drops what a validated node holds (its range stays, for messages about
/// its entry); the validated value is all that later layers read.
fn release(node: &mut Node) {
    node.kind = NodeKind::Invalid;
}

/// Takes a node out of the tree whole, for values kept as YAML produced them.
fn take(node: &mut Node) -> Node {
    std::mem::replace(
        node,
        Node {
            range: node.range,
            kind: NodeKind::Invalid,
        },
    )
}

/// The fix deleting a mapping entry, key to end of value.
fn remove_entry(key: &str, entry: &Entry) -> Fix {
    Fix::RemoveEntry {
        key: key.to_string(),
        range: entry.key.range.cover(TextRange::empty(
            entry.value.range.end.max(entry.key.range.end),
        )),
    }
}

/// Describes a node for a message: its YAML type and, for scalars, its text.
fn describe(node: &Node) -> String {
    match &node.kind {
        NodeKind::Scalar(s) => match &s.value {
            Value::Str(text) => format!("the string {}", Value::Str(text.clone()).python_repr()),
            Value::Null => "null".into(),
            other => format!("the {} `{}`", other.type_name(), other.python_str()),
        },
        _ => format!("a {}", node.type_name()),
    }
}

/// A hint when a plain scalar was resolved as a non-string by YAML 1.1, or
/// when an empty value was written (null is not "use the default").
fn quote_hint(node: &Node) -> &'static str {
    match node.as_scalar() {
        Some(s) if s.value == Value::Null => {
            " (an empty value is null, not the default: write a value or remove the key)"
        }
        Some(s)
            if s.style == ScalarStyle::Plain
                && s.value.as_str().is_none()
                && !matches!(s.value, Value::Null) =>
        {
            " (YAML 1.1 reads this unquoted text as a non-string: quote it)"
        }
        _ => "",
    }
}

impl Validator<'_> {
    fn report(&mut self, rule: Rule, range: TextRange, message: impl Into<String>) {
        self.out
            .push(Diagnostic::new(rule, self.file, range, message));
    }

    /// Reports a misspelt `word`, offering `best` (the closest candidate) as a fix.
    fn report_misspelt(
        &mut self,
        rule: Rule,
        range: TextRange,
        message: impl Into<String>,
        word: &str,
        best: Option<&str>,
    ) {
        self.out
            .push(Diagnostic::new(rule, self.file, range, message).with_replacement(word, best));
    }

    /// Validates a mapping as an object of `shape`, releasing each value of
    /// `node` once it is validated (its keys stay, for the checks between
    /// entries).
    fn object(&mut self, node: &mut Node, shape: &'static Object, anchor: TextRange) -> Obj {
        // At most one field per entry: sized once, as every list below (a
        // bundle of thousands of rules is held whole).
        let mut obj = Obj {
            shape,
            range: node.range,
            anchor,
            fields: Vec::with_capacity(node.as_map().map_or(0, <[_]>::len)),
        };
        let NodeKind::Map(entries) = &mut node.kind else {
            return obj;
        };
        // PyYAML keeps the last of duplicate keys: validate only that one.
        let mut seen_alias_and_name: Option<TextRange> = None;
        for index in 0..entries.len() {
            let entry = &entries[index];
            if matches!(entry.key.kind, NodeKind::Invalid) {
                continue;
            }
            let Some(key) = entry.key.as_str() else {
                self.report(
                    Rule::WrongType,
                    entry.key.range,
                    format!(
                        "keys must be strings, but {} is read as {}{}",
                        shape.name,
                        describe(&entry.key),
                        quote_hint(&entry.key)
                    ),
                );
                continue;
            };
            let later = entries[index + 1..]
                .iter()
                .any(|e| e.key.as_str() == Some(key));
            if later {
                continue;
            }
            let Some(field) = shape.field(key) else {
                let legacy = shape.legacy.iter().find(|(k, _)| *k == key);
                // Renaming onto a key already present would only trade one error for another.
                let best = did_you_mean(
                    key,
                    shape
                        .fields
                        .iter()
                        .map(|f| f.name)
                        .filter(|n| !entries.iter().any(|e| e.key.as_str() == Some(n))),
                );
                let allowed = shape
                    .fields
                    .iter()
                    .map(|f| f.name)
                    .collect::<Vec<_>>()
                    .join(", ");
                let message = match (legacy, best) {
                    (Some((_, hint)), _) => format!("`{key}` is not part of {}: {hint}", shape.name),
                    (None, Some(best)) => format!(
                        "unknown key `{key}` in {}: did you mean `{best}`? mozaiks refuses unknown keys when it loads the bundle, so rename it (allowed keys: {allowed})",
                        shape.name
                    ),
                    (None, None) => format!(
                        "unknown key `{key}` in {}: mozaiks refuses unknown keys when it loads the bundle, so remove it (allowed keys: {allowed})",
                        shape.name
                    ),
                };
                let mut d = Diagnostic::new(Rule::UnknownKey, self.file, entry.key.range, message)
                    .with_replacement(key, best);
                // Removal only when nothing better is known and the mapping
                // keeps other entries (an emptied mapping reads as null).
                if best.is_none() && legacy.is_none() && entries.len() > 1 {
                    d = d.with_fix(remove_entry(key, entry));
                }
                self.out.push(d);
                continue;
            };
            if field.alias.is_some() {
                let other = if field.name == key {
                    field.alias.unwrap_or_default()
                } else {
                    field.name
                };
                if entries.iter().any(|e| e.key.as_str() == Some(other)) {
                    if seen_alias_and_name.is_none() {
                        let range = if key == field.name {
                            entry.key.range
                        } else {
                            entries
                                .iter()
                                .find(|e| e.key.as_str() == Some(field.name))
                                .map_or(entry.key.range, |e| e.key.range)
                        };
                        seen_alias_and_name = Some(range);
                        let mut d = Diagnostic::new(
                            Rule::UnknownKey,
                            self.file,
                            range,
                            format!(
                                "`{}` and `{}` are the same field; write only `{}`",
                                field.name,
                                field.alias.unwrap_or_default(),
                                field.alias.unwrap_or_default()
                            ),
                        );
                        if let Some(named) =
                            entries.iter().find(|e| e.key.as_str() == Some(field.name))
                        {
                            d = d.with_fix(remove_entry(field.name, named));
                        }
                        self.out.push(d);
                    }
                    continue;
                }
            }
            let key_range = entry.key.range;
            let value = &mut entries[index].value;
            let validated = self.value(value, field.name, field.kind, key_range);
            let value_range = value.range;
            release(value);
            if let Some(item) = validated {
                obj.fields.push(ObjField {
                    name: field.name,
                    key_range,
                    item,
                });
            } else {
                // Keep a marker so that "missing" is not reported for an invalid value.
                obj.fields.push(ObjField {
                    name: field.name,
                    key_range,
                    item: Item {
                        range: value_range,
                        value: Norm::Any(Node {
                            range: value_range,
                            kind: NodeKind::Invalid,
                        }),
                    },
                });
            }
        }
        for field in shape.fields.iter().filter(|f| f.required) {
            if obj.field(field.name).is_none() {
                self.report(
                    Rule::MissingKey,
                    anchor,
                    format!(
                        "{} is missing the required key `{}`: {}",
                        shape.name, field.name, field.doc
                    ),
                );
            }
        }
        // Invalid values were kept only to silence "missing"; rules see valid ones.
        obj.fields.retain(
            |f| !matches!(&f.item.value, Norm::Any(n) if matches!(n.kind, NodeKind::Invalid)),
        );
        for rule in shape.rules {
            let mut cx = RuleContext {
                file: self.file,
                out: self.out,
                anchor,
            };
            rule(&obj, &mut cx);
        }
        obj
    }
}

/// Python `int(str)` as Pydantic's lax int applies it: surrounding whitespace,
/// a sign, `_` between digits, and an all-zero fraction (`'25.000'`).
pub fn python_int(text: &str) -> Option<i128> {
    let t = text.trim();
    let (neg, body) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let (whole, frac) = match body.split_once('.') {
        Some((w, f)) if !f.is_empty() && f.bytes().all(|b| b == b'0') => (w, Some(f)),
        Some(_) => return None,
        None => (body, None),
    };
    let _ = frac;
    if whole.is_empty() || whole.starts_with('_') || whole.ends_with('_') || whole.contains("__") {
        return None;
    }
    if !whole.bytes().all(|b| b.is_ascii_digit() || b == b'_') {
        return None;
    }
    let n: i128 = whole.replace('_', "").parse().ok()?;
    Some(if neg { -n } else { n })
}

/// Python `float(str)`.
pub fn python_float(text: &str) -> Option<f64> {
    let t = text.trim().replace('_', "");
    match t.to_ascii_lowercase().trim_start_matches(['+', '-']) {
        "inf" | "infinity" => Some(if t.starts_with('-') {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        }),
        "nan" => Some(f64::NAN),
        _ => t.parse().ok(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lax_int_strings() {
        assert_eq!(python_int(" 25 "), Some(25));
        assert_eq!(python_int("0025"), Some(25));
        assert_eq!(python_int("2_5"), Some(25));
        assert_eq!(python_int("25.000"), Some(25));
        assert_eq!(python_int("010"), Some(10));
        assert_eq!(python_int("+25"), Some(25));
        for bad in ["25.", "2.5", "1e3", "0x1F", "0b101", "25_", "", "٢٥"] {
            assert_eq!(python_int(bad), None, "{bad}");
        }
        assert_eq!(python_float("1e3"), Some(1000.0));
        assert_eq!(python_float(".5"), Some(0.5));
        assert!(python_float("nan").unwrap().is_nan());
    }

    #[test]
    #[cfg(debug_assertions)]
    fn reading_a_key_the_schema_does_not_describe_stops_debug_builds() {
        let message = crate::base::quiet_panic::panic_message(|| {
            let obj = Obj {
                shape: super::super::file_schema(FileKind::Orchestrator).root,
                range: TextRange::new(0, 0),
                anchor: TextRange::new(0, 0),
                fields: Vec::new(),
            };
            let _ = obj.str("workflow_nam");
        });
        assert!(
            message.is_some_and(|m| m.contains("`workflow_nam` is not a key of orchestrator.yaml"))
        );
    }
}
