//! What a Python module's functions do with their parameters, read from the
//! syntax tree once per module text: the context writes through a parameter
//! (`p.set(key, value)`), the calls that hand a parameter on, the uses of a
//! parameter that cannot be followed, and what each function returns, with
//! every value written in terms of the function's parameters, the module's
//! names and constants (a [`Sym`]).
//!
//! Which parameter holds mozaiks' context bridge is not known here: it
//! depends on how the bundle binds the function. `model::writes` decides it
//! and follows the effects through helpers; this layer only reads the module.
//! Locals are followed in statement order (both branches of an `if`, every
//! `case` of a `match`, loops and handlers as "maybe"); a value this reader
//! does not understand is [`Sym::Unknown`] at its range, never a guess.

mod function;
mod module;
mod names;

pub use module::read;

use std::sync::Arc;

use super::Value;
use crate::base::TextRange;

/// The methods of mozaiksai's `ContextVariablesBridge` (`hasattr(x, name)`
/// holds of it).
pub const BRIDGE_METHODS: &[&str] = &[
    "get", "set", "pop", "delete", "keys", "items", "values", "to_dict", "snapshot",
];
/// Those that only read.
pub const BRIDGE_READ_METHODS: &[&str] = &["get", "keys", "items", "values", "to_dict", "snapshot"];

/// A parameter's position in [`FunctionEffects::params`].
pub type ParamIx = u16;

/// A value as a function computes it.
#[derive(Debug, Clone, PartialEq)]
pub enum Sym {
    Const(Value),
    /// The parameter, as passed (never reassigned before this point).
    Param(ParamIx),
    /// An attribute of a value: `capture.context_variables`, or
    /// `getattr(x, "name", default)` (then the default is kept).
    Attr {
        base: Arc<Sym>,
        attr: Box<str>,
        default: Option<Arc<Sym>>,
    },
    /// A module-level name, dotted as written (`STATUS`, `Verdict.DONE`,
    /// `Verdict.DONE.value`, `constants.DONE`).
    Global(Box<str>),
    /// A member of an `Enum` class of the module: its value, and whether the
    /// class derives from `str` (then the member is equal to its value and
    /// stored as it).
    Member {
        value: Value,
        str_based: bool,
    },
    /// One of these, depending on a path not decided here.
    OneOf(Vec<Sym>),
    /// `a if test else b`.
    Choose(Arc<Cond>, Arc<Sym>, Arc<Sym>),
    /// `str(x)`, `x.lower()`, `x.strip()`, …
    Str(StrOp, Arc<Sym>),
    /// `table[key]` (no default: a missing key raises) or
    /// `table.get(key, default)`.
    Index {
        table: Arc<Sym>,
        key: Arc<Sym>,
        default: Option<Arc<Sym>>,
    },
    Dict(Vec<(Sym, Sym)>),
    Seq(Vec<Sym>),
    /// What a call of a module-level (or imported) function returns.
    Call(Arc<Call>),
    /// Not understood; the range says what.
    Unknown(TextRange),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StrOp {
    Str,
    Lower,
    Upper,
    Strip,
    Casefold,
}

impl Sym {
    /// Whether the value may be one of the parameters `is` picks (the
    /// object itself, or `param.attribute` such as the capture's bridge):
    /// through an alias, a branch, or a helper it is handed to, which may
    /// return it. Items, string results, constants and module names are not.
    pub fn may_be_param(&self, is: &impl Fn(ParamIx) -> bool) -> bool {
        match self {
            Sym::Param(i) => is(*i),
            Sym::Attr { base, .. } => base.may_be_param(is),
            Sym::OneOf(xs) => xs.iter().any(|x| x.may_be_param(is)),
            Sym::Choose(_, a, b) => a.may_be_param(is) || b.may_be_param(is),
            Sym::Call(c) => c
                .args
                .iter()
                .chain(c.keywords.iter().map(|(_, v)| v))
                .any(|x| x.may_be_param(is)),
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
}

/// A condition on the path to an effect.
#[derive(Debug, Clone, PartialEq)]
pub enum Cond {
    /// The value is an object and not `None`: `x is not None`, `x`,
    /// `hasattr(x, "set")` (true of the bridge; decided once the value is
    /// known to be the bridge or `None`).
    Present(Sym),
    /// `isinstance(x, dict)` (or `Mapping`, `MutableMapping`): false of the
    /// bridge and of `None`.
    IsMapping(Sym),
    Not(Arc<Cond>),
    And(Vec<Cond>),
    Or(Vec<Cond>),
    /// Anything else: may hold or not.
    Opaque,
}

impl Cond {
    pub const ALWAYS: Cond = Cond::And(Vec::new());

    pub(crate) fn and(mut parts: Vec<Cond>) -> Cond {
        parts.retain(|c| *c != Cond::ALWAYS);
        if parts.len() == 1 {
            return parts.pop().unwrap_or(Cond::ALWAYS);
        }
        Cond::And(parts)
    }
}

/// A call of a function by name, with its arguments.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    /// The callee as written: `helper`, `module.helper`.
    pub callee: Box<str>,
    pub args: Vec<Sym>,
    pub keywords: Vec<(Box<str>, Sym)>,
    pub range: TextRange,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteKind {
    /// `set(key, value)`, `bridge[key] = value`.
    Set,
    /// `pop(key)`, `delete(key)`: the key reads null afterwards.
    Remove,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// A write through `recv` (a write only when `recv` is the bridge).
    Write {
        recv: Sym,
        kind: WriteKind,
        key: Sym,
        value: Sym,
        when: Cond,
        /// The key argument (the whole call when there is none).
        range: TextRange,
    },
    /// A call some of whose arguments come from parameters.
    Invoke { call: Call, when: Cond },
    /// `recv` used in a way not followed (stored, returned, subscripted, an
    /// unknown method, handed to something that is not a function by name).
    Escape {
        recv: Sym,
        what: Box<str>,
        range: TextRange,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub struct FunctionEffects {
    pub name: Box<str>,
    /// Positional parameters first (`positional` of them), then keyword-only.
    pub params: Vec<Box<str>>,
    pub positional: usize,
    /// `**kwargs`: extra keywords go there.
    pub var_keyword: bool,
    pub effects: Vec<Effect>,
    /// What it returns, each value with the condition it is returned under
    /// (`None` at the end of a body that falls through).
    pub returns: Vec<(Cond, Sym)>,
}

impl FunctionEffects {
    pub fn param(&self, name: &str) -> Option<ParamIx> {
        self.params
            .iter()
            .position(|p| &**p == name)
            .map(|i| i as ParamIx)
    }
}

/// `from module import name as local` / `import module as local`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Import {
    pub local: Box<str>,
    /// Dotted, without the leading dots of a relative import.
    pub module: Box<str>,
    /// Leading dots (0 for an absolute import).
    pub level: u32,
    /// The imported name (`None` for `import module`).
    pub name: Option<Box<str>>,
}

/// What a module's top-level functions do, and the module-level names they
/// may read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModuleEffects {
    pub functions: Vec<FunctionEffects>,
    /// Module-level constants, tables and `Enum` members (`Verdict.DONE`),
    /// bound once; a name bound twice or in a way not understood is absent.
    pub globals: Vec<(Box<str>, Sym)>,
    pub imports: Vec<Import>,
}

// Module texts are compared for reuse; the float inside a constant never
// needs Eq's reflexivity there.
impl Eq for ModuleEffects {}

impl ModuleEffects {
    /// The last top-level `def` of that name (the one Python keeps).
    pub fn function(&self, name: &str) -> Option<&FunctionEffects> {
        self.functions.iter().rev().find(|f| &*f.name == name)
    }

    pub fn global(&self, name: &str) -> Option<&Sym> {
        self.globals
            .iter()
            .find(|(n, _)| &**n == name)
            .map(|(_, s)| s)
    }

    pub fn import(&self, local: &str) -> Option<&Import> {
        self.imports.iter().rev().find(|i| &*i.local == local)
    }
}

#[cfg(test)]
mod tests;
