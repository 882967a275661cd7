//! The context writes of the bundle's bound Python modules, read as far as
//! they can be read with certainty: `context_variables.set("key", value)`
//! with a literal key and a value that is a constant or a parameter of the
//! enclosing function. Anything else that could write a key — a computed
//! key, the bridge handed to another function or stored under another name,
//! item assignment, `update` — makes the module *opaque*: from then on no
//! key that Python code may write has a known set of values.

use super::Bundle;
use crate::diagnostics::FileId;
use crate::hash::{HashMap, HashSet};
use crate::syntax::python_strings::{string_literal_end, Unclosed};
use crate::syntax::{TextRange, Value};

/// What one `set("key", value)` writes.
#[derive(Debug, Clone, PartialEq)]
pub enum Written {
    /// A constant (`"approved"`, `True`, `3`, `None`); `pop`/`delete` write null.
    Const(Value),
    /// A parameter of the enclosing top-level function, never reassigned in it.
    Param { function: String, param: String },
    /// Anything else (a call, an expression, a reassigned parameter).
    Other(String),
}

#[derive(Debug, Clone)]
pub struct Write {
    pub file: FileId,
    /// The key literal.
    pub range: TextRange,
    pub value: Written,
    /// The enclosing top-level function, if any.
    pub function: Option<String>,
    /// The write is a statement of the function's own body (not inside an
    /// `if`, loop, `try` or `with`), after no `return` or `raise`: it runs
    /// on every call that does not fail first.
    pub unconditional: bool,
}

/// The writes of every bound module of a bundle.
#[derive(Debug, Clone, Default)]
pub struct PythonWrites {
    /// Why some module may write keys that cannot be followed (a file, a line).
    pub opaque: Option<String>,
    /// Literal key → its writes.
    pub writes: HashMap<String, Vec<Write>>,
    /// String literals used other than as the key of a followed `get`/`set`
    /// (a dict key, a constant, a subscript): such a key may be written
    /// through a path that is not followed.
    pub other_uses: HashSet<String>,
    /// The modules read, whose built names (f-strings, concatenations) may
    /// be keys; parsed only when a key needs it.
    read_files: Vec<FileId>,
}

impl PythonWrites {
    /// Whether some module may build `key` from parts.
    pub fn builds(&self, bundle: &Bundle, key: &str) -> bool {
        self.read_files.iter().any(|id| {
            bundle
                .file(*id)
                .is_some_and(|f| bundle.built.scan(&f.text).builds(key))
        })
    }
}

/// A string literal found by [`mask`]: its range (quotes included) and its
/// value when it is a plain literal (no prefix but `r`/`u`, no escapes).
struct Literal {
    start: usize,
    end: usize,
    value: Option<String>,
}

/// Blanks comments and string contents (keeping the quotes) so that code can
/// be scanned for names, and lists the string literals.
fn mask(src: &str) -> (Vec<u8>, Vec<Literal>) {
    let bytes = src.as_bytes();
    let mut out = bytes.to_vec();
    let mut literals = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'#' {
            while i < bytes.len() && bytes[i] != b'\n' {
                out[i] = b' ';
                i += 1;
            }
            continue;
        }
        if b == b'"' || b == b'\'' {
            // The prefix letters just before the quote.
            let mut p = i;
            while p > 0 && bytes[p - 1].is_ascii_alphabetic() && i - (p - 1) <= 2 {
                p -= 1;
            }
            let prefix_ok =
                p == 0 || !(bytes[p - 1].is_ascii_alphanumeric() || bytes[p - 1] == b'_');
            let prefix = if prefix_ok { &src[p..i] } else { "" };
            let plain_prefix = prefix.chars().all(|c| matches!(c, 'r' | 'R' | 'u' | 'U'));
            let triple = bytes.get(i + 1) == Some(&b) && bytes.get(i + 2) == Some(&b);
            let open = if triple { 3 } else { 1 };
            let body_start = i + open;
            // An unclosed literal runs to its line break or the end.
            let (body_end, j) = match string_literal_end(bytes, i) {
                Ok(end) => (end - open, end),
                Err(Unclosed::AtLineBreak(at)) => (at, at),
                Err(Unclosed::AtEnd) => (bytes.len(), bytes.len()),
            };
            let escaped = bytes
                .get(body_start..body_end)
                .is_some_and(|body| body.contains(&b'\\'));
            for c in out
                .iter_mut()
                .take(body_end.min(bytes.len()))
                .skip(body_start)
            {
                if *c != b'\n' {
                    *c = b' ';
                }
            }
            let value = (plain_prefix && !escaped && !triple)
                .then(|| {
                    src.get(body_start..body_end.min(bytes.len()))
                        .map(str::to_string)
                })
                .flatten();
            literals.push(Literal {
                start: i,
                end: j,
                value,
            });
            i = j.max(i + 1);
            continue;
        }
        i += 1;
    }
    (out, literals)
}

fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80
}

fn skip_space(m: &[u8], mut i: usize) -> usize {
    while i < m.len() && matches!(m[i], b' ' | b'\t' | b'\n' | b'\r' | b'\\') {
        i += 1;
    }
    i
}

/// The end of the bracketed argument list opening at `open` (its `(`), or
/// `None` when it is not closed. Strings are already blanked.
fn close_paren(m: &[u8], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (k, &c) in m.iter().enumerate().skip(open) {
        match c {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(k);
                }
            }
            _ => {}
        }
    }
    None
}

/// Splits `m[from..to]` at top-level commas.
fn split_args(m: &[u8], from: usize, to: usize) -> Vec<(usize, usize)> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0usize, from);
    for (k, &c) in m.iter().enumerate().take(to).skip(from) {
        match c {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            b',' if depth == 0 => {
                parts.push((start, k));
                start = k + 1;
            }
            _ => {}
        }
    }
    parts.push((start, to));
    parts
}

fn trim(src: &str, (a, b): (usize, usize)) -> (usize, usize) {
    let s = &src[a..b];
    let lead = s.len() - s.trim_start().len();
    let trail = s.len() - s.trim_end().len();
    (a + lead, (b - trail).max(a + lead))
}

/// Reads all bound modules of the bundle, up to the first opaque one (after
/// which nothing Python writes can be followed).
pub fn read(bundle: &Bundle) -> PythonWrites {
    let mut out = PythonWrites::default();
    for py in &bundle.python {
        let Some(file) = bundle.file(py.file) else {
            continue;
        };
        if py.module.too_large || py.module.syntax_error.is_some() {
            out.opaque
                .get_or_insert_with(|| format!("`{}` could not be read", file.relative));
        } else {
            read_module(&file.text, py, &file.relative, &mut out);
            out.read_files.push(py.file);
        }
        if out.opaque.is_some() {
            break;
        }
    }
    out
}

fn read_module(src: &str, py: &super::python::PythonFile, relative: &str, out: &mut PythonWrites) {
    let (m, literals) = mask(src);
    let line_of = |at: usize| src[..at].matches('\n').count() + 1;
    let by_start: HashMap<usize, usize> = literals
        .iter()
        .enumerate()
        .map(|(i, l)| (l.start, i))
        .collect();
    // Literals consumed as keys of followed calls.
    let mut consumed: HashSet<usize> = HashSet::default();
    let mut defs: Vec<(usize, &str)> = py
        .module
        .defined
        .iter()
        .map(|(n, r)| (r.start as usize, n.as_str()))
        .collect();
    defs.sort();
    let layout = Layout::of(&m);
    let mut bodies: Bodies = HashMap::default();
    let mut rebound: HashMap<(usize, String), bool> = HashMap::default();
    let mut i = 0;
    // Once a module is opaque nothing else it does matters.
    while i < m.len() && out.opaque.is_none() {
        if !is_name_byte(m[i]) || (i > 0 && is_name_byte(m[i - 1])) {
            i += 1;
            continue;
        }
        let start = i;
        while i < m.len() && is_name_byte(m[i]) {
            i += 1;
        }
        let name = &src[start..i];
        if !name.contains("context") && !name.contains("ctx") {
            continue;
        }
        let after = skip_space(&m, i);
        let prev = m[..start]
            .iter()
            .rposition(|c| !matches!(c, b' ' | b'\t'))
            .map(|p| m[p]);
        // A call of a function whose name mentions context, or the name
        // in a `def` line: not the bridge itself.
        if m.get(after) == Some(&b'(') {
            continue;
        }
        let line_start = m[..start]
            .iter()
            .rposition(|&c| c == b'\n')
            .map_or(0, |p| p + 1);
        let line = String::from_utf8_lossy(&m[line_start..start]);
        let line = line.trim_start();
        let in_signature = py.module.functions.iter().any(|f| {
            f.params
                .iter()
                .any(|p| p.range.start as usize <= start && start < p.range.end as usize)
        });
        if in_signature
            || line.starts_with("def ")
            || line.starts_with("async def ")
            || line.starts_with("import ")
            || line.starts_with("from ")
        {
            continue;
        }
        if m.get(after) == Some(&b'.') {
            let method_start = skip_space(&m, after + 1);
            let mut method_end = method_start;
            while method_end < m.len() && is_name_byte(m[method_end]) {
                method_end += 1;
            }
            let method = &src[method_start..method_end];
            let paren = skip_space(&m, method_end);
            if m.get(paren) != Some(&b'(') {
                // `ctx.attr` without a call: harmless reads (`.keys`) are
                // calls; anything else is not followed.
                out.opaque.get_or_insert_with(|| {
                    format!(
                        "`{relative}` line {} uses `{name}.{method}`",
                        line_of(start)
                    )
                });
                continue;
            }
            let Some(close) = close_paren(&m, paren) else {
                continue;
            };
            let args = split_args(&m, paren + 1, close);
            let first = trim(src, args[0]);
            let key = by_start
                .get(&first.0)
                .map(|&l| &literals[l])
                .filter(|l| l.end == first.1)
                .and_then(|l| l.value.clone());
            match (method, key) {
                ("get" | "snapshot" | "keys" | "items" | "values" | "copy", _)
                    if method != "get" || args.len() <= 2 =>
                {
                    if let Some(&l) = by_start.get(&first.0) {
                        consumed.insert(l);
                    }
                }
                ("set", Some(key)) if args.len() == 2 => {
                    consumed.insert(by_start[&first.0]);
                    let value_range = trim(src, args[1]);
                    let value = written(src, value_range, start, &defs, &mut rebound);
                    let (function, unconditional) =
                        placement(&layout, &m, start, &defs, &mut bodies);
                    out.writes.entry(key).or_default().push(Write {
                        file: py.file,
                        range: TextRange::new(first.0 as u32, first.1 as u32),
                        value,
                        function,
                        unconditional,
                    });
                }
                ("pop" | "delete", Some(key)) => {
                    consumed.insert(by_start[&first.0]);
                    let (function, unconditional) =
                        placement(&layout, &m, start, &defs, &mut bodies);
                    out.writes.entry(key).or_default().push(Write {
                        file: py.file,
                        range: TextRange::new(first.0 as u32, first.1 as u32),
                        value: Written::Const(Value::Null),
                        function,
                        unconditional,
                    });
                }
                _ => {
                    out.opaque.get_or_insert_with(|| {
                        format!(
                            "`{relative}` line {} calls `{name}.{method}(…)` with a key mzk does not follow",
                            line_of(start)
                        )
                    });
                }
            }
            continue;
        }
        // The bare name: passed on, stored, subscripted, returned.
        let _ = prev;
        out.opaque.get_or_insert_with(|| {
            format!(
                "`{relative}` line {} hands `{name}` on or subscripts it",
                line_of(start)
            )
        });
    }
    if out.opaque.is_some() {
        return;
    }
    // `.set(<not a literal>, …)` on any receiver: a key computed at run time.
    let mut from = 0;
    while let Some(found) = find(&m, b".set(", from) {
        from = found + 5;
        let first = skip_space(&m, found + 5);
        if m.get(first)
            .is_some_and(|c| *c != b'"' && *c != b'\'' && *c != b')')
        {
            out.opaque.get_or_insert_with(|| {
                format!("`{relative}` line {} sets a computed key", line_of(found))
            });
        }
    }
    for (i, l) in literals.iter().enumerate() {
        if !consumed.contains(&i) {
            if let Some(v) = &l.value {
                out.other_uses.insert(v.clone());
            }
        }
    }
}

fn find(hay: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    hay.get(from..)?
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|p| p + from)
}

/// Lines of a masked module, read once: where each starts, its indentation,
/// and how many `return`/`raise` lines precede it.
struct Layout {
    starts: Vec<usize>,
    indent: Vec<usize>,
    blank: Vec<bool>,
    exits_before: Vec<usize>,
}

impl Layout {
    fn of(m: &[u8]) -> Layout {
        let mut layout = Layout {
            starts: Vec::new(),
            indent: Vec::new(),
            blank: Vec::new(),
            exits_before: Vec::new(),
        };
        let mut exits = 0;
        let mut start = 0;
        loop {
            let end = m[start..]
                .iter()
                .position(|&c| c == b'\n')
                .map_or(m.len(), |p| start + p);
            let line = &m[start..end];
            let indent = line
                .iter()
                .take_while(|c| matches!(c, b' ' | b'\t'))
                .count();
            let code = &line[indent..];
            layout.starts.push(start);
            layout.indent.push(indent);
            layout
                .blank
                .push(code.iter().all(|c| c.is_ascii_whitespace()));
            layout.exits_before.push(exits);
            if code.starts_with(b"return") || code.starts_with(b"raise") {
                exits += 1;
            }
            if end >= m.len() {
                break;
            }
            start = end + 1;
        }
        layout
    }

    fn line(&self, at: usize) -> usize {
        self.starts.partition_point(|&s| s <= at).saturating_sub(1)
    }
}

/// The top-level function enclosing `at`: its start and name.
fn enclosing<'d>(defs: &[(usize, &'d str)], at: usize) -> Option<(usize, &'d str)> {
    let i = defs.partition_point(|(s, _)| *s < at);
    i.checked_sub(1).map(|i| defs[i])
}

/// Per function start, its body's first line and indentation (computed once).
type Bodies = HashMap<usize, Option<(usize, usize)>>;

/// The top-level function enclosing `at`, and whether the statement at `at`
/// is one of its body's own statements with no `return`/`raise` before it.
fn placement(
    layout: &Layout,
    m: &[u8],
    at: usize,
    defs: &[(usize, &str)],
    bodies: &mut Bodies,
) -> (Option<String>, bool) {
    let Some((def_start, function)) = enclosing(defs, at) else {
        return (None, false);
    };
    let body = *bodies.entry(def_start).or_insert_with(|| {
        let def_line = layout.line(def_start);
        let def_indent = layout.indent[def_line];
        // The signature ends on the first line that ends with `:` outside
        // brackets (comments and strings are masked).
        let mut depth = 0i32;
        let mut sig_line = None;
        for l in def_line..layout.starts.len() {
            let end = layout.starts.get(l + 1).map_or(m.len(), |s| s - 1);
            let from = if l == def_line {
                def_start
            } else {
                layout.starts[l]
            };
            for &c in &m[from..end] {
                match c {
                    b'(' | b'[' | b'{' => depth += 1,
                    b')' | b']' | b'}' => depth -= 1,
                    _ => {}
                }
            }
            let text = &m[layout.starts[l]..end];
            let trimmed = text
                .iter()
                .rposition(|c| !c.is_ascii_whitespace())
                .map(|p| text[p]);
            if depth == 0 && trimmed == Some(b':') {
                sig_line = Some(l);
                break;
            }
        }
        let first = sig_line? + 1;
        (first..layout.starts.len())
            .find(|&l| !layout.blank[l])
            .filter(|&l| layout.indent[l] > def_indent)
            .map(|l| (l, layout.indent[l]))
    });
    let Some((body_line, body_indent)) = body else {
        return (Some(function.to_string()), false);
    };
    let line = layout.line(at);
    let own = line >= body_line
        && layout.indent[line] == body_indent
        && layout.exits_before[line] == layout.exits_before[body_line];
    (Some(function.to_string()), own)
}

/// What the value expression of a `set` writes.
fn written(
    src: &str,
    (a, b): (usize, usize),
    at: usize,
    defs: &[(usize, &str)],
    rebound: &mut HashMap<(usize, String), bool>,
) -> Written {
    let text = &src[a..b];
    let other = || Written::Other(text.to_string());
    if let Some(v) = python_constant(text) {
        return Written::Const(v);
    }
    let is_name =
        !text.is_empty() && text.bytes().all(is_name_byte) && !text.as_bytes()[0].is_ascii_digit();
    if !is_name {
        return other();
    }
    // The enclosing top-level function: the last `def` before the write.
    let Some((def_start, function)) = enclosing(defs, at) else {
        return other();
    };
    let def_end = defs
        .get(defs.partition_point(|(s, _)| *s <= def_start))
        .map_or(src.len(), |(s, _)| *s);
    let is_rebound = *rebound
        .entry((def_start, text.to_string()))
        .or_insert_with(|| reassigned(&src[def_start..def_end], text));
    if is_rebound {
        return other();
    }
    Written::Param {
        function: function.to_string(),
        param: text.to_string(),
    }
}

/// A Python constant written as a single token.
fn python_constant(text: &str) -> Option<Value> {
    match text {
        "True" => return Some(Value::Bool(true)),
        "False" => return Some(Value::Bool(false)),
        "None" => return Some(Value::Null),
        _ => {}
    }
    if let Ok(i) = text.parse::<i128>() {
        if !(text.starts_with('+') || text.len() > 1 && text.starts_with('0')) {
            return Some(Value::Int(i.into()));
        }
    }
    let bytes = text.as_bytes();
    let quote = *bytes.first()?;
    if (quote == b'"' || quote == b'\'')
        && bytes.len() >= 2
        && bytes[bytes.len() - 1] == quote
        && !text.contains('\\')
        && !text.starts_with("\"\"\"")
        && !text.starts_with("'''")
    {
        let body = &text[1..text.len() - 1];
        if !body.contains(quote as char) && !body.contains('\n') {
            return Some(Value::Str(body.to_string()));
        }
    }
    None
}

/// Whether `name` may be rebound inside the function text (assignment,
/// augmented assignment, walrus, loop or `with`/`except` target, `del`,
/// `global`), read conservatively on the text.
fn reassigned(function: &str, name: &str) -> bool {
    let (m, _) = mask(function);
    let m = String::from_utf8_lossy(&m).into_owned();
    // The signature: up to the first `:` that ends the `def` line(s).
    let body_start = m.find("):").or_else(|| m.find(") ->")).unwrap_or(0);
    let body = &m[body_start..];
    let bytes = body.as_bytes();
    let mut from = 0;
    while let Some(p) = body[from..].find(name) {
        let at = from + p;
        from = at + name.len();
        let before_ok = at == 0 || !is_name_byte(bytes[at - 1]);
        let after_ok = bytes.get(from).is_none_or(|b| !is_name_byte(*b));
        if !before_ok || !after_ok {
            continue;
        }
        let rest = body[from..].trim_start_matches([' ', '\t']);
        if (rest.starts_with('=') && !rest.starts_with("=="))
            || rest.starts_with(":=")
            || rest.starts_with(',')
            || rest.starts_with(')')
            || rest.starts_with(']')
            || [
                "+=", "-=", "*=", "/=", "%=", "|=", "&=", "^=", "//=", "**=", ">>=", "<<=", "@=",
            ]
            .iter()
            .any(|op| rest.starts_with(op))
            || rest.starts_with(':') && !rest.starts_with(":=")
        {
            // `x = …`, `a, x = …` (conservatively any `x,`), `f(x)` is a
            // read but `(x)` cannot be told apart cheaply: treated as
            // possibly rebound only when followed by `=` on its line.
            if rest.starts_with(',') || rest.starts_with(')') || rest.starts_with(']') {
                let line_end = rest.find('\n').unwrap_or(rest.len());
                let line = &rest[..line_end];
                let assigns = line.match_indices('=').any(|(k, _)| {
                    let lb = line.as_bytes();
                    lb.get(k + 1) != Some(&b'=')
                        && (k == 0 || !matches!(lb[k - 1], b'=' | b'!' | b'<' | b'>'))
                });
                let is_for = body[..at]
                    .rsplit('\n')
                    .next()
                    .is_some_and(|l| l.trim_start().starts_with("for "));
                if assigns || is_for {
                    return true;
                }
                continue;
            }
            if rest.starts_with(':') {
                // An annotated assignment `x: int = …` or a slice/dict key; be safe.
                return true;
            }
            return true;
        }
        let line_head = body[..at].rsplit('\n').next().unwrap_or("");
        let head = line_head.trim_start();
        if head.starts_with("for ")
            || head.starts_with("async for ")
            || head.starts_with("del ")
            || head.starts_with("global ")
            || head.starts_with("nonlocal ")
            || line_head.trim_end().ends_with(" as")
            || line_head.trim_end().ends_with('*')
        {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constants_and_literals() {
        assert_eq!(
            python_constant("\"approved\""),
            Some(Value::Str("approved".into()))
        );
        assert_eq!(python_constant("True"), Some(Value::Bool(true)));
        assert_eq!(python_constant("3"), Some(Value::Int(3.into())));
        assert_eq!(python_constant("f\"x\""), None);
        assert_eq!(python_constant("a + b"), None);
        let (m, lits) = mask("x = 'a#b'  # c\ny = \"\"\"doc\"\"\"\n");
        assert_eq!(lits[0].value.as_deref(), Some("a#b"));
        assert!(!String::from_utf8_lossy(&m).contains("doc"));
        assert!(!String::from_utf8_lossy(&m).contains('c'));
    }

    #[test]
    fn rebinding_is_seen() {
        let f = "def f(verdict, context_variables):\n    verdict = verdict.lower()\n";
        assert!(reassigned(f, "verdict"));
        let f = "def f(verdict, context_variables):\n    context_variables.set(\"v\", verdict)\n";
        assert!(!reassigned(f, "verdict"));
        let f = "def f(verdict):\n    for verdict in xs:\n        pass\n";
        assert!(reassigned(f, "verdict"));
        let f = "def f(verdict):\n    a, verdict = 1, 2\n";
        assert!(reassigned(f, "verdict"));
    }

    #[test]
    fn only_writes_of_the_body_itself_are_unconditional() {
        let cases = [
            (
                "def f(v, context_variables=None):\n    context_variables.set('a', v)\n    if v:\n        context_variables.set('b', v)\n    if not v:\n        return None\n    context_variables.set('c', v)\n",
                [("a", true), ("b", false), ("c", false)],
            ),
            // A comment after the signature, a write inside an `if` first.
            (
                "def f(v, context_variables=None):  # note\n    if v:\n        context_variables.set('b', v)\n    context_variables.set('a', v)\n    x = (1,\n        2)\n    context_variables.set('c', v)\n",
                [("b", false), ("a", true), ("c", true)],
            ),
        ];
        for (src, expected) in cases {
            let (m, _) = mask(src);
            let layout = Layout::of(&m);
            let mut bodies = Bodies::default();
            let defs = [(4usize, "f")];
            for (key, unconditional) in expected {
                let at = src.find(&format!("context_variables.set('{key}'")).unwrap();
                assert_eq!(
                    placement(&layout, &m, at, &defs, &mut bodies),
                    (Some("f".into()), unconditional),
                    "{key} in {src}"
                );
            }
        }
    }
}
