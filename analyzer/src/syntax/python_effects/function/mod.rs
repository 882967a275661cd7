//! One function's effects, read in statement order: what each local holds
//! (in terms of the parameters and the module's names), on which path each
//! effect happens, and what it returns.

mod expressions;
mod statements;

use std::rc::Rc;
use std::sync::Arc;

use ruff_python_ast::visitor::Visitor;
use ruff_python_ast::{self as ast, Stmt};

use super::names::{range, StoredNames};
use super::{Cond, Effect, FunctionEffects, Import, ParamIx, Sym};
use crate::base::hash::{HashMap, HashSet};
use crate::base::TextRange;
use crate::syntax::Value;

pub(super) fn function(f: &ast::StmtFunctionDef, imports: &mut Vec<Import>) -> FunctionEffects {
    let p = &f.parameters;
    let mut params: Vec<Box<str>> = Vec::new();
    for a in p.posonlyargs.iter().chain(&p.args) {
        params.push(a.parameter.name.id.as_str().into());
    }
    let positional = params.len();
    for a in &p.kwonlyargs {
        params.push(a.parameter.name.id.as_str().into());
    }
    let mut locals = StoredNames::default();
    for s in &f.body {
        locals.visit_stmt(s);
    }
    let mut env = Env::default();
    for (i, name) in params.iter().enumerate() {
        env.insert(&**name, Sym::Param(i as ParamIx));
    }
    for extra in p.vararg.iter().chain(&p.kwarg) {
        env.insert(extra.name.id.as_str(), Sym::Unknown(range(extra.range)));
    }
    let mut walk = Walk {
        env,
        locals: locals.0.into_iter().collect(),
        path: Vec::new(),
        exits: Vec::new(),
        effects: Vec::new(),
        returns: Vec::new(),
        imports: Vec::new(),
    };
    let exits = walk.block(&f.body);
    if !exits {
        let when = walk.when();
        walk.returns.push((when, Sym::Const(Value::Null)));
    }
    // Module-level imports of the same name win (they come first).
    for i in walk.imports {
        if !imports.iter().any(|m| m.local == i.local) {
            imports.push(i);
        }
    }
    FunctionEffects {
        name: f.name.id.as_str().into(),
        params,
        positional,
        var_keyword: p.kwarg.is_some(),
        effects: walk.effects,
        returns: walk.returns,
    }
}

pub(super) fn one_of(mut syms: Vec<Sym>) -> Sym {
    let mut out: Vec<Sym> = Vec::with_capacity(syms.len());
    for s in syms.drain(..) {
        match s {
            Sym::OneOf(inner) => {
                for i in inner {
                    if !out.contains(&i) {
                        out.push(i);
                    }
                }
            }
            s if !out.contains(&s) => out.push(s),
            _ => {}
        }
    }
    if out.len() == 1 {
        return out.pop().unwrap_or(Sym::Const(Value::Null));
    }
    Sym::OneOf(out)
}

/// Whether the value may be a parameter's object itself (the bridge, when
/// that parameter is the bridge).
pub(super) fn holds_param(sym: &Sym) -> bool {
    sym.may_be_param(&|_| true)
}

/// Earlier exits kept apart in the conditions of later effects.
const MAX_EXITS: usize = 32;
/// Largest value a local holds after joining branches; beyond, unknown.
pub(super) const MAX_SYM_SIZE: usize = 256;
/// Largest value assigned to a local (a value that may be the bridge is
/// always kept: losing it would lose writes).
pub(super) const MAX_LOCAL_SIZE: usize = 48;

/// The nodes of a value, counted up to just past `cap`.
pub(super) fn size(sym: &Sym, cap: usize) -> usize {
    fn count(sym: &Sym, n: &mut usize, cap: usize) {
        *n += 1;
        if *n > cap {
            return;
        }
        match sym {
            Sym::OneOf(xs) | Sym::Seq(xs) => xs.iter().for_each(|x| count(x, n, cap)),
            Sym::Choose(_, a, b) => {
                count(a, n, cap);
                count(b, n, cap);
            }
            Sym::Str(_, x) => count(x, n, cap),
            Sym::Attr { base, default, .. } => {
                count(base, n, cap);
                default.iter().for_each(|d| count(d, n, cap));
            }
            Sym::Index {
                table,
                key,
                default,
            } => {
                count(table, n, cap);
                count(key, n, cap);
                default.iter().for_each(|d| count(d, n, cap));
            }
            Sym::Dict(items) => items.iter().for_each(|(k, v)| {
                count(k, n, cap);
                count(v, n, cap);
            }),
            Sym::Call(c) => c
                .args
                .iter()
                .chain(c.keywords.iter().map(|(_, v)| v))
                .for_each(|x| count(x, n, cap)),
            Sym::Const(_)
            | Sym::Param(_)
            | Sym::Global(_)
            | Sym::Member { .. }
            | Sym::Unknown(_) => {}
        }
    }
    let mut n = 0;
    stacker::maybe_grow(64 << 10, 1 << 20, || count(sym, &mut n, cap));
    n
}

/// `sym`, or when it is larger than `limit` nodes a small stand-in: the
/// parameters it may be (so a bridge is never lost) beside an unknown. Keeps
/// every value the reader holds small and shallow, whatever the code.
pub(super) fn bounded(sym: Sym, limit: usize, r: TextRange) -> Sym {
    if size(&sym, limit) <= limit {
        return sym;
    }
    let mut held = Vec::new();
    params_held(&sym, &mut held);
    if held.is_empty() {
        return Sym::Unknown(r);
    }
    held.push(Sym::Unknown(r));
    Sym::OneOf(held)
}

/// The parameters (and `parameter.attribute`s) a value may be.
fn params_held(sym: &Sym, out: &mut Vec<Sym>) {
    stacker::maybe_grow(64 << 10, 1 << 20, || match sym {
        Sym::Param(_) if !out.contains(sym) => out.push(sym.clone()),
        Sym::Attr { base, attr, .. } => {
            let mut bases = Vec::new();
            params_held(base, &mut bases);
            for b in bases {
                let s = match b {
                    Sym::Param(_) => Sym::Attr {
                        base: Arc::new(b),
                        attr: attr.clone(),
                        default: None,
                    },
                    other => other,
                };
                if !out.contains(&s) {
                    out.push(s);
                }
            }
        }
        Sym::OneOf(xs) => xs.iter().for_each(|x| params_held(x, out)),
        Sym::Choose(_, a, b) => {
            params_held(a, out);
            params_held(b, out);
        }
        Sym::Call(c) => c
            .args
            .iter()
            .chain(c.keywords.iter().map(|(_, v)| v))
            .for_each(|x| params_held(x, out)),
        _ => {}
    })
}

/// What each local holds. Branches copy it, so it shares: a copy is a
/// count per name, and a name no branch changed is told equal by address.
#[derive(Clone, Default)]
pub(super) struct Env(HashMap<Rc<str>, Rc<Sym>>);

impl Env {
    pub(super) fn get(&self, name: &str) -> Option<&Sym> {
        self.0.get(name).map(|s| &**s)
    }

    pub(super) fn insert(&mut self, name: impl Into<Rc<str>>, value: Sym) {
        self.0.insert(name.into(), Rc::new(value));
    }

    pub(super) fn remove(&mut self, name: &str) {
        self.0.remove(name);
    }
}

pub(super) struct Walk {
    env: Env,
    /// Names the function binds somewhere: not module names.
    locals: HashSet<String>,
    /// Conditions of the enclosing blocks.
    path: Vec<Cond>,
    /// The paths on which the function left earlier (return, raise).
    exits: Vec<Cond>,
    effects: Vec<Effect>,
    returns: Vec<(Cond, Sym)>,
    /// Imports inside the function.
    imports: Vec<Import>,
}

impl Walk {
    /// The condition under which the current statement runs.
    pub(super) fn when(&self) -> Cond {
        let mut parts = self.path.clone();
        parts.extend(self.exits.iter().map(|e| Cond::Not(Arc::new(e.clone()))));
        Cond::and(parts)
    }

    pub(super) fn escape(&mut self, sym: &Sym, what: &str, r: TextRange) {
        if holds_param(sym) {
            self.effects.push(Effect::Escape {
                recv: sym.clone(),
                what: what.into(),
                range: r,
            });
        }
    }

    pub(super) fn exit(&mut self) {
        let when = Cond::and(self.path.clone());
        self.exits.push(when);
        // Past a few dozen exits, what follows is simply "maybe": the
        // conditions of later effects stay small.
        if self.exits.len() > MAX_EXITS {
            self.exits = vec![Cond::Opaque];
        }
    }

    /// Walks a block; true when it always leaves the function (or loop).
    pub(super) fn block(&mut self, body: &[Stmt]) -> bool {
        for stmt in body {
            if self.stmt(stmt) {
                return true;
            }
        }
        false
    }

    pub(super) fn with_path<R>(&mut self, cond: Cond, f: impl FnOnce(&mut Self) -> R) -> R {
        self.path.push(cond);
        let r = f(self);
        self.path.pop();
        r
    }

    /// Walks `body` from `env` under `cond`; its end state with that
    /// condition, or `None` when it always leaves.
    pub(super) fn branch(&mut self, env: &Env, cond: Cond, body: &[Stmt]) -> Option<(Cond, Env)> {
        self.env = env.clone();
        let exits = self.with_path(cond.clone(), |w| w.block(body));
        (!exits).then(|| (cond, std::mem::take(&mut self.env)))
    }

    /// Joins the states after the branches that fall through (each with the
    /// condition it runs under, exclusive of the others): a name that
    /// differs reads the value of the branch taken. True when every branch
    /// leaves.
    pub(super) fn join(&mut self, ends: Vec<(Cond, Env)>, at: TextRange) -> bool {
        let Some(((_, last), earlier)) = ends.split_last().map(|(l, e)| (l.clone(), e.to_vec()))
        else {
            return true;
        };
        let mut joined = last;
        // Folded from the last branch: `if c1 … elif c2 … else`.
        for (cond, env) in earlier.into_iter().rev() {
            let mut names: Vec<Rc<str>> = joined.0.keys().chain(env.0.keys()).cloned().collect();
            names.sort_unstable();
            names.dedup();
            for n in names {
                let merged = match (env.0.get(&n), joined.0.get(&n)) {
                    (Some(a), Some(b)) if Rc::ptr_eq(a, b) || a == b => continue,
                    (Some(a), Some(b))
                        if size(a, MAX_SYM_SIZE) + size(b, MAX_SYM_SIZE) > MAX_SYM_SIZE =>
                    {
                        Sym::Unknown(at)
                    }
                    (Some(a), Some(b)) => match &cond {
                        Cond::Opaque => one_of(vec![(**a).clone(), (**b).clone()]),
                        c => Sym::Choose(
                            Arc::new(c.clone()),
                            Arc::new((**a).clone()),
                            Arc::new((**b).clone()),
                        ),
                    },
                    // Unbound on one path: reading it there raises.
                    (Some(a), None) => {
                        let a = Rc::clone(a);
                        joined.0.insert(n, a);
                        continue;
                    }
                    _ => continue,
                };
                joined.insert(n, merged);
            }
        }
        self.env = joined;
        false
    }

    pub(super) fn forget(&mut self, names: &[String], r: TextRange) {
        for n in names {
            self.env.insert(n.as_str(), Sym::Unknown(r));
        }
    }

    pub(super) fn stored_in(stmts: &[Stmt]) -> Vec<String> {
        let mut names = StoredNames::default();
        for s in stmts {
            names.visit_stmt(s);
        }
        names.0
    }

    pub(super) fn lookup(&self, name: &str, r: TextRange) -> Sym {
        if let Some(s) = self.env.get(name) {
            return s.clone();
        }
        if self.locals.contains(name) {
            return Sym::Unknown(r);
        }
        // Read when the function runs: resolved against the module's final
        // bindings.
        Sym::Global(name.into())
    }
}
