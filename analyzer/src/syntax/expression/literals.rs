//! The values of number and string tokens.

use super::Const;

/// The value of a number token the tokenizer already validated.
pub(super) fn number_value(text: &str) -> Const {
    let clean = text.replace('_', "").to_ascii_lowercase();
    if clean.ends_with('j') {
        return Const::Other(text.to_string());
    }
    let radix = [("0x", 16), ("0o", 8), ("0b", 2)]
        .iter()
        .find_map(|(p, r)| clean.strip_prefix(p).map(|rest| (rest.to_string(), *r)));
    if let Some((digits, radix)) = radix {
        return i128::from_str_radix(&digits, radix)
            .map(Const::Int)
            .unwrap_or(Const::Float(f64::INFINITY));
    }
    if clean.contains(['.', 'e']) {
        return Const::Float(clean.parse().unwrap_or(f64::NAN));
    }
    clean
        .parse::<i128>()
        .map(Const::Int)
        .unwrap_or_else(|_| Const::Float(clean.parse().unwrap_or(f64::INFINITY)))
}

/// The value of a string token: prefix, quotes and the common escapes.
pub(super) fn string_value(text: &str) -> Const {
    let prefix_len = text.find(['\'', '"']).unwrap_or(0);
    let prefix = text[..prefix_len].to_ascii_lowercase();
    let body = &text[prefix_len..];
    let quote = &body[..1.min(body.len())];
    let quote_len = if body.len() >= 6 && body[1..].starts_with(&quote.repeat(2)) {
        3
    } else {
        1
    };
    let inner = body
        .get(quote_len..body.len().saturating_sub(quote_len))
        .unwrap_or("");
    let raw = prefix.contains('r');
    let mut out = String::new();
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c != '\\' || raw {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('0') => out.push('\0'),
            Some('\\') => out.push('\\'),
            Some('\'') => out.push('\''),
            Some('"') => out.push('"'),
            Some('\n') => {}
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    if prefix.contains('b') {
        Const::Bytes(out.into_bytes())
    } else {
        Const::Str(out)
    }
}
