//! Where a Python string literal ends, by Python's tokenizer rules: one scanner
//! for the logical lines of tool files (`python.rs`), their context writes
//! (`model/writes.rs`) and `context_expression` strings (`expression/lexer.rs`).

/// Why a Python string literal is not closed.
pub enum Unclosed {
    /// The text ends inside it.
    AtEnd,
    /// A single-quoted literal reaches this line break.
    AtLineBreak(usize),
}

/// Where the Python string literal whose first quote is at `quote_at` (after
/// any prefix) ends: just past its closing quote. One or three quotes, a
/// backslash escapes the next byte, only triple-quoted literals span lines.
pub fn string_literal_end(bytes: &[u8], quote_at: usize) -> Result<usize, Unclosed> {
    let Some(&quote) = bytes.get(quote_at) else {
        return Err(Unclosed::AtEnd);
    };
    let triple = bytes.get(quote_at..quote_at + 3) == Some(&[quote, quote, quote][..]);
    let mut i = quote_at + if triple { 3 } else { 1 };
    loop {
        match bytes.get(i) {
            None => return Err(Unclosed::AtEnd),
            Some(b'\\') => i += 2,
            Some(&b) if b == quote => {
                if !triple {
                    return Ok(i + 1);
                }
                if bytes.get(i..i + 3) == Some(&[quote, quote, quote][..]) {
                    return Ok(i + 3);
                }
                i += 1;
            }
            Some(b'\n') if !triple => return Err(Unclosed::AtLineBreak(i)),
            Some(_) => i += 1,
        }
    }
}
