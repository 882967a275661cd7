//! Statements: assignments, branches, loops, handlers, returns.

use std::sync::Arc;

use ruff_python_ast::visitor::Visitor;
use ruff_python_ast::{self as ast, Expr, Stmt};
use ruff_text_size::Ranged;

use super::{bounded, holds_param, one_of, Walk, MAX_LOCAL_SIZE};
use crate::base::TextRange;
use crate::syntax::python_effects::names::{imports_of, range, LoadedNames, StoredNames};
use crate::syntax::python_effects::{Cond, Effect, Sym, WriteKind};
use crate::syntax::Value;

impl Walk {
    pub(super) fn stmt(&mut self, stmt: &Stmt) -> bool {
        stacker::maybe_grow(64 << 10, 1 << 20, || self.stmt_inner(stmt))
    }

    pub(super) fn stmt_inner(&mut self, stmt: &Stmt) -> bool {
        let r = range(stmt.range());
        match stmt {
            Stmt::Expr(e) => {
                self.expr(&e.value);
            }
            Stmt::Assign(a) => {
                let value = self.expr(&a.value);
                for target in &a.targets {
                    self.assign(target, value.clone());
                }
            }
            Stmt::AnnAssign(a) => {
                if let Some(v) = &a.value {
                    let value = self.expr(v);
                    self.assign(&a.target, value);
                }
            }
            Stmt::AugAssign(a) => {
                let value = self.expr(&a.value);
                self.escape(&value, "combines", r);
                match &*a.target {
                    Expr::Name(n) => {
                        self.env.insert(n.id.to_string(), Sym::Unknown(r));
                    }
                    other => {
                        self.target_base(other);
                    }
                }
            }
            Stmt::Return(ret) => {
                let value = match &ret.value {
                    Some(v) => self.expr(v),
                    None => Sym::Const(Value::Null),
                };
                // A caller reads what is returned (`Sym::Call`); mozaiks
                // ignores what a bound function returns but its reply.
                let when = self.when();
                self.returns.push((when, value));
                self.exit();
                return true;
            }
            Stmt::Raise(raise) => {
                for e in raise.exc.iter().chain(&raise.cause) {
                    let v = self.expr(e);
                    self.escape(&v, "raises", r);
                }
                self.exit();
                return true;
            }
            Stmt::Assert(a) => {
                let holds = self.test(&a.test);
                if let Some(m) = &a.msg {
                    self.expr(m);
                }
                self.path.push(Cond::Not(Arc::new(holds)));
                self.exit();
                self.path.pop();
            }
            Stmt::If(s) => {
                let before = self.env.clone();
                let mut ends = Vec::new();
                let mut earlier: Vec<Cond> = Vec::new();
                let first = self.test(&s.test);
                let mut clauses: Vec<(Cond, &[Stmt])> = vec![(first, &s.body[..])];
                let mut has_else = false;
                for clause in &s.elif_else_clauses {
                    match &clause.test {
                        Some(t) => {
                            self.env = before.clone();
                            let c = self.test(t);
                            clauses.push((c, &clause.body[..]));
                        }
                        None => {
                            has_else = true;
                            clauses.push((Cond::ALWAYS, &clause.body[..]));
                        }
                    }
                }
                for (cond, body) in clauses {
                    let mut parts: Vec<Cond> = earlier
                        .iter()
                        .map(|c| Cond::Not(Arc::new(c.clone())))
                        .collect();
                    parts.push(cond.clone());
                    if let Some(end) = self.branch(&before, Cond::and(parts), body) {
                        ends.push(end);
                    }
                    earlier.push(cond);
                }
                if !has_else {
                    let none: Vec<Cond> = earlier
                        .into_iter()
                        .map(|c| Cond::Not(Arc::new(c)))
                        .collect();
                    ends.push((Cond::and(none), before));
                }
                return self.join(ends, r);
            }
            Stmt::For(s) => {
                let iter = self.expr(&s.iter);
                let mut names = Self::stored_in(&s.body);
                let mut target = StoredNames::default();
                target.visit_expr(&s.target);
                names.extend(target.0);
                // `for key in ("a", "b"):` — each pass holds one of them.
                let each = match (&*s.target, &iter) {
                    (Expr::Name(n), Sym::Seq(items)) if !items.is_empty() => {
                        Some((n.id.to_string(), one_of(items.clone())))
                    }
                    _ => {
                        self.escape(&iter, "iterates", r);
                        None
                    }
                };
                self.loop_body(&names, r, each, &[&s.body, &s.orelse]);
            }
            Stmt::While(s) => {
                let names = Self::stored_in(&s.body);
                self.forget(&names, r);
                self.test(&s.test);
                self.loop_body(&names, r, None, &[&s.body, &s.orelse]);
            }
            Stmt::With(s) => {
                for item in &s.items {
                    let v = self.expr(&item.context_expr);
                    if let Some(target) = &item.optional_vars {
                        self.escape(&v, "enters", r);
                        self.assign(target, Sym::Unknown(r));
                    }
                }
                return self.block(&s.body);
            }
            Stmt::Try(s) => {
                let before = self.env.clone();
                let in_body = Self::stored_in(&s.body);
                let body_end = self.branch(&before, Cond::Opaque, &s.body);
                let mut ends = Vec::new();
                if let Some((_, end)) = body_end {
                    if let Some(end) = self.branch(&end, Cond::Opaque, &s.orelse) {
                        ends.push(end);
                    }
                }
                // A handler starts anywhere in the body.
                let mut at_handler = before.clone();
                for n in &in_body {
                    at_handler.insert(n.clone(), Sym::Unknown(r));
                }
                for h in &s.handlers {
                    let ast::ExceptHandler::ExceptHandler(h) = h;
                    let mut start = at_handler.clone();
                    if let Some(n) = &h.name {
                        start.insert(n.id.to_string(), Sym::Unknown(range(h.range)));
                    }
                    if let Some(end) = self.branch(&start, Cond::Opaque, &h.body) {
                        ends.push(end);
                    }
                }
                let leaves = self.join(ends, r);
                if leaves {
                    self.env = at_handler;
                }
                let final_exits = self.block(&s.finalbody);
                return leaves || final_exits;
            }
            Stmt::Match(s) => {
                self.expr(&s.subject);
                let before = self.env.clone();
                let mut ends = Vec::new();
                let mut irrefutable = false;
                for case in &s.cases {
                    let mut bound = StoredNames::default();
                    bound.visit_pattern(&case.pattern);
                    let mut start = before.clone();
                    for n in bound.0 {
                        start.insert(n, Sym::Unknown(range(case.range)));
                    }
                    self.env = start.clone();
                    if let Some(g) = &case.guard {
                        self.test(g);
                    }
                    irrefutable |= case.guard.is_none() && case.pattern.is_irrefutable();
                    if let Some(end) = self.branch(&start, Cond::Opaque, &case.body) {
                        ends.push(end);
                    }
                }
                if !irrefutable {
                    ends.push((Cond::Opaque, before));
                }
                return self.join(ends, r);
            }
            Stmt::FunctionDef(_) | Stmt::ClassDef(_) => {
                self.captured(stmt);
                let names = Self::stored_in(std::slice::from_ref(stmt));
                self.forget(&names, r);
            }
            Stmt::Delete(d) => {
                for t in &d.targets {
                    match t {
                        Expr::Name(n) => {
                            self.env.remove(n.id.as_str());
                        }
                        other => {
                            self.target_base(other);
                        }
                    }
                }
            }
            Stmt::Import(_) | Stmt::ImportFrom(_) => {
                // An import inside a function binds a name to the same
                // module-level object: read as the module's own imports.
                let mut imports = Vec::new();
                imports_of(stmt, &mut imports);
                for i in imports {
                    self.env
                        .insert(i.local.to_string(), Sym::Global(i.local.clone()));
                    self.imports.push(i);
                }
            }
            Stmt::Global(_) | Stmt::Nonlocal(_) => {
                let names = Self::stored_in(std::slice::from_ref(stmt));
                self.forget(&names, r);
            }
            _ => {
                // pass, break, continue, type aliases: nothing followed.
                let names = Self::stored_in(std::slice::from_ref(stmt));
                self.forget(&names, r);
            }
        }
        false
    }

    pub(super) fn loop_body(
        &mut self,
        names: &[String],
        r: TextRange,
        each: Option<(String, Sym)>,
        bodies: &[&[Stmt]],
    ) {
        self.forget(names, r);
        if let Some((name, value)) = each {
            self.env.insert(name, value);
        }
        let before = self.env.clone();
        for body in bodies {
            self.with_path(Cond::Opaque, |w| w.block(body));
            // Later iterations start where earlier ones ended.
            self.env = before.clone();
        }
        self.forget(names, r);
    }

    /// A nested function or class reads names of this one when it runs,
    /// whenever that is: a parameter it reads is handed on.
    pub(super) fn captured(&mut self, stmt: &Stmt) {
        let mut loaded = LoadedNames::default();
        loaded.visit_stmt(stmt);
        for (name, r) in loaded.0 {
            if let Some(sym) = self.env.get(&name).cloned() {
                self.escape(&sym, "captures", r);
            }
        }
    }

    pub(super) fn assign(&mut self, target: &Expr, value: Sym) {
        match target {
            Expr::Name(n) => {
                // A local holds a small value or none known: branches copy
                // every local, and values nest one into another.
                let value = bounded(value, MAX_LOCAL_SIZE, range(n.range));
                self.env.insert(n.id.to_string(), value);
            }
            Expr::Tuple(t) => self.unpack(&t.elts, value, target),
            Expr::List(l) => self.unpack(&l.elts, value, target),
            Expr::Starred(s) => {
                self.escape(&value, "unpacks", range(target.range()));
                self.assign(&s.value, Sym::Unknown(range(target.range())));
            }
            other => {
                // `x.attr = value`, `x[key] = value`: kept somewhere else.
                self.escape(&value, "stores", range(other.range()));
                if let Some((recv, Some(key))) = self.target_base(other) {
                    let when = self.when();
                    self.effects.push(Effect::Write {
                        recv,
                        kind: WriteKind::Set,
                        key,
                        value,
                        when,
                        range: range(other.range()),
                    });
                }
            }
        }
    }

    pub(super) fn unpack(&mut self, elts: &[Expr], value: Sym, target: &Expr) {
        match value {
            Sym::Seq(items) if items.len() == elts.len() => {
                for (e, v) in elts.iter().zip(items) {
                    self.assign(e, v);
                }
            }
            other => {
                self.escape(&other, "unpacks", range(target.range()));
                for e in elts {
                    self.assign(e, Sym::Unknown(range(target.range())));
                }
            }
        }
    }

    /// The object an attribute or item target changes. `x[key] = …` on a
    /// parameter is a write through it when it is the bridge
    /// (`__setitem__`); returns it with the key. `x.attr = …` on a parameter
    /// is not followed.
    pub(super) fn target_base(&mut self, target: &Expr) -> Option<(Sym, Option<Sym>)> {
        match target {
            Expr::Subscript(s) => {
                let base = self.expr(&s.value);
                let key = self.expr(&s.slice);
                holds_param(&base).then_some((base, Some(key)))
            }
            Expr::Attribute(a) => {
                let base = self.expr(&a.value);
                self.escape(&base, "sets an attribute of", range(a.range));
                None
            }
            other => {
                self.expr(other);
                None
            }
        }
    }
}
