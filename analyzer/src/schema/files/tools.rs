//! `tools.yaml`.

use super::{
    field, FileSchema, AGENT, BOOL, BOOL_OPT, LIFECYCLE_TRIGGERS, REALIZATIONS,
    RENDERABLE_PRIMITIVES, REQ, SHIPPED_COMPONENTS, TEXT_OPT, TEXT_REQ,
};
use crate::base::FileKind;
use crate::rules::Rule;
use crate::schema::kinds::{reserved_context_name, Default, Kind, ListKind, TextKind};
use crate::schema::normalized::{Norm, Obj};
use crate::schema::{Object, Refers, RuleContext};

pub(super) static TOOLS_FILE: FileSchema = FileSchema {
    kind: FileKind::Tools,
    doc: "Python tools bound to agents, and lifecycle tools run at run events.",
    root: &TOOLS,
};

pub(super) static TOOLS: Object = Object {
    name: "tools.yaml",
    doc: "Tools and lifecycle tools.",
    fields: &[
        field(
            "tools",
            Kind::ObjectList(&TOOL),
            Default::EmptyList,
            "Agent tools.",
        ),
        field(
            "lifecycle_tools",
            Kind::ObjectList(&LIFECYCLE_TOOL),
            Default::EmptyList,
            "Functions run at run or agent events.",
        ),
    ],
    legacy: &[],
    rules: &[],
};

pub(super) static TOOL: Object = Object {
    name: "tool",
    doc: "One Python function offered to an agent or run after its output.",
    fields: &[
        field(
            "agent",
            Kind::StrOrList,
            REQ,
            "The owning agent, or a list of agents (a single name when `outcome` is set).",
        )
        .refers(AGENT),
        field(
            "file",
            TEXT_REQ,
            REQ,
            "Python file, resolved as `<bundle>/<file>` then `<bundle>/tools/<file>`.",
        ),
        field(
            "function",
            TEXT_REQ,
            REQ,
            "Function in that file; also the tool name the model sees.",
        )
        .refers(Refers::Function),
        field(
            "description",
            TEXT_OPT,
            Default::Null,
            "What the tool does (shown to the model).",
        ),
        field(
            "tool_type",
            Kind::ToolType { nullable: false },
            REQ,
            "`Agent_Tool`, `UI_Tool` (interactive) or `UI_Surface` (display only).",
        ),
        field(
            "auto_tool_call",
            BOOL,
            Default::Bool(false),
            "Run automatically after the agent's validated structured output.",
        ),
        field(
            "bind_to_agent",
            BOOL,
            Default::Bool(true),
            "Offer the tool to the model (false: never offered).",
        ),
        field(
            "outcome",
            Kind::Object {
                shape: &OUTCOME,
                nullable: true,
            },
            Default::Null,
            "A finite result stored in a protected routing variable, with an attempt budget.",
        ),
        field(
            "ui",
            Kind::Object {
                shape: &TOOL_UI,
                nullable: true,
            },
            Default::Null,
            "UI tools: component, mode, workflow_primitive, realization.",
        ),
        field(
            "ui_contract",
            Kind::Object {
                shape: &UI_CONTRACT,
                nullable: true,
            },
            Default::Null,
            "UI_Tool only: payload and actions contract.",
        ),
    ],
    legacy: &[
        ("auto_invoke", "the key is now `auto_tool_call`"),
        (
            "caller",
            "0.2.0 binds tools with `agent`; remove caller/executor",
        ),
        (
            "executor",
            "0.2.0 binds tools with `agent`; remove caller/executor",
        ),
        (
            "type",
            "the key is `tool_type` (Agent_Tool, UI_Tool or UI_Surface)",
        ),
        ("name", "the tool name is its `function`; remove `name`"),
        (
            "integration",
            "tools declare no integration in 0.2.0; remove it",
        ),
    ],
    rules: &[tool_ui_requirements, tool_outcome_requirements],
};

pub(super) static LIFECYCLE_TOOL: Object = Object {
    name: "lifecycle tool",
    doc: "A function run at a run or agent event.",
    fields: &[
        field(
            "trigger",
            Kind::Enum {
                values: LIFECYCLE_TRIGGERS,
                nullable: false,
            },
            REQ,
            "before_chat, after_chat, before_agent, after_agent, on_start, on_complete or on_fail.",
        ),
        field(
            "agent",
            TEXT_OPT,
            Default::Null,
            "The agent for agent-level triggers; null for on_start/on_complete/on_fail.",
        )
        .refers(AGENT),
        field("file", TEXT_REQ, REQ, "Python file, resolved like tools."),
        field("function", TEXT_REQ, REQ, "Function in that file.").refers(Refers::Function),
        field("description", TEXT_OPT, Default::Null, "What it does."),
        field(
            "tool_type",
            Kind::ToolType { nullable: true },
            Default::Str("Agent_Tool"),
            "Same rules as tools.",
        ),
        field(
            "ui",
            Kind::Object {
                shape: &TOOL_UI,
                nullable: true,
            },
            Default::Null,
            "UI block for UI types.",
        ),
        field(
            "ui_contract",
            Kind::Object {
                shape: &UI_CONTRACT,
                nullable: true,
            },
            Default::Null,
            "UI_Tool only.",
        ),
    ],
    legacy: &[],
    rules: &[tool_ui_requirements, lifecycle_agent_rule],
};

pub(super) static TOOL_UI: Object = Object {
    name: "tool ui",
    doc: "How a UI tool renders.",
    fields: &[
        field("component", TEXT_OPT, Default::Null, "The React component's registry key."),
        field("mode", TEXT_OPT, Default::Null, "Display mode, e.g. `inline` or `artifact`."),
        field("workflow_primitive", Kind::Catalog { values: RENDERABLE_PRIMITIVES }, Default::Null, "The renderable UI primitive."),
        field("realization", Kind::Catalog { values: REALIZATIONS }, Default::Null,
            "shipped_component, workflow_wrapper or generated_component; must match the primitive and component."),
    ],
    legacy: &[],
    rules: &[ui_realization],
};

pub(super) static UI_CONTRACT: Object = Object {
    name: "ui_contract",
    doc: "The payload and actions of an interactive UI tool.",
    fields: &[
        field(
            "surface_kind",
            Kind::Enum {
                values: &["agent_tool"],
                nullable: false,
            },
            Default::Str("agent_tool"),
            "Only `agent_tool`.",
        ),
        field(
            "payload_schema",
            Kind::DictOrDefault,
            Default::Null,
            "JSON Schema of the payload (an open object when empty).",
        ),
        field(
            "actions_schema",
            Kind::ObjectList(&UI_ACTION),
            Default::EmptyList,
            "The actions the user can take.",
        ),
    ],
    legacy: &[],
    rules: &[],
};

pub(super) static UI_ACTION: Object = Object {
    name: "ui action",
    doc: "One user action of a UI tool.",
    fields: &[
        field("id", TEXT_REQ, REQ, "Action id."),
        field("label", TEXT_OPT, Default::Null, "Button label."),
        field("description", TEXT_OPT, Default::Null, "What it does."),
        field("variant", TEXT_OPT, Default::Null, "Visual variant."),
        field(
            "approved",
            BOOL_OPT,
            Default::Null,
            "Whether the action approves.",
        ),
        field(
            "payload_schema",
            Kind::DictOrDefault,
            Default::Null,
            "JSON Schema of the action payload.",
        ),
    ],
    legacy: &[],
    rules: &[],
};

pub(super) static OUTCOME: Object = Object {
    name: "tool outcome",
    doc: "A finite tool result stored in a protected routing variable.",
    fields: &[
        field(
            "context_key",
            Kind::Text(TextKind::ExactName),
            REQ,
            "Routing variable that stores the outcome.",
        )
        .refers(Refers::Variable),
        field(
            "attempts_key",
            Kind::Text(TextKind::ExactName),
            REQ,
            "Variable that counts attempts.",
        )
        .refers(Refers::Variable),
        field(
            "result_field",
            Kind::Text(TextKind::ExactName),
            Default::Str("status"),
            "Key read from the tool's returned mapping.",
        ),
        field(
            "values",
            Kind::List(ListKind::Exact { non_empty: true }),
            REQ,
            "The possible outcomes (unique, at least one).",
        ),
        field(
            "error_value",
            Kind::Text(TextKind::ExactName),
            REQ,
            "The outcome used on failure; one of `values`.",
        ),
        field(
            "max_attempts",
            Kind::Int {
                min: Some(1),
                max: Some(100),
                nullable: false,
                strict: true,
            },
            Default::Int(1),
            "Attempt budget, 1–100 (a plain integer).",
        ),
        field(
            "retry_on",
            Kind::List(ListKind::Exact { non_empty: false }),
            Default::EmptyList,
            "Outcomes that allow another attempt; required exactly when max_attempts > 1.",
        ),
    ],
    legacy: &[],
    rules: &[outcome_spec],
};

pub(super) fn tool_ui_requirements(obj: &Obj, cx: &mut RuleContext<'_>) {
    let Some(tool_type) = obj.str("tool_type") else {
        return;
    };
    let name = obj.str("function").unwrap_or("this tool");
    if tool_type == "Agent_Tool" {
        for key in ["ui", "ui_contract"] {
            if obj.has(key) {
                cx.report(
                    Rule::ToolUiContract,
                    obj.key_range(key),
                    format!("Agent_Tool `{name}` must not declare `{key}`; remove it or change tool_type to UI_Tool/UI_Surface"),
                );
            }
        }
        return;
    }
    match obj.obj("ui") {
        None => cx.report(
            Rule::ToolUiContract,
            obj.value_range("tool_type"),
            format!("{tool_type} `{name}` must declare a `ui` block with component, mode, workflow_primitive and realization"),
        ),
        Some(ui) => {
            let missing: Vec<&str> = ["component", "mode", "workflow_primitive", "realization"]
                .into_iter()
                .filter(|k| !ui.has(k))
                .collect();
            if !missing.is_empty() {
                cx.report(
                    Rule::ToolUiContract,
                    obj.key_range("ui"),
                    format!("{tool_type} `{name}` must declare ui.{}", missing.join(", ui.")),
                );
            }
        }
    }
    if tool_type == "UI_Surface" && obj.has("ui_contract") {
        cx.report(
            Rule::ToolUiContract,
            obj.key_range("ui_contract"),
            format!("UI_Surface `{name}` is display-only and must not declare `ui_contract`; remove it (or make it a UI_Tool)"),
        );
    }
}

pub(super) fn ui_realization(obj: &Obj, cx: &mut RuleContext<'_>) {
    let Some(primitive) = obj.str("workflow_primitive") else {
        if obj.has("realization") {
            cx.report(
                Rule::ToolUiContract,
                obj.key_range("realization"),
                "ui.realization requires ui.workflow_primitive; add the primitive (e.g. approval_card)",
            );
        }
        return;
    };
    let component = obj.str("component");
    let expected = match SHIPPED_COMPONENTS.iter().find(|(p, _)| *p == primitive) {
        Some((_, shipped)) if component == Some(*shipped) => "shipped_component",
        Some(_) => "workflow_wrapper",
        None => "generated_component",
    };
    match obj.str("realization") {
        None => cx.report(
            Rule::ToolUiContract,
            obj.key_range("workflow_primitive"),
            format!("ui.realization is required for declarative UI tools; add `realization: {expected}`"),
        ),
        Some(r) if r != expected => cx.report(
            Rule::ToolUiContract,
            obj.value_range("realization"),
            format!(
                "ui.realization must be `{expected}` for primitive `{primitive}` with component `{}`, not `{r}`",
                component.unwrap_or("(none)")
            ),
        ),
        Some(_) => {}
    }
}

pub(super) fn tool_outcome_requirements(obj: &Obj, cx: &mut RuleContext<'_>) {
    if !obj.has("outcome") {
        return;
    }
    if obj.bool("auto_tool_call") != Some(true) || obj.bool("bind_to_agent") != Some(false) {
        cx.report(
            Rule::ToolOutcomeSpec,
            obj.key_range("outcome"),
            "a tool with an `outcome` must be auto-invoked and unbound: set `auto_tool_call: true` and `bind_to_agent: false`",
        );
    }
    if matches!(obj.get("agent").map(|i| &i.value), Some(Norm::List(_))) {
        cx.report(
            Rule::ToolOutcomeSpec,
            obj.value_range("agent"),
            "a tool with an `outcome` must name exactly one agent (a string, not a list)",
        );
    }
}

pub(super) fn outcome_spec(obj: &Obj, cx: &mut RuleContext<'_>) {
    for key in ["context_key", "attempts_key"] {
        if let Some(name) = obj.str(key) {
            if let Some(why) = reserved_context_name(name) {
                cx.report(Rule::InvalidName, obj.value_range(key), why);
            }
        }
    }
    if let (Some(a), Some(b)) = (obj.str("context_key"), obj.str("attempts_key")) {
        if a == b {
            cx.report(
                Rule::ToolOutcomeSpec,
                obj.value_range("attempts_key"),
                "outcome `context_key` and `attempts_key` must be different variables",
            );
        }
    }
    let values: Vec<&str> = obj
        .list("values")
        .iter()
        .filter_map(|i| i.as_str())
        .collect();
    if !obj.has("values") {
        return;
    }
    let error_value = obj.str("error_value");
    if let Some(error_value) = error_value {
        if !values.contains(&error_value) {
            cx.report(
                Rule::ToolOutcomeSpec,
                obj.value_range("error_value"),
                format!(
                    "outcome `error_value` `{error_value}` must be one of `values` ({})",
                    values.join(", ")
                ),
            );
        }
    }
    let retry = obj.list("retry_on");
    for item in retry {
        let v = item.as_str().unwrap_or_default();
        if !values.contains(&v) || Some(v) == error_value {
            cx.report(
                Rule::ToolOutcomeSpec,
                item.range,
                format!("`retry_on` may only list declared outcomes other than the error_value; `{v}` is not allowed"),
            );
        }
    }
    if let Some(max) = obj.int("max_attempts") {
        if retry.is_empty() == (max > 1) {
            let (key, msg) = if max > 1 {
                ("max_attempts", format!("`max_attempts: {max}` allows retries, so `retry_on` must list the outcomes that may be retried"))
            } else {
                (
                    "retry_on",
                    "`retry_on` needs `max_attempts` above 1 (there is no second attempt)"
                        .to_string(),
                )
            };
            cx.report(Rule::ToolOutcomeSpec, obj.key_range(key), msg);
        }
    }
}

pub(super) fn lifecycle_agent_rule(obj: &Obj, cx: &mut RuleContext<'_>) {
    if let Some(trigger @ ("on_start" | "on_complete" | "on_fail")) = obj.str("trigger") {
        if obj.has("agent") {
            cx.report(
                Rule::LifecycleAgent,
                obj.value_range("agent"),
                format!("the run-level trigger `{trigger}` fires once per run, not per agent: set `agent: null` or remove it"),
            );
        }
    }
}
