//! Prompt sizes in tokens of OpenAI's o200k_base encoding (GPT-4o and later
//! models), exactly as tiktoken counts them, with no table to load.
//!
//! A count is byte-pair encoding applied to each piece of the encoding's
//! pre-tokenizer (split by hand on plain text, see `plain`; elsewhere by
//! bpe-openai's regex, which emulates tiktoken's look-ahead): a piece that
//! is a token is one token; otherwise its bytes are merged pair by pair,
//! lowest rank first (leftmost on ties), as tiktoken does. The vocabulary is
//! a table build.rs writes into the binary (5.6 MB: a hash index whose
//! slots hold each token's rank and place, see `index`): it is read in place, so counting plain text costs nothing to
//! set up (the regex, when first needed, ~14 ms) and memory holds only the
//! pages a count touches, where deserializing bpe-openai's prebuilt automata
//! took 32 MB and ~100 ms. A budget check counts only as far as the answer
//! needs (no token of this encoding is shorter than a byte).

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::LazyLock;

use bpe::byte_pair_encoding::BytePairEncoding;
use bpe_openai::Tokenizer;

use crate::base::memo::{self, Memo};

mod index;
mod plain;

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

/// The pre-tokenizer. bpe-openai builds it only as part of a tokenizer, so
/// it is given a byte-level encoding of 256 tokens that is never used. A
/// process-wide static, unlike the memos: it is built from constants and
/// only read, so it holds no state of any analysis.
static PRE_TOKENIZER: LazyLock<Tokenizer> = LazyLock::new(|| {
    let bytes = BytePairEncoding::from_dictionary((0..=255u8).map(|b| vec![b]), None);
    let first = PATTERN.join("|");
    Tokenizer::new_lookahead(
        bytes,
        &[(&first, false), (r"\s+\s", true), (r"\s+", false)],
        false,
    )
    .expect("valid pre-tokenization pattern")
});

/// build.rs's table: the token count, the index's slots, then the bytes.
static VOCABULARY: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/o200k_base.vocab"));

fn word(index: usize) -> usize {
    let at = index * 4;
    VOCABULARY
        .get(at..at + 4)
        .map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
}

/// Where the bytes of the tokens start.
const BYTE_AREA: usize = (1 + 2 * index::INDEX_SLOTS) * 4;

/// An index slot: the token's offset in the byte area and length (0 when
/// the slot is empty), and its rank.
fn slot(slot: usize) -> (usize, usize, u32) {
    let place = word(1 + 2 * slot);
    (place >> 8, place & 0xff, word(2 + 2 * slot) as u32)
}

/// The rank of the token spelled `bytes`, if it is one: its slot in the
/// index, then the next ones until the token or an empty slot. A slot holds
/// the rank and where the token's bytes are, so a probe reads the slot and,
/// when the lengths agree, compares the bytes.
fn rank(bytes: &[u8]) -> Option<u32> {
    let mut at = index::first_slot(bytes);
    // Bounded, so a damaged table could never loop.
    for _ in 0..index::INDEX_SLOTS {
        let (offset, len, rank) = slot(at);
        if len == 0 {
            return None;
        }
        if len == bytes.len() {
            let start = BYTE_AREA + offset;
            if VOCABULARY.get(start..start + len) == Some(bytes) {
                return Some(rank);
            }
        }
        at = index::next_slot(at);
    }
    None
}

/// Tokens of one pre-tokenized piece: tiktoken's byte-pair merge, with a heap
/// so long pieces (a base64 blob, a run of symbols) stay O(n log n).
fn count_piece(piece: &[u8]) -> usize {
    if piece.len() <= 1 || rank(piece).is_some() {
        return usize::from(!piece.is_empty());
    }
    // Parts as a linked list of start offsets; `next[i]` is the start of the
    // part after the one starting at i (piece.len() at the end).
    let n = piece.len();
    let mut next: Vec<usize> = (1..=n).collect();
    let mut prev: Vec<usize> = (0..n).map(|i| i.wrapping_sub(1)).collect();
    let mut alive = vec![true; n];
    let mut heap = BinaryHeap::new();
    let pair = |start: usize, next: &[usize]| -> Option<(u32, usize, usize)> {
        let mid = next[start];
        let end = *next.get(mid)?;
        rank(&piece[start..end]).map(|r| (r, start, end))
    };
    for start in 0..n - 1 {
        if let Some(entry) = pair(start, &next) {
            heap.push(Reverse(entry));
        }
    }
    let mut parts = n;
    while let Some(Reverse((_, start, end))) = heap.pop() {
        // Stale: the pair changed since it was pushed.
        if !alive[start] || next.get(next[start]) != Some(&end) {
            continue;
        }
        let mid = next[start];
        alive[mid] = false;
        next[start] = end;
        if end < n {
            prev[end] = start;
        }
        parts -= 1;
        if let Some(entry) = pair(start, &next) {
            heap.push(Reverse(entry));
        }
        let before = prev[start];
        if before != usize::MAX {
            if let Some(entry) = pair(before, &next) {
                heap.push(Reverse(entry));
            }
        }
    }
    parts
}

/// The number of tokens of `text`; special-token spellings count as text.
pub fn count(text: &str) -> usize {
    if text.is_empty() {
        // No need to build the pre-tokenizer for nothing.
        return 0;
    }
    PIECE_COUNTS.with_borrow_mut(|counted| {
        let mut tokens = 0;
        pieces(text, |piece| tokens += counted.count(piece));
        tokens
    })
}

/// Calls `each` with the pieces of `text`, in order: split by hand where
/// the text is plain (`plain`), by the regex elsewhere. The text is cut
/// between a line break and an ASCII letter or digit, which no piece spans
/// (see [`chunks`]), into stretches all plain or not.
fn pieces<'t>(text: &'t str, mut each: impl FnMut(&'t str)) {
    let mut split = |stretch: &'t str, plain: bool| {
        if plain {
            plain::pieces(stretch).for_each(&mut each);
        } else {
            PRE_TOKENIZER.split(stretch).for_each(&mut each);
        }
    };
    let bytes = text.as_bytes();
    // The current stretch: its start, and whether it is plain so far.
    let (mut start, mut plain) = (0, true);
    let mut line = 0;
    loop {
        let next = memchr::memchr(b'\n', &bytes[line..]).map(|i| line + i + 1);
        let end = next.unwrap_or(bytes.len());
        // Lines end after a `\n`: on character boundaries.
        let line_plain = plain::is_plain(&text[line..end]);
        // A line whose kind differs from the stretch's ends it, where the
        // line may be cut from the one before.
        if line > start && line_plain != plain && no_piece_spans(bytes, line) {
            split(&text[start..line], plain);
            start = line;
            plain = line_plain;
        } else {
            plain &= line_plain;
        }
        match next {
            Some(next) if next < bytes.len() => line = next,
            _ => break,
        }
    }
    split(&text[start..], plain);
}

/// Distinct pieces a thread keeps the counts of: a few MB at most.
const PIECE_COUNTS_KEPT: usize = 1 << 16;

/// The counts of the pieces this thread met, across texts. Prose repeats
/// its pieces (" the", " agent", ".\n\n") within a prompt and from prompt
/// to prompt; a hit is one probe of a small, warm table, where a piece
/// looked up in the vocabulary probes a 5.6 MB table and a piece that is
/// no token takes a merge for each of its bytes. Only a function of the
/// piece is kept (no state of any analysis).
struct PieceCounts(crate::base::hash::HashMap<Box<str>, u32>);

impl PieceCounts {
    fn count(&mut self, piece: &str) -> usize {
        if let Some(&n) = self.0.get(piece) {
            return n as usize;
        }
        let n = count_piece(piece.as_bytes());
        if self.0.len() >= PIECE_COUNTS_KEPT {
            self.0.clear();
        }
        // A piece has at most one token a byte, and texts are far below 4 GB.
        self.0.insert(piece.into(), n as u32);
        n
    }
}

thread_local! {
    static PIECE_COUNTS: std::cell::RefCell<PieceCounts> =
        std::cell::RefCell::new(PieceCounts(Default::default()));
}

/// Chunks are at least this long (but the last): shorter texts are counted
/// whole.
const MIN_CHUNK_BYTES: usize = 512;

/// One line start in this many (by the hash of the bytes around it) ends a
/// chunk: about 1.5 KB of prose.
const CUT_ONE_IN: u64 = 16;

/// The bytes around a line start that decide whether a chunk ends there.
const CUT_WINDOW: usize = 16;

/// Whether the line starting at `line_start` (just after a `\n`) may be
/// cut from the text before it: it starts with an ASCII letter or digit,
/// which no piece of the pre-tokenizer takes after a line break (see
/// [`chunks`]).
fn no_piece_spans(bytes: &[u8], line_start: usize) -> bool {
    bytes.get(line_start).is_some_and(u8::is_ascii_alphanumeric)
}

/// `text` cut into parts whose counts add up to the count of `text`: each
/// cut is between a line break and a letter or digit (ASCII), which no
/// piece of the pre-tokenizer spans — letter and number pieces never take
/// a line break before them, and the pieces that hold line breaks (runs
/// of whitespace, punctuation followed by `[\r\n/]*`) never take a letter
/// or digit after them — and the pattern looks only ahead, never behind.
///
/// Where to cut is decided by the content around the cut (a hash of the
/// [`CUT_WINDOW`] bytes on each side), not by the distance from the start
/// of the text: a part of a prompt is cut where the prompt is, so the
/// counts of its inner chunks are the prompt's, already made; and an edit
/// changes the chunks it touches, not the cuts after it.
fn chunks(text: &str) -> impl Iterator<Item = &str> {
    let bytes = text.as_bytes();
    let mut start = 0;
    std::iter::from_fn(move || {
        if start >= text.len() {
            return None;
        }
        let from = start;
        let mut cut = text.len();
        let mut at = from + MIN_CHUNK_BYTES;
        while at < bytes.len() {
            let Some(i) = memchr::memchr(b'\n', &bytes[at..]) else {
                break;
            };
            let line_start = at + i + 1;
            if no_piece_spans(bytes, line_start) && cut_here(bytes, line_start) {
                cut = line_start;
                break;
            }
            at = line_start;
        }
        start = cut;
        Some(&text[from..cut])
    })
}

/// Whether a chunk ends at `line_start`: FNV-1a of the bytes around it.
fn cut_here(bytes: &[u8], line_start: usize) -> bool {
    let window =
        &bytes[line_start.saturating_sub(CUT_WINDOW)..(line_start + CUT_WINDOW).min(bytes.len())];
    (index::fnv1a(window) >> 32).is_multiple_of(CUT_ONE_IN)
}

/// Counts already made, kept by the caller's cache: the language server
/// sizes the same prompts after every keystroke, and most of them did not
/// change.
#[derive(Debug)]
pub struct TokenCounts(Memo<usize>);

impl Default for TokenCounts {
    fn default() -> TokenCounts {
        TokenCounts(Memo::new(8192))
    }
}

impl TokenCounts {
    /// As [`count`], each chunk of the text (see [`chunks`]) looked up when
    /// it was counted before: an edit inside a long prompt recounts only
    /// the chunks it changed, and a part of a counted prompt only its ends.
    pub fn count(&self, text: &str) -> usize {
        chunks(text).map(|chunk| self.chunk(chunk)).sum()
    }

    fn chunk(&self, chunk: &str) -> usize {
        *self.0.get_or(memo::key([chunk]), || count(chunk))
    }

    /// Whether `text` is over `budget` tokens, and its count when it is.
    /// No token is shorter than a byte, so the text is counted only until
    /// the tokens so far plus the bytes still to count are within the
    /// budget: text of at most `budget` bytes is not counted at all.
    pub fn over_budget(&self, text: &str, budget: usize) -> Option<usize> {
        let mut tokens = 0;
        let mut uncounted = text.len();
        for chunk in chunks(text) {
            if tokens + uncounted <= budget {
                return None;
            }
            tokens += self.chunk(chunk);
            uncounted -= chunk.len();
        }
        (tokens > budget).then_some(tokens)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::seeded::xorshift;

    /// The table and merge count exactly as bpe-openai's own o200k_base.
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
        let counts = TokenCounts::default();
        for text in &corpus {
            assert_eq!(count(text), reference.count(text), "{text:?}");
            // Counted in chunks, as the cache counts.
            assert_eq!(counts.count(text), reference.count(text), "{text:?}");
        }
        assert!(
            corpus.iter().any(|t| chunks(t).count() > 3),
            "no text long enough to be cut"
        );
    }

    /// Pieces that are not tokens exercise the merge: long runs, symbols,
    /// digits, mixed scripts, base64, in random (seeded) combinations.
    #[test]
    fn merges_agree_with_bpe_openai_on_random_text() {
        let atoms = [
            "a",
            "aa",
            "ab",
            "Zz",
            " ",
            "  ",
            "\n",
            "\r\n",
            "\t",
            "0",
            "123",
            "4567",
            "'s",
            "'LL",
            "ü",
            "é",
            "日本",
            "語",
            "Ω",
            "\u{1F600}",
            "\u{200D}",
            "#",
            "{{",
            "}}",
            "::",
            "->",
            "/*",
            "==",
            "${x}",
            "QmFzZTY0",
            "xYz9+/",
            "___",
            "...",
            "\u{301}",
            "ـ",
            "ñññ",
        ];
        let reference = bpe_openai::o200k_base();
        let mut next = xorshift(0x9e37_79b9_7f4a_7c15);
        for _ in 0..3000 {
            let len = (next() % 40) as usize;
            let text: String = (0..len)
                .map(|_| atoms[(next() % atoms.len() as u64) as usize])
                .collect();
            assert_eq!(count(&text), reference.count(text.as_str()), "{text:?}");
        }
        let long = "QmFzZTY0IGRhdGEgYmxvYg".repeat(500) + &"=+".repeat(300) + &"ab".repeat(2000);
        assert_eq!(count(&long), reference.count(long.as_str()));
        // Long texts of the same atoms, line breaks before letters, digits
        // and everything else among them: the chunks' counts add up.
        let counts = TokenCounts::default();
        for _ in 0..40 {
            let text: String = (0..4000)
                .map(|_| atoms[(next() % atoms.len() as u64) as usize])
                .collect();
            assert!(chunks(&text).count() > 1);
            assert_eq!(
                chunks(&text).collect::<String>(),
                text,
                "the chunks are the text"
            );
            assert_eq!(
                counts.count(&text),
                reference.count(text.as_str()),
                "{text:?}"
            );
        }
    }

    #[test]
    fn counts_o200k_base_tokens() {
        let counts = TokenCounts::default();
        assert_eq!(count(""), 0);
        assert_eq!(counts.count(""), 0);
        assert_eq!(counts.count("hello world"), 2);
        // Memoized counts are the counts.
        assert_eq!(counts.count("hello world"), 2);
        assert_eq!(count("hello world"), 2);
        // Never more tokens than bytes: the budget shortcut relies on it.
        for text in ["ü", "日本語のテキスト", "a\u{1F600}b", "   \n\n\t"] {
            assert!(count(text) <= text.len(), "{text}");
        }
    }

    /// Lines of ASCII and of other scripts, mixed: the stretches split by
    /// hand and by the regex join into the regex's own pieces.
    #[test]
    fn mixed_text_is_split_as_the_regex_splits_it() {
        let lines = [
            "Return the plan.",
            "- item → next",
            "  indented — dash",
            "Ünïcödé line",
            "3 steps\r",
            "## Rules",
            "",
            "日本語のテキスト",
            "x",
            "emoji \u{1F600} here",
            "   ",
        ];
        let mut next = xorshift(0x5851_f42d_4c95_7f2d);
        for _ in 0..3000 {
            let n = 1 + (next() % 12) as usize;
            let text: String = (0..n)
                .map(|_| lines[(next() % lines.len() as u64) as usize])
                .collect::<Vec<_>>()
                .join("\n");
            let mut ours = Vec::new();
            pieces(&text, |p| ours.push(p));
            let regex: Vec<&str> = PRE_TOKENIZER.split(&text).collect();
            assert_eq!(ours, regex, "{text:?}");
        }
    }

    #[test]
    fn the_budget_is_settled_by_bytes_when_it_can_be() {
        let counts = TokenCounts::default();
        assert_eq!(counts.over_budget("hello world", 11), None);
        assert_eq!(counts.over_budget("hello world", 1), Some(2));
        assert_eq!(counts.over_budget("hello world", 2), None);
    }

    /// Long prose, counted only as far as the budget needs: the answer is
    /// the full count's, at every budget around it.
    #[test]
    fn a_budget_check_agrees_with_the_full_count() {
        let mut next = xorshift(0x9e37_79b9_7f4a_7c15);
        let words = [
            "agent", "tool", "Return", "the", "plan", "3 steps", "## Rules", "{x}",
        ];
        let text: String = (0..6000)
            .map(|i| {
                let word = words[(next() % words.len() as u64) as usize];
                if i % 11 == 10 {
                    format!("{word}\n")
                } else {
                    format!("{word} ")
                }
            })
            .collect();
        assert!(chunks(&text).count() > 10, "the text is not cut");
        let tokens = count(&text);
        for budget in [
            0,
            tokens / 2,
            tokens - 1,
            tokens,
            tokens + 1,
            text.len() - 1,
        ] {
            // A fresh memo each time: nothing counted before helps.
            let counts = TokenCounts::default();
            let expected = (tokens > budget).then_some(tokens);
            assert_eq!(
                counts.over_budget(&text, budget),
                expected,
                "budget {budget}"
            );
        }
    }

    #[test]
    fn a_part_is_cut_where_the_whole_is() {
        // Prose of varied lines, like a prompt composed of parts.
        let mut next = xorshift(0x2545_f491_4f6c_dd1d);
        let words = [
            "agent", "tool", "Return", "the", "plan", "3 steps", "- item", "## Rules",
        ];
        let whole: String = (0..3000)
            .map(|i| {
                let word = words[(next() % words.len() as u64) as usize];
                if i % 9 == 8 {
                    format!("{word}.\n")
                } else {
                    format!("{word} ")
                }
            })
            .collect();
        let whole_chunks: std::collections::HashSet<&str> = chunks(&whole).collect();
        assert!(whole_chunks.len() > 8, "{} chunks", whole_chunks.len());
        // A part starting and ending at line starts inside the whole.
        let lines: Vec<usize> = whole.match_indices('\n').map(|(i, _)| i + 1).collect();
        let part = &whole[lines[20]..lines[lines.len() - 20]];
        let part_chunks: Vec<&str> = chunks(part).collect();
        let shared = part_chunks
            .iter()
            .filter(|c| whole_chunks.contains(*c))
            .count();
        // All but the first and the last few are the whole's.
        assert!(
            shared + 4 >= part_chunks.len(),
            "{shared} of {} chunks shared",
            part_chunks.len()
        );
    }

    /// The table's first word: how many tokens it holds.
    fn vocabulary_len() -> usize {
        word(0)
    }

    #[test]
    fn the_index_finds_a_token_in_a_few_probes() {
        let n = vocabulary_len();
        let (mut used, mut run, mut longest_run) = (0, 0, 0);
        for at in 0..index::INDEX_SLOTS {
            if slot(at).1 == 0 {
                run = 0;
            } else {
                used += 1;
                run += 1;
                longest_run = run.max(longest_run);
            }
        }
        assert_eq!(used, n);
        // A well-mixed hash at 38% load: runs of a few dozen slots at most.
        assert!(longest_run <= 64, "a run of {longest_run} full slots");
    }

    /// Every token of bpe-openai's o200k_base is found with its rank, and
    /// what is one byte shorter or longer than a token is found exactly
    /// when it is a token too.
    #[test]
    fn the_table_holds_every_token_with_its_rank() {
        let reference = &bpe_openai::o200k_base().bpe;
        let n = reference.num_tokens();
        assert_eq!(vocabulary_len(), n);
        let ids: std::collections::HashMap<&[u8], u32> = (0..n as u32)
            .map(|id| (reference.token_bytes(id), id))
            .collect();
        for (&bytes, &id) in &ids {
            assert_eq!(rank(bytes), Some(id), "{bytes:?}");
            let shorter = &bytes[..bytes.len() - 1];
            let longer = [bytes, b"!"].concat();
            for near in [shorter, longer.as_slice()] {
                assert_eq!(rank(near), ids.get(near).copied(), "{near:?}");
            }
        }
    }
}
