//! Prompt sizes in tokens of OpenAI's o200k_base encoding (GPT-4o and later
//! models), with GitHub's bpe crates (bpe-openai), which load the encoding
//! prebuilt (no network) by deserializing, about three times faster than
//! tiktoken-rs builds it, with the same counts. bpe-openai would embed that
//! prebuilt encoding uncompressed (32 MB, most of the binary); build.rs stores
//! it zstd-compressed instead (13 MB), and [`o200k_base`] decompresses it
//! (some 40 ms) and pairs it with the encoding's pre-tokenization pattern. It
//! is loaded only on the first count; callers that compare against a budget
//! skip it when the UTF-8 length alone settles the question (no token of this
//! encoding is shorter than one byte).

use std::sync::LazyLock;

use bpe_openai::Tokenizer;

use crate::memo::{self, Memo};

pub const ENCODING: &str = "o200k_base";

/// o200k_base's pre-tokenization pattern (tiktoken's), as alternatives for
/// [`Tokenizer::new_lookahead`]: its `\s+(?!\S)` becomes `\s+$` in the first
/// alternative and `\s+\s` whose last character is a look-ahead, since the
/// regex engine has no look-around.
const PATTERN: [&str; 6] = [
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"\p{N}{1,3}",
    r" ?[^\s\p{L}\p{N}]+[\r\n/]*",
    r"\s*[\r\n]+",
    r"\s+$",
];

static O200K_BASE: LazyLock<Tokenizer> = LazyLock::new(|| {
    let compressed = include_bytes!(concat!(env!("OUT_DIR"), "/o200k_base.bpe.zst"));
    let length: usize = include_str!(concat!(env!("OUT_DIR"), "/o200k_base.bpe.len"))
        .parse()
        .expect("build.rs writes the encoding's length");
    let serialized =
        zstd::bulk::decompress(compressed, length).expect("build.rs compressed the encoding");
    let bpe = rmp_serde::from_slice(&serialized).expect("build.rs serialized the encoding");
    let first = PATTERN.join("|");
    Tokenizer::new_lookahead(
        bpe,
        &[(&first, false), (r"\s+\s", true), (r"\s+", false)],
        false,
    )
    .expect("valid pre-tokenization pattern")
});

fn o200k_base() -> &'static Tokenizer {
    &O200K_BASE
}

/// Loads the encoding now, so that a later count does not wait for it.
pub fn preload() {
    let _ = o200k_base();
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
    o200k_base().count(text)
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

    /// The compressed copy counts exactly as bpe-openai's own o200k_base.
    #[test]
    fn same_counts_as_bpe_openai() {
        let mut corpus: Vec<String> = [
            "hello world",
            "You are the TriageAgent. Classify the ticket, then hand off to SupportAgent.\n\n",
            "  leading spaces, trailing spaces   \n\t\n",
            "It's they're we've I'm you'll he'd SHE'S",
            "numbers 1 12 123 1234 12345 3.14159 -42",
            "path/to/file.py:12:5 // comments /* block */ {json: [1, 2]}",
            "Ünïcödé, 日本語のテキスト, Ελληνικά, русский текст, emoji \u{1F600}\u{1F680}",
            "\r\n\r\nwindows lines\r\n",
            "",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        // Every file of the example bundles (prompts and all) and of the docs.
        let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut stack = vec![repo.join("bundles"), repo.join("docs")];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    stack.push(path);
                } else if let Ok(text) = std::fs::read_to_string(&path) {
                    corpus.push(text);
                }
            }
        }
        assert!(corpus.len() > 20, "the example bundles were not read");
        let reference = bpe_openai::o200k_base();
        for text in &corpus {
            assert_eq!(count_unmemoized(text), reference.count(text), "{text:?}");
        }
    }

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
