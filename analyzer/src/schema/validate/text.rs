//! Text and list values, and the sequence and mapping shapes the other kinds share.

use super::{describe, quote_hint, Validator};
use crate::base::TextRange;
use crate::rules::Rule;
use crate::schema::kinds::{reserved_context_name, KeyKind, ListKind, TextKind};
use crate::schema::normalized::{Item, Norm};
use crate::syntax::{Node, NodeKind, Value};

impl Validator<'_> {
    pub(super) fn not_a_string(&mut self, name: &str, item: &Node) {
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

    pub(super) fn text(
        &mut self,
        node: &Node,
        name: &str,
        kind: TextKind,
        range: TextRange,
    ) -> Option<Norm> {
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

    pub(super) fn seq<'n>(&mut self, node: &'n Node, name: &str) -> Option<&'n [Node]> {
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

    pub(super) fn map_entries<'n>(
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

    pub(super) fn map_key(
        &mut self,
        entry: &crate::syntax::Entry,
        name: &str,
        kind: KeyKind,
    ) -> Option<Item> {
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

    pub(super) fn list(
        &mut self,
        node: &Node,
        name: &str,
        kind: ListKind,
        range: TextRange,
    ) -> Option<Norm> {
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
