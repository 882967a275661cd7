//! The schema layer: one declarative description per bundle file kind (every
//! key, its value kind, default, documentation and cross-field rules) and the
//! validator that applies it to a YAML tree exactly as mozaiks 0.2.0's Pydantic
//! contracts do. This description is the single source for validation,
//! completion, hover and JSON Schema export: no other code lists keys.

pub mod files;
mod kinds;
mod normalized;
mod validate;

pub use files::{file_schema, TOOL_TYPES};
pub use kinds::{reserved_context_name, Default, Kind, ListKind, TextKind};
pub use normalized::{Item, Norm, Obj, ObjField};
pub use validate::validate_file;

use crate::base::TextRange;

/// One mapping shape (a Pydantic model with `extra="forbid"`).
#[derive(Debug)]
pub struct Object {
    /// The reference's model name, for messages and docs.
    pub name: &'static str,
    pub doc: &'static str,
    pub fields: &'static [Field],
    /// Keys the reference rejects that authors still write, with what to do instead.
    pub legacy: &'static [(&'static str, &'static str)],
    /// Cross-field rules, run on the validated object.
    pub rules: &'static [ObjectRule],
}

/// A cross-field rule: gets the validated object and reports through the context.
pub type ObjectRule = fn(&Obj, &mut RuleContext<'_>);

#[derive(Debug)]
pub struct Field {
    pub name: &'static str,
    /// Other spellings the reference accepts (`schema` for `entity_schema`).
    pub alias: Option<&'static str>,
    pub kind: Kind,
    pub required: bool,
    pub default: Default,
    pub doc: &'static str,
    /// What the value names, for completion and navigation.
    pub refers: Refers,
}

/// What a field's value names. Completion offers these names; the key itself
/// is never listed anywhere else.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refers {
    Nothing,
    /// Agents; `user` and `terminate` where the reserved names are allowed.
    Agent {
        user: bool,
        terminate: bool,
    },
    /// Declared context variables.
    Variable,
    /// Structured-output definitions; `primitives` adds `str`, `int` …
    Model {
        primitives: bool,
    },
    /// A Python function of the bundle.
    Function,
}

impl Field {
    /// The same field, naming `refers`.
    pub const fn refers(self, refers: Refers) -> Field {
        Field { refers, ..self }
    }

    /// What the value names; a registry's values are model names.
    pub fn references(&self) -> Refers {
        match self.kind {
            Kind::Registry => Refers::Model { primitives: false },
            _ => self.refers,
        }
    }
}

impl Object {
    pub fn field(&self, key: &str) -> Option<&'static Field> {
        self.fields
            .iter()
            .find(|f| f.name == key || f.alias == Some(key))
    }
}

/// What a cross-field rule may use to report.
pub struct RuleContext<'a> {
    pub file: crate::base::FileId,
    pub out: &'a mut Vec<crate::diagnostics::Diagnostic>,
    /// The range that stands for the whole object (its first key, or the item).
    pub anchor: TextRange,
}

impl RuleContext<'_> {
    pub fn report(
        &mut self,
        rule: crate::rules::Rule,
        range: TextRange,
        message: impl Into<String>,
    ) {
        self.out.push(crate::diagnostics::Diagnostic::new(
            rule, self.file, range, message,
        ));
    }
}
