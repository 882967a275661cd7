//! Applies a file's schema description to its YAML tree: reports every
//! violation (not only the first) and returns the normalised values that the
//! model layer lowers.

use super::files::FileKind;
use super::kinds::{reserved_context_name, Default, KeyKind, Kind, ListKind, TextKind};
use super::{Object, RuleContext};
use crate::diagnostics::{did_you_mean, mean_hint, suggestion, Diagnostic, FileId, Fix};
use crate::rules::Rule;
use crate::syntax::{Entry, Node, NodeKind, ScalarStyle, TextRange, Value};

/// A normalised value.
#[derive(Debug, Clone, PartialEq)]
pub enum Norm {
    Null,
    Bool(bool),
    Int(i128),
    Float(f64),
    Str(String),
    /// A list of normalised items (strings of a string list, objects of an object list).
    List(Vec<Item>),
    /// A mapping from names to items (definitions, models, registry …).
    Map(Vec<(Item, Item)>),
    Obj(Obj),
    /// A value kept exactly as YAML produced it (`any`, free mappings).
    Any(Node),
}

/// A normalised value with where it was written.
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    pub range: TextRange,
    pub value: Norm,
}

impl Item {
    pub fn as_str(&self) -> Option<&str> {
        match &self.value {
            Norm::Str(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_obj(&self) -> Option<&Obj> {
        match &self.value {
            Norm::Obj(o) => Some(o),
            _ => None,
        }
    }

    pub fn as_list(&self) -> &[Item] {
        match &self.value {
            Norm::List(items) => items,
            _ => &[],
        }
    }

    pub fn as_map(&self) -> &[(Item, Item)] {
        match &self.value {
            Norm::Map(entries) => entries,
            _ => &[],
        }
    }

    pub fn is_null(&self) -> bool {
        matches!(self.value, Norm::Null)
    }
}

/// A validated object: the fields that were present and valid, in source order.
#[derive(Debug, Clone)]
pub struct Obj {
    pub shape: &'static Object,
    /// The whole mapping.
    pub range: TextRange,
    /// Where to point for "missing key" and whole-object problems.
    pub anchor: TextRange,
    pub fields: Vec<ObjField>,
}

impl PartialEq for Obj {
    fn eq(&self, other: &Obj) -> bool {
        std::ptr::eq(self.shape, other.shape)
            && self.range == other.range
            && self.fields == other.fields
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct ObjField {
    pub name: &'static str,
    pub key_range: TextRange,
    pub item: Item,
}

impl Obj {
    pub fn field(&self, name: &str) -> Option<&ObjField> {
        self.fields.iter().find(|f| f.name == name)
    }

    /// The item written for `name` (present and valid).
    pub fn get(&self, name: &str) -> Option<&Item> {
        self.field(name).map(|f| &f.item)
    }

    /// The key's range when written, else the object's anchor.
    pub fn key_range(&self, name: &str) -> TextRange {
        self.field(name).map_or(self.anchor, |f| f.key_range)
    }

    /// The value's range when written, else the object's anchor.
    pub fn value_range(&self, name: &str) -> TextRange {
        self.get(name).map_or(self.anchor, |i| i.range)
    }

    /// A non-null string value.
    pub fn str(&self, name: &str) -> Option<&str> {
        self.get(name).and_then(Item::as_str)
    }

    /// A bool value, or the schema default.
    pub fn bool(&self, name: &str) -> Option<bool> {
        match self.get(name).map(|i| &i.value) {
            Some(Norm::Bool(b)) => Some(*b),
            Some(_) => None,
            None => match self.shape.field(name).map(|f| f.default) {
                Some(Default::Bool(b)) => Some(b),
                _ => None,
            },
        }
    }

    /// An int value, or the schema default.
    pub fn int(&self, name: &str) -> Option<i128> {
        match self.get(name).map(|i| &i.value) {
            Some(Norm::Int(n)) => Some(*n),
            Some(_) => None,
            None => match self.shape.field(name).map(|f| f.default) {
                Some(Default::Int(n)) => Some(n as i128),
                _ => None,
            },
        }
    }

    pub fn obj(&self, name: &str) -> Option<&Obj> {
        self.get(name).and_then(Item::as_obj)
    }

    pub fn list(&self, name: &str) -> &[Item] {
        self.get(name).map_or(&[], Item::as_list)
    }

    pub fn map(&self, name: &str) -> &[(Item, Item)] {
        self.get(name).map_or(&[], Item::as_map)
    }

    /// True when the field is written with a non-null value.
    pub fn has(&self, name: &str) -> bool {
        self.get(name).is_some_and(|i| !i.is_null())
    }
}

/// Validates a parsed file against its kind's schema. `root` is `None` for an
/// empty file. Returns the root object (possibly partial) unless the root itself
/// is unusable.
pub fn validate_file(
    kind: FileKind,
    root: Option<&Node>,
    file: FileId,
    out: &mut Vec<Diagnostic>,
) -> Option<Obj> {
    let schema = super::file_schema(kind);
    let empty = Node {
        range: TextRange::empty(0),
        kind: NodeKind::Map(Vec::new()),
    };
    let root = match root {
        None => &empty,
        Some(node) if node.is_null() => &empty,
        Some(node) if node.as_map().is_some() => node,
        Some(node) if matches!(node.kind, NodeKind::Invalid) => return None,
        Some(node) => {
            // The reference treats some falsy roots as `{}` (task_batches.yaml: every
            // falsy root; orchestrator.yaml in the per-file check).
            let falsy = is_falsy(node);
            if falsy && kind == FileKind::TaskBatches {
                &empty
            } else {
                out.push(Diagnostic::new(
                    Rule::RootNotMapping,
                    file,
                    node.range,
                    format!(
                        "{} must contain a mapping at its root, found a {}; write `key: value` pairs ({} documents the keys)",
                        schema.path,
                        node.type_name(),
                        schema.path
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
    Some(validator.object(root, schema.root, anchor))
}

fn is_falsy(node: &Node) -> bool {
    match &node.kind {
        NodeKind::Scalar(s) => match &s.value {
            Value::Null => true,
            Value::Bool(b) => !b,
            Value::Int(i) => *i == 0,
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

    fn object(&mut self, node: &Node, shape: &'static Object, anchor: TextRange) -> Obj {
        let mut obj = Obj {
            shape,
            range: node.range,
            anchor,
            fields: Vec::new(),
        };
        let Some(entries) = node.as_map() else {
            return obj;
        };
        // PyYAML keeps the last of duplicate keys: validate only that one.
        let mut seen_alias_and_name: Option<TextRange> = None;
        for (index, entry) in entries.iter().enumerate() {
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
            if let Some(item) = self.value(&entry.value, field.name, field.kind, entry.key.range) {
                obj.fields.push(ObjField {
                    name: field.name,
                    key_range: entry.key.range,
                    item,
                });
            } else {
                // Keep a marker so that "missing" is not reported for an invalid value.
                obj.fields.push(ObjField {
                    name: field.name,
                    key_range: entry.key.range,
                    item: Item {
                        range: entry.value.range,
                        value: Norm::Any(Node {
                            range: entry.value.range,
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

    fn value(&mut self, node: &Node, name: &str, kind: Kind, key_range: TextRange) -> Option<Item> {
        if matches!(node.kind, NodeKind::Invalid) {
            return None;
        }
        let range = if node.range.is_empty() {
            key_range
        } else {
            node.range
        };
        let item = |value| Some(Item { range, value });
        let scalar = node.as_scalar().map(|s| &s.value);
        match kind {
            Kind::Text(text_kind) => self
                .text(node, name, text_kind, range)
                .map(|v| Item { range, value: v }),
            Kind::Enum { values, nullable } => {
                if nullable && node.is_null() {
                    return item(Norm::Null);
                }
                match node.as_str() {
                    Some(s) if values.contains(&s) => item(Norm::Str(s.to_string())),
                    Some(s) => {
                        let best = did_you_mean(s, values.iter().copied());
                        self.report_misspelt(
                            Rule::InvalidEnumValue,
                            range,
                            format!(
                                "`{name}` must be one of {}, not `{s}`{} (values are case-sensitive)",
                                one_of(values),
                                mean_hint(s, best)
                            ),
                            s,
                            best,
                        );
                        None
                    }
                    None => {
                        self.report(
                            Rule::InvalidEnumValue,
                            range,
                            format!(
                                "`{name}` must be one of {}, found {}{}",
                                one_of(values),
                                describe(node),
                                quote_hint(node)
                            ),
                        );
                        None
                    }
                }
            }
            Kind::ToolType { nullable } => {
                if nullable && node.is_null() {
                    return item(Norm::Str("Agent_Tool".into()));
                }
                let text = match scalar {
                    Some(Value::Null) | None if node.as_scalar().is_some() => String::new(),
                    Some(v) => v.python_str(),
                    None => node.python_str(),
                };
                let folded = text.trim().to_lowercase().replace('-', "_");
                let canonical = match folded.as_str() {
                    "agent_tool" => "Agent_Tool",
                    "ui_tool" => "UI_Tool",
                    "ui_surface" => "UI_Surface",
                    _ => {
                        let hint = if folded == "standard" {
                            " (the legacy `Standard` is now `Agent_Tool`)".to_string()
                        } else {
                            suggestion(text.trim(), ["Agent_Tool", "UI_Tool", "UI_Surface"])
                        };
                        self.report(
                            Rule::InvalidEnumValue,
                            range,
                            format!("`{name}` must be `Agent_Tool`, `UI_Tool` or `UI_Surface`, found {}{hint}", describe(node)),
                        );
                        return None;
                    }
                };
                item(Norm::Str(canonical.into()))
            }
            Kind::LowerEnum { values } | Kind::Catalog { values } => {
                let text = match scalar {
                    Some(Value::Null) => return item(Norm::Null),
                    Some(v) => v.python_str(),
                    None => node.python_str(),
                };
                let mut text = text.trim().to_string();
                if text.is_empty() {
                    return item(Norm::Null);
                }
                if matches!(kind, Kind::LowerEnum { .. }) {
                    text = text.to_lowercase();
                }
                if values.contains(&text.as_str()) {
                    item(Norm::Str(text))
                } else {
                    // Retired values get an explanation instead of a spelling fix.
                    let (legacy, best) = match (name, text.as_str()) {
                        ("condition_type", "expression" | "llm" | "string_llm") => (
                            " (LLM and free-text routing were removed in 0.2.0: route on a context variable with context_equals/context_expression, or on tool_called)".to_string(),
                            None,
                        ),
                        ("workflow_primitive", "composer_reply" | "run_status_banner" | "agent_status_feed" | "awaiting_reply_banner") => (
                            " (this id belongs to the chat shell and cannot be used by a workflow tool)".to_string(),
                            None,
                        ),
                        _ => {
                            let best = did_you_mean(&text, values.iter().copied());
                            (mean_hint(&text, best), best)
                        }
                    };
                    self.report_misspelt(
                        Rule::InvalidEnumValue,
                        range,
                        format!(
                            "`{name}` must be one of {}, not `{text}`{legacy}",
                            one_of(values)
                        ),
                        &text,
                        best,
                    );
                    None
                }
            }
            Kind::VersionOne => match scalar {
                Some(Value::Int(1)) | Some(Value::Bool(true)) => item(Norm::Int(1)),
                Some(Value::Float(f)) if *f == 1.0 => item(Norm::Int(1)),
                _ => {
                    self.report(
                        Rule::InvalidEnumValue,
                        range,
                        format!("`{name}` must be the integer 1 (the only task_batches.yaml version), found {}", describe(node)),
                    );
                    None
                }
            },
            Kind::Bool { nullable } => {
                let lax = |s: &str| match s.to_ascii_lowercase().as_str() {
                    "true" | "yes" | "on" | "y" | "t" | "1" => Some(true),
                    "false" | "no" | "off" | "n" | "f" | "0" => Some(false),
                    _ => None,
                };
                let (value, coerced) = match scalar {
                    Some(Value::Bool(b)) => (Some(*b), false),
                    Some(Value::Null) if nullable => return item(Norm::Null),
                    Some(Value::Int(i)) if *i == 0 || *i == 1 => (Some(*i == 1), true),
                    Some(Value::Float(f)) if *f == 0.0 || *f == 1.0 => (Some(*f == 1.0), true),
                    Some(Value::Str(s)) => (lax(s), true),
                    _ => (None, false),
                };
                match value {
                    Some(b) => {
                        if coerced {
                            self.report(
                                Rule::LaxCoercion,
                                range,
                                format!("`{name}` is given {} and mozaiks reads it as `{b}` only through lax coercion; write `{b}` without quotes", describe(node)),
                            );
                        }
                        item(Norm::Bool(b))
                    }
                    None => {
                        self.report(
                            Rule::WrongType,
                            range,
                            format!(
                                "`{name}` must be `true` or `false`, found {}",
                                describe(node)
                            ),
                        );
                        None
                    }
                }
            }
            Kind::Int {
                min,
                max,
                nullable,
                strict,
            } => {
                let (value, coerced) = match scalar {
                    Some(Value::Int(i)) => (Some(*i), false),
                    Some(Value::BigInt(d)) => (
                        Some(if d.starts_with('-') {
                            i128::MIN
                        } else {
                            i128::MAX
                        }),
                        false,
                    ),
                    Some(Value::Null) if nullable => return item(Norm::Null),
                    _ if strict => (None, false),
                    Some(Value::Bool(b)) => (Some(*b as i128), true),
                    Some(Value::Float(f)) if f.is_finite() && f.fract() == 0.0 => {
                        (Some(*f as i128), true)
                    }
                    Some(Value::Str(s)) => (python_int(s), true),
                    _ => (None, false),
                };
                let Some(n) = value else {
                    let how = if strict {
                        " written as a plain YAML integer (no quotes, no decimal point)"
                    } else {
                        ""
                    };
                    self.report(
                        Rule::WrongType,
                        range,
                        format!("`{name}` must be an integer{how}, found {}", describe(node)),
                    );
                    return None;
                };
                if min.is_some_and(|m| n < m as i128) || max.is_some_and(|m| n > m as i128) {
                    let bounds = match (min, max) {
                        (Some(a), Some(b)) => format!("between {a} and {b}"),
                        (Some(a), None) => format!("at least {a}"),
                        (None, Some(b)) => format!("at most {b}"),
                        (None, None) => String::new(),
                    };
                    self.report(
                        Rule::OutOfRange,
                        range,
                        format!("`{name}` must be {bounds}, found {}", node.python_str()),
                    );
                    return None;
                }
                if coerced {
                    self.report(
                        Rule::LaxCoercion,
                        range,
                        format!("`{name}` is given {} and mozaiks reads it as {n} only through lax coercion; write {n} without quotes", describe(node)),
                    );
                }
                item(Norm::Int(n))
            }
            Kind::Float { min } => {
                let (value, coerced) = match scalar {
                    Some(Value::Int(i)) => (Some(*i as f64), false),
                    Some(Value::Float(f)) => (Some(*f), false),
                    Some(Value::Bool(b)) => (Some(*b as i32 as f64), true),
                    Some(Value::Str(s)) => (python_float(s), true),
                    _ => (None, false),
                };
                match value {
                    None => {
                        self.report(
                            Rule::WrongType,
                            range,
                            format!("`{name}` must be a number, found {}", describe(node)),
                        );
                        None
                    }
                    Some(f) if f < min => {
                        self.report(
                            Rule::OutOfRange,
                            range,
                            format!(
                                "`{name}` must be at least {min}, found {}",
                                node.python_str()
                            ),
                        );
                        None
                    }
                    Some(f) => {
                        if coerced {
                            self.report(
                                Rule::LaxCoercion,
                                range,
                                format!("`{name}` is given {} and mozaiks reads it as a number only through lax coercion; write the number without quotes", describe(node)),
                            );
                        }
                        item(Norm::Float(f))
                    }
                }
            }
            Kind::List(list_kind) => self
                .list(node, name, list_kind, range)
                .map(|v| Item { range, value: v }),
            Kind::EnumList { values, dedupe } => {
                let items = self.seq(node, name)?;
                let mut out: Vec<Item> = Vec::new();
                let mut ok = true;
                for it in items {
                    match it.as_str() {
                        Some(s) if values.contains(&s) => {
                            if !(dedupe && out.iter().any(|o| o.as_str() == Some(s))) {
                                out.push(Item {
                                    range: it.range,
                                    value: Norm::Str(s.into()),
                                });
                            }
                        }
                        other => {
                            ok = false;
                            let extra = match other {
                                Some("sentinel_text_trigger") => " (`sentinel_text_trigger` cannot be declared: it is inferred for agent_text triggers that use `equals`)".to_string(),
                                Some(s) => suggestion(s, values.iter().copied()),
                                None => String::new(),
                            };
                            self.report(
                                Rule::InvalidEnumValue,
                                it.range,
                                format!(
                                    "{} is not an allowed `{name}` entry{extra}; allowed: {}",
                                    describe(it),
                                    values.join(", ")
                                ),
                            );
                        }
                    }
                }
                ok.then_some(Item {
                    range,
                    value: Norm::List(out),
                })
            }
            Kind::StrOrList => match &node.kind {
                NodeKind::Scalar(_) if node.as_str().is_some() => self
                    .text(node, name, TextKind::Required, range)
                    .map(|v| Item { range, value: v }),
                NodeKind::Seq(items) => {
                    let mut out: Vec<Item> = Vec::new();
                    for it in items {
                        match it.as_str() {
                            Some(s) => {
                                let s = s.trim();
                                if !s.is_empty() && !out.iter().any(|o| o.as_str() == Some(s)) {
                                    out.push(Item { range: it.range, value: Norm::Str(s.into()) });
                                }
                            }
                            None => self.report(
                                Rule::LaxCoercion,
                                it.range,
                                format!("{} in the `{name}` list is silently dropped by mozaiks (only strings count); remove it or quote it", describe(it)),
                            ),
                        }
                    }
                    if out.is_empty() {
                        self.report(
                            Rule::EmptyValue,
                            range,
                            format!("the `{name}` list must name at least one agent"),
                        );
                        return None;
                    }
                    item(Norm::List(out))
                }
                _ => {
                    self.report(
                        Rule::WrongType,
                        range,
                        format!(
                            "`{name}` must be an agent name or a list of agent names, found {}",
                            describe(node)
                        ),
                    );
                    None
                }
            },
            Kind::Dict { nullable } => match &node.kind {
                NodeKind::Scalar(Scalar {
                    value: Value::Null, ..
                }) if nullable => item(Norm::Null),
                NodeKind::Map(entries) => {
                    let mut ok = true;
                    for e in entries {
                        if e.key.as_str().is_none() && !matches!(e.key.kind, NodeKind::Invalid) {
                            ok = false;
                            self.report(
                                Rule::WrongType,
                                e.key.range,
                                format!(
                                    "keys of `{name}` must be strings, found {}{}",
                                    describe(&e.key),
                                    quote_hint(&e.key)
                                ),
                            );
                        }
                    }
                    ok.then(|| Item {
                        range,
                        value: Norm::Any(node.clone()),
                    })
                }
                _ => {
                    self.report(
                        Rule::WrongType,
                        range,
                        format!("`{name}` must be a mapping, found {}", describe(node)),
                    );
                    None
                }
            },
            Kind::DictOrDefault | Kind::Any => item(Norm::Any(node.clone())),
            Kind::Object { shape, nullable } => {
                if node.is_null() && nullable {
                    return item(Norm::Null);
                }
                if node.as_map().is_none() {
                    self.report(
                        Rule::WrongType,
                        range,
                        format!(
                            "`{name}` must be a mapping ({}), found {}",
                            shape.name,
                            describe(node)
                        ),
                    );
                    return None;
                }
                item(Norm::Obj(self.object(node, shape, key_range)))
            }
            Kind::ObjectList(shape) => {
                let items = self.seq(node, name)?;
                let mut out = Vec::new();
                for it in items {
                    if it.as_map().is_none() {
                        if !matches!(it.kind, NodeKind::Invalid) {
                            self.report(
                                Rule::WrongType,
                                it.range,
                                format!(
                                    "each `{name}` entry must be a mapping ({}), found {}",
                                    shape.name,
                                    describe(it)
                                ),
                            );
                        }
                        continue;
                    }
                    let anchor = it
                        .as_map()
                        .and_then(|m| m.first())
                        .map_or(it.range, |e| e.key.range);
                    out.push(Item {
                        range: it.range,
                        value: Norm::Obj(self.object(it, shape, anchor)),
                    });
                }
                item(Norm::List(out))
            }
            Kind::ObjectMap {
                shape,
                key,
                non_empty,
            } => {
                let entries = self.map_entries(node, name)?;
                let mut out = Vec::new();
                for e in entries {
                    let Some(k) = self.map_key(e, name, key) else {
                        continue;
                    };
                    if e.value.as_map().is_none() {
                        if !matches!(e.value.kind, NodeKind::Invalid) {
                            self.report(
                                Rule::WrongType,
                                if e.value.range.is_empty() {
                                    e.key.range
                                } else {
                                    e.value.range
                                },
                                format!(
                                    "`{name}.{}` must be a mapping ({}), found {}",
                                    k.as_str().unwrap_or(""),
                                    shape.name,
                                    describe(&e.value)
                                ),
                            );
                        }
                        continue;
                    }
                    out.push((
                        k,
                        Item {
                            range: e.value.range,
                            value: Norm::Obj(self.object(&e.value, shape, e.key.range)),
                        },
                    ));
                }
                if non_empty && entries.is_empty() {
                    self.report(
                        Rule::EmptyValue,
                        range,
                        format!("`{name}` must not be empty"),
                    );
                }
                item(Norm::Map(out))
            }
            Kind::Registry => {
                let entries = self.map_entries(node, name)?;
                let mut out = Vec::new();
                for e in entries {
                    let Some(k) = self.map_key(e, name, KeyKind::Name) else {
                        continue;
                    };
                    let range = if e.value.range.is_empty() {
                        e.key.range
                    } else {
                        e.value.range
                    };
                    let value = match &e.value.kind {
                        NodeKind::Scalar(Scalar {
                            value: Value::Null, ..
                        }) => Norm::Null,
                        NodeKind::Scalar(Scalar {
                            value: Value::Str(s),
                            ..
                        }) if !s.trim().is_empty() => Norm::Str(s.trim().to_string()),
                        NodeKind::Scalar(Scalar {
                            value: Value::Str(_),
                            ..
                        }) => {
                            self.report(Rule::EmptyValue, range, format!("registry[{}] must name a model, or be null for no structured output", k.as_str().unwrap_or("")));
                            continue;
                        }
                        NodeKind::Invalid => continue,
                        _ => {
                            self.report(
                                Rule::WrongType,
                                range,
                                format!(
                                    "registry[{}] must be a model name or null, found {}{}",
                                    k.as_str().unwrap_or(""),
                                    describe(&e.value),
                                    quote_hint(&e.value)
                                ),
                            );
                            continue;
                        }
                    };
                    out.push((k, Item { range, value }));
                }
                item(Norm::Map(out))
            }
            Kind::ModelDefinitions => {
                let entries = self.map_entries(node, name)?;
                let mut out = Vec::new();
                for e in entries {
                    let Some(k) = self.map_key(e, name, KeyKind::Name) else {
                        continue;
                    };
                    let model_name = k.as_str().unwrap_or("").to_string();
                    if e.value.as_map().is_none() {
                        if !matches!(e.value.kind, NodeKind::Invalid) {
                            self.report(Rule::WrongType, if e.value.range.is_empty() { e.key.range } else { e.value.range }, format!("definition `{model_name}` must be a mapping with a `type` (model, literal or union), found {}", describe(&e.value)));
                        }
                        continue;
                    }
                    let tag = e.value.get("type");
                    let shape = match tag.and_then(Node::as_str) {
                        Some("model") => &super::files::SO_MODEL,
                        Some("literal") => &super::files::SO_LITERAL,
                        Some("union") => &super::files::SO_UNION,
                        Some(other) => {
                            self.report(
                                Rule::InvalidEnumValue,
                                tag.map_or(e.key.range, |t| t.range),
                                format!("definition `{model_name}` has `type: {other}`; a definition's type must be `model`, `literal` or `union`{}", suggestion(other, ["model", "literal", "union"])),
                            );
                            continue;
                        }
                        None => {
                            match tag {
                                Some(t) => self.report(Rule::InvalidEnumValue, t.range, format!("definition `{model_name}` needs `type: model`, `literal` or `union`, found {}", describe(t))),
                                None => self.report(Rule::MissingKey, e.key.range, format!("definition `{model_name}` is missing the required key `type` (model, literal or union)")),
                            }
                            continue;
                        }
                    };
                    out.push((
                        k,
                        Item {
                            range: e.value.range,
                            value: Norm::Obj(self.object(&e.value, shape, e.key.range)),
                        },
                    ));
                }
                item(Norm::Map(out))
            }
        }
    }

    fn not_a_string(&mut self, name: &str, item: &Node) {
        self.report(
            Rule::WrongType,
            item.range,
            format!(
                "each `{name}` entry must be a string, found {}{}",
                describe(item),
                quote_hint(item)
            ),
        );
    }

    fn text(&mut self, node: &Node, name: &str, kind: TextKind, range: TextRange) -> Option<Norm> {
        let scalar = node.as_scalar().map(|s| &s.value);
        if matches!(kind, TextKind::Optional | TextKind::OptionalRequired) && node.is_null() {
            return Some(Norm::Null);
        }
        if kind == TextKind::Optional {
            let text = match scalar {
                Some(Value::Str(s)) => s.clone(),
                _ => {
                    let text = node.python_str();
                    self.report(
                        Rule::StringifiedValue,
                        range,
                        format!(
                            "`{name}` is given {} and mozaiks stores it as the text {}; quote the value if that text is what you mean",
                            describe(node),
                            Value::Str(text.clone()).python_repr()
                        ),
                    );
                    text
                }
            };
            let trimmed = text.trim();
            return Some(if trimmed.is_empty() {
                Norm::Null
            } else {
                Norm::Str(trimmed.to_string())
            });
        }
        let text = match scalar {
            Some(Value::Str(s)) => s.as_str(),
            Some(Value::Binary(b)) => {
                return Some(Norm::Str(String::from_utf8_lossy(b).trim().to_string()))
            }
            _ => {
                self.report(
                    Rule::WrongType,
                    range,
                    format!(
                        "`{name}` must be a string, found {}{}",
                        describe(node),
                        quote_hint(node)
                    ),
                );
                return None;
            }
        };
        match kind {
            TextKind::Required | TextKind::OptionalRequired => {
                if text.trim().is_empty() {
                    self.report(
                        Rule::EmptyValue,
                        range,
                        format!("`{name}` must be non-empty"),
                    );
                    return None;
                }
                Some(Norm::Str(text.trim().to_string()))
            }
            TextKind::ExactName => {
                if text.is_empty() {
                    self.report(
                        Rule::EmptyValue,
                        range,
                        format!("`{name}` must be non-empty"),
                    );
                    None
                } else if text != text.trim() {
                    self.report(
                        Rule::InvalidName,
                        range,
                        format!(
                            "`{name}` must have no surrounding whitespace: write {}",
                            Value::Str(text.trim().into()).python_repr()
                        ),
                    );
                    None
                } else {
                    Some(Norm::Str(text.to_string()))
                }
            }
            TextKind::Min1 => {
                if text.is_empty() {
                    self.report(
                        Rule::EmptyValue,
                        range,
                        format!("`{name}` must be at least one character long"),
                    );
                    return None;
                }
                Some(Norm::Str(text.to_string()))
            }
            TextKind::Optional => unreachable!("handled above"),
        }
    }

    fn seq<'n>(&mut self, node: &'n Node, name: &str) -> Option<&'n [Node]> {
        match &node.kind {
            NodeKind::Seq(items) => Some(items),
            NodeKind::Invalid => None,
            _ => {
                let hint = if node.is_null() {
                    " (write [] for an empty list)"
                } else {
                    ""
                };
                self.report(
                    Rule::WrongType,
                    node.range,
                    format!("`{name}` must be a list, found {}{hint}", describe(node)),
                );
                None
            }
        }
    }

    fn map_entries<'n>(
        &mut self,
        node: &'n Node,
        name: &str,
    ) -> Option<&'n [crate::syntax::Entry]> {
        match &node.kind {
            NodeKind::Map(entries) => Some(entries),
            NodeKind::Invalid => None,
            NodeKind::Seq(_) if name == "definitions" => {
                self.report(
                    Rule::WrongType,
                    node.range,
                    "`definitions` must be a mapping keyed by variable name; the legacy list of `{name: …}` entries is rejected by mozaiks 0.2.0 — write `my_var: {type: …, source: …}`",
                );
                None
            }
            _ => {
                let hint = if node.is_null() {
                    " (write {} for an empty mapping)"
                } else {
                    ""
                };
                self.report(
                    Rule::WrongType,
                    node.range,
                    format!("`{name}` must be a mapping, found {}{hint}", describe(node)),
                );
                None
            }
        }
    }

    fn map_key(&mut self, entry: &crate::syntax::Entry, name: &str, kind: KeyKind) -> Option<Item> {
        if matches!(entry.key.kind, NodeKind::Invalid) {
            return None;
        }
        let Some(key) = entry.key.as_str() else {
            self.report(
                Rule::WrongType,
                entry.key.range,
                format!(
                    "names in `{name}` must be strings, found {}{}",
                    describe(&entry.key),
                    quote_hint(&entry.key)
                ),
            );
            return None;
        };
        if kind != KeyKind::Str && key.trim().is_empty() {
            self.report(
                Rule::EmptyValue,
                entry.key.range,
                format!("a name in `{name}` must be non-empty"),
            );
            return None;
        }
        if kind == KeyKind::ReservedName {
            if let Some(why) = reserved_context_name(key) {
                self.report(Rule::InvalidName, entry.key.range, why);
                return None;
            }
        }
        Some(Item {
            range: entry.key.range,
            value: Norm::Str(key.to_string()),
        })
    }

    fn list(&mut self, node: &Node, name: &str, kind: ListKind, range: TextRange) -> Option<Norm> {
        let nullable = matches!(
            kind,
            ListKind::Clean { nullable: true, .. }
                | ListKind::Any { nullable: true, .. }
                | ListKind::Dicts { nullable: true }
        );
        if nullable && node.is_null() {
            return Some(Norm::Null);
        }
        let items = self.seq(node, name)?;
        let mut out: Vec<Item> = Vec::new();
        let mut ok = true;
        for it in items {
            let it_range = it.range;
            match kind {
                ListKind::Any { .. } => out.push(Item {
                    range: it_range,
                    value: Norm::Any(it.clone()),
                }),
                ListKind::Dicts { .. } => {
                    if it.as_map().is_some() {
                        out.push(Item {
                            range: it_range,
                            value: Norm::Any(it.clone()),
                        });
                    } else {
                        ok = false;
                        self.report(
                            Rule::WrongType,
                            it_range,
                            format!(
                                "each `{name}` entry must be a mapping, found {}",
                                describe(it)
                            ),
                        );
                    }
                }
                ListKind::Clean { reserved, .. } => match it.as_str() {
                    Some(s) => {
                        let s = s.trim();
                        if s.is_empty() || out.iter().any(|o| o.as_str() == Some(s)) {
                            continue;
                        }
                        if reserved {
                            if let Some(why) = reserved_context_name(s) {
                                ok = false;
                                self.report(Rule::InvalidName, it_range, why);
                                continue;
                            }
                        }
                        out.push(Item {
                            range: it_range,
                            value: Norm::Str(s.to_string()),
                        });
                    }
                    None => {
                        ok = false;
                        self.not_a_string(name, it);
                    }
                },
                ListKind::Raw => match it.as_str() {
                    Some(s) => out.push(Item {
                        range: it_range,
                        value: Norm::Str(s.to_string()),
                    }),
                    None => {
                        ok = false;
                        self.not_a_string(name, it);
                    }
                },
                ListKind::Exact { .. } => {
                    match it.as_str() {
                        Some(s) if s.is_empty() || s != s.trim() => {
                            ok = false;
                            self.report(Rule::InvalidName, it_range, format!("`{name}` entries must be non-empty with no surrounding whitespace"));
                        }
                        Some(s) if out.iter().any(|o| o.as_str() == Some(s)) => {
                            ok = false;
                            self.report(
                                Rule::DuplicateName,
                                it_range,
                                format!("`{s}` appears twice in `{name}`; entries must be unique"),
                            );
                        }
                        Some(s) => out.push(Item {
                            range: it_range,
                            value: Norm::Str(s.to_string()),
                        }),
                        None => {
                            ok = false;
                            self.report(
                                Rule::WrongType,
                                it_range,
                                format!(
                                    "each `{name}` entry must be a string, found {}{}",
                                    describe(it),
                                    quote_hint(it)
                                ),
                            );
                        }
                    }
                }
            }
        }
        if !ok {
            return None;
        }
        let non_empty = matches!(
            kind,
            ListKind::Clean {
                non_empty: true,
                ..
            } | ListKind::Exact { non_empty: true }
                | ListKind::Any {
                    non_empty: true,
                    ..
                }
        );
        if non_empty && out.is_empty() {
            self.report(
                Rule::EmptyValue,
                range,
                format!("`{name}` must contain at least one entry"),
            );
            return None;
        }
        if matches!(
            kind,
            ListKind::Clean {
                empty_to_null: true,
                ..
            }
        ) && out.is_empty()
        {
            return Some(Norm::Null);
        }
        Some(Norm::List(out))
    }
}

use crate::syntax::Scalar;

fn one_of(values: &[&str]) -> String {
    let quoted: Vec<String> = values.iter().map(|v| format!("`{v}`")).collect();
    match quoted.len() {
        0 => String::new(),
        1 => quoted[0].clone(),
        n => format!("{} or {}", quoted[..n - 1].join(", "), quoted[n - 1]),
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
}
