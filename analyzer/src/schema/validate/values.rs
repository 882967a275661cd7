//! One function per value kind: each checks a node against its `Kind`, reports
//! what mozaiks would reject or silently coerce, and returns the normalised value.

use super::{describe, python_float, python_int, quote_hint, release, take, Validator};
use crate::base::TextRange;
use crate::diagnostics::{did_you_mean, mean_hint, one_of, suggestion};
use crate::rules::Rule;
use crate::schema::kinds::{KeyKind, Kind, TextKind};
use crate::schema::normalized::{Item, Norm};
use crate::schema::{Object, TOOL_TYPES};
use crate::syntax::{Entry, Integer, Node, NodeKind, Scalar, Value};

impl Validator<'_> {
    pub(super) fn value(
        &mut self,
        node: &mut Node,
        name: &str,
        kind: Kind,
        key_range: TextRange,
    ) -> Option<Item> {
        if matches!(node.kind, NodeKind::Invalid) {
            return None;
        }
        let range = if node.range.is_empty() {
            key_range
        } else {
            node.range
        };
        match kind {
            Kind::Text(text_kind) => self
                .text(node, name, text_kind, range)
                .map(|v| Item { range, value: v }),
            Kind::Enum { values, nullable } => self.enum_value(node, name, range, values, nullable),
            Kind::ToolType { nullable } => self.tool_type(node, name, range, nullable),
            Kind::LowerEnum { values } | Kind::Catalog { values } => {
                self.lower_enum(node, name, range, kind, values)
            }
            Kind::VersionOne => self.version_one(node, name, range),
            Kind::Bool { nullable } => self.bool_value(node, name, range, nullable),
            Kind::Int {
                min,
                max,
                nullable,
                strict,
            } => self.int_value(node, name, range, (min, max), nullable, strict),
            Kind::Float { min } => self.float_value(node, name, range, min),
            Kind::List(list_kind) => self
                .list(node, name, list_kind, range)
                .map(|v| Item { range, value: v }),
            Kind::EnumList { values, dedupe } => self.enum_list(node, name, range, values, dedupe),
            Kind::StrOrList => self.str_or_list(node, name, range),
            Kind::Dict { nullable } => self.dict(node, name, range, nullable),
            Kind::DictOrDefault | Kind::Any => Some(Item {
                range,
                value: Norm::Any(take(node)),
            }),
            Kind::Object { shape, nullable } => {
                self.object_value(node, name, range, shape, nullable, key_range)
            }
            Kind::ObjectList(shape) => self.object_list(node, name, range, shape),
            Kind::ObjectMap {
                shape,
                key,
                non_empty,
            } => self.object_map(node, name, range, shape, key, non_empty),
            Kind::Registry => self.registry(node, name, range),
            Kind::ModelDefinitions => self.model_definitions(node, name, range),
        }
    }

    fn enum_value(
        &mut self,
        node: &Node,
        name: &str,
        range: TextRange,
        values: &'static [&'static str],
        nullable: bool,
    ) -> Option<Item> {
        let item = |value| Some(Item { range, value });
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

    fn tool_type(
        &mut self,
        node: &Node,
        name: &str,
        range: TextRange,
        nullable: bool,
    ) -> Option<Item> {
        let item = |value| Some(Item { range, value });
        let scalar = node.as_scalar().map(|s| &s.value);
        if nullable && node.is_null() {
            return item(Norm::Str("Agent_Tool".into()));
        }
        let text = match scalar {
            Some(Value::Null) | None if node.as_scalar().is_some() => String::new(),
            Some(v) => v.python_str(),
            None => node.python_str(),
        };
        let folded = text.trim().to_lowercase().replace('-', "_");
        let Some(canonical) = TOOL_TYPES.iter().find(|t| t.to_lowercase() == folded) else {
            let hint = if folded == "standard" {
                " (the legacy `Standard` is now `Agent_Tool`)".to_string()
            } else {
                suggestion(text.trim(), TOOL_TYPES.iter().copied())
            };
            self.report(
                Rule::InvalidEnumValue,
                range,
                format!(
                    "`{name}` must be {}, found {}{hint}",
                    one_of(TOOL_TYPES),
                    describe(node)
                ),
            );
            return None;
        };
        item(Norm::Str(canonical.to_string()))
    }

    fn lower_enum(
        &mut self,
        node: &Node,
        name: &str,
        range: TextRange,
        kind: Kind,
        values: &'static [&'static str],
    ) -> Option<Item> {
        let item = |value| Some(Item { range, value });
        let scalar = node.as_scalar().map(|s| &s.value);
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

    fn version_one(&mut self, node: &Node, name: &str, range: TextRange) -> Option<Item> {
        let item = |value| Some(Item { range, value });
        let scalar = node.as_scalar().map(|s| &s.value);
        match scalar {
            Some(Value::Int(i)) if i.get() == 1 => item(Norm::Int(Integer::new(1))),
            Some(Value::Bool(true)) => item(Norm::Int(Integer::new(1))),
            Some(Value::Float(f)) if *f == 1.0 => item(Norm::Int(Integer::new(1))),
            _ => {
                self.report(
                Rule::InvalidEnumValue,
                range,
                format!("`{name}` must be the integer 1 (the only task_batches.yaml version), found {}", describe(node)),
            );
                None
            }
        }
    }

    fn bool_value(
        &mut self,
        node: &Node,
        name: &str,
        range: TextRange,
        nullable: bool,
    ) -> Option<Item> {
        let item = |value| Some(Item { range, value });
        let scalar = node.as_scalar().map(|s| &s.value);
        let lax = |s: &str| match s.to_ascii_lowercase().as_str() {
            "true" | "yes" | "on" | "y" | "t" | "1" => Some(true),
            "false" | "no" | "off" | "n" | "f" | "0" => Some(false),
            _ => None,
        };
        let (value, coerced) = match scalar {
            Some(Value::Bool(b)) => (Some(*b), false),
            Some(Value::Null) if nullable => return item(Norm::Null),
            Some(Value::Int(i)) if matches!(i.get(), 0 | 1) => (Some(i.get() == 1), true),
            Some(Value::Float(f)) if *f == 0.0 || *f == 1.0 => (Some(*f == 1.0), true),
            Some(Value::Str(s)) => (lax(s), true),
            _ => (None, false),
        };
        let Some(b) = value else {
            self.report_wrong_scalar(node, name, range, "`true` or `false`");
            return None;
        };
        if coerced {
            let shown = format!("`{b}`");
            self.report_lax(node, name, range, &shown, &shown);
        }
        item(Norm::Bool(b))
    }

    fn int_value(
        &mut self,
        node: &Node,
        name: &str,
        range: TextRange,
        (min, max): (Option<i64>, Option<i64>),
        nullable: bool,
        strict: bool,
    ) -> Option<Item> {
        let item = |value| Some(Item { range, value });
        let scalar = node.as_scalar().map(|s| &s.value);
        let (value, coerced) = match scalar {
            Some(Value::Int(i)) => (Some(i.get()), false),
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
            Some(Value::Float(f)) if f.is_finite() && f.fract() == 0.0 => (Some(*f as i128), true),
            Some(Value::Str(s)) => (python_int(s), true),
            _ => (None, false),
        };
        let Some(n) = value else {
            let expected = if strict {
                "an integer written as a plain YAML integer (no quotes, no decimal point)"
            } else {
                "an integer"
            };
            self.report_wrong_scalar(node, name, range, expected);
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
            let shown = n.to_string();
            self.report_lax(node, name, range, &shown, &shown);
        }
        item(Norm::Int(n.into()))
    }

    fn float_value(&mut self, node: &Node, name: &str, range: TextRange, min: f64) -> Option<Item> {
        let item = |value| Some(Item { range, value });
        let scalar = node.as_scalar().map(|s| &s.value);
        let (value, coerced) = match scalar {
            Some(Value::Int(i)) => (Some(i.get() as f64), false),
            Some(Value::Float(f)) => (Some(*f), false),
            Some(Value::Bool(b)) => (Some(*b as i32 as f64), true),
            Some(Value::Str(s)) => (python_float(s), true),
            _ => (None, false),
        };
        let Some(f) = value else {
            self.report_wrong_scalar(node, name, range, "a number");
            return None;
        };
        if f < min {
            self.report(
                Rule::OutOfRange,
                range,
                format!(
                    "`{name}` must be at least {min}, found {}",
                    node.python_str()
                ),
            );
            return None;
        }
        if coerced {
            self.report_lax(node, name, range, "a number", "the number");
        }
        item(Norm::Float(f))
    }

    /// The type error of a bool, integer or number field whose value mozaiks
    /// cannot read as one.
    fn report_wrong_scalar(&mut self, node: &Node, name: &str, range: TextRange, expected: &str) {
        self.report(
            Rule::WrongType,
            range,
            format!("`{name}` must be {expected}, found {}", describe(node)),
        );
    }

    /// A bool, integer or number field mozaiks reads only through Pydantic's
    /// lax coercion (a quoted value, `1` for true …): `reads_as` is what it
    /// becomes, `write` what to write instead.
    fn report_lax(
        &mut self,
        node: &Node,
        name: &str,
        range: TextRange,
        reads_as: &str,
        write: &str,
    ) {
        self.report(
            Rule::LaxCoercion,
            range,
            format!("`{name}` is given {} and mozaiks reads it as {reads_as} only through lax coercion; write {write} without quotes", describe(node)),
        );
    }

    fn enum_list(
        &mut self,
        node: &Node,
        name: &str,
        range: TextRange,
        values: &'static [&'static str],
        dedupe: bool,
    ) -> Option<Item> {
        let items = self.seq(node, name)?;
        let mut out: Vec<Item> = Vec::with_capacity(items.len());
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

    fn str_or_list(&mut self, node: &Node, name: &str, range: TextRange) -> Option<Item> {
        let item = |value| Some(Item { range, value });
        match &node.kind {
            NodeKind::Scalar(_) if node.as_str().is_some() => self
                .text(node, name, TextKind::Required, range)
                .map(|v| Item { range, value: v }),
            NodeKind::Seq(items) => {
                let mut out: Vec<Item> = Vec::with_capacity(items.len());
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
        }
    }

    fn dict(
        &mut self,
        node: &mut Node,
        name: &str,
        range: TextRange,
        nullable: bool,
    ) -> Option<Item> {
        let item = |value| Some(Item { range, value });
        match &node.kind {
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
                    value: Norm::Any(take(node)),
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
        }
    }

    fn object_value(
        &mut self,
        node: &mut Node,
        name: &str,
        range: TextRange,
        shape: &'static Object,
        nullable: bool,
        key_range: TextRange,
    ) -> Option<Item> {
        let item = |value| Some(Item { range, value });
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

    fn object_list(
        &mut self,
        node: &mut Node,
        name: &str,
        range: TextRange,
        shape: &'static Object,
    ) -> Option<Item> {
        let item = |value| Some(Item { range, value });
        self.seq(node, name)?;
        let NodeKind::Seq(items) = &mut node.kind else {
            return None;
        };
        let mut out = Vec::with_capacity(items.len());
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
            // The entry's keys too: a list of thousands of rules is not held
            // twice.
            release(it);
        }
        item(Norm::List(out))
    }

    fn object_map(
        &mut self,
        node: &mut Node,
        name: &str,
        range: TextRange,
        shape: &'static Object,
        key: KeyKind,
        non_empty: bool,
    ) -> Option<Item> {
        let item = |value| Some(Item { range, value });
        self.map_entries(node, name)?;
        let NodeKind::Map(entries) = &mut node.kind else {
            return None;
        };
        let mut out = Vec::with_capacity(entries.len());
        for e in entries.iter_mut() {
            let Some(k) = self.map_key(e, name, key) else {
                continue;
            };
            if e.value.as_map().is_none() {
                if !matches!(e.value.kind, NodeKind::Invalid) {
                    self.report(
                        Rule::WrongType,
                        value_or_key_range(e),
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
            out.push((k, self.entry_object(e, shape)));
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

    /// A mapping entry's value, validated as an object of `shape`.
    fn entry_object(&mut self, e: &mut Entry, shape: &'static Object) -> Item {
        let item = Item {
            range: e.value.range,
            value: Norm::Obj(self.object(&mut e.value, shape, e.key.range)),
        };
        release(&mut e.value);
        item
    }

    fn registry(&mut self, node: &Node, name: &str, range: TextRange) -> Option<Item> {
        let item = |value| Some(Item { range, value });
        let entries = self.map_entries(node, name)?;
        let mut out = Vec::with_capacity(entries.len());
        for e in entries {
            let Some(k) = self.map_key(e, name, KeyKind::Name) else {
                continue;
            };
            let range = value_or_key_range(e);
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
                    self.report(
                        Rule::EmptyValue,
                        range,
                        format!(
                            "registry[{}] must name a model, or be null for no structured output",
                            k.as_str().unwrap_or("")
                        ),
                    );
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

    fn model_definitions(&mut self, node: &mut Node, name: &str, range: TextRange) -> Option<Item> {
        let item = |value| Some(Item { range, value });
        self.map_entries(node, name)?;
        let NodeKind::Map(entries) = &mut node.kind else {
            return None;
        };
        let mut out = Vec::with_capacity(entries.len());
        for e in entries.iter_mut() {
            let Some(k) = self.map_key(e, name, KeyKind::Name) else {
                continue;
            };
            let model_name = k.as_str().unwrap_or("").to_string();
            if e.value.as_map().is_none() {
                if !matches!(e.value.kind, NodeKind::Invalid) {
                    self.report(Rule::WrongType, value_or_key_range(e), format!("definition `{model_name}` must be a mapping with a `type` (model, literal or union), found {}", describe(&e.value)));
                }
                continue;
            }
            let tag = e.value.get("type");
            let shape = match tag.and_then(Node::as_str) {
                Some("model") => &crate::schema::files::SO_MODEL,
                Some("literal") => &crate::schema::files::SO_LITERAL,
                Some("union") => &crate::schema::files::SO_UNION,
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
            out.push((k, self.entry_object(e, shape)));
        }
        item(Norm::Map(out))
    }
}

/// Where to point at an entry's value: the value, or its key when the value is
/// empty (`key:` with nothing after it).
fn value_or_key_range(e: &Entry) -> TextRange {
    if e.value.range.is_empty() {
        e.key.range
    } else {
        e.value.range
    }
}
