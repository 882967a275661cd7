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

use values::{bind_arguments, may_hold_bridge};

use super::auto_tool_args::param_values;
use super::python::{BindingOwner, BindingTarget};
use super::python_imports::ModuleRef;
use super::Bundle;
use crate::base::hash::HashMap;
use crate::base::{FileId, TextRange};
use crate::syntax::python_effects::{
    Call, Cond, Effect, FunctionEffects, ModuleEffects, ParamIx, Sym, WriteKind,
};
use crate::syntax::Value;

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
pub(super) const MAX_DEPTH: usize = 8;
/// Steps of following (resolving a value, entering a function) per bundle.
const MAX_STEPS: u32 = 200_000;
/// Most values one expression is followed with.
pub(super) const MAX_ALTERNATIVES: usize = 64;

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
pub(super) enum Val {
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
pub(super) struct Frame<'m> {
    at: ModuleRef,
    module: &'m ModuleEffects,
    args: Vec<Vec<Val>>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Tri {
    True,
    False,
    Maybe,
}

pub(super) struct Reader<'b> {
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

mod values;

#[cfg(test)]
mod tests;
