//! Mappings as PyYAML constructs them: merge keys and duplicate keys.

use super::super::super::scalar::Value;
use super::super::super::TextRange;
use super::super::tree::{Entry, Node, NodeKind};
use super::Builder;
use crate::diagnostics::Diagnostic;
use crate::hash::HashMap;
use crate::rules::Rule;

impl Builder<'_> {
    /// PyYAML's merge: merged keys come first, later sources override earlier
    /// ones, explicit keys override merged ones.
    pub(super) fn apply_merges(&mut self, explicit: Vec<Entry>, merges: Vec<Node>) -> Vec<Entry> {
        if merges.is_empty() {
            return explicit;
        }
        let mut merged: Vec<Entry> = Vec::new();
        for source in merges {
            let sources: Vec<Node> = match source.kind {
                NodeKind::Map(_) => vec![source],
                NodeKind::Seq(items) => items,
                NodeKind::Invalid => continue,
                NodeKind::Scalar(_) => {
                    self.report(
                        Rule::InvalidScalar,
                        source.range,
                        "expected a mapping or list of mappings for merging, but found a scalar; `<<` takes an alias of a mapping (`<<: *base`)",
                    );
                    continue;
                }
            };
            for item in sources {
                match item.kind {
                    NodeKind::Map(entries) => {
                        for entry in entries {
                            let key = entry.key.as_scalar().map(|s| s.value.hash_key());
                            if key.is_some() {
                                merged.retain(|e| e.key.as_scalar().map(|s| s.value.hash_key()) != key);
                            }
                            merged.push(entry);
                        }
                    }
                    NodeKind::Invalid => {}
                    _ => self.report(
                        Rule::InvalidScalar,
                        item.range,
                        "expected a mapping for merging; every item of a `<<` list must be an alias of a mapping",
                    ),
                }
            }
        }
        let explicit_keys: Vec<String> = explicit
            .iter()
            .filter_map(|e| e.key.as_scalar().map(|s| s.value.hash_key()))
            .collect();
        merged.retain(|e| {
            e.key
                .as_scalar()
                .map(|s| !explicit_keys.contains(&s.value.hash_key()))
                .unwrap_or(true)
        });
        merged.extend(explicit);
        merged.shrink_to_fit(); // held until validated, like every collection
        merged
    }

    pub(super) fn report_duplicates(&mut self, entries: &[Entry]) {
        if entries.len() < 2 {
            return;
        }
        let mut found = Vec::new();
        if entries.len() <= 64 {
            // Small mappings (nearly all): pairwise, without allocating keys.
            for (i, entry) in entries.iter().enumerate() {
                let Some(key) = entry.key.as_scalar() else {
                    continue;
                };
                if let Some(first) = entries[..i].iter().find(|e| {
                    e.key
                        .as_scalar()
                        .is_some_and(|k| same_key(&k.value, &key.value))
                }) {
                    found.push((entry.key.range, first.key.range, key.value.python_str()));
                }
            }
        } else {
            let mut seen: HashMap<String, TextRange> = HashMap::default();
            for entry in entries {
                let Some(scalar) = entry.key.as_scalar() else {
                    continue;
                };
                if let Some(first) = seen.get(&scalar.value.hash_key()) {
                    found.push((entry.key.range, *first, scalar.value.python_str()));
                } else {
                    seen.insert(scalar.value.hash_key(), entry.key.range);
                }
            }
        }
        for (range, first, name) in found {
            let diagnostic = Diagnostic::new(
                Rule::DuplicateKey,
                self.file,
                range,
                format!("duplicate key `{name}`: YAML keeps only this last value and silently drops the earlier one; remove one of them"),
            )
            .with_related(self.file, first, "first written here");
            self.diagnostics.push(diagnostic);
        }
    }
}

/// Python dict-key equality of two scalars (`1 == True == 1.0`), cheaply for strings.
fn same_key(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Str(x), Value::Str(y)) => x == y,
        (Value::Str(_), _) | (_, Value::Str(_)) => false,
        _ => a.hash_key() == b.hash_key(),
    }
}
