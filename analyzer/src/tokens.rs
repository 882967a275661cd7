//! Prompt sizes in tokens of OpenAI's o200k_base encoding (GPT-4o and later
//! models), from GitHub's bpe-openai crate, which carries the encoding
//! prebuilt (no network) and loads it by deserializing, about three times
//! faster than tiktoken-rs builds it (90 ms against 250 ms measured here), with the
//! same counts. It is still loaded only on the first count; callers that
//! compare against a budget skip it when the UTF-8 length alone settles the
//! question (no token of this encoding is shorter than one byte).

use crate::memo::{self, Memo};

pub const ENCODING: &str = "o200k_base";

/// Loads the encoding now, so that a later count does not wait for it.
pub fn preload() {
    let _ = bpe_openai::o200k_base();
}

/// Counts already made: the language server sizes the same prompts after
/// every keystroke, and most of them did not change.
static MEMO: Memo<usize> = Memo::new(8192);

/// The number of tokens of `text`; special-token spellings count as text.
pub fn count(text: &str) -> usize {
    if text.is_empty() {
        return 0;
    }
    *MEMO.get_or(memo::key([text]), || count_unmemoized(text))
}

/// As [`count`], always tokenizing (benchmarks measure the tokenizer).
pub fn count_unmemoized(text: &str) -> usize {
    bpe_openai::o200k_base().count(text)
}

/// Whether `text` is over `budget` tokens, and its count when it had to be
/// counted: text of at most `budget` bytes never is, whatever its tokens.
pub fn over_budget(text: &str, budget: usize) -> Option<usize> {
    if text.len() <= budget {
        return None;
    }
    let tokens = count(text);
    (tokens > budget).then_some(tokens)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_o200k_base_tokens() {
        assert_eq!(count(""), 0);
        assert_eq!(count("hello world"), 2);
        // Memoized counts are the counts.
        assert_eq!(count("hello world"), 2);
        assert_eq!(count_unmemoized("hello world"), 2);
        // Never more tokens than bytes: the budget shortcut relies on it.
        for text in ["ü", "日本語のテキスト", "a\u{1F600}b", "   \n\n\t"] {
            assert!(count(text) <= text.len(), "{text}");
        }
    }

    #[test]
    fn the_budget_is_settled_by_bytes_when_it_can_be() {
        assert_eq!(over_budget("hello world", 11), None);
        assert_eq!(over_budget("hello world", 1), Some(2));
        assert_eq!(over_budget("hello world", 2), None);
    }
}
