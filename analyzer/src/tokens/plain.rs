//! o200k_base's pre-tokenizer on plain text, written out by hand: the
//! regex (see `PATTERN`) is most of a count's time and takes ~14 ms to
//! build, and prompts are nearly all ASCII with a few dashes, arrows and
//! emoji. Plain text is ASCII and [`symbol`] characters. There the
//! pattern's classes are plain sets (letters `A-Za-z`, numbers `0-9`,
//! whitespace ` \t\n\x0b\x0c\r`, every symbol character outside all
//! three), and its alternatives, tried in order at each piece's start,
//! each have one way to match:
//!
//! 1. `[^\r\n L N]? [Lu]* [Ll]+ contraction?`
//! 2. `[^\r\n L N]? [Lu]+ [Ll]* contraction?`
//! 3. `N{1,3}`
//! 4. ` ? [^\s L N]+ [\r\n/]*`
//! 5. `\s* [\r\n]+`: the whitespace run up to its last line break
//! 6. `\s+ (?!\S)`: the run, less its last character when text follows
//! 7. `\s+`
//!
//! Other text is split by the regex (see `pieces`); the tests compare the
//! two on random and real text.

/// Whether `c`, outside ASCII, is a symbol to the pattern: none of letter,
/// mark, number or whitespace, so it splits as ASCII punctuation does.
/// Whole ranges of general punctuation, arrows, mathematical operators,
/// technical and geometric symbols, box drawing, miscellaneous symbols,
/// dingbats (not their circled numbers) and pictographs (emoji); a test
/// checks every character of them against the regex.
pub(super) fn symbol(c: char) -> bool {
    matches!(c,
        '\u{2010}'..='\u{2027}'
        | '\u{2030}'..='\u{205E}'
        | '\u{2190}'..='\u{23FF}'
        | '\u{2500}'..='\u{2775}'
        | '\u{2794}'..='\u{27BF}'
        | '\u{1F300}'..='\u{1F6FF}'
        | '\u{1F900}'..='\u{1F9FF}')
}

/// Whether `text` is plain: the splitter below reads it.
pub(super) fn is_plain(text: &str) -> bool {
    text.is_ascii() || text.chars().all(|c| c.is_ascii() || symbol(c))
}

/// `[^\r\n\p{L}\p{N}]`: what may lead a word (ASCII).
fn leads_word(b: u8) -> bool {
    !(b == b'\r' || b == b'\n' || b.is_ascii_alphanumeric())
}

/// `[^\s\p{L}\p{N}]` on an ASCII byte: punctuation and control bytes. A
/// byte of a symbol character (non-ASCII) also counts: in plain text every
/// non-ASCII byte belongs to one.
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

/// The end of the character that starts at `at`.
fn char_end(text: &[u8], at: usize) -> usize {
    run(text, at + 1, |b| b & 0xC0 == 0x80)
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

/// The end of the piece that starts at `start` (< `text.len()`, a
/// character boundary), all of `text` being plain.
fn piece_end(text: &[u8], start: usize) -> usize {
    let first = text[start];
    // 1 and 2: a letter that is not a word's first byte cannot be reached
    // without its lead, so the lead is taken whenever it can be (a symbol
    // character whole).
    let letters = if leads_word(first) {
        char_end(text, start)
    } else {
        start
    };
    let upper = run(text, letters, |b| b.is_ascii_uppercase());
    let lower = run(text, upper, |b| b.is_ascii_lowercase());
    if lower > upper || upper > letters {
        return contraction(text, lower);
    }
    // 3
    if first.is_ascii_digit() {
        return run(text, start, |b| b.is_ascii_digit()).min(start + 3);
    }
    // 4 (a run of symbol bytes ends on a character boundary: the byte after
    // it is ASCII)
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

/// The pieces of `text`, which must be plain ([`is_plain`]).
pub(super) fn pieces(text: &str) -> impl Iterator<Item = &str> {
    debug_assert!(is_plain(text));
    let bytes = text.as_bytes();
    let mut at = 0;
    std::iter::from_fn(move || {
        if at >= bytes.len() {
            return None;
        }
        let start = at;
        at = piece_end(bytes, start).max(char_end(bytes, start));
        Some(&text[start..at])
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn by_regex(text: &str) -> Vec<&str> {
        super::super::PRE_TOKENIZER.split(text).collect()
    }

    /// Every symbol character, in the contexts that tell a symbol from a
    /// letter, a mark, a number or whitespace.
    #[test]
    fn symbol_characters_split_as_the_regex_splits_them() {
        let ranges = [
            ('\u{2000}', '\u{2100}'),
            ('\u{2180}', '\u{2800}'),
            ('\u{1F300}', '\u{1FA00}'),
        ];
        let mut checked = 0;
        for (from, to) in ranges {
            for c in (from..to).filter(|&c| symbol(c)) {
                for text in [
                    format!("a{c}b"),
                    format!("{c}{c}x"),
                    format!(" {c}\n"),
                    format!("x{c}'s {c}"),
                    format!("1{c}2\n\n{c}/"),
                    format!("{c}"),
                    format!("  {c}Word"),
                ] {
                    assert_eq!(
                        pieces(&text).collect::<Vec<_>>(),
                        by_regex(&text),
                        "{text:?}"
                    );
                }
                checked += 1;
            }
        }
        assert!(checked > 2000, "{checked}");
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

    /// Random texts over the characters each alternative turns on.
    #[test]
    fn random_plain_text_is_split_as_the_regex_splits_it() {
        let alphabet: Vec<char> =
            "aZbY's'tRELLvedm 0123456789 \t\n\r\x0b\x0c.,!?/-'\"()_*#\x00\x7f—→…🤖"
                .chars()
                .collect();
        let mut next = crate::base::seeded::xorshift(0x2545_f491_4f6c_dd1d);
        for _ in 0..20_000 {
            let len = (next() % 24) as usize;
            let text: String = (0..len)
                .map(|_| alphabet[(next() % alphabet.len() as u64) as usize])
                .collect();
            assert_eq!(
                pieces(&text).collect::<Vec<_>>(),
                by_regex(&text),
                "{text:?}"
            );
        }
    }
}
