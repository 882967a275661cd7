//! Value kinds: how one field accepts, rejects or normalises a YAML value
//! (../spec/scalar-coercion.md §7, measured on mozaiks 0.2.0).

use super::Object;

/// Text field behaviours.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextKind {
    /// `text.req`: a string, stripped, non-empty.
    Required,
    /// `text.opt`: null stays null; anything else goes through Python `str()`,
    /// stripped, blank becomes null. Never rejects.
    Optional,
    /// `text.opt-req`: null stays null; otherwise as `Required`.
    OptionalRequired,
    /// `text.exact-name`: a string, non-empty, no surrounding whitespace.
    ExactName,
    /// `text.min1`: a string of length ≥ 1, kept verbatim.
    Min1,
}

/// List field behaviours.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListKind {
    /// `list.clean`: strings, stripped, blanks and duplicates dropped.
    Clean {
        nullable: bool,
        empty_to_null: bool,
        non_empty: bool,
        reserved: bool,
    },
    /// `list.raw`: strings kept verbatim.
    Raw,
    /// `list.exact`: strings, blank/padded/duplicate items rejected.
    Exact { non_empty: bool },
    /// `list.any`: anything, kept.
    Any { nullable: bool, non_empty: bool },
    /// `list.dict`: mappings with string keys.
    Dicts { nullable: bool },
}

/// The kind of a field's value.
#[derive(Debug, Clone, Copy)]
pub enum Kind {
    Text(TextKind),
    /// `enum.exact` / `enum.exact?`: case-sensitive, unstripped.
    Enum {
        values: &'static [&'static str],
        nullable: bool,
    },
    /// `enum.folded`: `tool_type`: `str()`, strip, lower, `-`→`_`.
    ToolType {
        nullable: bool,
    },
    /// `enum.lower?`: `condition_type`.
    LowerEnum {
        values: &'static [&'static str],
    },
    /// `enum.catalog?`: UI catalogue ids (stripped, case-sensitive, nullable).
    Catalog {
        values: &'static [&'static str],
    },
    /// `enum.int1`: task_batches `version` — the integer 1 (not a string).
    VersionOne,
    /// Lax bool.
    Bool {
        nullable: bool,
    },
    /// Lax int with bounds; `strict` accepts only YAML ints.
    Int {
        min: Option<i64>,
        max: Option<i64>,
        nullable: bool,
        strict: bool,
    },
    /// Lax float with a lower bound.
    Float {
        min: f64,
    },
    List(ListKind),
    /// Writer ids and similar: every item one of `values`.
    EnumList {
        values: &'static [&'static str],
        dedupe: bool,
    },
    /// ToolSpec `agent`: a string or a list of strings.
    StrOrList,
    /// A free mapping with string keys.
    Dict {
        nullable: bool,
    },
    /// `payload_schema`: anything that is not a non-empty mapping is replaced.
    DictOrDefault,
    /// Kept exactly as YAML produced it.
    Any,
    /// A nested object. `nullable`: `null` allowed; otherwise required or defaulted.
    Object {
        shape: &'static Object,
        nullable: bool,
    },
    /// A list of objects.
    ObjectList(&'static Object),
    /// A mapping from names to objects.
    ObjectMap {
        shape: &'static Object,
        key: KeyKind,
        non_empty: bool,
    },
    /// structured_outputs `registry`: agent name → model name or null.
    Registry,
    /// structured_outputs `models`: a definition chosen by its `type` tag.
    ModelDefinitions,
}

/// How a mapping key (a name) is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyKind {
    /// Any string, even empty.
    Str,
    /// Non-blank; kept unstripped.
    Name,
    /// As `Name`, and not a reserved context variable name.
    ReservedName,
}

/// A field's default when it is absent.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Default {
    /// Required.
    None,
    /// Optional, and left unset when absent (structured-output field `default`).
    Unset,
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(&'static str),
    EmptyList,
    EmptyMap,
    /// An object whose fields all take their defaults.
    Object,
}

impl Default {
    /// The default as YAML text, for docs and hover.
    pub fn display(&self) -> Option<String> {
        Some(match self {
            Default::None | Default::Unset => return None,
            Default::Null => "null".into(),
            Default::Bool(b) => b.to_string(),
            Default::Int(i) => i.to_string(),
            Default::Float(f) => f.to_string(),
            Default::Str(s) => (*s).to_string(),
            Default::EmptyList => "[]".into(),
            Default::EmptyMap => "{}".into(),
            Default::Object => "{} (every field at its default)".into(),
        })
    }
}

/// Names the runtime owns (spec §4): rejected as context variable names.
pub fn reserved_context_name(name: &str) -> Option<String> {
    let key = name.trim();
    if key == "structured_output" {
        return Some(format!(
            "`{key}` is reserved runtime vocabulary (the auto-tool structured output projection); tools read it without a declaration, so rename this variable"
        ));
    }
    for prefix in ["ag:", "a2a:"] {
        if key.starts_with(prefix) {
            return Some(format!(
                "`{key}` starts with `{prefix}`, a prefix AG2 reserves for its own state (such keys never reach remote agents); rename it without the prefix"
            ));
        }
    }
    None
}
