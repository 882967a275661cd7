//! Scalar resolution exactly as mozaiks reads YAML: PyYAML `safe_load`, YAML 1.1
//! implicit resolvers for plain scalars, and the core explicit tags.

use std::fmt::Write as _;

/// How a scalar was written in the source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScalarStyle {
    Plain,
    SingleQuoted,
    DoubleQuoted,
    Literal,
    Folded,
}

impl ScalarStyle {
    pub fn is_quoted(self) -> bool {
        !matches!(self, ScalarStyle::Plain)
    }
}

/// The value a scalar resolves to after `yaml.safe_load`.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Int(Integer),
    /// An integer too large for `i128`; holds its decimal (or source) digits.
    BigInt(String),
    Float(f64),
    Str(String),
    /// `YYYY-MM-DD`.
    Date(String),
    /// Python's `str()` of the datetime (`2026-05-15 10:00:00+00:00`).
    DateTime(String),
    Binary(Vec<u8>),
}

/// An `i128` kept at 8-byte alignment. `i128` itself is 16-byte aligned,
/// which would pad every value holding one, and with it every tree node and
/// normalised item (a YAML node 64 instead of 48 bytes: a quarter of a large
/// file's tree).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Integer([u64; 2]);

impl Integer {
    pub const fn new(value: i128) -> Self {
        let bits = value as u128;
        Integer([bits as u64, (bits >> 64) as u64])
    }

    pub const fn get(self) -> i128 {
        ((self.0[1] as u128) << 64 | self.0[0] as u128) as i128
    }
}

impl From<i128> for Integer {
    fn from(value: i128) -> Self {
        Integer::new(value)
    }
}

impl std::fmt::Debug for Integer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&self.get(), f)
    }
}

impl std::fmt::Display for Integer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(&self.get(), f)
    }
}

/// Why a scalar could not be constructed (PyYAML raises, the file fails to load).
#[derive(Debug, Clone, PartialEq)]
pub struct ScalarError(pub String);

/// The result of resolving a plain scalar that is a merge key (`<<`).
#[derive(Debug, Clone, PartialEq)]
pub enum Resolved {
    Value(Value),
    Merge,
}

impl Value {
    /// The YAML/Python type name used in messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "boolean",
            Value::Int(_) | Value::BigInt(_) => "integer",
            Value::Float(_) => "float",
            Value::Str(_) => "string",
            Value::Date(_) => "date",
            Value::DateTime(_) => "datetime",
            Value::Binary(_) => "binary",
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    /// Python's `str()` of the value, as Pydantic's lax text fields produce it.
    pub fn python_str(&self) -> String {
        match self {
            Value::Null => "None".to_string(),
            Value::Bool(true) => "True".to_string(),
            Value::Bool(false) => "False".to_string(),
            Value::Int(i) => i.to_string(),
            Value::BigInt(digits) => digits.clone(),
            Value::Float(f) => python_float_repr(*f),
            Value::Str(s) => s.clone(),
            Value::Date(d) => d.clone(),
            Value::DateTime(d) => d.clone(),
            Value::Binary(bytes) => {
                let mut out = String::from("b'");
                for &b in bytes {
                    match b {
                        b'\\' => out.push_str("\\\\"),
                        b'\'' => out.push_str("\\'"),
                        b'\n' => out.push_str("\\n"),
                        b'\r' => out.push_str("\\r"),
                        b'\t' => out.push_str("\\t"),
                        0x20..=0x7e => out.push(b as char),
                        _ => {
                            let _ = write!(out, "\\x{b:02x}");
                        }
                    }
                }
                out.push('\'');
                out
            }
        }
    }

    /// Python `repr()` as used inside list/dict `str()` output.
    pub fn python_repr(&self) -> String {
        match self {
            Value::Str(s) => python_str_repr(s),
            Value::Date(d) => {
                let parts: Vec<&str> = d.split('-').collect();
                match parts.as_slice() {
                    [y, m, day] => format!(
                        "datetime.date({}, {}, {})",
                        y.trim_start_matches('0'),
                        m.trim_start_matches('0'),
                        day.trim_start_matches('0')
                    ),
                    _ => d.clone(),
                }
            }
            other => other.python_str(),
        }
    }

    /// A key for equality as Python dict keys see it (`1 == True == 1.0`).
    pub fn hash_key(&self) -> String {
        match self {
            Value::Null => "n".into(),
            Value::Bool(b) => format!("#{}", *b as i32),
            Value::Int(i) => format!("#{i}"),
            Value::BigInt(d) => format!("#{d}"),
            Value::Float(f) if f.fract() == 0.0 && f.abs() < 1e30 => format!("#{}", *f as i128),
            Value::Float(f) => format!("f{f}"),
            Value::Str(s) => format!("s{s}"),
            Value::Date(d) => format!("d{d}"),
            Value::DateTime(d) => format!("t{d}"),
            Value::Binary(b) => format!("b{b:?}"),
        }
    }
}

fn python_str_repr(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::new();
    out.push(quote);
    for ch in s.chars() {
        match ch {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

/// Python's `repr(float)`: shortest round-trip digits, scientific notation outside
/// `1e-4 <= |x| < 1e16`.
pub fn python_float_repr(f: f64) -> String {
    if f.is_nan() {
        return "nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "inf" } else { "-inf" }.into();
    }
    if f == 0.0 {
        return if f.is_sign_negative() { "-0.0" } else { "0.0" }.into();
    }
    let sci = format!("{f:e}"); // e.g. "1.5e-3", "1e20"
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if !(-4..16).contains(&exp) {
        let sign = if exp < 0 { '-' } else { '+' };
        return format!("{mantissa}e{sign}{:02}", exp.abs());
    }
    let plain = format!("{f}");
    if plain.contains('.') {
        plain
    } else {
        format!("{plain}.0")
    }
}

/// Resolves a plain, untagged scalar with PyYAML's YAML 1.1 implicit resolvers.
/// `is_key` selects the key-only behaviour of `=`.
pub fn resolve_plain(text: &str, is_key: bool) -> Result<Resolved, ScalarError> {
    Ok(resolve_implicit(text, is_key)?
        .unwrap_or_else(|| Resolved::Value(Value::Str(text.to_string()))))
}

/// [`resolve_plain`], `None` for text: the reader then moves the scalar's
/// own string into the value instead of copying it.
pub fn resolve_implicit(text: &str, is_key: bool) -> Result<Option<Resolved>, ScalarError> {
    resolve_special(text, is_key).transpose()
}

fn resolve_special(text: &str, is_key: bool) -> Option<Result<Resolved, ScalarError>> {
    // Text that starts with a letter other than the first of `yes`, `no`,
    // `true`, `false`, `on`, `off`, `null` is text: no resolver matches it.
    if let Some(first) = text.as_bytes().first() {
        if first.is_ascii_alphabetic()
            && !matches!(first.to_ascii_lowercase(), b'y' | b'n' | b't' | b'f' | b'o')
        {
            return None;
        }
    }
    if text == "<<" {
        return Some(Ok(Resolved::Merge));
    }
    // PyYAML resolves `!`, `&` and `*` to a tag it cannot construct; only
    // the non-specific tag makes them implicit (`! "*"`).
    if matches!(text, "!" | "&" | "*") {
        return Some(Err(ScalarError(
            "could not determine a constructor for the tag 'tag:yaml.org,2002:yaml'".into(),
        )));
    }
    if text == "=" {
        return Some(if is_key {
            Ok(Resolved::Value(Value::Str("=".into())))
        } else {
            Err(ScalarError(
                "could not determine a constructor for the tag 'tag:yaml.org,2002:value'".into(),
            ))
        });
    }
    if is_null(text) {
        return Some(Ok(Resolved::Value(Value::Null)));
    }
    if let Some(b) = bool_word(text) {
        return Some(Ok(Resolved::Value(Value::Bool(b))));
    }
    if is_int(text) {
        return Some(construct_int(text).map(Resolved::Value));
    }
    if is_float(text) {
        return Some(construct_float(text).map(Resolved::Value));
    }
    timestamp(text, false).map(|ts| ts.map(Resolved::Value))
}

/// Constructs a scalar that carries an explicit tag (`!!str 010`, `!!int "3"` …).
/// `suffix` is the core tag name (`str`, `int`, …); `None` means an unknown tag.
pub fn resolve_tagged(text: &str, suffix: &str) -> Result<Value, ScalarError> {
    match suffix {
        "str" => Ok(Value::Str(text.to_string())),
        "null" => Ok(Value::Null),
        "bool" => match text.to_ascii_lowercase().as_str() {
            "yes" | "true" | "on" => Ok(Value::Bool(true)),
            "no" | "false" | "off" => Ok(Value::Bool(false)),
            _ => Err(ScalarError(format!("'{text}' is not a !!bool value"))),
        },
        "int" => {
            if text.is_empty() {
                return Err(ScalarError("string index out of range".into()));
            }
            construct_int(text).map_err(|_| {
                ScalarError(format!("invalid literal for int() with base 10: '{text}'"))
            })
        }
        "float" => construct_float(text),
        "timestamp" => match timestamp(text, true) {
            Some(result) => result,
            None => Err(ScalarError(format!("'{text}' is not a timestamp"))),
        },
        "binary" => decode_base64(text).map(Value::Binary),
        _ => Err(ScalarError(format!(
            "could not determine a constructor for the tag '!!{suffix}'"
        ))),
    }
}

fn is_null(text: &str) -> bool {
    matches!(text, "" | "~" | "null" | "Null" | "NULL")
}

fn bool_word(text: &str) -> Option<bool> {
    match text {
        "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => Some(true),
        "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" => Some(false),
        _ => None,
    }
}

fn strip_sign(text: &str) -> (bool, &str) {
    match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    }
}

fn all(s: &str, f: impl Fn(u8) -> bool) -> bool {
    !s.is_empty() && s.bytes().all(f)
}

/// `[-+]?0b[0-1_]+ | [-+]?0[0-7_]+ | [-+]?(0|[1-9][0-9_]*) | [-+]?0x[0-9a-fA-F_]+ |
/// [-+]?[1-9][0-9_]*(:[0-5]?[0-9])+`
fn is_int(text: &str) -> bool {
    let (_, body) = strip_sign(text);
    if let Some(rest) = body.strip_prefix("0b") {
        return all(rest, |b| matches!(b, b'0' | b'1' | b'_'));
    }
    if let Some(rest) = body.strip_prefix("0x") {
        return all(rest, |b| b.is_ascii_hexdigit() || b == b'_');
    }
    if body == "0" {
        return true;
    }
    if let Some(rest) = body.strip_prefix('0') {
        return all(rest, |b| matches!(b, b'0'..=b'7' | b'_'));
    }
    let bytes = body.as_bytes();
    if bytes.is_empty() || !matches!(bytes[0], b'1'..=b'9') {
        return false;
    }
    let mut parts = body.split(':');
    let head = parts.next().unwrap_or("");
    if !all(head, |b| b.is_ascii_digit() || b == b'_') {
        return false;
    }
    parts.all(is_sexagesimal_part)
}

fn is_sexagesimal_part(part: &str) -> bool {
    let b = part.as_bytes();
    match b.len() {
        1 => b[0].is_ascii_digit(),
        2 => matches!(b[0], b'0'..=b'5') && b[1].is_ascii_digit(),
        _ => false,
    }
}

/// PyYAML's `construct_yaml_int`: underscores dropped, one sign taken off,
/// then `0`, `0b…`, `0x…`, `0…` (octal), base 60 (`1:30`), or decimal,
/// each read by Python's `int(text, base)`.
fn construct_int(text: &str) -> Result<Value, ScalarError> {
    let cleaned = text.replace('_', "");
    let (negative, body) = strip_sign(&cleaned);
    let read = |digits: &str, base: u32| {
        python_int(digits, base).ok_or_else(|| {
            ScalarError(format!(
                "invalid literal for int() with base {base}: '{digits}'"
            ))
        })
    };
    let magnitude = if body == "0" {
        PythonInt::Small(0)
    } else if let Some(rest) = body.strip_prefix("0b") {
        read(rest, 2)?
    } else if let Some(rest) = body.strip_prefix("0x") {
        read(rest, 16)?
    } else if body.starts_with('0') {
        read(body, 8)?
    } else if body.contains(':') {
        let mut total: i128 = 0;
        for part in body.split(':') {
            let PythonInt::Small(n) = read(part, 10)? else {
                return Err(ScalarError(
                    "integer too large for this analyzer's resolution".into(),
                ));
            };
            total = total
                .checked_mul(60)
                .and_then(|t| t.checked_add(n))
                .ok_or_else(|| {
                    ScalarError("integer too large for this analyzer's resolution".into())
                })?;
        }
        PythonInt::Small(total)
    } else if body.is_empty() {
        return Err(ScalarError("string index out of range".into()));
    } else {
        if body.len() > 4300 {
            return Err(ScalarError(
                "Exceeds the limit (4300 digits) for integer string conversion".into(),
            ));
        }
        read(body, 10)?
    };
    Ok(match magnitude {
        PythonInt::Small(n) => Value::Int(Integer::new(if negative { -n } else { n })),
        PythonInt::Big(inner, digits) => Value::BigInt(format!(
            "{}{digits}",
            if negative != inner { "-" } else { "" }
        )),
    })
}

/// What Python's `int(text, base)` reads, past what 128 bits hold kept as
/// its digits.
enum PythonInt {
    Small(i128),
    /// Negative, and the digits.
    Big(bool, String),
}

/// Python's `int(text, base)` without underscores: surrounding white space,
/// an optional sign, the base's own prefix (`0b`, `0o`, `0x`), digits.
fn python_int(text: &str, base: u32) -> Option<PythonInt> {
    let trimmed = text.trim_matches(|c: char| c.is_whitespace() || ('\x1c'..='\x1f').contains(&c));
    let (negative, unsigned) = strip_sign(trimmed);
    let prefix = match base {
        2 => Some("0b"),
        8 => Some("0o"),
        16 => Some("0x"),
        _ => None,
    };
    let digits = match prefix {
        // `get`: the third byte may fall inside a character (`0é`).
        Some(prefix)
            if unsigned
                .get(..2)
                .is_some_and(|head| head.eq_ignore_ascii_case(prefix)) =>
        {
            &unsigned[2..]
        }
        _ => unsigned,
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(base)) {
        return None;
    }
    Some(match i128::from_str_radix(digits, base) {
        Ok(n) => PythonInt::Small(if negative { -n } else { n }),
        Err(_) => PythonInt::Big(negative, digits.to_string()),
    })
}

/// PyYAML 6 float resolver (YAML 1.1): a dot is required, an exponent needs a sign.
fn is_float(text: &str) -> bool {
    let (_, body) = strip_sign(text);
    let signed = body.len() != text.len();
    match body {
        ".inf" | ".Inf" | ".INF" => return true,
        ".nan" | ".NaN" | ".NAN" => return !signed,
        _ => {}
    }
    // `\.[0-9][0-9_]*(exp)?` takes no sign (`._` is text).
    if let Some(rest) = body.strip_prefix('.') {
        if signed {
            return false;
        }
        let (frac, exp) = split_exponent(rest);
        return frac.as_bytes().first().is_some_and(u8::is_ascii_digit)
            && all(frac, |b| b.is_ascii_digit() || b == b'_')
            && exp.is_none_or(valid_exponent);
    }
    let bytes = body.as_bytes();
    if bytes.is_empty() || !bytes[0].is_ascii_digit() {
        return false;
    }
    if body.contains(':') {
        // Base 60: [0-9][0-9_]*(:[0-5]?[0-9])+\.[0-9_]*
        let Some((whole, frac)) = body.rsplit_once('.') else {
            return false;
        };
        let mut parts = whole.split(':');
        let head = parts.next().unwrap_or("");
        let mut count = 0;
        let ok_parts = parts.all(|p| {
            count += 1;
            is_sexagesimal_part(p)
        });
        return all(head, |b| b.is_ascii_digit() || b == b'_')
            && ok_parts
            && count > 0
            && frac.bytes().all(|b| b.is_ascii_digit() || b == b'_');
    }
    let Some((whole, rest)) = body.split_once('.') else {
        return false;
    };
    let (frac, exp) = split_exponent(rest);
    all(whole, |b| b.is_ascii_digit() || b == b'_')
        && frac.bytes().all(|b| b.is_ascii_digit() || b == b'_')
        && exp.is_none_or(valid_exponent)
}

fn split_exponent(s: &str) -> (&str, Option<&str>) {
    match s.find(['e', 'E']) {
        Some(i) => (&s[..i], Some(&s[i + 1..])),
        None => (s, None),
    }
}

fn valid_exponent(exp: &str) -> bool {
    matches!(exp.as_bytes().first(), Some(b'+' | b'-')) && all(&exp[1..], |b| b.is_ascii_digit())
}

/// PyYAML's `construct_yaml_float`: underscores dropped, lower-cased, one
/// sign taken off, then `.inf`, `.nan`, base 60 (`1:30.5`), or Python's
/// `float()` of the rest.
fn construct_float(text: &str) -> Result<Value, ScalarError> {
    let value = text.replace('_', "").to_lowercase();
    let (sign, body) = match value.as_bytes().first() {
        None => return Err(ScalarError("string index out of range".into())),
        Some(b'-') => (-1.0, &value[1..]),
        Some(b'+') => (1.0, &value[1..]),
        Some(_) => (1.0, value.as_str()),
    };
    let float = |part: &str| {
        python_float(part)
            .ok_or_else(|| ScalarError(format!("could not convert string to float: '{part}'")))
    };
    let magnitude = match body {
        ".inf" => f64::INFINITY,
        ".nan" => return Ok(Value::Float(f64::NAN)),
        _ if body.contains(':') => {
            // Summed from the last part up, as PyYAML does (the same rounding).
            let mut total = 0.0;
            let mut base = 1.0;
            for part in body.rsplit(':') {
                total += float(part)? * base;
                base *= 60.0;
            }
            total
        }
        _ => float(body)?,
    };
    Ok(Value::Float(sign * magnitude))
}

/// Python's `float(str)`: surrounding white space ignored, a decimal
/// literal, `inf`, `infinity` or `nan` with an optional sign.
fn python_float(text: &str) -> Option<f64> {
    let trimmed = text.trim_matches(|c: char| c.is_whitespace() || ('\x1c'..='\x1f').contains(&c));
    let digits = trimmed.trim_start_matches(['+', '-']);
    if trimmed.len() - digits.len() > 1 || digits.is_empty() {
        return None;
    }
    // Rust also reads what Python does not: nothing else is accepted here.
    let literal = digits
        .bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'));
    let word = matches!(
        digits.to_ascii_lowercase().as_str(),
        "inf" | "infinity" | "nan"
    );
    if !literal && !word {
        return None;
    }
    trimmed.parse::<f64>().ok()
}

/// YAML 1.1 timestamps: `None` when the text is not a timestamp at all, `Some(Err)`
/// when it matches the pattern but is not a real date (`2026-02-30`).
///
/// `!!timestamp` reads by the constructor's pattern, which also takes a
/// date of one-digit month or day (`2001-1-1`); the resolver's does not.
fn timestamp(text: &str, tagged: bool) -> Option<Result<Value, ScalarError>> {
    let b = text.as_bytes();
    if b.len() < 8 || !b[..4].iter().all(u8::is_ascii_digit) || b[4] != b'-' {
        return None;
    }
    // Date-only form: exactly YYYY-MM-DD.
    if b.len() == 10 && b[7] == b'-' && b[5..7].iter().chain(&b[8..10]).all(u8::is_ascii_digit) {
        let (y, m, d) = (
            text[..4].parse().ok()?,
            text[5..7].parse().ok()?,
            text[8..10].parse().ok()?,
        );
        return Some(check_date(y, m, d).map(|_| Value::Date(text.to_string())));
    }
    // YYYY-M(M)-D(D)(T|t|[ \t]+)H(H):MM:SS(.frac)?([ \t]*(Z|[-+]H(H)(:MM)?))?
    let rest = &text[5..];
    let (month, rest) = take_digits(rest, 1, 2)?;
    let rest = rest.strip_prefix('-')?;
    let (day, rest) = take_digits(rest, 1, 2)?;
    if tagged && rest.is_empty() {
        let year = text[..4].parse().ok()?;
        return Some(
            check_date(year, month, day)
                .map(|_| Value::Date(format!("{year:04}-{month:02}-{day:02}"))),
        );
    }
    let rest = if let Some(r) = rest.strip_prefix(['T', 't']) {
        r
    } else {
        let trimmed = rest.trim_start_matches([' ', '\t']);
        if trimmed.len() == rest.len() {
            return None;
        }
        trimmed
    };
    let (hour, rest) = take_digits(rest, 1, 2)?;
    let rest = rest.strip_prefix(':')?;
    let (minute, rest) = take_digits(rest, 2, 2)?;
    let rest = rest.strip_prefix(':')?;
    let (second, mut rest) = take_digits(rest, 2, 2)?;
    let mut fraction = "";
    if let Some(r) = rest.strip_prefix('.') {
        let end = r.find(|c: char| !c.is_ascii_digit()).unwrap_or(r.len());
        fraction = &r[..end];
        rest = &r[end..];
    }
    let rest = rest.trim_start_matches([' ', '\t']);
    let tz = if rest.is_empty() {
        None
    } else if rest == "Z" {
        Some("+00:00".to_string())
    } else {
        let sign = rest.chars().next()?;
        if sign != '+' && sign != '-' {
            return None;
        }
        let (tz_hour, r) = take_digits(&rest[1..], 1, 2)?;
        let tz_minute = match r.strip_prefix(':') {
            Some(r2) => {
                let (mm, r3) = take_digits(r2, 2, 2)?;
                if !r3.is_empty() {
                    return None;
                }
                mm
            }
            None if r.is_empty() => 0,
            None => return None,
        };
        // Python's `timezone(timedelta(...))`: at most a day, and a zero
        // offset is `+00:00` whatever its sign.
        let minutes = tz_hour * 60 + tz_minute;
        if minutes >= 24 * 60 {
            return Some(Err(ScalarError(
                "offset must be a timedelta strictly between -timedelta(hours=24) and timedelta(hours=24)".into(),
            )));
        }
        let sign = if minutes == 0 { '+' } else { sign };
        Some(format!("{sign}{:02}:{:02}", minutes / 60, minutes % 60))
    };
    let year: u32 = text[..4].parse().ok()?;
    if let Err(e) = check_date(year, month, day) {
        return Some(Err(e));
    }
    if hour > 23 || minute > 59 || second > 59 {
        return Some(Err(ScalarError(
            "hour, minute or second out of range".into(),
        )));
    }
    let mut shown = format!("{year:04}-{month:02}-{day:02} {hour:02}:{minute:02}:{second:02}");
    if !fraction.is_empty() {
        let mut micros: String = fraction.chars().take(6).collect();
        while micros.len() < 6 {
            micros.push('0');
        }
        if micros != "000000" {
            shown.push('.');
            shown.push_str(&micros);
        }
    }
    if let Some(tz) = tz {
        shown.push_str(&tz);
    }
    Some(Ok(Value::DateTime(shown)))
}

fn take_digits(s: &str, min: usize, max: usize) -> Option<(u32, &str)> {
    let n = s.bytes().take(max).take_while(u8::is_ascii_digit).count();
    if n < min {
        return None;
    }
    Some((s[..n].parse().ok()?, &s[n..]))
}

fn check_date(year: u32, month: u32, day: u32) -> Result<(), ScalarError> {
    if year == 0 {
        return Err(ScalarError(format!("year {year} is out of range")));
    }
    if !(1..=12).contains(&month) {
        return Err(ScalarError("month must be in 1..12".into()));
    }
    let leap = (year.is_multiple_of(4) && !year.is_multiple_of(100)) || year.is_multiple_of(400);
    let days = match month {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    if day == 0 || day > days {
        return Err(ScalarError("day is out of range for month".into()));
    }
    Ok(())
}

/// Lenient base64 decoding, as Python's `base64.decodebytes` (invalid input → empty).
/// A character as Python's `repr` escapes it (`\xe9`, `\u65e5`).
fn python_escape(c: char) -> String {
    match c as u32 {
        n @ 0..=0xff => format!("\\x{n:02x}"),
        n @ 0x100..=0xffff => format!("\\u{n:04x}"),
        n => format!("\\U{n:08x}"),
    }
}

/// PyYAML's `construct_yaml_binary`: the text must be ASCII, then CPython's
/// lenient `base64.decodebytes` — characters outside the alphabet skipped,
/// a complete pad (`==` after two data characters, `=` after three) ends
/// the data, and a final group of one data character or without its pad
/// is refused.
fn decode_base64(text: &str) -> Result<Vec<u8>, ScalarError> {
    if let Some((at, c)) = text.char_indices().find(|(_, c)| !c.is_ascii()) {
        let position = text[..at].chars().count();
        return Err(ScalarError(format!(
            "failed to convert base64 data into ascii: 'ascii' codec can't encode character '{}' in position {position}: ordinal not in range(128)",
            python_escape(c)
        )));
    }
    let mut out = Vec::with_capacity(text.len() / 4 * 3);
    let mut quad = 0;
    let mut left = 0u32;
    let mut pads = 0;
    for byte in text.bytes() {
        if byte == b'=' {
            if quad >= 2 {
                pads += 1;
                if quad + pads >= 4 {
                    return Ok(out);
                }
            }
            continue;
        }
        let v = match byte {
            b'A'..=b'Z' => byte - b'A',
            b'a'..=b'z' => byte - b'a' + 26,
            b'0'..=b'9' => byte - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => continue,
        } as u32;
        pads = 0;
        match quad {
            0 => left = v,
            1 => {
                out.push(((left << 2) | (v >> 4)) as u8);
                left = v & 0x0f;
            }
            2 => {
                out.push(((left << 4) | (v >> 2)) as u8);
                left = v & 0x03;
            }
            _ => out.push(((left << 6) | v) as u8),
        }
        quad = (quad + 1) % 4;
    }
    match quad {
        0 => Ok(out),
        1 => Err(ScalarError(format!(
            "failed to decode base64 data: Invalid base64-encoded string: number of data characters ({}) cannot be 1 more than a multiple of 4",
            out.len() / 3 * 4 + 1
        ))),
        _ => Err(ScalarError("failed to decode base64 data: Incorrect padding".into())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_keep_every_value_at_eight_byte_alignment() {
        for n in [
            0,
            1,
            -1,
            i64::MAX as i128 + 1,
            i64::MIN as i128 - 1,
            i128::MAX,
            i128::MIN,
        ] {
            assert_eq!(Integer::new(n).get(), n);
            assert_eq!(Integer::from(n).to_string(), n.to_string());
        }
        assert_eq!(std::mem::align_of::<Value>(), 8);
        // A tree node: range, style, value (the tree of a large file is
        // most of a check's memory).
        assert_eq!(std::mem::size_of::<crate::syntax::Node>(), 48);
    }

    fn plain(text: &str) -> Value {
        match resolve_plain(text, false) {
            Ok(Resolved::Value(v)) => v,
            other => panic!("{text}: {other:?}"),
        }
    }

    #[test]
    fn yaml_1_1_booleans_and_nulls() {
        for t in [
            "yes", "Yes", "YES", "on", "On", "ON", "true", "True", "TRUE",
        ] {
            assert_eq!(plain(t), Value::Bool(true), "{t}");
        }
        for t in ["no", "NO", "off", "Off", "false", "FALSE"] {
            assert_eq!(plain(t), Value::Bool(false), "{t}");
        }
        for t in ["y", "Y", "n", "yEs", "tRue", "nULL"] {
            assert_eq!(plain(t), Value::Str(t.into()), "{t}");
        }
        for t in ["", "~", "null", "Null", "NULL"] {
            assert_eq!(plain(t), Value::Null, "{t}");
        }
    }

    #[test]
    fn yaml_1_1_integers() {
        let cases = [
            ("0", 0),
            ("-0", 0),
            ("+12", 12),
            ("010", 8),
            ("0_10", 8),
            ("0x1F", 31),
            ("0x1f", 31),
            ("-0x1F", -31),
            ("0b101", 5),
            ("-0b101", -5),
            ("1_000", 1000),
            ("1__000", 1000),
            ("1_", 1),
            ("190:20:30", 685230),
            ("-1:30", -90),
        ];
        for (t, n) in cases {
            assert_eq!(plain(t), Value::Int(n.into()), "{t}");
        }
        for t in [
            "08", "09", "0o10", "0X1F", "_1000", "1:70", "0x", "1,000", "12abc",
        ] {
            assert_eq!(plain(t), Value::Str(t.into()), "{t}");
        }
        assert!(matches!(
            plain("99999999999999999999999999999999999999999"),
            Value::BigInt(_)
        ));
        assert!(resolve_plain("0x_", false).is_err());
        assert!(resolve_plain("0b_", false).is_err());
        assert!(resolve_plain(&"9".repeat(5000), false).is_err());
    }

    #[test]
    fn yaml_1_1_floats() {
        assert_eq!(plain("1.0e+3"), Value::Float(1000.0));
        assert_eq!(plain("1.5e-3"), Value::Float(0.0015));
        assert_eq!(plain("1."), Value::Float(1.0));
        assert_eq!(plain(".5"), Value::Float(0.5));
        assert_eq!(plain("1_000.5"), Value::Float(1000.5));
        assert_eq!(plain("+.INF"), Value::Float(f64::INFINITY));
        assert_eq!(plain("-.Inf"), Value::Float(f64::NEG_INFINITY));
        assert!(matches!(plain(".NaN"), Value::Float(f) if f.is_nan()));
        for t in [
            "1e3", "1e+3", "1.0e3", "-.5", "+.5", "6.5:30.5", "inf", "Infinity", "nan",
        ] {
            assert_eq!(plain(t), Value::Str(t.into()), "{t}");
        }
    }

    #[test]
    fn yaml_1_1_timestamps() {
        assert_eq!(plain("2026-05-15"), Value::Date("2026-05-15".into()));
        assert_eq!(
            plain("2026-05-15T10:00:00Z"),
            Value::DateTime("2026-05-15 10:00:00+00:00".into())
        );
        assert_eq!(
            plain("2026-05-15 10:00:00"),
            Value::DateTime("2026-05-15 10:00:00".into())
        );
        assert_eq!(
            plain("2026-05-15t10:00:00.5+02:00"),
            Value::DateTime("2026-05-15 10:00:00.500000+02:00".into())
        );
        assert_eq!(plain("2026-5-15"), Value::Str("2026-5-15".into()));
        assert!(resolve_plain("2026-02-30", false).is_err());
    }

    #[test]
    fn special_plain_scalars() {
        assert_eq!(resolve_plain("<<", true), Ok(Resolved::Merge));
        assert_eq!(
            resolve_plain("=", true),
            Ok(Resolved::Value(Value::Str("=".into())))
        );
        assert!(resolve_plain("=", false).is_err());
    }

    #[test]
    fn python_str_matches_the_measured_table() {
        assert_eq!(Value::Bool(true).python_str(), "True");
        assert_eq!(Value::Float(1.5).python_str(), "1.5");
        assert_eq!(Value::Float(0.5).python_str(), "0.5");
        assert_eq!(Value::Float(1e20).python_str(), "1e+20");
        assert_eq!(Value::Float(25.0).python_str(), "25.0");
        assert_eq!(Value::Float(f64::NEG_INFINITY).python_str(), "-inf");
        assert_eq!(Value::Binary(b"hi".to_vec()).python_str(), "b'hi'");
        assert_eq!(Value::Str("it's".into()).python_repr(), "\"it's\"");
    }

    #[test]
    fn explicit_tags() {
        assert_eq!(resolve_tagged("010", "str"), Ok(Value::Str("010".into())));
        assert_eq!(resolve_tagged("0x1F", "int"), Ok(Value::Int(31.into())));
        assert_eq!(resolve_tagged("TRUE", "bool"), Ok(Value::Bool(true)));
        assert!(resolve_tagged("maybe", "bool").is_err());
        assert_eq!(resolve_tagged("1e3", "float"), Ok(Value::Float(1000.0)));
        assert_eq!(
            resolve_tagged("aGVsbG8=", "binary"),
            Ok(Value::Binary(b"hello".to_vec()))
        );
        assert!(resolve_tagged("x", "python/tuple").is_err());
    }
}
