//! `middleware.yaml`.

use super::{field, FileSchema, AGENT, REQ, TEXT_REQ};
use crate::base::FileKind;
use crate::schema::kinds::{Default, Kind, TextKind};
use crate::schema::{Object, Refers};

pub(super) static MIDDLEWARE_FILE: FileSchema = FileSchema {
    kind: FileKind::Middleware,
    doc:
        "Prompt middleware: functions that rewrite an agent's system prompt before each model call.",
    root: &MIDDLEWARE,
};

pub(super) static MIDDLEWARE: Object = Object {
    name: "middleware.yaml",
    doc: "Prompt middleware entries.",
    fields: &[field(
        "prompt_middleware",
        Kind::ObjectList(&MIDDLEWARE_ENTRY),
        Default::EmptyList,
        "The entries, applied in order.",
    )],
    legacy: &[(
        "hooks",
        "hooks.yaml's `hooks` became `prompt_middleware` entries in middleware.yaml",
    )],
    rules: &[],
};

pub(super) static MIDDLEWARE_ENTRY: Object = Object {
    name: "prompt middleware entry",
    doc: "One prompt middleware function.",
    fields: &[
        field("agent", TEXT_REQ, REQ, "The agent it applies to, or `all`.").refers(AGENT),
        field("filename", Kind::Text(TextKind::OptionalRequired), Default::Null,
            "Python file, tried as `<bundle>/<filename>` then `<bundle>/tools/<filename>`."),
        field("function", TEXT_REQ, REQ,
            "Function in that file, called as fn(capture, history); without filename an import path `module:function`.").refers(Refers::Function),
    ],
    legacy: &[("hook_type", "hooks were replaced by prompt middleware: remove hook_type"), ("hook_agent", "the key is now `agent`")],
    rules: &[],
};
