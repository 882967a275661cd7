//! What the validator gives the model layer: each valid value normalised as
//! mozaiks' Pydantic models hold it, with where it was written.

use super::kinds::Default;
use super::Object;
use crate::base::TextRange;
use crate::syntax::{Integer, Node};

/// A normalised value.
#[derive(Debug, Clone, PartialEq)]
pub enum Norm {
    Null,
    Bool(bool),
    Int(Integer),
    Float(f64),
    Str(String),
    /// A list of normalised items (strings of a string list, objects of an object list).
    List(Vec<Item>),
    /// A mapping from names to items (definitions, models, registry …).
    Map(Vec<(Item, Item)>),
    Obj(Obj),
    /// A value kept exactly as YAML produced it (`any`, free mappings).
    Any(Node),
}

/// A normalised value with where it was written.
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    pub range: TextRange,
    pub value: Norm,
}

impl Item {
    pub fn as_str(&self) -> Option<&str> {
        match &self.value {
            Norm::Str(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_obj(&self) -> Option<&Obj> {
        match &self.value {
            Norm::Obj(o) => Some(o),
            _ => None,
        }
    }

    pub fn as_list(&self) -> &[Item] {
        match &self.value {
            Norm::List(items) => items,
            _ => &[],
        }
    }

    pub fn as_map(&self) -> &[(Item, Item)] {
        match &self.value {
            Norm::Map(entries) => entries,
            _ => &[],
        }
    }

    pub fn is_null(&self) -> bool {
        matches!(self.value, Norm::Null)
    }
}

/// A validated object: the fields that were present and valid, in source order.
#[derive(Debug, Clone)]
pub struct Obj {
    pub shape: &'static Object,
    /// The whole mapping.
    pub range: TextRange,
    /// Where to point for "missing key" and whole-object problems.
    pub anchor: TextRange,
    pub fields: Vec<ObjField>,
}

impl PartialEq for Obj {
    fn eq(&self, other: &Obj) -> bool {
        std::ptr::eq(self.shape, other.shape)
            && self.range == other.range
            && self.fields == other.fields
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct ObjField {
    pub name: &'static str,
    pub key_range: TextRange,
    pub item: Item,
}

impl Obj {
    /// Every accessor reads through here. A key that is not in the shape's
    /// description (a typo, a renamed key, an alias: values are stored under
    /// the canonical name) would silently read as absent, so debug builds
    /// stop at once; the fixture and real-bundle tests run every read.
    pub fn field(&self, name: &str) -> Option<&ObjField> {
        debug_assert!(
            self.shape.fields.iter().any(|f| f.name == name),
            "`{name}` is not a key of {} in the schema",
            self.shape.name
        );
        self.fields.iter().find(|f| f.name == name)
    }

    /// The item written for `name` (present and valid).
    pub fn get(&self, name: &str) -> Option<&Item> {
        self.field(name).map(|f| &f.item)
    }

    /// The key's range when written, else the object's anchor.
    pub fn key_range(&self, name: &str) -> TextRange {
        self.field(name).map_or(self.anchor, |f| f.key_range)
    }

    /// The value's range when written, else the object's anchor.
    pub fn value_range(&self, name: &str) -> TextRange {
        self.get(name).map_or(self.anchor, |i| i.range)
    }

    /// A non-null string value.
    pub fn str(&self, name: &str) -> Option<&str> {
        self.get(name).and_then(Item::as_str)
    }

    /// A bool value, or the schema default.
    pub fn bool(&self, name: &str) -> Option<bool> {
        match self.get(name).map(|i| &i.value) {
            Some(Norm::Bool(b)) => Some(*b),
            Some(_) => None,
            None => match self.shape.field(name).map(|f| f.default) {
                Some(Default::Bool(b)) => Some(b),
                _ => None,
            },
        }
    }

    /// An int value, or the schema default.
    pub fn int(&self, name: &str) -> Option<i128> {
        match self.get(name).map(|i| &i.value) {
            Some(Norm::Int(n)) => Some(n.get()),
            Some(_) => None,
            None => match self.shape.field(name).map(|f| f.default) {
                Some(Default::Int(n)) => Some(n as i128),
                _ => None,
            },
        }
    }

    pub fn obj(&self, name: &str) -> Option<&Obj> {
        self.get(name).and_then(Item::as_obj)
    }

    pub fn list(&self, name: &str) -> &[Item] {
        self.get(name).map_or(&[], Item::as_list)
    }

    pub fn map(&self, name: &str) -> &[(Item, Item)] {
        self.get(name).map_or(&[], Item::as_map)
    }

    /// True when the field is written with a non-null value.
    pub fn has(&self, name: &str) -> bool {
        self.get(name).is_some_and(|i| !i.is_null())
    }
}
