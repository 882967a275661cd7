//! Results computed from a text, kept by a hash of that text. The language
//! server re-analyses a bundle on every keystroke, and nearly all of its
//! prompts and Python files did not change: what is derived from them
//! (token counts, word runs, quoted names) is looked up instead of redone.
//! Each memo is a field of the layer that fills it (`tokens::TokenCounts`,
//! `checks::PromptMemos`, `syntax::python_keys::BuiltMemo`), gathered in the
//! caller's `cache::AnalysisCache`: no memo is process-wide.

use std::sync::{Arc, Mutex, OnceLock};

use xxhash_rust::xxh3::Xxh3Default;

use crate::base::hash::HashMap;

/// A text key: a hash of the texts and their total length.
pub type Key = (u64, usize);

type Cells<V> = Mutex<HashMap<Key, Arc<V>>>;

/// A bounded map from a text key to a shared value; it starts over when
/// full, so memory stays bounded whatever is typed.
pub struct Memo<V> {
    cells: OnceLock<Cells<V>>,
    limit: usize,
}

impl<V> std::fmt::Debug for Memo<V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kept = self
            .cells
            .get()
            .map_or(0, |c| c.lock().map_or(0, |c| c.len()));
        f.debug_struct("Memo")
            .field("kept", &kept)
            .field("limit", &self.limit)
            .finish()
    }
}

impl<V> Memo<V> {
    pub const fn new(limit: usize) -> Memo<V> {
        Memo {
            cells: OnceLock::new(),
            limit,
        }
    }

    /// The value for `key`, computed by `make` when it is not kept.
    pub fn get_or(&self, key: Key, make: impl FnOnce() -> V) -> Arc<V> {
        let cells = self.cells.get_or_init(Default::default);
        if let Some(v) = cells.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
            return v.clone();
        }
        let value = Arc::new(make());
        let mut cells = cells.lock().unwrap_or_else(|e| e.into_inner());
        if cells.len() >= self.limit {
            cells.clear();
        }
        cells.insert(key, value.clone());
        value
    }
}

/// The key of some texts: their XXH3-64 hash, in order, and their total
/// length (two different texts would have to collide on both).
pub fn key<'t>(texts: impl IntoIterator<Item = &'t str>) -> Key {
    let mut h = Xxh3Default::new();
    let mut len = 0;
    for t in texts {
        // Each text's length before it: ["ab", "c"] and ["a", "bc"] differ.
        h.update(&(t.len() as u64).to_le_bytes());
        h.update(t.as_bytes());
        len += t.len();
    }
    (h.digest(), len)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_by_text_and_bounded() {
        let memo: Memo<usize> = Memo::new(2);
        let mut made = 0;
        for t in ["a", "a", "b", "a"] {
            memo.get_or(key([t]), || {
                made += 1;
                t.len()
            });
        }
        assert_eq!(made, 2);
        // A third key starts over.
        memo.get_or(key(["c"]), || 1);
        let mut again = false;
        memo.get_or(key(["a"]), || {
            again = true;
            1
        });
        assert!(again);
        assert_ne!(key(["ab", "c"]), key(["a", "bc"]));
        assert_ne!(key(["a"]), key(["a", ""]));
    }
}
