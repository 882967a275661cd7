//! `structured_outputs.yaml`.

use super::{field, list_clean, FileSchema, REQ, TEXT_OPT, TEXT_REQ};
use crate::base::FileKind;
use crate::rules::Rule;
use crate::schema::kinds::{Default, KeyKind, Kind, ListKind};
use crate::schema::normalized::Obj;
use crate::schema::{Object, Refers, RuleContext};

pub(super) static STRUCTURED_OUTPUTS_FILE: FileSchema = FileSchema {
    kind: FileKind::StructuredOutputs,
    doc: "The models agents answer with, and which agent uses which.",
    root: &STRUCTURED_OUTPUTS,
};

pub(super) static STRUCTURED_OUTPUTS: Object = Object {
    name: "structured_outputs.yaml",
    doc: "Models and the agent registry.",
    fields: &[
        field("schema_version", Kind::Enum { values: &["mozaiks.structured_outputs.v1"], nullable: false }, REQ,
            "The contract version; exactly `mozaiks.structured_outputs.v1`."),
        field("registry", Kind::Registry, Default::EmptyMap, "Agent name → the `type: model` definition it answers with, or null."),
        field("models", Kind::ModelDefinitions, Default::EmptyMap, "Definitions keyed by name: models, literals and unions."),
    ],
    legacy: &[("structured_outputs", "the `structured_outputs:` wrapper was removed: put `models` and `registry` at the top level and add `schema_version: mozaiks.structured_outputs.v1`")],
    rules: &[registry_names_models],
};

pub static SO_MODEL: Object = Object {
    name: "model definition",
    doc: "A model: named, typed fields.",
    fields: &[
        field(
            "type",
            Kind::Enum {
                values: &["model"],
                nullable: false,
            },
            REQ,
            "`model`.",
        ),
        field("description", TEXT_OPT, Default::Null, "What the model is."),
        field(
            "fields",
            Kind::ObjectMap {
                shape: &SO_FIELD,
                key: KeyKind::Name,
                non_empty: true,
            },
            // Pydantic does not validate defaults: an absent `fields` passes, a
            // written empty one fails.
            Default::EmptyMap,
            "The fields, keyed by name (at least one when written).",
        ),
    ],
    legacy: &[],
    rules: &[],
};

pub static SO_LITERAL: Object = Object {
    name: "literal definition",
    doc: "A named enum of scalar values.",
    fields: &[
        field(
            "type",
            Kind::Enum {
                values: &["literal"],
                nullable: false,
            },
            REQ,
            "`literal`.",
        ),
        field(
            "description",
            TEXT_OPT,
            Default::Null,
            "What the values mean.",
        ),
        field(
            "values",
            Kind::List(ListKind::Any {
                nullable: false,
                non_empty: true,
            }),
            REQ,
            "The allowed values (at least one).",
        ),
    ],
    legacy: &[],
    rules: &[],
};

pub static SO_UNION: Object = Object {
    name: "union definition",
    doc: "One of several types (`null` makes it optional).",
    fields: &[
        field(
            "type",
            Kind::Enum {
                values: &["union"],
                nullable: false,
            },
            REQ,
            "`union`.",
        ),
        field("description", TEXT_OPT, Default::Null, "What the union is."),
        field(
            "variants",
            list_clean(false, false, true, false),
            REQ,
            "The member type names (at least one).",
        ),
    ],
    legacy: &[],
    rules: &[],
};

pub(super) static SO_FIELD: Object = Object {
    name: "model field",
    doc: "One field of a model.",
    fields: &[
        field("type", TEXT_REQ, REQ,
            "str, int, bool, float, optional_str, dict, List, list (needs items), optional_list, optional_dict, literal (needs values), union (needs variants), list[Name], or a model/literal/union name.").refers(Refers::Model { primitives: true }),
        field("description", TEXT_OPT, Default::Null, "Shown to the model."),
        field("default", Kind::Any, Default::Unset, "Makes the field optional (even `default: null`)."),
        field("items", TEXT_OPT, Default::Null, "list/optional_list: the item type.").refers(Refers::Model { primitives: true }),
        field("values", Kind::List(ListKind::Any { nullable: true, non_empty: false }), Default::Null, "literal: the allowed values."),
        field("variants", list_clean(true, true, false, false), Default::Null, "union: the member types."),
    ],
    legacy: &[],
    rules: &[so_field_shape],
};

pub(super) fn so_field_shape(obj: &Obj, cx: &mut RuleContext<'_>) {
    let Some(ty) = obj.str("type") else { return };
    let needs = match ty {
        "list" | "optional_list" if !obj.has("items") => "items",
        "literal" if obj.list("values").is_empty() => "values",
        "union" if obj.list("variants").is_empty() => "variants",
        _ => return,
    };
    cx.report(
        Rule::StructuredOutputShape,
        obj.value_range("type"),
        format!("a field of type `{ty}` requires a non-empty `{needs}`; add it"),
    );
}

pub(super) fn registry_names_models(obj: &Obj, cx: &mut RuleContext<'_>) {
    let models = obj.map("models");
    for (agent, model) in obj.map("registry") {
        let Some(name) = model.as_str() else { continue };
        let agent = agent.as_str().unwrap_or_default();
        match models.iter().find(|(k, _)| k.as_str() == Some(name)) {
            None => {
                let known: Vec<&str> = models
                    .iter()
                    .filter(|(_, v)| v.as_obj().and_then(|o| o.str("type")) == Some("model"))
                    .filter_map(|(k, _)| k.as_str())
                    .collect();
                cx.report(
                    Rule::RegistryModel,
                    model.range,
                    format!(
                        "registry maps `{agent}` to `{name}`, which is not defined under `models`{}; define it or fix the name",
                        crate::diagnostics::suggestion(name, known)
                    ),
                );
            }
            Some((key, def)) => {
                let kind = def.as_obj().and_then(|o| o.str("type")).unwrap_or("model");
                if kind != "model" {
                    cx.out.push(
                        crate::diagnostics::Diagnostic::new(
                            Rule::RegistryModel,
                            cx.file,
                            model.range,
                            format!("registry maps `{agent}` to `{name}`, a `type: {kind}` definition; an agent's output must be a `type: model` definition"),
                        )
                        .with_related(cx.file, key.range, "defined here"),
                    );
                }
            }
        }
    }
}
