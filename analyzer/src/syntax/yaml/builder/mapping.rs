//! Mappings as PyYAML constructs them: merge keys and duplicate keys.

use super::order::Step;
use super::Builder;
use crate::base::hash::HashMap;
use crate::base::TextRange;
use crate::diagnostics::Diagnostic;
use crate::rules::Rule;
use crate::syntax::scalar::Value;
use crate::syntax::yaml::tree::{Entry, Node, NodeKind};

impl Builder<'_> {
    /// PyYAML 6.0.4's merge (its `flatten_mapping`, then building the
    /// dict): the pairs of each `<<` source in order (a list's mappings in
    /// order), then the mapping's own pairs; a key keeps the place where it
    /// first comes and the value of its last pair. PyYAML skips a merged
    /// pair whose key text is the *same Python object* as an earlier merged
    /// key's; for distinct texts that never happens, but CPython shares its
    /// empty and one-character (Latin-1) strings, so with such keys
    /// (`x`, `1`) the first source wins instead of the last.
    pub(super) fn apply_merges(&mut self, explicit: Vec<Entry>, merges: Vec<Node>) -> Vec<Entry> {
        if merges.is_empty() {
            return explicit;
        }
        let mut pairs: Vec<Entry> = Vec::new();
        let mut shared_texts: Vec<String> = Vec::new();
        let mut take = |entries: Vec<Entry>, pairs: &mut Vec<Entry>, this: &Self| {
            for entry in entries {
                if let Some(text) = this.shared_python_text(&entry.key) {
                    if shared_texts.contains(&text) {
                        continue;
                    }
                    shared_texts.push(text);
                }
                pairs.push(entry);
            }
        };
        for source in merges {
            match source.kind {
                NodeKind::Map(entries) => take(entries, &mut pairs, self),
                NodeKind::Seq(items) => {
                    for item in items {
                        match item.kind {
                            NodeKind::Map(entries) => take(entries, &mut pairs, self),
                            NodeKind::Invalid => {}
                            _ => self.report_step(
                                Step::Merge,
                                Rule::InvalidScalar,
                                item.range,
                                "expected a mapping for merging; every item of a `<<` list must be an alias of a mapping",
                            ),
                        }
                    }
                }
                NodeKind::Invalid => {}
                NodeKind::Scalar(_) => self.report_step(
                    Step::Merge,
                    Rule::InvalidScalar,
                    source.range,
                    "expected a mapping or list of mappings for merging, but found a scalar; `<<` takes an alias of a mapping (`<<: *base`)",
                ),
            }
        }
        pairs.extend(explicit);
        let mut merged: Vec<Entry> = Vec::with_capacity(pairs.len());
        let mut places: HashMap<String, usize> = HashMap::default();
        for entry in pairs {
            let key = entry.key.as_scalar().map(|s| s.value.hash_key());
            match key {
                Some(key) => match places.get(&key) {
                    // Python keeps the first key (`true` over a later `1`)
                    // and takes the last value; an identical key is
                    // replaced too, so its range is the one written last.
                    Some(&at)
                        if merged[at].key.as_scalar().map(|s| &s.value)
                            != entry.key.as_scalar().map(|s| &s.value) =>
                    {
                        merged[at].value = entry.value
                    }
                    Some(&at) => merged[at] = entry,
                    None => {
                        places.insert(key, merged.len());
                        merged.push(entry);
                    }
                },
                None => merged.push(entry),
            }
        }
        merged.shrink_to_fit(); // held until validated, like every collection
        merged
    }

    /// A key's text (the scalar as written, before resolving) when CPython
    /// holds it as a shared object: empty, or one character below U+0100.
    fn shared_python_text(&self, key: &Node) -> Option<String> {
        let shared = |text: &str| {
            let mut chars = text.chars();
            match (chars.next(), chars.next()) {
                (None, _) => true,
                (Some(c), None) => (c as u32) < 0x100,
                _ => false,
            }
        };
        let scalar = key.as_scalar()?;
        if let Value::Str(text) = &scalar.value {
            return shared(text).then(|| text.clone());
        }
        // A resolved plain key (`1`, `~`, an empty key): its source text.
        let start = key.range.start.checked_sub(self.base)? as usize;
        let end = key.range.end.checked_sub(self.base)? as usize;
        let text = self.text.get(start..end)?;
        (shared(text) && !text.starts_with(['*', '!', '&'])).then(|| text.to_string())
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
