//! o200k_base's pre-tokenizer on ASCII text, written out by hand: the
//! regex (see `PATTERN`) is most of a count's time, and prompts are nearly
//! all ASCII. On ASCII its classes are plain byte sets (letters `A-Za-z`,
//! numbers `0-9`, whitespace ` \t\n\x0b\x0c\r`), and its alternatives,
//! tried in order at each piece's start, each have one way to match:
//!
//! 1. `[^\r\n L N]? [Lu]* [Ll]+ contraction?`
//! 2. `[^\r\n L N]? [Lu]+ [Ll]* contraction?`
//! 3. `N{1,3}`
//! 4. ` ? [^\s L N]+ [\r\n/]*`
//! 5. `\s* [\r\n]+`: the whitespace run up to its last line break
//! 6. `\s+ (?!\S)`: the run, less its last character when text follows
//! 7. `\s+`
//!
//! Text with any other byte is split by the regex (see `split`); the tests
//! compare the two on random and real text.

/// `[^\r\n\p{L}\p{N}]`: what may lead a word.
fn leads_word(b: u8) -> bool {
    !(b == b'\r' || b == b'\n' || b.is_ascii_alphanumeric())
}

/// `[^\s\p{L}\p{N}]`: punctuation and symbols (and control bytes).
fn is_symbol(b: u8) -> bool {
    !(is_space(b) || b.is_ascii_alphanumeric())
}

/// `\s` on ASCII.
fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r')
}

/// The end of the run of bytes from `at` that `class` holds.
fn run(text: &[u8], mut at: usize, class: impl Fn(u8) -> bool) -> usize {
    while at < text.len() && class(text[at]) {
        at += 1;
    }
    at
}

/// The end of `(?i:'s|'t|'re|'ve|'m|'ll|'d)?` from `at`.
fn contraction(text: &[u8], at: usize) -> usize {
    if text.get(at) != Some(&b'\'') {
        return at;
    }
    let lower = |i: usize| text.get(i).map(u8::to_ascii_lowercase);
    match (lower(at + 1), lower(at + 2)) {
        (Some(b's' | b't' | b'm' | b'd'), _) => at + 2,
        (Some(b'r' | b'v'), Some(b'e')) | (Some(b'l'), Some(b'l')) => at + 3,
        _ => at,
    }
}

/// The end of the piece that starts at `start` (< `text.len()`), all of
/// `text` being ASCII.
fn piece_end(text: &[u8], start: usize) -> usize {
    let first = text[start];
    // 1 and 2: a letter that is not a word's first byte cannot be reached
    // without its lead, so the lead is taken whenever it can be.
    let letters = if leads_word(first) { start + 1 } else { start };
    let upper = run(text, letters, |b| b.is_ascii_uppercase());
    let lower = run(text, upper, |b| b.is_ascii_lowercase());
    if lower > upper || upper > letters {
        return contraction(text, lower);
    }
    // 3
    if first.is_ascii_digit() {
        return run(text, start, |b| b.is_ascii_digit()).min(start + 3);
    }
    // 4
    let symbols = if first == b' ' { start + 1 } else { start };
    if symbols < text.len() && is_symbol(text[symbols]) {
        let end = run(text, symbols, is_symbol);
        return run(text, end, |b| matches!(b, b'\r' | b'\n' | b'/'));
    }
    // 5, 6, 7: `first` is whitespace (every other byte led one of the above).
    let end = run(text, start, is_space);
    if let Some(last_break) = text[start..end]
        .iter()
        .rposition(|&b| b == b'\r' || b == b'\n')
    {
        return start + last_break + 1;
    }
    if end < text.len() && end - start >= 2 {
        return end - 1;
    }
    end
}

/// The pieces of `text`, which must be ASCII.
pub(super) fn pieces(text: &str) -> impl Iterator<Item = &str> {
    debug_assert!(text.is_ascii());
    let bytes = text.as_bytes();
    let mut at = 0;
    std::iter::from_fn(move || {
        if at >= bytes.len() {
            return None;
        }
        let start = at;
        at = piece_end(bytes, start).max(start + 1);
        // ASCII: every offset is a character boundary.
        Some(&text[start..at])
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn by_regex(text: &str) -> Vec<&str> {
        super::super::PRE_TOKENIZER.split(text).collect()
    }

    #[test]
    fn ascii_text_is_split_as_the_regex_splits_it() {
        let samples = [
            "hello world",
            "  hello\t\tworld  \n\n  x",
            "It's they're we've I'm you'll he'd SHE'S DON'T 'tis 'LL",
            "McDonald HTTPServer iPhone ABCdef abcDEF A B C",
            "numbers 1 12 123 1234 12345 3.14159 -42 $100 x2y3",
            "path/to/file.py:12:5 // comments /* block */ {json: [1, 2]}\n/next",
            "...hello !!\n\nworld ?!/\r\n/\rx \x0b\x0cend \x00\x1f\x7f",
            "\r\n\r\nwindows lines\r\n   \n \t\n",
            "trailing spaces   ",
            " ",
            "'",
            "a",
            "\n",
        ];
        for text in samples {
            assert_eq!(pieces(text).collect::<Vec<_>>(), by_regex(text), "{text:?}");
        }
    }

    /// Random texts over the bytes each alternative turns on.
    #[test]
    fn random_ascii_is_split_as_the_regex_splits_it() {
        let alphabet: &[u8] = b"aZbY's'tRELLvedm 0123456789 \t\n\r\x0b\x0c.,!?/-'\"()_*#\x00\x7f";
        let mut state: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for _ in 0..20_000 {
            let len = (next() % 24) as usize;
            let text: String = (0..len)
                .map(|_| alphabet[(next() % alphabet.len() as u64) as usize] as char)
                .collect();
            assert_eq!(
                pieces(&text).collect::<Vec<_>>(),
                by_regex(&text),
                "{text:?}"
            );
        }
    }
}
