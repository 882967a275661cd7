//! Expressions and tests: values in terms of the parameters, conditions the
//! bridge decides, calls, and the bridge's own methods.

use std::sync::Arc;

use ruff_python_ast::visitor::{self, Visitor};
use ruff_python_ast::{self as ast, BoolOp, CmpOp, Expr, UnaryOp};
use ruff_text_size::Ranged;

use super::{bounded, holds_param, Walk, MAX_SYM_SIZE};
use crate::base::TextRange;
use crate::syntax::python_effects::names::{dotted, literal, range, LoadedNames, StoredNames};
use crate::syntax::python_effects::{
    Call, Cond, Effect, StrOp, Sym, WriteKind, BRIDGE_METHODS, BRIDGE_READ_METHODS,
};
use crate::syntax::Value;

/// Builtins that look at an object without keeping or changing it.
const INSPECTING_BUILTINS: &[&str] = &[
    "hasattr",
    "isinstance",
    "bool",
    "type",
    "id",
    "len",
    "print",
    "callable",
    "repr",
];
/// Logging calls format their arguments and keep nothing.
const LOGGING: &[&str] = &[
    "debug",
    "info",
    "warning",
    "warn",
    "error",
    "exception",
    "critical",
    "log",
];

impl Walk {
    /// A condition, as far as it is decided by whether a value is present.
    pub(super) fn test(&mut self, expr: &Expr) -> Cond {
        stacker::maybe_grow(64 << 10, 1 << 20, || self.test_inner(expr))
    }

    pub(super) fn test_inner(&mut self, expr: &Expr) -> Cond {
        match expr {
            Expr::BoolOp(b) => {
                let parts: Vec<Cond> = b.values.iter().map(|v| self.test(v)).collect();
                match b.op {
                    BoolOp::And => Cond::And(parts),
                    BoolOp::Or => Cond::Or(parts),
                }
            }
            Expr::UnaryOp(u) if u.op == UnaryOp::Not => Cond::Not(Arc::new(self.test(&u.operand))),
            Expr::Compare(c)
                if c.ops.len() == 1 && matches!(c.comparators[0], Expr::NoneLiteral(_)) =>
            {
                let sym = self.value_for_test(&c.left);
                let present = Cond::Present(sym);
                match c.ops[0] {
                    CmpOp::IsNot | CmpOp::NotEq => present,
                    CmpOp::Is | CmpOp::Eq => Cond::Not(Arc::new(present)),
                    _ => Cond::Opaque,
                }
            }
            Expr::Name(_) | Expr::Attribute(_) => Cond::Present(self.value_for_test(expr)),
            // `callable(getattr(x, "set", None))`
            Expr::Call(call)
                if matches!(&*call.func, Expr::Name(n) if n.id.as_str() == "callable")
                    && call.arguments.args.len() == 1
                    && call.arguments.keywords.is_empty() =>
            {
                let v = self.expr(&call.arguments.args[0]);
                match v {
                    Sym::Attr { base, attr, .. } if BRIDGE_METHODS.contains(&&*attr) => {
                        Cond::Present(Arc::unwrap_or_clone(base))
                    }
                    _ => Cond::Opaque,
                }
            }
            Expr::Call(call)
                if matches!(&*call.func, Expr::Name(n) if n.id.as_str() == "isinstance")
                    && call.arguments.args.len() == 2
                    && call.arguments.keywords.is_empty() =>
            {
                let v = self.value_for_test(&call.arguments.args[0]);
                let mapping = |e: &Expr| {
                    dotted(e).is_some_and(|d| {
                        matches!(
                            d.rsplit('.').next(),
                            Some("dict" | "Mapping" | "MutableMapping")
                        )
                    })
                };
                let types = &call.arguments.args[1];
                let all_mappings = match types {
                    Expr::Tuple(t) => !t.elts.is_empty() && t.elts.iter().all(mapping),
                    other => mapping(other),
                };
                if all_mappings {
                    Cond::IsMapping(v)
                } else {
                    Cond::Opaque
                }
            }
            Expr::Call(call)
                if matches!(&*call.func, Expr::Name(n) if n.id.as_str() == "hasattr")
                    && call.arguments.args.len() == 2
                    && call.arguments.keywords.is_empty() =>
            {
                let sym = self.value_for_test(&call.arguments.args[0]);
                match &call.arguments.args[1] {
                    Expr::StringLiteral(s) if BRIDGE_METHODS.contains(&s.value.to_str()) => {
                        Cond::Present(sym)
                    }
                    _ => Cond::Opaque,
                }
            }
            other => {
                self.expr(other);
                Cond::Opaque
            }
        }
    }

    /// A value looked at in a test: its truth or identity is read, and the
    /// object is not handed on.
    pub(super) fn value_for_test(&mut self, expr: &Expr) -> Sym {
        match expr {
            Expr::Name(n) => self.lookup(n.id.as_str(), range(n.range)),
            Expr::Attribute(a) => {
                let base = self.value_for_test(&a.value);
                self.attribute(base, a)
            }
            other => self.expr(other),
        }
    }

    pub(super) fn attribute(&mut self, base: Sym, a: &ast::ExprAttribute) -> Sym {
        let r = range(a.range);
        match base {
            Sym::Param(_) if a.attr.id.as_str() == "context_variables" => Sym::Attr {
                base: Arc::new(base),
                attr: "context_variables".into(),
                default: None,
            },
            Sym::Global(name) => Sym::Global(format!("{name}.{}", a.attr.id).into()),
            Sym::Member { ref value, .. } if a.attr.id.as_str() == "value" => {
                Sym::Const(value.clone())
            }
            other => {
                // An attribute of the bridge (`.data`) is not followed.
                self.escape(&other, "reads an attribute of", r);
                Sym::Unknown(r)
            }
        }
    }

    pub(super) fn expr(&mut self, expr: &Expr) -> Sym {
        let sym = stacker::maybe_grow(64 << 10, 1 << 20, || self.expr_inner(expr));
        bounded(sym, MAX_SYM_SIZE, range(expr.range()))
    }

    pub(super) fn expr_inner(&mut self, expr: &Expr) -> Sym {
        let r = range(expr.range());
        if let Some(v) = literal(expr) {
            return Sym::Const(v);
        }
        match expr {
            Expr::Name(n) => self.lookup(n.id.as_str(), r),
            Expr::Attribute(a) => {
                let base = self.expr(&a.value);
                self.attribute(base, a)
            }
            Expr::Await(a) => self.expr(&a.value),
            Expr::Named(n) => {
                let v = self.expr(&n.value);
                self.assign(&n.target, v.clone());
                v
            }
            Expr::Call(call) => self.call(call),
            Expr::Subscript(s) => {
                let table = self.expr(&s.value);
                let key = self.expr(&s.slice);
                if holds_param(&table) {
                    // Reading an item of the bridge.
                    return Sym::Unknown(r);
                }
                Sym::Index {
                    table: Arc::new(table),
                    key: Arc::new(key),
                    default: None,
                }
            }
            Expr::If(i) => {
                let cond = self.test(&i.test);
                let a = self.expr(&i.body);
                let b = self.expr(&i.orelse);
                Sym::Choose(Arc::new(cond), Arc::new(a), Arc::new(b))
            }
            Expr::Dict(d) => {
                let mut items = Vec::with_capacity(d.items.len());
                let mut known = true;
                for item in &d.items {
                    let v = self.expr(&item.value);
                    self.escape(&v, "stores", r);
                    match &item.key {
                        Some(k) => {
                            let k = self.expr(k);
                            items.push((k, v));
                        }
                        None => known = false,
                    }
                }
                if known {
                    Sym::Dict(items)
                } else {
                    Sym::Unknown(r)
                }
            }
            Expr::List(l) => self.sequence(&l.elts, r),
            Expr::Tuple(t) => self.sequence(&t.elts, r),
            Expr::Set(s) => {
                self.sequence(&s.elts, r);
                Sym::Unknown(r)
            }
            Expr::BoolOp(b) => {
                let values: Vec<Sym> = b.values.iter().map(|v| self.expr(v)).collect();
                // `ctx = context_variables or {}`: the first operand when it
                // is present (the bridge always is), else the rest.
                if let (BoolOp::Or, [first, rest @ ..]) = (b.op, values.as_slice()) {
                    if holds_param(first) && !rest.is_empty() && !rest.iter().any(holds_param) {
                        let fallback = if rest.len() == 1 {
                            rest[0].clone()
                        } else {
                            Sym::Unknown(r)
                        };
                        return Sym::Choose(
                            Arc::new(Cond::Present(first.clone())),
                            Arc::new(first.clone()),
                            Arc::new(fallback),
                        );
                    }
                }
                for v in &values {
                    // Kept under a name this reader does not follow.
                    self.escape(v, "combines", r);
                }
                Sym::Unknown(r)
            }
            Expr::Compare(c) => {
                self.test(&c.left);
                for e in c.comparators.iter() {
                    self.test(e);
                }
                Sym::Unknown(r)
            }
            Expr::ListComp(c) => self.comprehension(&c.generators, &[&c.elt], r),
            Expr::SetComp(c) => self.comprehension(&c.generators, &[&c.elt], r),
            Expr::Generator(c) => self.comprehension(&c.generators, &[&c.elt], r),
            Expr::DictComp(c) => {
                let mut parts: Vec<&Expr> = c.key.iter().map(|k| &**k).collect();
                parts.push(&c.value);
                self.comprehension(&c.generators, &parts, r)
            }
            Expr::Lambda(_) => {
                let mut loaded = LoadedNames::default();
                loaded.visit_expr(expr);
                for (name, nr) in loaded.0 {
                    if let Some(sym) = self.env.get(&name).cloned() {
                        if holds_param(&sym) {
                            self.escape(&sym, "uses in a nested scope", nr);
                        }
                    }
                }
                Sym::Unknown(r)
            }
            other => {
                // Operators, f-strings, yields, starred values: their parts
                // are evaluated for what they call; a parameter inside one is
                // only handed on when it is not merely formatted.
                let mut parts: Vec<&Expr> = Vec::new();
                let mut collect = SubExprs(&mut parts);
                visitor::walk_expr(&mut collect, other);
                let formatting = matches!(other, Expr::FString(_) | Expr::TString(_));
                for p in parts {
                    let v = self.expr(p);
                    if !formatting {
                        self.escape(&v, "uses", r);
                    }
                }
                Sym::Unknown(r)
            }
        }
    }

    /// A comprehension runs its parts here, any number of times: what they
    /// call happens maybe; its own names are unknown and stay inside it.
    pub(super) fn comprehension(
        &mut self,
        generators: &[ast::Comprehension],
        parts: &[&Expr],
        r: TextRange,
    ) -> Sym {
        let outer = self.env.clone();
        self.path.push(Cond::Opaque);
        for g in generators {
            let iter = self.expr(&g.iter);
            self.escape(&iter, "iterates", r);
            let mut targets = StoredNames::default();
            targets.visit_expr(&g.target);
            self.forget(&targets.0, r);
            for cond in &g.ifs {
                self.test(cond);
            }
        }
        for part in parts {
            let v = self.expr(part);
            self.escape(&v, "stores", r);
        }
        self.path.pop();
        self.env = outer;
        Sym::Unknown(r)
    }

    pub(super) fn sequence(&mut self, elts: &[Expr], r: TextRange) -> Sym {
        let mut items = Vec::with_capacity(elts.len());
        for e in elts {
            let v = self.expr(e);
            self.escape(&v, "stores", r);
            items.push(v);
        }
        Sym::Seq(items)
    }

    pub(super) fn call(&mut self, call: &ast::ExprCall) -> Sym {
        let r = range(call.range());
        let args = &call.arguments;
        // A method of a value: the bridge's own, `str` methods, `.get` of a table.
        if let Expr::Attribute(a) = &*call.func {
            let recv = self.expr(&a.value);
            let method = a.attr.id.as_str();
            if holds_param(&recv) {
                return self.bridge_method(recv, method, call);
            }
            let value_method = matches!(method, "get" | "lower" | "upper" | "strip" | "casefold");
            if let (Sym::Global(name), false) = (&recv, value_method) {
                let callee = format!("{name}.{method}");
                let base = name.rsplit('.').next().unwrap_or("");
                let logging = LOGGING.contains(&method)
                    && (base.to_ascii_lowercase().contains("log") || base == "logging");
                if !logging {
                    return self.named_call(callee.into(), call);
                }
            }
            let positional: Vec<Sym> = args.args.iter().map(|e| self.expr(e)).collect();
            let keywords: Vec<(Option<&str>, Sym)> = args
                .keywords
                .iter()
                .map(|k| (k.arg.as_ref().map(|a| a.id.as_str()), self.expr(&k.value)))
                .collect();
            let logging = LOGGING.contains(&method);
            for v in positional.iter().chain(keywords.iter().map(|(_, v)| v)) {
                if !logging {
                    self.escape(v, "hands to a method", r);
                }
            }
            let str_op = match method {
                "lower" => Some(StrOp::Lower),
                "upper" => Some(StrOp::Upper),
                "strip" => Some(StrOp::Strip),
                "casefold" => Some(StrOp::Casefold),
                _ => None,
            };
            if let (Some(op), true) = (str_op, positional.is_empty() && keywords.is_empty()) {
                return Sym::Str(op, Arc::new(recv));
            }
            if method == "get" && keywords.is_empty() && matches!(positional.len(), 1 | 2) {
                let mut positional = positional.into_iter();
                let key = positional.next().unwrap_or(Sym::Unknown(r));
                let default = positional.next().unwrap_or(Sym::Const(Value::Null));
                return Sym::Index {
                    table: Arc::new(recv),
                    key: Arc::new(key),
                    default: Some(Arc::new(default)),
                };
            }
            return Sym::Unknown(r);
        }
        if let Expr::Name(n) = &*call.func {
            let name = n.id.as_str();
            // `setter = getattr(context_variables, "set")`, then `setter(k, v)`.
            if let Some(Sym::Attr { base, attr, .. }) = self.env.get(name).cloned() {
                if holds_param(&base) && matches!(&*attr, "set" | "pop" | "delete") {
                    return self.bridge_method(Arc::unwrap_or_clone(base), &attr, call);
                }
            }
            let shadowed = match self.env.get(name) {
                // A function-level import: the module's name.
                Some(Sym::Global(g)) => &**g != name,
                Some(_) => true,
                None => self.locals.contains(name),
            };
            if !shadowed {
                if INSPECTING_BUILTINS.contains(&name) {
                    for e in args.args.iter() {
                        self.value_for_test(e);
                    }
                    for k in args.keywords.iter() {
                        self.value_for_test(&k.value);
                    }
                    return Sym::Unknown(r);
                }
                if name == "getattr" && matches!(args.args.len(), 2 | 3) && args.keywords.is_empty()
                {
                    if let Expr::StringLiteral(attr) = &args.args[1] {
                        let base = self.value_for_test(&args.args[0]);
                        let default = args.args.get(2).map(|d| Arc::new(self.expr(d)));
                        return Sym::Attr {
                            base: Arc::new(base),
                            attr: attr.value.to_str().into(),
                            default,
                        };
                    }
                }
                if name == "str" && args.args.len() == 1 && args.keywords.is_empty() {
                    let v = self.value_for_test(&args.args[0]);
                    return Sym::Str(StrOp::Str, Arc::new(v));
                }
                return self.named_call(name.into(), call);
            }
        }
        // Anything else called: what it is handed is not followed.
        let callee = self.expr(&call.func);
        self.escape(&callee, "calls", r);
        for e in args.args.iter() {
            let v = self.expr(e);
            self.escape(&v, "hands to a call of an expression", r);
        }
        for k in args.keywords.iter() {
            let v = self.expr(&k.value);
            self.escape(&v, "hands to a call of an expression", r);
        }
        Sym::Unknown(r)
    }

    /// A call of a function by name (module-level, imported or global).
    pub(super) fn named_call(&mut self, callee: Box<str>, call: &ast::ExprCall) -> Sym {
        let r = range(call.range());
        let mut positional = Vec::new();
        let mut keywords = Vec::new();
        let mut splat = false;
        for e in call.arguments.args.iter() {
            if let Expr::Starred(s) = e {
                let v = self.expr(&s.value);
                self.escape(&v, "unpacks into a call", r);
                splat = true;
                continue;
            }
            positional.push(self.expr(e));
        }
        for k in call.arguments.keywords.iter() {
            let v = self.expr(&k.value);
            match &k.arg {
                Some(a) => keywords.push((a.id.as_str().into(), v)),
                None => {
                    self.escape(&v, "unpacks into a call", r);
                    splat = true;
                }
            }
        }
        if splat {
            for v in positional.iter().chain(keywords.iter().map(|(_, v)| v)) {
                self.escape(v, "hands on with unpacked arguments", r);
            }
            return Sym::Unknown(r);
        }
        let call = Call {
            callee,
            args: positional,
            keywords,
            range: r,
        };
        if call
            .args
            .iter()
            .chain(call.keywords.iter().map(|(_, v)| v))
            .any(holds_param)
        {
            let when = self.when();
            self.effects.push(Effect::Invoke {
                call: call.clone(),
                when,
            });
        }
        Sym::Call(Arc::new(call))
    }

    /// A method called on a value that may be a parameter's object.
    pub(super) fn bridge_method(&mut self, recv: Sym, method: &str, call: &ast::ExprCall) -> Sym {
        let r = range(call.range());
        let args = &call.arguments;
        let positional: Vec<Sym> = args.args.iter().map(|e| self.expr(e)).collect();
        let starred = args.args.iter().any(|e| matches!(e, Expr::Starred(_)));
        let keyword_values: Vec<Sym> = args.keywords.iter().map(|k| self.expr(&k.value)).collect();
        for v in positional.iter().chain(&keyword_values) {
            self.escape(v, "stores", r);
        }
        let key_range = args.args.first().map_or(r, |e| range(e.range()));
        let plain = !starred && args.keywords.is_empty();
        let write = |kind, key: &Sym, value: Sym, w: &mut Self| {
            let when = w.when();
            w.effects.push(Effect::Write {
                recv: recv.clone(),
                kind,
                key: key.clone(),
                value,
                when,
                range: key_range,
            });
        };
        match (method, positional.as_slice()) {
            ("set", [key, value]) if plain => {
                write(WriteKind::Set, key, value.clone(), self);
                Sym::Const(Value::Null)
            }
            ("pop", [key] | [key, _]) | ("delete", [key]) if plain => {
                write(WriteKind::Remove, key, Sym::Const(Value::Null), self);
                Sym::Unknown(r)
            }
            ("get", [key] | [key, _]) if plain => Sym::Index {
                table: Arc::new(recv),
                key: Arc::new(key.clone()),
                default: Some(Arc::new(
                    positional
                        .get(1)
                        .cloned()
                        .unwrap_or(Sym::Const(Value::Null)),
                )),
            },
            (m, _) if BRIDGE_READ_METHODS.contains(&m) => Sym::Unknown(r),
            // A string method of a parameter that holds a string.
            ("lower" | "upper" | "strip" | "casefold", []) if plain => {
                let op = match method {
                    "lower" => StrOp::Lower,
                    "upper" => StrOp::Upper,
                    "strip" => StrOp::Strip,
                    _ => StrOp::Casefold,
                };
                self.escape(&recv, &format!("calls `.{method}(…)` on"), r);
                Sym::Str(op, Arc::new(recv))
            }
            _ => {
                self.escape(&recv, &format!("calls `.{method}(…)` on"), r);
                Sym::Unknown(r)
            }
        }
    }
}

/// The direct sub-expressions of an expression.
struct SubExprs<'a, 'b>(&'b mut Vec<&'a Expr>);

impl<'a> Visitor<'a> for SubExprs<'a, '_> {
    fn visit_expr(&mut self, expr: &'a Expr) {
        self.0.push(expr);
    }
}
