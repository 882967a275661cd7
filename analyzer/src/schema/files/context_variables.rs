//! `context_variables.yaml`.

use super::{
    field, list_clean, FileSchema, AGENT, AUTHORITY_CLASSES, BOOL_OPT, REQ, SOURCE_TYPES, TEXT_OPT,
    WRITER_IDS,
};
use crate::base::FileKind;
use crate::rules::Rule;
use crate::schema::kinds::{Default, KeyKind, Kind, ListKind};
use crate::schema::normalized::Obj;
use crate::schema::{Field, Object, Refers, RuleContext};

pub(super) static CONTEXT_VARIABLES_FILE: FileSchema = FileSchema {
    kind: FileKind::ContextVariables,
    doc: "The workflow's context variables and which agents see them.",
    root: &CONTEXT_VARIABLES,
};

pub(super) static CONTEXT_VARIABLES: Object = Object {
    name: "context_variables.yaml",
    doc: "Variable definitions and agent views.",
    fields: &[
        field(
            "definitions",
            Kind::ObjectMap {
                shape: &VARIABLE,
                key: KeyKind::ReservedName,
                non_empty: false,
            },
            Default::EmptyMap,
            "The variables, keyed by name.",
        ),
        field(
            "agents",
            Kind::ObjectMap {
                shape: &AGENT_VIEW,
                key: KeyKind::Str,
                non_empty: false,
            },
            Default::EmptyMap,
            "Per agent, the variables appended to its prompt as `NAME_IN_CAPS: value` lines.",
        ),
    ],
    legacy: &[],
    rules: &[],
};

pub(super) static AGENT_VIEW: Object = Object {
    name: "agent view",
    doc: "The variables one agent sees.",
    fields: &[field(
        "variables",
        list_clean(false, false, false, true),
        Default::EmptyList,
        "Declared variables exposed to this agent.",
    )
    .refers(Refers::Variable)],
    legacy: &[],
    rules: &[],
};

pub(super) static VARIABLE: Object = Object {
    name: "context variable definition",
    doc: "One context variable.",
    fields: &[
        field("type", TEXT_OPT, Default::Null,
            "Declared type: string, boolean, integer, number, object, array, any (or their Python spellings)."),
        field("description", TEXT_OPT, Default::Null, "What the variable holds."),
        field("authority_class", Kind::Enum { values: AUTHORITY_CLASSES, nullable: true }, Default::Null,
            "Who may write it; inferred from the name and source when absent."),
        field("model_visible", BOOL_OPT, Default::Null, "Overrides the inferred flag."),
        field("tool_visible", BOOL_OPT, Default::Null, "Overrides the inferred flag."),
        field("persisted", BOOL_OPT, Default::Null, "Overrides the inferred flag: the value is persisted and replayed."),
        field("routing", BOOL_OPT, Default::Null, "Overrides the inferred flag: the value routes transitions."),
        field("authorization", BOOL_OPT, Default::Null, "Overrides the inferred flag."),
        field("writer_ids", Kind::EnumList { values: WRITER_IDS, dedupe: true }, Default::EmptyList,
            "The writers allowed to set the value (one of the 14 declarable writer ids)."),
        field("source", Kind::Object { shape: &VARIABLE_SOURCE, nullable: false }, REQ,
            "Where the value comes from (`type` is required)."),
    ],
    legacy: &[("name", "definitions are keyed by variable name: move the name to the key (`my_var: {type: …, source: …}`)")],
    rules: &[],
};

pub(super) static VARIABLE_SOURCE: Object = Object {
    name: "context variable source",
    doc: "Where a variable's value comes from.",
    fields: &[
        field("type", Kind::Enum { values: SOURCE_TYPES, nullable: false }, REQ,
            "config, data_reference, data_entity, computed, state, external, file, build_context or runtime."),
        field("env_var", TEXT_OPT, Default::Null, "config: the environment variable read."),
        field("default", Kind::Any, Default::Null, "The initial value."),
        field("required", BOOL_OPT, Default::Null, "Fail the context load when no value is found."),
        field("database_name", TEXT_OPT, Default::Null, "data_reference/data_entity: database."),
        field("collection", TEXT_OPT, Default::Null, "data_reference/data_entity: collection."),
        field("query_template", Kind::Dict { nullable: true }, Default::Null, "data_reference: the query, with `{{runtime.app_id}}`-style templates."),
        field("fields", list_clean(true, true, false, false), Default::Null, "data_reference: fields to read."),
        field("refresh_strategy", Kind::Enum { values: &["once", "per_phase", "on_demand"], nullable: true }, Default::Null, "When to re-read."),
        Field {
            name: "entity_schema",
            alias: Some("schema"),
            kind: Kind::Dict { nullable: true },
            required: false,
            default: Default::Null,
            doc: "data_entity: the entity's schema (written `schema`).",
            refers: Refers::Nothing,
        },
        field("indexes", Kind::List(ListKind::Dicts { nullable: true }), Default::Null, "data_entity: indexes."),
        field("write_strategy", Kind::Enum { values: &["immediate", "on_phase_transition", "on_workflow_end"], nullable: true }, Default::Null, "data_entity: when to write."),
        field("search_by", TEXT_OPT, Default::Null, "data_reference: lookup field."),
        field("computation", TEXT_OPT, Default::Null, "computed: description of the computation (not evaluated by 0.2.0)."),
        field("inputs", list_clean(true, true, false, false), Default::Null, "computed: input variables."),
        field("output_type", TEXT_OPT, Default::Null, "computed: output type."),
        field("persist_to", Kind::Dict { nullable: true }, Default::Null, "computed: where to persist."),
        field("triggers", Kind::ObjectList(&CONTEXT_TRIGGER), Default::EmptyList, "state: what sets the value from text or UI responses."),
        field("persist", BOOL_OPT, Default::Null, "state: persist the value."),
        field("service", TEXT_OPT, Default::Null, "external: service name (not evaluated by 0.2.0)."),
        field("operation", TEXT_OPT, Default::Null, "external: operation."),
        field("params", Kind::Dict { nullable: true }, Default::Null, "external: parameters."),
        field("auth", Kind::Dict { nullable: true }, Default::Null, "external: authentication."),
        field("cache", Kind::Dict { nullable: true }, Default::Null, "external: caching."),
        field("retry", Kind::Dict { nullable: true }, Default::Null, "external: retries."),
        field("path", TEXT_OPT, Default::Null, "file: path relative to the repository root."),
        field("format", Kind::Enum { values: &["json", "yaml", "text"], nullable: true }, Default::Null, "file: json (default), yaml or text."),
        field("encoding", TEXT_OPT, Default::Null, "file: text encoding."),
    ],
    legacy: &[],
    rules: &[],
};

pub(super) static CONTEXT_TRIGGER: Object = Object {
    name: "context trigger",
    doc: "Sets a state variable from agent text, user text or a UI response.",
    fields: &[
        field("type", Kind::Enum { values: &["agent_text", "ui_response", "user_text"], nullable: false }, REQ,
            "agent_text (needs agent and match), user_text (needs match) or ui_response (needs tool)."),
        field("agent", TEXT_OPT, Default::Null, "agent_text: whose messages are matched.").refers(AGENT),
        field("match", Kind::Object { shape: &TRIGGER_MATCH, nullable: true }, Default::Null, "What text sets the variable to true."),
        field("tool", TEXT_OPT, Default::Null, "ui_response: the UI tool id whose answer is read."),
        field("response_key", TEXT_OPT, Default::Null, "ui_response: dotted path of the value in the answer."),
        field("ui_hidden", BOOL_OPT, Default::Null, "Hide the matched message from the UI."),
    ],
    legacy: &[("value", "declarative triggers set the variable to true and never capture a value; remove `value`")],
    rules: &[context_trigger_requirements],
};

pub(super) static TRIGGER_MATCH: Object = Object {
    name: "trigger match",
    doc: "Case-insensitive text match.",
    fields: &[
        field(
            "equals",
            TEXT_OPT,
            Default::Null,
            "The whole trimmed text equals this.",
        ),
        field(
            "contains",
            TEXT_OPT,
            Default::Null,
            "The text contains this.",
        ),
        field(
            "regex",
            TEXT_OPT,
            Default::Null,
            "A regular expression searched in the text.",
        ),
    ],
    legacy: &[],
    rules: &[],
};

pub(super) fn context_trigger_requirements(obj: &Obj, cx: &mut RuleContext<'_>) {
    let needs: &[&str] = match obj.str("type") {
        Some("agent_text") => &["agent", "match"],
        Some("user_text") => &["match"],
        Some("ui_response") => &["tool"],
        _ => &[],
    };
    for name in needs {
        if !obj.has(name) {
            cx.report(
                Rule::IncompleteTrigger,
                obj.value_range("type"),
                format!(
                    "this `{}` trigger requires `{name}`; add it",
                    obj.str("type").unwrap_or_default()
                ),
            );
        }
    }
}
