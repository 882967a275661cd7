//! Names Python code builds at run time rather than writes out: context keys
//! and model names made by concatenation (`"bundle_repair_" + suffix`),
//! f-strings, `str.format` and `%` templates, with module-level string
//! constants as parts. A part that is a loop variable over a literal tuple,
//! list, set or dict (or a module-level tuple of strings) is resolved to
//! the finite set of names the loop builds; any other unknown part leaves a
//! pattern (the literal head and tail around it), and every name the pattern
//! fits counts as built: a name is never called unused while code may build
//! it. Literal names are found by the identifier scan (`model::mentions`).
//!
//! Modules are parsed with ruff's parser (as `python_validity` does), and
//! strings are read as written between their quotes: a name with an escape
//! in it is not a name.

use std::borrow::Cow;

use ruff_python_ast::visitor::{self, Visitor};
use ruff_python_ast::{self as ast, Expr, Operator, Stmt, StringFlags};
use ruff_text_size::{Ranged, TextSize};

use crate::base::hash::HashMap;
use crate::syntax::python_validity;

mod excerpt;

/// Files larger than this are not parsed for built names (the identifier
/// scan still reads them).
const MAX_SOURCE: usize = 4 * 1024 * 1024;

/// What one module builds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BuiltNames {
    /// Names resolved to a finite set.
    pub exact: Vec<String>,
    /// (head, tail) around a part that could not be resolved.
    pub patterns: Vec<(String, String)>,
}

impl BuiltNames {
    /// Whether `name` is one of the names the module may build.
    pub fn builds(&self, name: &str) -> bool {
        self.exact.iter().any(|e| e == name)
            || self.patterns.iter().any(|(head, tail)| {
                name.len() > head.len() + tail.len()
                    && name.starts_with(head.as_str())
                    && name.ends_with(tail.as_str())
            })
    }

    pub fn is_empty(&self) -> bool {
        self.exact.is_empty() && self.patterns.is_empty()
    }

    pub fn extend(&mut self, other: BuiltNames) {
        self.exact.extend(other.exact);
        self.patterns.extend(other.patterns);
    }
}

/// One part of a built string.
#[derive(Debug, Clone)]
enum Part<'a> {
    Literal(String),
    /// Unknown at rest; the expression, to resolve a loop variable.
    Unknown(&'a Expr),
}

/// What a name means where a part is read: the loops and comprehensions
/// around it, up to the nearest function or class (whose body runs later,
/// with other values).
#[derive(Debug, Clone, Copy)]
enum Scope<'a> {
    Loop { target: &'a Expr, iter: &'a Expr },
    Comprehension(&'a [ast::Comprehension]),
    Definition,
}

struct Scan<'a> {
    src: &'a str,
    /// Module-level `NAME = "text"`.
    constants: HashMap<&'a str, String>,
    /// Module-level `NAME = ("a", "b")` (tuple, list or set of strings).
    sequences: HashMap<&'a str, Vec<String>>,
    scopes: Vec<Scope<'a>>,
    /// The `+` whose chain the current one continues (it was read with it).
    chained: Option<&'a Expr>,
    out: BuiltNames,
}

/// Parsed files' results, by a hash of their text, kept by the caller's
/// cache: the language server re-analyses on every keystroke, and the
/// Python files rarely change.
#[derive(Debug)]
pub struct BuiltMemo(crate::base::memo::Memo<BuiltNames>);

impl Default for BuiltMemo {
    fn default() -> BuiltMemo {
        BuiltMemo(crate::base::memo::Memo::new(1024))
    }
}

impl BuiltMemo {
    /// [`scan`], kept by a hash of the text.
    pub fn scan(&self, src: &str) -> std::sync::Arc<BuiltNames> {
        self.0.get_or(crate::base::memo::key([src]), || scan(src))
    }

    /// [`BuiltMemo::scan`] for a caller that already cut `src` down to its
    /// [`buildable`] text (to read its string pieces first).
    pub fn scan_buildable(&self, src: &str, buildable: &Buildable) -> std::sync::Arc<BuiltNames> {
        self.0
            .get_or(crate::base::memo::key([src]), || built_from(src, buildable))
    }
}

/// The text of a module that can build names, and the length of its longest
/// logical line (which bounds its nesting).
#[derive(Debug, Clone)]
pub struct Buildable<'s> {
    pub text: Cow<'s, str>,
    longest_line: usize,
}

impl Buildable<'_> {
    pub fn into_owned(self) -> Buildable<'static> {
        Buildable {
            text: Cow::Owned(self.text.into_owned()),
            longest_line: self.longest_line,
        }
    }
}

/// The names `src` builds. Never fails: what does not parse builds nothing.
/// Only the excerpt of the lines that can build names is parsed.
pub fn scan(src: &str) -> BuiltNames {
    built_from(src, &buildable(src))
}

/// The names `src` builds, read from its [`buildable`] text.
fn built_from(src: &str, buildable: &Buildable) -> BuiltNames {
    if src.len() > MAX_SOURCE {
        return BuiltNames::default();
    }
    scan_text(&buildable.text, buildable.longest_line)
}

/// The text [`scan`] parses: the excerpt of `src` (see [`excerpt`]), or
/// all of it when it has a lexical error. Every built name comes from the
/// string literals of this text.
pub fn buildable(src: &str) -> Buildable<'_> {
    match excerpt::excerpt(src) {
        Some((text, longest_line)) => Buildable {
            text: text.into(),
            longest_line,
        },
        // Lines stop at the error: bound the nesting by the whole file.
        None => Buildable {
            text: src.into(),
            longest_line: src.len(),
        },
    }
}

/// [`scan`] over the whole file: what the excerpt must agree with.
#[doc(hidden)]
pub fn scan_whole(src: &str) -> BuiltNames {
    if src.len() > MAX_SOURCE {
        return BuiltNames::default();
    }
    let longest = crate::syntax::python::longest_logical_line(src).unwrap_or(src.len());
    scan_text(src, longest)
}

fn scan_text(src: &str, longest_line: usize) -> BuiltNames {
    python_validity::with_parsed(src, longest_line, |parsed| {
        let module = parsed.syntax();
        let mut scan = Scan {
            src,
            constants: HashMap::default(),
            sequences: HashMap::default(),
            scopes: Vec::new(),
            chained: None,
            out: BuiltNames::default(),
        };
        scan.module_constants(&module.body);
        scan.visit_body(&module.body);
        let mut out = scan.out;
        out.exact.sort();
        out.exact.dedup();
        out.patterns.sort();
        out.patterns.dedup();
        out
    })
    .unwrap_or_default()
}

fn is_word(text: &str) -> bool {
    text.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

impl<'a> Scan<'a> {
    fn text(&self, range: ruff_text_size::TextRange) -> &'a str {
        self.src
            .get(range.start().to_usize()..range.end().to_usize())
            .unwrap_or("")
    }

    /// Whether `expr` is written in parentheses, given where the text before
    /// it starts (the end of the previous operand, or of the node holding
    /// it): the parser's range of a parenthesized expression leaves its
    /// parentheses out. Comments between are skipped.
    fn parenthesized(&self, before: TextSize, expr: &Expr) -> bool {
        let gap = self.text(ruff_text_size::TextRange::new(
            before.min(expr.start()),
            expr.start(),
        ));
        gap.lines()
            .any(|line| line.split('#').next().unwrap_or("").contains('('))
    }

    /// A string literal without interpolation or implicit concatenation, as
    /// written between its quotes (escapes as written).
    fn plain_string(&self, expr: &Expr) -> Option<String> {
        let Expr::StringLiteral(literal) = expr else {
            return None;
        };
        if literal.value.is_implicit_concatenated() {
            return None;
        }
        let part = literal.value.iter().next()?;
        let range = part.range();
        let (open, close) = (part.flags.opener_len(), part.flags.closer_len());
        if range.len() < open + close {
            return None;
        }
        Some(
            self.text(ruff_text_size::TextRange::new(
                range.start() + open,
                range.end() - close,
            ))
            .to_string(),
        )
    }

    fn module_constants(&mut self, body: &'a [Stmt]) {
        for statement in body {
            // `before`: where the text before the value starts.
            let (target, before, value) = match statement {
                Stmt::Assign(a) if a.targets.len() == 1 => {
                    (&a.targets[0], a.targets[0].end(), &*a.value)
                }
                Stmt::AnnAssign(a) => match &a.value {
                    Some(value) => (&*a.target, a.annotation.end(), &**value),
                    None => continue,
                },
                _ => continue,
            };
            let Expr::Name(name) = target else {
                continue;
            };
            let name = name.id.as_str();
            // `NAME = ("a")` is a one-string sequence, as the loop reads it.
            if let Some(value) = self
                .plain_string(value)
                .filter(|_| !self.parenthesized(before, value))
            {
                self.constants.insert(name, value);
            } else if let Some(values) = self.string_collection(before, value) {
                self.sequences.insert(name, values);
            }
        }
    }

    /// The strings of a literal tuple, list or set of strings (or of one
    /// string in parentheses), or the string keys of a dict literal;
    /// `before` is where the text before `expr` starts.
    fn string_collection(&self, before: TextSize, expr: &Expr) -> Option<Vec<String>> {
        let all = |elements: &[Expr]| -> Option<Vec<String>> {
            elements.iter().map(|e| self.plain_string(e)).collect()
        };
        match expr {
            Expr::Tuple(t) => all(&t.elts),
            Expr::List(l) => all(&l.elts),
            Expr::Set(s) => all(&s.elts),
            Expr::Dict(d) => d
                .items
                .iter()
                .map(|item| self.plain_string(item.key.as_ref()?))
                .collect(),
            Expr::StringLiteral(_) if self.parenthesized(before, expr) => {
                Some(vec![self.plain_string(expr)?])
            }
            _ => None,
        }
    }

    /// The values a loop gives `name` where a part is read: the nearest
    /// enclosing `for` (statement or comprehension) binding it, over a
    /// literal collection, a dict literal's `.items()`/`.keys()`, or a
    /// module-level sequence.
    fn loop_values(&self, name: &str) -> Option<Vec<String>> {
        let binds = |target: &Expr| {
            let first = match target {
                Expr::Tuple(t) => t.elts.first(),
                other => Some(other),
            };
            matches!(first, Some(Expr::Name(n)) if n.id.as_str() == name)
        };
        for scope in self.scopes.iter().rev() {
            match *scope {
                Scope::Loop { target, iter } if binds(target) => {
                    return self.iterated(target.end(), iter);
                }
                Scope::Comprehension(generators) => {
                    if let Some(g) = generators.iter().find(|g| binds(&g.target)) {
                        return self.iterated(g.target.end(), &g.iter);
                    }
                }
                Scope::Definition => return None,
                Scope::Loop { .. } => {}
            }
        }
        None
    }

    fn iterated(&self, before: TextSize, iter: &Expr) -> Option<Vec<String>> {
        match iter {
            Expr::Name(n) => self.sequences.get(n.id.as_str()).cloned(),
            Expr::Call(call) => {
                let Expr::Attribute(attribute) = &*call.func else {
                    return None;
                };
                let object = &*attribute.value;
                if !matches!(attribute.attr.as_str(), "items" | "keys")
                    || !matches!(object, Expr::Dict(_))
                {
                    return None;
                }
                self.string_collection(attribute.start(), object)
            }
            _ => self.string_collection(before, iter),
        }
    }

    /// The value of a part: a string literal or a module-level constant.
    fn part(&self, expr: &'a Expr) -> Part<'a> {
        if let Some(value) = self.plain_string(expr) {
            return Part::Literal(value);
        }
        if let Expr::Name(name) = expr {
            if let Some(value) = self.constants.get(name.id.as_str()) {
                return Part::Literal(value.clone());
            }
        }
        Part::Unknown(expr)
    }

    /// Reads what `expr` builds, if it is a construct that builds names.
    fn built_by(&mut self, expr: &'a Expr) {
        match expr {
            Expr::BinOp(op) if op.op == Operator::Add => {
                // A chain is read from its outermost `+`; the `+` just inside
                // (its unparenthesized left operand) is skipped when the walk
                // reaches it, and so on down the chain.
                let continued = self.chained.is_some_and(|c| std::ptr::eq(c, expr));
                self.chained = match &*op.left {
                    Expr::BinOp(inner)
                        if inner.op == Operator::Add
                            && !self.parenthesized(op.start(), &op.left) =>
                    {
                        Some(&op.left)
                    }
                    _ => None,
                };
                if continued {
                    return;
                }
                let mut parts = Vec::new();
                self.plus_parts(op, &mut parts);
                self.record(&parts);
            }
            Expr::BinOp(op) if op.op == Operator::Mod => {
                let Some(template) = self.plain_string(&op.left) else {
                    return;
                };
                let parts = percent_parts(&template, expr);
                self.record(&parts);
            }
            Expr::FString(f) => {
                for part in f.value.iter() {
                    let ast::FStringPart::FString(f) = part else {
                        continue;
                    };
                    if !f
                        .elements
                        .iter()
                        .any(|e| matches!(e, ast::InterpolatedStringElement::Interpolation(_)))
                    {
                        continue;
                    }
                    let parts: Vec<Part> = f
                        .elements
                        .iter()
                        .map(|element| match element {
                            ast::InterpolatedStringElement::Literal(l) => {
                                Part::Literal(self.text(l.range).to_string())
                            }
                            ast::InterpolatedStringElement::Interpolation(i) => {
                                self.part(&i.expression)
                            }
                        })
                        .collect();
                    self.record(&parts);
                }
            }
            Expr::Call(call) => {
                let Expr::Attribute(attribute) = &*call.func else {
                    return;
                };
                if attribute.attr.as_str() != "format" {
                    return;
                }
                let Some(template) = self.plain_string(&attribute.value) else {
                    return;
                };
                let parts = brace_parts(&template, expr);
                self.record(&parts);
            }
            _ => {}
        }
    }

    /// The operands of a chain of `+`, in order: the left spine, down to an
    /// operand that is not an unparenthesized `+`.
    fn plus_parts(&self, op: &'a ast::ExprBinOp, parts: &mut Vec<Part<'a>>) {
        let mut spine = vec![op];
        let mut left: &'a Expr = &op.left;
        while let Expr::BinOp(inner) = left {
            let outer = spine[spine.len() - 1];
            if inner.op != Operator::Add
                || self.parenthesized(outer.start(), left)
                || spine.len() > 256
            {
                break;
            }
            spine.push(inner);
            left = &inner.left;
        }
        parts.push(self.part(left));
        for op in spine.iter().rev() {
            parts.push(self.part(&op.right));
        }
    }

    /// Records what a sequence of parts builds.
    fn record(&mut self, parts: &[Part<'a>]) {
        let unknown: Vec<usize> = parts
            .iter()
            .enumerate()
            .filter(|(_, p)| matches!(p, Part::Unknown(_)))
            .map(|(i, _)| i)
            .collect();
        let literal = |range: &[Part]| -> String {
            range
                .iter()
                .map(|p| match p {
                    Part::Literal(s) => s.as_str(),
                    Part::Unknown(_) => "",
                })
                .collect()
        };
        match unknown.as_slice() {
            [] => {
                let name = literal(parts);
                if !name.is_empty() && is_word(&name) {
                    self.out.exact.push(name);
                }
            }
            &[i] => {
                let (head, tail) = (literal(&parts[..i]), literal(&parts[i + 1..]));
                if !is_word(&head) || !is_word(&tail) {
                    return;
                }
                let Part::Unknown(expr) = parts[i] else {
                    return;
                };
                let resolved = match expr {
                    Expr::Name(name) => self.loop_values(name.id.as_str()),
                    _ => None,
                };
                match resolved {
                    Some(values) => self.out.exact.extend(
                        values
                            .iter()
                            .map(|v| format!("{head}{v}{tail}"))
                            .filter(|n| is_word(n)),
                    ),
                    None => self.pattern(head, tail),
                }
            }
            &[first, .., last] => {
                let (head, tail) = (literal(&parts[..first]), literal(&parts[last + 1..]));
                if is_word(&head) && is_word(&tail) {
                    self.pattern(head, tail);
                }
            }
        }
    }

    /// A pattern worth keeping: at least three known characters at one end,
    /// so `x + "s"` does not make every name ending in `s` built (and a file
    /// can be passed over when no string literal of it starts or ends with
    /// three characters of a name, see `model::mentions`).
    fn pattern(&mut self, head: String, tail: String) {
        if head.len() >= 3 || tail.len() >= 3 {
            self.out.patterns.push((head, tail));
        }
    }

    fn in_scope(&mut self, scope: Scope<'a>, walk: impl FnOnce(&mut Self)) {
        self.scopes.push(scope);
        walk(self);
        self.scopes.pop();
    }
}

impl<'a> Visitor<'a> for Scan<'a> {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        // Nesting is bounded by the caller (`python_validity::with_parsed`);
        // a debug build's frames are large: grow the stack on the heap.
        stacker::maybe_grow(64 << 10, 1 << 20, || match stmt {
            // Decorators run where the definition stands; the rest later.
            Stmt::FunctionDef(f) => {
                for d in &f.decorator_list {
                    self.visit_decorator(d);
                }
                self.in_scope(Scope::Definition, |scan| {
                    if let Some(type_params) = &f.type_params {
                        scan.visit_type_params(type_params);
                    }
                    scan.visit_parameters(&f.parameters);
                    if let Some(returns) = &f.returns {
                        scan.visit_annotation(returns);
                    }
                    scan.visit_body(&f.body);
                });
            }
            Stmt::ClassDef(c) => {
                for d in &c.decorator_list {
                    self.visit_decorator(d);
                }
                self.in_scope(Scope::Definition, |scan| {
                    if let Some(type_params) = &c.type_params {
                        scan.visit_type_params(type_params);
                    }
                    if let Some(arguments) = &c.arguments {
                        scan.visit_arguments(arguments);
                    }
                    scan.visit_body(&c.body);
                });
            }
            Stmt::For(f) => {
                let scope = Scope::Loop {
                    target: &f.target,
                    iter: &f.iter,
                };
                self.in_scope(scope, |scan| visitor::walk_stmt(scan, stmt));
            }
            _ => visitor::walk_stmt(self, stmt),
        })
    }

    fn visit_expr(&mut self, expr: &'a Expr) {
        stacker::maybe_grow(64 << 10, 1 << 20, || {
            self.built_by(expr);
            let generators = match expr {
                Expr::ListComp(c) => Some(&c.generators),
                Expr::SetComp(c) => Some(&c.generators),
                Expr::DictComp(c) => Some(&c.generators),
                Expr::Generator(c) => Some(&c.generators),
                _ => None,
            };
            match generators {
                Some(generators) => self.in_scope(Scope::Comprehension(generators), |scan| {
                    visitor::walk_expr(scan, expr)
                }),
                None => visitor::walk_expr(self, expr),
            }
        })
    }
}

/// The parts of a `str.format` template: `{…}` fields are unknown.
fn brace_parts<'a>(template: &str, at: &'a Expr) -> Vec<Part<'a>> {
    let mut parts = Vec::new();
    let mut literal = String::new();
    let mut chars = template.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '{' if chars.peek() == Some(&'{') => {
                chars.next();
                literal.push('{');
            }
            '}' if chars.peek() == Some(&'}') => {
                chars.next();
                literal.push('}');
            }
            '{' => {
                parts.push(Part::Literal(std::mem::take(&mut literal)));
                for c in chars.by_ref() {
                    if c == '}' {
                        break;
                    }
                }
                parts.push(Part::Unknown(at));
            }
            c => literal.push(c),
        }
    }
    parts.push(Part::Literal(literal));
    parts
}

/// The parts of a `%` template: conversions (`%s`, `%(key)s`, `%05d`) are
/// unknown, `%%` is a percent sign.
fn percent_parts<'a>(template: &str, at: &'a Expr) -> Vec<Part<'a>> {
    let mut parts = Vec::new();
    let mut literal = String::new();
    let mut chars = template.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            literal.push(c);
            continue;
        }
        if chars.peek() == Some(&'%') {
            chars.next();
            literal.push('%');
            continue;
        }
        parts.push(Part::Literal(std::mem::take(&mut literal)));
        if chars.peek() == Some(&'(') {
            for c in chars.by_ref() {
                if c == ')' {
                    break;
                }
            }
        }
        // Flags, width, precision, then the conversion letter.
        for c in chars.by_ref() {
            if c.is_ascii_alphabetic() {
                break;
            }
        }
        parts.push(Part::Unknown(at));
    }
    parts.push(Part::Literal(literal));
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn concatenation_resolved_over_a_dict_literal_loop() {
        let built = scan(
            "def f(context, status, result):\n    for suffix, value in {\"status\": status, \"result\": result}.items():\n        _set(context, \"bundle_repair_\" + suffix, value)\n",
        );
        assert_eq!(
            built.exact,
            ["bundle_repair_result", "bundle_repair_status"]
        );
        assert!(built.patterns.is_empty());
        assert!(!built.builds("bundle_repair_other"));
    }

    #[test]
    fn forms_that_leave_a_pattern_or_resolve() {
        let src = r#"PREFIX = "draft_"
KEYS = ("a", "b")
def f(ctx, name, n):
    ctx.set(PREFIX + name, 1)
    ctx.get(f"{name}_summary")
    ctx.get("stage_{}_done".format(n))
    ctx.get("retry_%s" % name)
    for k in KEYS:
        ctx.set(f"lane_{k}", 1)
    [ctx.get("tab_" + t) for t in ("x", "y")]
    open(f"modules/{name}/module.yaml")
    ctx.get(name + "s")
"#;
        let built = scan(src);
        for name in [
            "draft_plan",
            "order_summary",
            "stage_2_done",
            "retry_count",
            "lane_a",
            "lane_b",
            "tab_x",
            "tab_y",
        ] {
            assert!(built.builds(name), "{name}: {built:?}");
        }
        for name in ["lane_c", "tab_z", "summary", "orders", "modules"] {
            assert!(!built.builds(name), "{name}: {built:?}");
        }
    }

    #[test]
    fn parentheses_and_comments_read_as_python_reads_them() {
        let src = r#"KEYS = (
    "alpha",  # the first (and only) comment
    "beta",
)
def f(ctx, name, x):
    ctx.get(("bundle_" + name) + "_x")
    ctx.get(("retry_%s") % x)
    ctx.get(("stage_{}_done").format(x))
    for k in KEYS:
        ctx.set("lane_" + k, 1)
"#;
        let built = scan(src);
        // A parenthesized `+` is a chain of its own, as written.
        assert!(built.builds("bundle_abc"), "{built:?}");
        for name in ["retry_count", "stage_2_done", "lane_alpha", "lane_beta"] {
            assert!(built.builds(name), "{name}: {built:?}");
        }
        // The loop resolves, comments and all: no other `lane_` name.
        assert!(!built.builds("lane_gamma"), "{built:?}");
    }

    #[test]
    fn deep_nesting_neither_crashes_nor_builds_what_it_did_not_read() {
        let nested = |depth: usize| {
            let src = format!(
                "x = \"bundle_\" + {}y{}\n",
                "(".repeat(depth),
                ")".repeat(depth)
            );
            scan(&src)
        };
        // Read on this thread, then on threads sized from the line.
        for depth in [100, 5_000, 60_000] {
            let built = nested(depth);
            assert!(
                built.builds("bundle_z") && built.exact.is_empty(),
                "{built:?}"
            );
        }
        // Past the bound, nothing is read, so nothing is claimed.
        assert!(nested(300_000).is_empty());
    }

    #[test]
    fn broken_source_builds_nothing_worse_than_what_parses() {
        let built = scan("def f(:\n  x = \"a_\" + y\n");
        assert!(built.builds("a_b") || built.is_empty());
    }
}
