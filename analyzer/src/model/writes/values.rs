//! Values: what a symbol of the Python effects may be in a frame — the
//! bridge, a parameter mozaiks passes, constants through module names,
//! tables, `Enum` members, string methods and what helpers return — and the
//! conditions the bridge decides.

use super::{Frame, Reader, Tri, Val, MAX_ALTERNATIVES, MAX_DEPTH};
use crate::model::python_imports::{module_of, Link, ModuleRef};
use crate::syntax::python_effects::{
    Call, Cond, FunctionEffects, ModuleEffects, StrOp, Sym, BRIDGE_METHODS, BRIDGE_READ_METHODS,
};
use crate::syntax::Value;

impl<'b> Reader<'b> {
    pub(super) fn decide(&self, frame: &Frame<'b>, cond: &Cond) -> Tri {
        match cond {
            Cond::Present(sym) => {
                let alts = self.resolve(frame, sym, 0);
                if !alts.is_empty() && alts.iter().all(|v| matches!(v, Val::Bridge | Val::Capture))
                {
                    Tri::True
                } else if !alts.is_empty() && alts.iter().all(|v| *v == Val::Value(Value::Null)) {
                    Tri::False
                } else {
                    Tri::Maybe
                }
            }
            Cond::IsMapping(sym) => {
                let alts = self.resolve(frame, sym, 0);
                if !alts.is_empty()
                    && alts
                        .iter()
                        .all(|v| matches!(v, Val::Bridge | Val::Capture | Val::Value(Value::Null)))
                {
                    Tri::False
                } else {
                    Tri::Maybe
                }
            }
            Cond::Not(c) => match self.decide(frame, c) {
                Tri::True => Tri::False,
                Tri::False => Tri::True,
                Tri::Maybe => Tri::Maybe,
            },
            Cond::And(parts) => {
                let mut out = Tri::True;
                for p in parts {
                    match self.decide(frame, p) {
                        Tri::False => return Tri::False,
                        Tri::Maybe => out = Tri::Maybe,
                        Tri::True => {}
                    }
                }
                out
            }
            Cond::Or(parts) => {
                let mut out = Tri::False;
                for p in parts {
                    match self.decide(frame, p) {
                        Tri::True => return Tri::True,
                        Tri::Maybe => out = Tri::Maybe,
                        Tri::False => {}
                    }
                }
                out
            }
            Cond::Opaque => Tri::Maybe,
        }
    }

    /// The values `sym` may have in `frame`.
    pub(super) fn resolve(&self, frame: &Frame<'b>, sym: &Sym, depth: usize) -> Vec<Val> {
        let unknown = |why: String| vec![Val::Unknown(why)];
        if depth > MAX_DEPTH {
            return unknown("a value computed too many steps away".into());
        }
        if !self.step() {
            return unknown("a value behind more code than mzk follows".into());
        }
        let mut out = match sym {
            Sym::Const(v) => vec![Val::Value(v.clone())],
            Sym::Param(i) => frame
                .args
                .get(*i as usize)
                .cloned()
                .unwrap_or_else(|| unknown("a parameter".into())),
            Sym::Attr {
                base,
                attr,
                default,
            } => {
                let mut out = Vec::new();
                for v in self.resolve(frame, base, depth + 1) {
                    match v {
                        Val::Capture if &**attr == "context_variables" => out.push(Val::Bridge),
                        // A bound method of the bridge: a read method does
                        // nothing until called; a write method or private
                        // state may be used anywhere.
                        Val::Bridge if BRIDGE_READ_METHODS.contains(&&**attr) => {
                            out.push(Val::Unknown(format!("the bridge's `{attr}` method")))
                        }
                        Val::Bridge
                            if attr.starts_with('_') || BRIDGE_METHODS.contains(&&**attr) =>
                        {
                            out.push(Val::Internals)
                        }
                        // mozaiks 0.2.0's `_PromptCapture` keeps the bridge
                        // only under `context_variables`.
                        Val::Capture => {
                            out.push(Val::Unknown(format!("`.{attr}` of the middleware capture")))
                        }
                        // The bridge and `None` have no other public
                        // attribute (`data` raises): `getattr` gives the
                        // default, an attribute read raises.
                        Val::Bridge | Val::Value(Value::Null) if !attr.starts_with('_') => {
                            if let Some(d) = default {
                                out.extend(self.resolve(frame, d, depth + 1));
                            }
                        }
                        _ => out.push(Val::Unknown(format!("`.{attr}` of a value"))),
                    }
                }
                out
            }
            Sym::Global(name) => self.global(frame, name, depth),
            Sym::Member { value, str_based } => vec![Val::Member(value.clone(), *str_based)],
            Sym::OneOf(xs) => xs
                .iter()
                .flat_map(|x| self.resolve(frame, x, depth + 1))
                .collect(),
            Sym::Choose(cond, a, b) => match self.decide(frame, cond) {
                Tri::True => self.resolve(frame, a, depth + 1),
                Tri::False => self.resolve(frame, b, depth + 1),
                Tri::Maybe => {
                    let mut v = self.resolve(frame, a, depth + 1);
                    v.extend(self.resolve(frame, b, depth + 1));
                    v
                }
            },
            Sym::Str(op, x) => self
                .expand(self.resolve(frame, x, depth + 1))
                .into_iter()
                .filter_map(|v| string_op(*op, v))
                .collect(),
            Sym::Index {
                table,
                key,
                default,
            } => self.index(frame, table, key, default.as_deref(), depth),
            Sym::Dict(_) | Sym::Seq(_) => unknown("a collection".into()),
            Sym::Call(call) => self.returned(frame, call, depth),
            Sym::Unknown(range) => {
                let text = self.text(frame.at, *range);
                unknown(format!("{} computes `{text}`", self.at(frame.at, *range)))
            }
        };
        dedup(&mut out);
        if out.len() > MAX_ALTERNATIVES {
            return unknown("too many values".into());
        }
        out
    }

    /// Takes one step of the bundle's budget; false when it is spent (a
    /// value then reads unknown, which could hide the bridge: the reading
    /// ends opaque, see [`read`]).
    pub(super) fn step(&self) -> bool {
        let left = self.fuel.get();
        self.fuel.set(left.saturating_sub(1));
        left > 0
    }

    /// `vals` with the bound function's parameters replaced by the values
    /// mozaiks may pass them, for computing with them.
    pub(super) fn expand(&self, vals: Vec<Val>) -> Vec<Val> {
        let mut out = Vec::with_capacity(vals.len());
        for v in vals {
            match v {
                Val::EntryParam(i) => match self.entry_values.get(i as usize) {
                    Some(Some(values)) => out.extend(values.iter().cloned().map(Val::Value)),
                    _ => out.push(Val::Unknown(
                        "a parameter whose values mzk does not know".into(),
                    )),
                },
                other => out.push(other),
            }
        }
        out
    }

    /// A module-level name of the frame's module.
    pub(super) fn global(&self, frame: &Frame<'b>, name: &str, depth: usize) -> Vec<Val> {
        match self.defined(frame.at, frame.module, name, 0) {
            Some((at, module, Defined::Value(sym))) => {
                // Module-level values read no parameters.
                let module_frame = Frame {
                    at,
                    module,
                    args: Vec::new(),
                };
                self.resolve(&module_frame, sym, depth + 1)
            }
            _ => vec![Val::Unknown(format!("`{name}`"))],
        }
    }

    /// The function `name` (`helper`, `module.helper`) stands for in a module.
    pub(super) fn function(
        &self,
        at: ModuleRef,
        module: &'b ModuleEffects,
        name: &str,
        depth: usize,
    ) -> Option<(ModuleRef, &'b ModuleEffects, &'b FunctionEffects)> {
        match self.defined(at, module, name, depth)? {
            (at, module, Defined::Function(f)) => Some((at, module, f)),
            _ => None,
        }
    }

    /// What `name` stands for in a module: its own definition, or through
    /// its imports of the bundle's code.
    pub(super) fn defined(
        &self,
        at: ModuleRef,
        module: &'b ModuleEffects,
        name: &str,
        depth: usize,
    ) -> Option<(ModuleRef, &'b ModuleEffects, Defined<'b>)> {
        if depth > MAX_DEPTH {
            return None;
        }
        if let Some(f) = module.function(name) {
            return Some((at, module, Defined::Function(f)));
        }
        if let Some(sym) = module.global(name) {
            return Some((at, module, Defined::Value(sym)));
        }
        let (head, rest) = match name.split_once('.') {
            Some((h, r)) => (h, Some(r)),
            None => (name, None),
        };
        let effects_of =
            |r: ModuleRef| module_of(self.bundle, r).and_then(|m| m.effects.as_deref());
        match (self.bundle.python_links.get(at, head)?, rest) {
            (Link::Name(target, imported), None) => {
                self.defined(*target, effects_of(*target)?, imported, depth + 1)
            }
            (Link::Name(target, imported), Some(rest)) => self.defined(
                *target,
                effects_of(*target)?,
                &format!("{imported}.{rest}"),
                depth + 1,
            ),
            (Link::Module(target), Some(rest)) => {
                self.defined(*target, effects_of(*target)?, rest, depth + 1)
            }
            (Link::Module(_), None) => None,
        }
    }

    /// `table[key]` / `table.get(key, default)` over a literal table.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn index(
        &self,
        frame: &Frame<'b>,
        table: &Sym,
        key: &Sym,
        default: Option<&Sym>,
        depth: usize,
    ) -> Vec<Val> {
        let unknown = |why: &str| vec![Val::Unknown(why.to_string())];
        let (mut table_sym, mut at, mut module) = (table, frame.at, frame.module);
        // Follow module-level names to the literal.
        for _ in 0..MAX_DEPTH {
            match table_sym {
                Sym::Global(name) => match self.defined(at, module, name, 0) {
                    Some((a, m, Defined::Value(s))) => (table_sym, at, module) = (s, a, m),
                    _ => return unknown("a lookup in a table mzk does not read"),
                },
                _ => break,
            }
        }
        let Sym::Dict(items) = table_sym else {
            return unknown("a lookup in a value that is not a literal table");
        };
        let module_frame = Frame {
            at,
            module,
            args: Vec::new(),
        };
        let mut entries: Vec<(Value, &Sym)> = Vec::with_capacity(items.len());
        for (k, v) in items {
            match &self.resolve(&module_frame, k, depth + 1)[..] {
                [Val::Value(k)] | [Val::Member(k, true)] => entries.push((k.clone(), v)),
                _ => return unknown("a table with a key mzk cannot compute"),
            }
        }
        let mut out = Vec::new();
        for k in self.expand(self.resolve(frame, key, depth + 1)) {
            let k = match k {
                Val::Value(k) | Val::Member(k, true) => k,
                _ => return unknown("a lookup with a key mzk cannot compute"),
            };
            // The last entry of equal keys wins, as in a dict display.
            match entries
                .iter()
                .rev()
                .find(|(e, _)| e.hash_key() == k.hash_key())
            {
                Some((_, v)) => out.extend(self.resolve(&module_frame, v, depth + 1)),
                None => {
                    if let Some(d) = default {
                        out.extend(self.resolve(frame, d, depth + 1));
                    }
                    // `table[key]` raises: no value on that path.
                }
            }
        }
        out
    }

    /// What a call of a module function returns.
    pub(super) fn returned(&self, frame: &Frame<'b>, call: &Call, depth: usize) -> Vec<Val> {
        let Some((callee_at, callee_module, callee)) =
            self.function(frame.at, frame.module, &call.callee, 0)
        else {
            return vec![Val::Unknown(format!("what `{}` returns", call.callee))];
        };
        let args = call
            .args
            .iter()
            .map(|a| self.resolve(frame, a, depth + 1))
            .collect();
        let keywords = call
            .keywords
            .iter()
            .map(|(k, v)| (&**k, self.resolve(frame, v, depth + 1)))
            .collect();
        let Some(params) = bind_arguments(callee, args, keywords) else {
            return vec![Val::Unknown(format!("what `{}` returns", call.callee))];
        };
        let inner = Frame {
            at: callee_at,
            module: callee_module,
            args: params,
        };
        let mut out = Vec::new();
        for (when, value) in &callee.returns {
            if self.decide(&inner, when) != Tri::False {
                out.extend(self.resolve(&inner, value, depth + 1));
            }
        }
        out
    }
}

/// What a module definition is.
pub(super) enum Defined<'m> {
    Function(&'m FunctionEffects),
    Value(&'m Sym),
}

/// Whether `sym` may evaluate to the bridge (or a capture holding it) in
/// `frame`: only through a parameter that holds it, since code gets the
/// bridge from nowhere else. A cheap test before resolving a value.
pub(super) fn may_hold_bridge(frame: &Frame<'_>, sym: &Sym) -> bool {
    sym.may_be_param(&|i| {
        frame.args.get(i as usize).is_some_and(|alts| {
            alts.iter()
                .any(|v| matches!(v, Val::Bridge | Val::Capture | Val::Internals))
        })
    })
}

/// Python's `str` methods on a known value; `None` when the call raises.
pub(super) fn string_op(op: StrOp, v: Val) -> Option<Val> {
    let unknown = || {
        Some(Val::Unknown(
            "a string method of a value mzk does not follow".into(),
        ))
    };
    let s = match (&v, op) {
        (Val::Value(Value::Str(s)) | Val::Member(Value::Str(s), true), _) => s.clone(),
        (Val::Value(v), StrOp::Str) => match v {
            Value::Null => "None".to_string(),
            Value::Bool(b) => if *b { "True" } else { "False" }.to_string(),
            Value::Int(i) => i.get().to_string(),
            _ => return unknown(),
        },
        (Val::Value(_), _) => return None, // AttributeError: no value
        _ => return unknown(),
    };
    if !s.is_ascii() {
        return unknown();
    }
    Some(Val::Value(Value::Str(match op {
        StrOp::Str => s,
        StrOp::Lower | StrOp::Casefold => s.to_ascii_lowercase(),
        StrOp::Upper => s.to_ascii_uppercase(),
        StrOp::Strip => s
            .trim_matches(|c: char| c.is_ascii_whitespace() || c == '\x0b')
            .to_string(),
    })))
}

pub(super) fn dedup(vals: &mut Vec<Val>) {
    let mut out: Vec<Val> = Vec::with_capacity(vals.len());
    for v in vals.drain(..) {
        let same = |w: &Val| match (&v, w) {
            (Val::Value(a), Val::Value(b)) => a.hash_key() == b.hash_key() && a == b,
            _ => v == *w,
        };
        if !out.iter().any(same) {
            out.push(v);
        }
    }
    *vals = out;
}

/// Python's argument binding: each parameter's values (a parameter with a
/// default that is not passed is unknown); `None` when the call cannot bind.
pub(super) fn bind_arguments(
    callee: &FunctionEffects,
    args: Vec<Vec<Val>>,
    keywords: Vec<(&str, Vec<Val>)>,
) -> Option<Vec<Vec<Val>>> {
    let mut params: Vec<Option<Vec<Val>>> = vec![None; callee.params.len()];
    if args.len() > callee.positional {
        return None;
    }
    for (i, a) in args.into_iter().enumerate() {
        params[i] = Some(a);
    }
    for (name, v) in keywords {
        match callee.param(name) {
            Some(i) if params[i as usize].is_none() => params[i as usize] = Some(v),
            Some(_) => return None,
            None if callee.var_keyword => {
                // Kept in `**kwargs`, which this reader does not follow.
                if v.iter()
                    .any(|x| matches!(x, Val::Bridge | Val::Capture | Val::Internals))
                {
                    return None;
                }
            }
            None => return None,
        }
    }
    Some(
        params
            .into_iter()
            .enumerate()
            .map(|(i, p)| {
                p.unwrap_or_else(|| {
                    vec![Val::Unknown(format!(
                        "the default of `{}`",
                        callee.params[i]
                    ))]
                })
            })
            .collect(),
    )
}
