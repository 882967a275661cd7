//! The context writes of the bundle's Python code, followed as mozaiks runs
//! it: from each bound function, with the bridge mozaiks injects
//! (runtime-semantics §5: a tool's or lifecycle tool's `context_variables`
//! parameter, a middleware's `capture.context_variables`), through the
//! helpers of the same module it hands the bridge to, with the values passed
//! in. The guards real tools write (`if context_variables is not None`,
//! `hasattr(…, "set")`, an early `return` when it is missing) hold, since
//! mozaiks always passes the bridge.
//!
//! Anything that could write a key this reader does not see — the bridge
//! handed to code it does not read, kept in an object, used through an
//! unknown method, a key it cannot compute — makes the reading *opaque*:
//! from then on no key that Python code may write has a known set of values.

use super::auto_tool_args::param_values;
use super::python::{BindingOwner, BindingTarget};
use super::python_imports::{module_of, Link, ModuleRef};
use super::Bundle;
use crate::diagnostics::FileId;
use crate::hash::HashMap;
use crate::syntax::python_effects::{
    Call, Cond, Effect, FunctionEffects, ModuleEffects, ParamIx, StrOp, Sym, WriteKind,
    BRIDGE_METHODS, BRIDGE_READ_METHODS,
};
use crate::syntax::{TextRange, Value};

/// What one write puts under its key.
#[derive(Debug, Clone, PartialEq)]
pub enum Written {
    /// A constant (`"approved"`, `True`, `3`, `None`); `pop`/`delete` write null.
    Const(Value),
    /// A parameter of the bound function, as mozaiks passes it.
    Param { function: String, param: String },
    /// Anything else: why its value is not known.
    Other(String),
}

#[derive(Debug, Clone)]
pub struct Write {
    /// Where the write is written (the bound function's module or a
    /// helper's): "`tools/x.py` line 12".
    pub at: String,
    pub value: Written,
    /// The bound function whose call makes it, and its module.
    pub entry_file: FileId,
    pub function: String,
    /// It runs on every call of the bound function that does not fail first.
    pub unconditional: bool,
}

/// The writes of the bundle's Python code.
#[derive(Debug, Clone, Default)]
pub struct PythonWrites {
    /// Why some code may write keys that cannot be followed (a file, a line).
    pub opaque: Option<String>,
    /// Key → its writes.
    pub writes: HashMap<String, Vec<Write>>,
}

/// Helpers followed at most this deep.
const MAX_DEPTH: usize = 8;
/// Steps of following (resolving a value, entering a function) per bundle.
const MAX_STEPS: u32 = 200_000;
/// Most values one expression is followed with.
const MAX_ALTERNATIVES: usize = 64;

/// Reads the writes of every bound function.
pub fn read(bundle: &Bundle) -> PythonWrites {
    let mut reader = Reader {
        bundle,
        out: PythonWrites::default(),
        seen: Vec::new(),
        entry_values: Vec::new(),
        fuel: std::cell::Cell::new(MAX_STEPS),
    };
    for binding in &bundle.bindings {
        let (BindingTarget::File(file), Some(function)) = (&binding.target, &binding.function)
        else {
            continue;
        };
        let Some(py) = bundle.python.iter().find(|p| p.file == *file) else {
            continue;
        };
        let relative = bundle.file(*file).map_or("?", |f| f.relative.as_str());
        let Some(effects) = &py.module.effects else {
            reader.opaque(format!("`{relative}` could not be read"));
            break;
        };
        let Some(f) = effects.function(&function.text) else {
            continue;
        };
        // The argument that carries the bridge.
        let bridge = match binding.owner {
            BindingOwner::Tool(_) | BindingOwner::Lifecycle(_) => {
                f.param("context_variables").map(|i| (i, Val::Bridge))
            }
            BindingOwner::Middleware(_) => (f.positional > 0).then_some((0, Val::Capture)),
        };
        let Some((at, carrier)) = bridge else {
            continue;
        };
        let key = (*file, function.text.clone(), at);
        if reader.seen.contains(&key) {
            continue;
        }
        reader.seen.push(key);
        let args = (0..f.params.len())
            .map(|i| {
                if i == at as usize {
                    vec![carrier.clone()]
                } else {
                    vec![Val::EntryParam(i as ParamIx)]
                }
            })
            .collect();
        reader.entry_values = f
            .params
            .iter()
            .map(|p| match param_values(bundle, *file, &function.text, p) {
                Ok((values, _, false)) => Some(values),
                _ => None,
            })
            .collect();
        let entry = Entry {
            file: *file,
            function: f,
        };
        let frame = Frame {
            at: ModuleRef::Bound(*file),
            module: effects,
            args,
        };
        reader.visit(&entry, &frame, f, true, &mut Vec::new());
        if reader.fuel.get() == 0 {
            reader.opaque(format!(
                "`{relative}`: `{}` reaches more code than mzk follows",
                function.text
            ));
        }
        if reader.out.opaque.is_some() {
            break;
        }
    }
    reader.out
}

/// A value an expression may have.
#[derive(Debug, Clone, PartialEq)]
enum Val {
    Value(Value),
    /// A member of a module's `Enum`: its value, and whether it is a `str`.
    Member(Value, bool),
    /// mozaiks' context bridge.
    Bridge,
    /// A middleware's capture object: its `context_variables` is the bridge.
    Capture,
    /// A parameter of the bound function, as mozaiks passes it.
    EntryParam(ParamIx),
    /// A part of the bridge that writes when used (`set` as a value, a
    /// private attribute): any use of it is not followed.
    Internals,
    /// Not known: why, and where.
    Unknown(String),
}

struct Entry<'m> {
    file: FileId,
    function: &'m FunctionEffects,
}

/// A function being followed: its module and what each parameter holds.
struct Frame<'m> {
    at: ModuleRef,
    module: &'m ModuleEffects,
    args: Vec<Vec<Val>>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Tri {
    True,
    False,
    Maybe,
}

struct Reader<'b> {
    bundle: &'b Bundle,
    out: PythonWrites,
    seen: Vec<(FileId, String, ParamIx)>,
    /// The values mozaiks may pass to each parameter of the bound function
    /// being followed, where they are a known set (an auto tool's literal
    /// fields): what a lookup or a string method computes from.
    entry_values: Vec<Option<Vec<Value>>>,
    /// Steps left for the whole bundle: a call graph that fans out (a
    /// helper calling helpers, each returning one of several calls) is
    /// followed this far and no further.
    fuel: std::cell::Cell<u32>,
}

impl<'b> Reader<'b> {
    fn opaque(&mut self, why: String) {
        self.out.opaque.get_or_insert(why);
    }

    fn at(&self, module: ModuleRef, range: TextRange) -> String {
        place(self.bundle, module, range)
    }

    fn text(&self, module: ModuleRef, range: TextRange) -> String {
        source_of(self.bundle, module)
            .and_then(|(_, text, _)| text.get(range.start as usize..range.end as usize))
            .map_or_else(String::new, |t| {
                let t = t.split_whitespace().collect::<Vec<_>>().join(" ");
                if t.chars().count() > 60 {
                    format!("{}…", t.chars().take(60).collect::<String>())
                } else {
                    t
                }
            })
    }

    /// Follows the effects of `f` run in `frame`; `certain` when the call
    /// that got here happens on every call of the bound function.
    fn visit(
        &mut self,
        entry: &Entry<'b>,
        frame: &Frame<'b>,
        f: &'b FunctionEffects,
        certain: bool,
        stack: &mut Vec<(ModuleRef, *const FunctionEffects)>,
    ) {
        if stack.len() > MAX_DEPTH {
            self.opaque(format!(
                "{} hands the context on more than {MAX_DEPTH} calls deep",
                self.at(frame.at, TextRange::new(0, 0))
            ));
            return;
        }
        if !self.step() {
            self.opaque(format!(
                "{} hands the context through more code than mzk follows",
                self.at(frame.at, TextRange::new(0, 0))
            ));
            return;
        }
        stack.push((frame.at, f as *const _));
        for effect in &f.effects {
            if self.out.opaque.is_some() {
                break;
            }
            match effect {
                Effect::Write {
                    recv,
                    kind,
                    key,
                    value,
                    when,
                    range,
                } => self.write(entry, frame, recv, *kind, key, value, when, *range, certain),
                Effect::Invoke { call, when } => {
                    self.invoke(entry, frame, call, when, certain, stack)
                }
                Effect::Escape { recv, what, range } => {
                    if !may_hold_bridge(frame, recv) {
                        continue;
                    }
                    let alts = self.resolve(frame, recv, 0);
                    // The capture's other attributes and methods are its own
                    // (mozaiks 0.2.0's `_PromptCapture`: `name`,
                    // `system_message`, `update_system_message`): using
                    // them leaves the bridge where it is.
                    let capture_attribute =
                        matches!(&**what, "reads an attribute of" | "sets an attribute of")
                            || what.starts_with("calls `.");
                    if alts.iter().any(|v| match v {
                        Val::Bridge | Val::Internals => true,
                        Val::Capture => !capture_attribute,
                        _ => false,
                    }) {
                        let text = self.text(frame.at, *range);
                        self.opaque(format!(
                            "{} {what} the context (`{text}`)",
                            self.at(frame.at, *range)
                        ));
                    }
                }
            }
        }
        stack.pop();
    }

    #[allow(clippy::too_many_arguments)]
    fn write(
        &mut self,
        entry: &Entry<'b>,
        frame: &Frame<'b>,
        recv: &Sym,
        kind: WriteKind,
        key: &Sym,
        value: &Sym,
        when: &Cond,
        range: TextRange,
        certain: bool,
    ) {
        if !may_hold_bridge(frame, recv) {
            return;
        }
        let recv = self.resolve(frame, recv, 0);
        if !recv
            .iter()
            .any(|v| matches!(v, Val::Bridge | Val::Internals))
        {
            return;
        }
        if !recv
            .iter()
            .all(|v| matches!(v, Val::Bridge | Val::Value(Value::Null)))
        {
            self.opaque(format!(
                "{} writes through a value that may be the context",
                self.at(frame.at, range)
            ));
            return;
        }
        let when = self.decide(frame, when);
        if when == Tri::False {
            return;
        }
        let unconditional = certain && when == Tri::True && recv.iter().all(|v| *v == Val::Bridge);
        let mut keys = Vec::new();
        for k in self.resolve(frame, key, 0) {
            match k {
                // The bridge strips its keys.
                Val::Value(Value::Str(s)) | Val::Member(Value::Str(s), true) => {
                    keys.push(s.trim().to_string())
                }
                _ => {
                    let text = self.text(frame.at, range);
                    self.opaque(format!(
                        "{} writes a key mzk cannot compute (`{text}`)",
                        self.at(frame.at, range)
                    ));
                    return;
                }
            }
        }
        // Only declared variables have domains: the values written under
        // other keys (refused at run time, MZ509) are not computed.
        if !keys.iter().any(|k| self.bundle.variable(k).is_some()) {
            return;
        }
        let values: Vec<Written> = match kind {
            WriteKind::Remove => vec![Written::Const(Value::Null)],
            WriteKind::Set => self
                .resolve(frame, value, 0)
                .into_iter()
                .map(|v| match v {
                    Val::Value(v) | Val::Member(v, true) => Written::Const(v),
                    Val::EntryParam(i) => Written::Param {
                        function: entry.function.name.to_string(),
                        param: entry.function.params[i as usize].to_string(),
                    },
                    Val::Unknown(why) => Written::Other(why),
                    Val::Member(..) => Written::Other("an `Enum` member".into()),
                    Val::Bridge | Val::Capture | Val::Internals => {
                        Written::Other("the context itself".into())
                    }
                })
                .collect(),
        };
        let at = self.at(frame.at, range);
        for key in keys {
            let list = self.out.writes.entry(key).or_default();
            for v in &values {
                list.push(Write {
                    at: at.clone(),
                    value: v.clone(),
                    entry_file: entry.file,
                    function: entry.function.name.to_string(),
                    unconditional,
                });
            }
        }
    }

    fn invoke(
        &mut self,
        entry: &Entry<'b>,
        frame: &Frame<'b>,
        call: &Call,
        when: &Cond,
        certain: bool,
        stack: &mut Vec<(ModuleRef, *const FunctionEffects)>,
    ) {
        if !call
            .args
            .iter()
            .chain(call.keywords.iter().map(|(_, v)| v))
            .any(|a| may_hold_bridge(frame, a))
        {
            return;
        }
        let args: Vec<Vec<Val>> = call
            .args
            .iter()
            .map(|a| self.resolve(frame, a, 0))
            .collect();
        let keywords: Vec<(&str, Vec<Val>)> = call
            .keywords
            .iter()
            .map(|(k, v)| (&**k, self.resolve(frame, v, 0)))
            .collect();
        let carries = args
            .iter()
            .chain(keywords.iter().map(|(_, v)| v))
            .flatten()
            .any(|v| matches!(v, Val::Bridge | Val::Capture | Val::Internals));
        if !carries {
            return;
        }
        let when = self.decide(frame, when);
        if when == Tri::False {
            return;
        }
        let Some((callee_at, callee_module, callee)) =
            self.function(frame.at, frame.module, &call.callee, 0)
        else {
            self.opaque(format!(
                "{} hands the context to `{}`, which mzk does not read",
                self.at(frame.at, call.range),
                call.callee
            ));
            return;
        };
        if stack.contains(&(callee_at, callee as *const _)) {
            return; // recursion: its effects are being followed already
        }
        let Some(params) = bind_arguments(callee, args, keywords) else {
            self.opaque(format!(
                "{} hands the context to `{}` with arguments mzk cannot match to its parameters",
                self.at(frame.at, call.range),
                call.callee
            ));
            return;
        };
        let inner = Frame {
            at: callee_at,
            module: callee_module,
            args: params,
        };
        self.visit(entry, &inner, callee, certain && when == Tri::True, stack);
    }

    fn decide(&self, frame: &Frame<'b>, cond: &Cond) -> Tri {
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
    fn resolve(&self, frame: &Frame<'b>, sym: &Sym, depth: usize) -> Vec<Val> {
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
    fn step(&self) -> bool {
        let left = self.fuel.get();
        self.fuel.set(left.saturating_sub(1));
        left > 0
    }

    /// `vals` with the bound function's parameters replaced by the values
    /// mozaiks may pass them, for computing with them.
    fn expand(&self, vals: Vec<Val>) -> Vec<Val> {
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
    fn global(&self, frame: &Frame<'b>, name: &str, depth: usize) -> Vec<Val> {
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
    fn function(
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
    fn defined(
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
    fn index(
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
    fn returned(&self, frame: &Frame<'b>, call: &Call, depth: usize) -> Vec<Val> {
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
enum Defined<'m> {
    Function(&'m FunctionEffects),
    Value(&'m Sym),
}

/// A module's path (relative to the bundle), text and line index.
fn source_of(
    bundle: &Bundle,
    module: ModuleRef,
) -> Option<(&str, &str, &crate::syntax::LineIndex)> {
    match module {
        ModuleRef::Bound(id) => bundle
            .file(id)
            .map(|f| (f.relative.as_str(), &*f.text, &f.line_index)),
        ModuleRef::Imported(i) => bundle
            .imported_python
            .get(i)
            .map(|m| (m.relative.as_str(), &*m.text, &m.line_index)),
    }
}

/// "`tools/x.py` line 12": where a write or a value is written.
fn place(bundle: &Bundle, module: ModuleRef, range: TextRange) -> String {
    match source_of(bundle, module) {
        Some((relative, text, lines)) => {
            let p = lines.position(text, range.start, crate::syntax::ColumnUnit::Char);
            format!("`{relative}` line {}", p.line + 1)
        }
        None => "Python code".to_string(),
    }
}

/// Whether `sym` may evaluate to the bridge (or a capture holding it) in
/// `frame`: only through a parameter that holds it, since code gets the
/// bridge from nowhere else. A cheap test before resolving a value.
fn may_hold_bridge(frame: &Frame<'_>, sym: &Sym) -> bool {
    match sym {
        Sym::Param(i) => frame.args.get(*i as usize).is_some_and(|alts| {
            alts.iter()
                .any(|v| matches!(v, Val::Bridge | Val::Capture | Val::Internals))
        }),
        Sym::Attr { base, .. } => may_hold_bridge(frame, base),
        Sym::OneOf(xs) => xs.iter().any(|x| may_hold_bridge(frame, x)),
        Sym::Choose(_, a, b) => may_hold_bridge(frame, a) || may_hold_bridge(frame, b),
        // A helper can only return the bridge it is handed.
        Sym::Call(c) => c
            .args
            .iter()
            .chain(c.keywords.iter().map(|(_, v)| v))
            .any(|x| may_hold_bridge(frame, x)),
        // Items, string results, constants and module names are not the
        // bridge (storing it anywhere is an escape of its own).
        Sym::Const(_)
        | Sym::Global(_)
        | Sym::Member { .. }
        | Sym::Str(..)
        | Sym::Index { .. }
        | Sym::Dict(_)
        | Sym::Seq(_)
        | Sym::Unknown(_) => false,
    }
}

/// Python's `str` methods on a known value; `None` when the call raises.
fn string_op(op: StrOp, v: Val) -> Option<Val> {
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

fn dedup(vals: &mut Vec<Val>) {
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
fn bind_arguments(
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

#[cfg(test)]
mod tests;
