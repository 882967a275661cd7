//! The declarative description of every bundle file kind, true to mozaiks
//! 0.2.0's contracts (bundle-format §5–§16, scalar-coercion §8).

use super::kinds::{reserved_context_name, Default, KeyKind, Kind, ListKind, TextKind};
use super::validate::{Norm, Obj};
use super::{Field, Object, RuleContext};
use crate::rules::Rule;

/// The bundle files mzk reads, in the reference's load order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FileKind {
    Orchestrator,
    Agents,
    TransitionGraph,
    ContextVariables,
    StructuredOutputs,
    Middleware,
    A2a,
    Tools,
    UiConfig,
    TaskBatches,
}

pub const FILE_KINDS: &[FileKind] = &[
    FileKind::Orchestrator,
    FileKind::Agents,
    FileKind::TransitionGraph,
    FileKind::ContextVariables,
    FileKind::StructuredOutputs,
    FileKind::Middleware,
    FileKind::A2a,
    FileKind::Tools,
    FileKind::UiConfig,
    FileKind::TaskBatches,
];

/// A file kind's description.
#[derive(Debug)]
pub struct FileSchema {
    pub kind: FileKind,
    /// Path relative to the bundle folder.
    pub path: &'static str,
    pub doc: &'static str,
    pub root: &'static Object,
}

pub fn file_schema(kind: FileKind) -> &'static FileSchema {
    match kind {
        FileKind::Orchestrator => &ORCHESTRATOR_FILE,
        FileKind::Agents => &AGENTS_FILE,
        FileKind::TransitionGraph => &TRANSITION_GRAPH_FILE,
        FileKind::ContextVariables => &CONTEXT_VARIABLES_FILE,
        FileKind::StructuredOutputs => &STRUCTURED_OUTPUTS_FILE,
        FileKind::Middleware => &MIDDLEWARE_FILE,
        FileKind::A2a => &A2A_FILE,
        FileKind::Tools => &TOOLS_FILE,
        FileKind::UiConfig => &UI_CONFIG_FILE,
        FileKind::TaskBatches => &TASK_BATCHES_FILE,
    }
}

impl FileKind {
    pub fn path(self) -> &'static str {
        file_schema(self).path
    }

    pub fn from_path(relative: &str) -> Option<FileKind> {
        let normalized = relative.replace('\\', "/");
        FILE_KINDS.iter().copied().find(|k| k.path() == normalized)
    }
}

const fn field(name: &'static str, kind: Kind, default: Default, doc: &'static str) -> Field {
    Field {
        name,
        alias: None,
        kind,
        required: matches!(default, Default::None),
        default,
        doc,
    }
}

const REQ: Default = Default::None;
const TEXT_REQ: Kind = Kind::Text(TextKind::Required);
const TEXT_OPT: Kind = Kind::Text(TextKind::Optional);
const BOOL: Kind = Kind::Bool { nullable: false };
const BOOL_OPT: Kind = Kind::Bool { nullable: true };
const fn list_clean(nullable: bool, empty_to_null: bool, non_empty: bool, reserved: bool) -> Kind {
    Kind::List(ListKind::Clean {
        nullable,
        empty_to_null,
        non_empty,
        reserved,
    })
}
const fn int(min: Option<i64>, max: Option<i64>, nullable: bool) -> Kind {
    Kind::Int {
        min,
        max,
        nullable,
        strict: false,
    }
}

// ---------------------------------------------------------------- vocabulary

pub const STARTUP_MODES: &[&str] = &["AgentDriven", "UserDriven", "BackendOnly"];
pub const TRANSITION_TYPES: &[&str] = &["after_turn", "condition"];
pub const CONDITION_TYPES: &[&str] = &["context_equals", "context_expression", "tool_called"];
pub const TERMINATION_REASONS: &[&str] = &["workflow_complete", "workflow_failed"];
pub const SOURCE_TYPES: &[&str] = &[
    "config",
    "data_reference",
    "data_entity",
    "computed",
    "state",
    "external",
    "file",
    "build_context",
    "runtime",
];
pub const AUTHORITY_CLASSES: &[&str] = &[
    "immutable_runtime_authority",
    "closed_writer_routing_state",
    "closed_writer_quality_state",
    "mutable_workflow_state",
    "model_visible_information",
    "tool_only_information",
    "derived_information",
];
pub const WRITER_IDS: &[&str] = &[
    "runtime_system",
    "caller_input",
    "transition_router",
    "live_user_context",
    "context_bridge",
    "tool_writeback",
    "agent_text",
    "ui_response_trigger",
    "user_text_trigger",
    "persisted_replay",
    "task_batch",
    "structured_output",
    "lifecycle_tool",
    "deterministic_tool",
];
pub const LIFECYCLE_TRIGGERS: &[&str] = &[
    "before_chat",
    "after_chat",
    "before_agent",
    "after_agent",
    "on_start",
    "on_complete",
    "on_fail",
];
pub const RENDERABLE_PRIMITIVES: &[&str] = &[
    "approval_card",
    "choice_picker",
    "confirmation_summary",
    "form_card",
    "outcome_feedback",
    "record_picker",
    "file_upload_prompt",
    "diff_review",
    "action_plan_review",
    "artifact_workbench",
    "document_preview",
    "download_center",
    "comparison_board",
    "diagram_viewer",
    "table_review",
    "progress_stepper",
];
pub const REALIZATIONS: &[&str] = &[
    "shipped_component",
    "workflow_wrapper",
    "generated_component",
    "shell_builtin",
];
/// Primitives the platform ships a component for: (primitive, component).
pub const SHIPPED_COMPONENTS: &[(&str, &str)] = &[
    ("approval_card", "ApprovalCard"),
    ("choice_picker", "ChoicePicker"),
    ("confirmation_summary", "ConfirmationSummary"),
    ("form_card", "FormCard"),
    ("outcome_feedback", "OutcomeFeedback"),
    ("artifact_workbench", "ArtifactWorkbench"),
    ("download_center", "DownloadCenter"),
    ("diagram_viewer", "DiagramViewer"),
];

// ---------------------------------------------------------------- orchestrator.yaml

static ORCHESTRATOR_FILE: FileSchema = FileSchema {
    kind: FileKind::Orchestrator,
    path: "orchestrator.yaml",
    doc: "The workflow's identity and start: name, startup mode, first agent, turn budget. The only required file of a bundle.",
    root: &ORCHESTRATOR,
};

static ORCHESTRATOR: Object = Object {
    name: "orchestrator.yaml",
    doc: "Workflow identity, startup and limits.",
    fields: &[
        field("schema_version", Kind::Enum { values: &["mozaiks.orchestrator.v1"], nullable: false }, REQ,
            "The contract version; exactly `mozaiks.orchestrator.v1`."),
        field("workflow_name", TEXT_REQ, REQ,
            "The workflow's name; must match the bundle folder name (case-insensitively)."),
        field("max_turns", int(Some(1), Some(500), false), Default::Int(50),
            "The most agent turns a run may take, 1 to 500."),
        field("human_in_the_loop", BOOL, Default::Bool(false),
            "Marks a workflow that involves a human; parsed, not used by routing."),
        field("workflow_startup_mode", Kind::Enum { values: STARTUP_MODES, nullable: false }, REQ,
            "How a run starts: `AgentDriven` (seeded by initial_message), `UserDriven` (auto-starts, waits for the user) or `BackendOnly` (never auto-started from a chat)."),
        field("orchestration_pattern", TEXT_REQ, Default::Str("ag2_network"),
            "A label for the orchestration; routing never reads it."),
        field("initial_message", TEXT_OPT, Default::Null,
            "Hidden seed message sent to the first agent."),
        field("initial_agent", TEXT_OPT, Default::Null,
            "The agent that speaks first, or `user` to let the user-sourced rules choose it. 0.2.0 has no first-agent fallback: set it."),
        field("failure_message_key", TEXT_OPT, Default::Null,
            "A context variable declared with `type: string` whose value is shown to the user when the run ends as workflow_failed."),
        field("triggers", Kind::ObjectList(&ORCHESTRATOR_TRIGGER), Default::EmptyList,
            "What starts this workflow (chat, events, endpoints)."),
    ],
    legacy: &[
        ("startup_mode", "the key is now `workflow_startup_mode` (AgentDriven, UserDriven or BackendOnly)"),
        ("entry_point", "0.2.0 computes the entry point from the app's config; remove this key"),
        ("initial_message_to_user", "legacy key rejected by 0.2.0; remove it (use initial_message for the hidden seed)"),
        ("runtime_extensions", "legacy key rejected by 0.2.0; remove it"),
        ("visual_agents", "visual_agents now lives in ui_config.yaml; move it there"),
    ],
    rules: &[],
};

static ORCHESTRATOR_TRIGGER: Object = Object {
    name: "orchestrator trigger",
    doc: "One way the workflow is started.",
    fields: &[
        field(
            "type",
            TEXT_OPT,
            Default::Null,
            "Trigger type, e.g. `chat` or `event`.",
        ),
        field(
            "event",
            TEXT_OPT,
            Default::Null,
            "Event name for event triggers.",
        ),
        field(
            "endpoint",
            TEXT_OPT,
            Default::Null,
            "Endpoint path for endpoint triggers.",
        ),
        field(
            "method",
            TEXT_OPT,
            Default::Null,
            "HTTP method for endpoint triggers.",
        ),
        field(
            "description",
            TEXT_OPT,
            Default::Null,
            "What the trigger is for.",
        ),
        field(
            "capability_id",
            TEXT_OPT,
            Default::Null,
            "Capability this trigger exposes.",
        ),
    ],
    legacy: &[],
    rules: &[orchestrator_trigger_needs_kind],
};

fn orchestrator_trigger_needs_kind(obj: &Obj, cx: &mut RuleContext<'_>) {
    if !["type", "event", "endpoint"].iter().any(|k| obj.has(k)) {
        cx.report(
            Rule::IncompleteTrigger,
            cx.anchor,
            "this trigger must declare at least one of `type`, `event` or `endpoint` (e.g. `type: chat`)",
        );
    }
}

// ---------------------------------------------------------------- agents.yaml

static AGENTS_FILE: FileSchema = FileSchema {
    kind: FileKind::Agents,
    path: "agents.yaml",
    doc: "The agents of the workflow and their prompts.",
    root: &AGENTS,
};

static AGENTS: Object = Object {
    name: "agents.yaml",
    doc: "The list of agents.",
    fields: &[field(
        "agents",
        Kind::ObjectList(&AGENT),
        Default::EmptyList,
        "The workflow's agents; names must be unique.",
    )],
    legacy: &[],
    rules: &[agent_names_unique],
};

static AGENT: Object = Object {
    name: "agent",
    doc: "One agent: its name, prompt and capabilities.",
    fields: &[
        field("name", TEXT_REQ, REQ, "The agent's unique, case-sensitive name."),
        field("prompt_sections", Kind::ObjectList(&PROMPT_SECTION), Default::EmptyList,
            "The prompt as headed sections, rendered as heading, newline, content and joined by a blank line."),
        field("prompt_sections_custom", Kind::ObjectList(&PROMPT_SECTION), Default::EmptyList,
            "Sections used only when prompt_sections is empty."),
        field("system_message", TEXT_OPT, Default::Null, "A plain prompt, used only when both section lists are empty."),
        field("description", TEXT_OPT, Default::Null, "What the agent does."),
        field("human_input_mode", TEXT_OPT, Default::Null, "Free text; not read by 0.2.0."),
        field("max_consecutive_auto_reply", int(Some(0), None, false), Default::Int(2), "Not read by 0.2.0; 0 or more."),
        field("pending_turn_replay", Kind::Enum { values: &["allow", "block"], nullable: false }, Default::Str("allow"),
            "On resume with an interrupted turn of this agent: `allow` re-runs it, `block` fails the resume."),
        field("structured_outputs_required", BOOL, REQ,
            "Whether the agent must answer with its structured_outputs.yaml registry model (true needs a registry entry)."),
        field("multimodal_inputs_enabled", BOOL, Default::Bool(false), "Accept image inputs."),
        field("image_generation_enabled", BOOL, Default::Bool(false), "Enable image generation (forced on by an image_generation block)."),
        field("image_generation", Kind::Object { shape: &IMAGE_GENERATION, nullable: true }, Default::Null, "Image generation settings."),
        field("sandbox_shell", BOOL, Default::Bool(false), "Attach AG2's sandboxed shell tool."),
        field("web_search", BOOL, Default::Bool(false), "Attach AG2's web search tool (Responses-style providers)."),
        field("web_fetch", BOOL, Default::Bool(false), "Attach AG2's web fetch tool (Responses-style providers)."),
        field("duck_search", BOOL, Default::Bool(false), "Attach the DuckDuckGo search tool."),
    ],
    legacy: &[
        ("auto_tool_mode", "auto-tool behaviour is declared per tool in tools.yaml (`auto_tool_call: true`); remove this key"),
        ("llm_config", "model configuration is not part of agents.yaml in 0.2.0; remove this key"),
        ("structured_output", "structured outputs are declared in structured_outputs.yaml (`registry`); remove this key"),
    ],
    rules: &[agent_needs_prompt],
};

static PROMPT_SECTION: Object = Object {
    name: "prompt section",
    doc: "One headed section of an agent's prompt.",
    fields: &[
        field(
            "id",
            TEXT_OPT,
            Default::Null,
            "An identifier for the section.",
        ),
        field("heading", TEXT_REQ, REQ, "The heading line, e.g. `[ROLE]`."),
        field("content", TEXT_REQ, REQ, "The section text."),
    ],
    legacy: &[],
    rules: &[],
};

static IMAGE_GENERATION: Object = Object {
    name: "image_generation",
    doc: "Image generation settings of an agent.",
    fields: &[
        field(
            "quality",
            Kind::Enum {
                values: &["low", "medium", "high", "auto"],
                nullable: true,
            },
            Default::Null,
            "Image quality.",
        ),
        field(
            "size",
            TEXT_OPT,
            Default::Null,
            "Image size, e.g. `1024x1024`.",
        ),
        field(
            "background",
            Kind::Enum {
                values: &["transparent", "opaque", "auto"],
                nullable: true,
            },
            Default::Null,
            "Background.",
        ),
        field(
            "output_format",
            Kind::Enum {
                values: &["png", "jpeg", "webp"],
                nullable: true,
            },
            Default::Null,
            "File format.",
        ),
        field(
            "output_compression",
            int(Some(0), Some(100), true),
            Default::Null,
            "Compression 0–100.",
        ),
        field(
            "partial_images",
            int(Some(1), Some(3), true),
            Default::Null,
            "Partial images streamed, 1–3.",
        ),
        field(
            "promotion_targets",
            Kind::EnumList {
                values: &[
                    "brand_asset",
                    "app_asset",
                    "page_asset",
                    "campaign_asset",
                    "artifact",
                ],
                dedupe: false,
            },
            Default::EmptyList,
            "Where generated images may be promoted.",
        ),
        field(
            "image_config",
            Kind::Dict { nullable: true },
            Default::Null,
            "Free provider settings.",
        ),
    ],
    legacy: &[],
    rules: &[],
};

fn agent_needs_prompt(obj: &Obj, cx: &mut RuleContext<'_>) {
    let sections =
        !obj.list("prompt_sections").is_empty() || !obj.list("prompt_sections_custom").is_empty();
    if !sections && !obj.has("system_message") && obj.has("name") {
        cx.report(
            Rule::MissingPrompt,
            obj.value_range("name"),
            format!(
                "agent `{}` has no prompt: add `prompt_sections`, `prompt_sections_custom` or `system_message`",
                obj.str("name").unwrap_or_default()
            ),
        );
    }
}

fn agent_names_unique(obj: &Obj, cx: &mut RuleContext<'_>) {
    duplicates_in_list(obj.list("agents"), "name", "agent name", cx);
}

/// Reports objects of a list that repeat `key`'s value.
fn duplicates_in_list(items: &[super::Item], key: &str, what: &str, cx: &mut RuleContext<'_>) {
    let mut seen: std::collections::HashMap<&str, crate::syntax::TextRange> =
        std::collections::HashMap::new();
    for item in items {
        let Some(o) = item.as_obj() else { continue };
        let Some(name) = o.str(key) else { continue };
        let range = o.value_range(key);
        match seen.get(name) {
            Some(first) => {
                let d = crate::diagnostics::Diagnostic::new(
                    Rule::DuplicateName,
                    cx.file,
                    range,
                    format!(
                        "duplicate {what} `{name}`; each must be unique — rename or remove one"
                    ),
                )
                .with_related(cx.file, *first, "first declared here");
                cx.out.push(d);
            }
            None => {
                seen.insert(name, range);
            }
        }
    }
}

// ---------------------------------------------------------------- transition_graph.yaml

static TRANSITION_GRAPH_FILE: FileSchema = FileSchema {
    kind: FileKind::TransitionGraph,
    path: "transition_graph.yaml",
    doc: "Routing: which agent speaks after which, and on what condition.",
    root: &TRANSITION_GRAPH,
};

static TRANSITION_GRAPH: Object = Object {
    name: "transition_graph.yaml",
    doc: "The transition rules.",
    fields: &[field("transition_rules", Kind::ObjectList(&TRANSITION_RULE), Default::EmptyList,
        "The rules. Condition rules are tried before after_turn fallbacks, each group in order; the first true rule wins.")],
    legacy: &[("handoff_rules", "0.2.0 reads `transition_rules` (the handoffs.yaml format was replaced): rename the key and convert each rule")],
    rules: &[],
};

static TRANSITION_RULE: Object = Object {
    name: "transition rule",
    doc: "One routing rule from a source agent to a target.",
    fields: &[
        field("source_agent", TEXT_REQ, REQ, "The agent (or `user`) whose turn this rule follows."),
        field("target_agent", TEXT_REQ, REQ, "The next agent, `user` (pause for the user) or `terminate` (end the run)."),
        field("transition_type", Kind::Enum { values: TRANSITION_TYPES, nullable: false }, REQ,
            "`condition` (fires when its condition is true) or `after_turn` (the fallback after the source speaks)."),
        field("condition_type", Kind::LowerEnum { values: CONDITION_TYPES }, Default::Null,
            "For condition rules: `context_equals`, `context_expression` or `tool_called`."),
        field("condition_key", TEXT_OPT, Default::Null, "context_equals: the context variable compared."),
        field("condition_value", Kind::Any, Default::Null, "context_equals: the value compared with Python `==` (omitted means null)."),
        field("context_expression", TEXT_OPT, Default::Null,
            "context_expression: an expression over `${var}` references with and/or/not, comparisons, in, len() and literals."),
        field("tool_name", TEXT_OPT, Default::Null, "tool_called: the tool function whose call fires the rule."),
        field("transition_target", TEXT_OPT, Default::Null,
            "`AgentTarget`, `TerminateTarget` (target terminate) or `RevertToUserTarget` (target user)."),
        field("termination_reason", Kind::Enum { values: TERMINATION_REASONS, nullable: true }, Default::Null,
            "For target `terminate`: `workflow_complete` or `workflow_failed`."),
    ],
    legacy: &[
        ("condition", "free-text `condition` was removed in 0.2.0: use `condition_type: context_expression` with `context_expression: …`, or `context_equals` with condition_key/condition_value"),
        ("handoff_type", "the key is now `transition_type` (`after_work` became `after_turn`)"),
        ("condition_scope", "condition_scope was dropped in 0.2.0; remove it"),
    ],
    rules: &[transition_rule_shape],
};

fn transition_rule_shape(obj: &Obj, cx: &mut RuleContext<'_>) {
    let rule_name = format!(
        "rule `{} -> {}`",
        obj.str("source_agent").unwrap_or("?"),
        obj.str("target_agent").unwrap_or("?")
    );
    if obj.has("termination_reason") && obj.str("target_agent").is_some_and(|t| t != "terminate") {
        cx.report(
            Rule::TransitionRuleShape,
            obj.key_range("termination_reason"),
            format!(
                "{rule_name} sets `termination_reason`, which requires `target_agent: terminate` (spelled exactly, lowercase); remove it or change the target"
            ),
        );
    }
    let condition_value_set = obj.get("condition_value").is_some_and(|i| match &i.value {
        Norm::Any(node) => !node.is_null(),
        Norm::Null => false,
        _ => true,
    });
    let present = |name: &str| -> bool {
        if name == "condition_value" {
            condition_value_set
        } else {
            obj.has(name)
        }
    };
    let forbid = |cx: &mut RuleContext<'_>, names: &[&str], why: &str| {
        for name in names {
            if present(name) {
                cx.report(
                    Rule::TransitionRuleShape,
                    obj.key_range(name),
                    format!("{rule_name}: {why} must not declare `{name}`; remove it"),
                );
            }
        }
    };
    match obj.str("transition_type") {
        Some("after_turn") => forbid(
            cx,
            &[
                "condition_type",
                "condition_key",
                "condition_value",
                "context_expression",
                "tool_name",
            ],
            "an `after_turn` rule fires unconditionally, so it",
        ),
        Some("condition") => {
            let require = |cx: &mut RuleContext<'_>, name: &str, for_what: &str| {
                if !obj.has(name) {
                    cx.report(
                        Rule::TransitionRuleShape,
                        obj.key_range("condition_type"),
                        format!("{rule_name}: {for_what} requires `{name}`; add it"),
                    );
                }
            };
            match obj.str("condition_type") {
                None => {
                    cx.report(
                        Rule::TransitionRuleShape,
                        obj.key_range("transition_type"),
                        format!("{rule_name}: `transition_type: condition` requires `condition_type` (context_equals, context_expression or tool_called)"),
                    );
                }
                Some("context_equals") => {
                    require(cx, "condition_key", "`condition_type: context_equals`");
                    forbid(
                        cx,
                        &["tool_name", "context_expression"],
                        "`condition_type: context_equals`",
                    );
                }
                Some("context_expression") => {
                    require(
                        cx,
                        "context_expression",
                        "`condition_type: context_expression`",
                    );
                    forbid(
                        cx,
                        &["condition_key", "condition_value", "tool_name"],
                        "`condition_type: context_expression`",
                    );
                }
                Some("tool_called") => {
                    require(cx, "tool_name", "`condition_type: tool_called`");
                    forbid(
                        cx,
                        &["condition_key", "condition_value", "context_expression"],
                        "`condition_type: tool_called`",
                    );
                }
                _ => {}
            }
        }
        _ => {}
    }
}

// ---------------------------------------------------------------- context_variables.yaml

static CONTEXT_VARIABLES_FILE: FileSchema = FileSchema {
    kind: FileKind::ContextVariables,
    path: "context_variables.yaml",
    doc: "The workflow's context variables and which agents see them.",
    root: &CONTEXT_VARIABLES,
};

static CONTEXT_VARIABLES: Object = Object {
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

static AGENT_VIEW: Object = Object {
    name: "agent view",
    doc: "The variables one agent sees.",
    fields: &[field(
        "variables",
        list_clean(false, false, false, true),
        Default::EmptyList,
        "Declared variables exposed to this agent.",
    )],
    legacy: &[],
    rules: &[],
};

static VARIABLE: Object = Object {
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

static VARIABLE_SOURCE: Object = Object {
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

static CONTEXT_TRIGGER: Object = Object {
    name: "context trigger",
    doc: "Sets a state variable from agent text, user text or a UI response.",
    fields: &[
        field("type", Kind::Enum { values: &["agent_text", "ui_response", "user_text"], nullable: false }, REQ,
            "agent_text (needs agent and match), user_text (needs match) or ui_response (needs tool)."),
        field("agent", TEXT_OPT, Default::Null, "agent_text: whose messages are matched."),
        field("match", Kind::Object { shape: &TRIGGER_MATCH, nullable: true }, Default::Null, "What text sets the variable to true."),
        field("tool", TEXT_OPT, Default::Null, "ui_response: the UI tool id whose answer is read."),
        field("response_key", TEXT_OPT, Default::Null, "ui_response: dotted path of the value in the answer."),
        field("ui_hidden", BOOL_OPT, Default::Null, "Hide the matched message from the UI."),
    ],
    legacy: &[("value", "declarative triggers set the variable to true and never capture a value; remove `value`")],
    rules: &[context_trigger_requirements],
};

static TRIGGER_MATCH: Object = Object {
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

fn context_trigger_requirements(obj: &Obj, cx: &mut RuleContext<'_>) {
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

// ---------------------------------------------------------------- structured_outputs.yaml

static STRUCTURED_OUTPUTS_FILE: FileSchema = FileSchema {
    kind: FileKind::StructuredOutputs,
    path: "structured_outputs.yaml",
    doc: "The models agents answer with, and which agent uses which.",
    root: &STRUCTURED_OUTPUTS,
};

static STRUCTURED_OUTPUTS: Object = Object {
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

static SO_FIELD: Object = Object {
    name: "model field",
    doc: "One field of a model.",
    fields: &[
        field("type", TEXT_REQ, REQ,
            "str, int, bool, float, optional_str, dict, List, list (needs items), optional_list, optional_dict, literal (needs values), union (needs variants), list[Name], or a model/literal/union name."),
        field("description", TEXT_OPT, Default::Null, "Shown to the model."),
        field("default", Kind::Any, Default::Unset, "Makes the field optional (even `default: null`)."),
        field("items", TEXT_OPT, Default::Null, "list/optional_list: the item type."),
        field("values", Kind::List(ListKind::Any { nullable: true, non_empty: false }), Default::Null, "literal: the allowed values."),
        field("variants", list_clean(true, true, false, false), Default::Null, "union: the member types."),
    ],
    legacy: &[],
    rules: &[so_field_shape],
};

fn so_field_shape(obj: &Obj, cx: &mut RuleContext<'_>) {
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

fn registry_names_models(obj: &Obj, cx: &mut RuleContext<'_>) {
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

// ---------------------------------------------------------------- middleware.yaml

static MIDDLEWARE_FILE: FileSchema = FileSchema {
    kind: FileKind::Middleware,
    path: "middleware.yaml",
    doc:
        "Prompt middleware: functions that rewrite an agent's system prompt before each model call.",
    root: &MIDDLEWARE,
};

static MIDDLEWARE: Object = Object {
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

static MIDDLEWARE_ENTRY: Object = Object {
    name: "prompt middleware entry",
    doc: "One prompt middleware function.",
    fields: &[
        field("agent", TEXT_REQ, REQ, "The agent it applies to, or `all`."),
        field("filename", Kind::Text(TextKind::OptionalRequired), Default::Null,
            "Python file, tried as `<bundle>/<filename>` then `<bundle>/tools/<filename>`."),
        field("function", TEXT_REQ, REQ,
            "Function in that file, called as fn(capture, history); without filename an import path `module:function`."),
    ],
    legacy: &[("hook_type", "hooks were replaced by prompt middleware: remove hook_type"), ("hook_agent", "the key is now `agent`")],
    rules: &[],
};

// ---------------------------------------------------------------- a2a.yaml

static A2A_FILE: FileSchema = FileSchema {
    kind: FileKind::A2a,
    path: "a2a.yaml",
    doc: "Remote (A2A) agents that replace same-named agents.yaml entries.",
    root: &A2A,
};

static A2A: Object = Object {
    name: "a2a.yaml",
    doc: "Remote agents.",
    fields: &[field(
        "agents",
        Kind::ObjectList(&A2A_AGENT),
        Default::EmptyList,
        "Remote agents; names must be unique.",
    )],
    legacy: &[],
    rules: &[a2a_names_unique],
};

static A2A_AGENT: Object = Object {
    name: "a2a agent",
    doc: "One remote agent.",
    fields: &[
        field(
            "name",
            TEXT_REQ,
            REQ,
            "The agents.yaml entry this remote agent replaces.",
        ),
        field("url", TEXT_REQ, REQ, "The remote agent's URL."),
        field(
            "enabled",
            BOOL,
            Default::Bool(true),
            "Whether the remote agent is used.",
        ),
        field(
            "max_reconnects",
            int(Some(0), None, false),
            Default::Int(3),
            "Reconnect attempts, 0 or more.",
        ),
        field(
            "polling_interval",
            Kind::Float { min: 0.0 },
            Default::Float(0.5),
            "Seconds between polls, 0 or more.",
        ),
        field(
            "silent",
            BOOL_OPT,
            Default::Null,
            "Suppress the remote agent's messages.",
        ),
        field(
            "client",
            Kind::Object {
                shape: &A2A_CLIENT,
                nullable: false,
            },
            Default::Object,
            "Client options.",
        ),
    ],
    legacy: &[],
    rules: &[],
};

static A2A_CLIENT: Object = Object {
    name: "a2a client",
    doc: "Remote client options (only `streaming` reaches the client in 0.2.0).",
    fields: &[
        field("streaming", BOOL, Default::Bool(true), "Stream responses."),
        field("polling", BOOL, Default::Bool(false), "Poll for results."),
        field(
            "use_client_preference",
            BOOL,
            Default::Bool(false),
            "Prefer the client's transport.",
        ),
        field(
            "accepted_output_modes",
            list_clean(false, false, false, false),
            Default::EmptyList,
            "Accepted output modes.",
        ),
        field(
            "extensions",
            list_clean(false, false, false, false),
            Default::EmptyList,
            "Protocol extensions.",
        ),
        field(
            "supported_transports",
            list_clean(false, false, false, false),
            Default::EmptyList,
            "Transports.",
        ),
        field(
            "push_notification_configs",
            Kind::List(ListKind::Dicts { nullable: false }),
            Default::EmptyList,
            "Push notification configs.",
        ),
    ],
    legacy: &[],
    rules: &[],
};

fn a2a_names_unique(obj: &Obj, cx: &mut RuleContext<'_>) {
    duplicates_in_list(obj.list("agents"), "name", "a2a agent name", cx);
}

// ---------------------------------------------------------------- tools.yaml

static TOOLS_FILE: FileSchema = FileSchema {
    kind: FileKind::Tools,
    path: "tools.yaml",
    doc: "Python tools bound to agents, and lifecycle tools run at run events.",
    root: &TOOLS,
};

static TOOLS: Object = Object {
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

static TOOL: Object = Object {
    name: "tool",
    doc: "One Python function offered to an agent or run after its output.",
    fields: &[
        field(
            "agent",
            Kind::StrOrList,
            REQ,
            "The owning agent, or a list of agents (a single name when `outcome` is set).",
        ),
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
        ),
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

static LIFECYCLE_TOOL: Object = Object {
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
        ),
        field("file", TEXT_REQ, REQ, "Python file, resolved like tools."),
        field("function", TEXT_REQ, REQ, "Function in that file."),
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

static TOOL_UI: Object = Object {
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

static UI_CONTRACT: Object = Object {
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

static UI_ACTION: Object = Object {
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

static OUTCOME: Object = Object {
    name: "tool outcome",
    doc: "A finite tool result stored in a protected routing variable.",
    fields: &[
        field(
            "context_key",
            Kind::Text(TextKind::ExactName),
            REQ,
            "Routing variable that stores the outcome.",
        ),
        field(
            "attempts_key",
            Kind::Text(TextKind::ExactName),
            REQ,
            "Variable that counts attempts.",
        ),
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

fn tool_ui_requirements(obj: &Obj, cx: &mut RuleContext<'_>) {
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

fn ui_realization(obj: &Obj, cx: &mut RuleContext<'_>) {
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

fn tool_outcome_requirements(obj: &Obj, cx: &mut RuleContext<'_>) {
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

fn outcome_spec(obj: &Obj, cx: &mut RuleContext<'_>) {
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

fn lifecycle_agent_rule(obj: &Obj, cx: &mut RuleContext<'_>) {
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

// ---------------------------------------------------------------- ui_config.yaml

static UI_CONFIG_FILE: FileSchema = FileSchema {
    kind: FileKind::UiConfig,
    path: "ui_config.yaml",
    doc: "Which agents' messages the chat UI shows.",
    root: &UI_CONFIG,
};

static UI_CONFIG: Object = Object {
    name: "ui_config.yaml",
    doc: "UI filtering.",
    fields: &[field("visual_agents", list_clean(true, false, false, false), Default::Null,
        "Agents whose messages are shown; `[]` shows all, null or absent hides every agent message.")],
    legacy: &[],
    rules: &[],
};

// ---------------------------------------------------------------- extended_orchestration/task_batches.yaml

static TASK_BATCHES_FILE: FileSchema = FileSchema {
    kind: FileKind::TaskBatches,
    path: "extended_orchestration/task_batches.yaml",
    doc: "Task batches: after a trigger agent's turn, run a list of tasks through worker agents.",
    root: &TASK_BATCHES,
};

static TASK_BATCHES: Object = Object {
    name: "task_batches.yaml",
    doc: "Explicit batches and conveyors.",
    fields: &[
        field("version", Kind::VersionOne, Default::Int(1), "Always 1."),
        field(
            "batches",
            Kind::ObjectList(&BATCH),
            Default::EmptyList,
            "Explicit batches.",
        ),
        field(
            "conveyors",
            Kind::ObjectList(&CONVEYOR),
            Default::EmptyList,
            "Decomposition-driven conveyors (each becomes a batch).",
        ),
    ],
    legacy: &[],
    rules: &[batch_ids_unique],
};

const FAILURE_POLICIES: &[&str] = &["fail_batch", "continue_with_available", "collect_errors"];

static BATCH: Object = Object {
    name: "task batch",
    doc: "An explicit task batch.",
    fields: &[
        field("id", TEXT_REQ, REQ, "Unique batch id."),
        field(
            "trigger_agent",
            TEXT_REQ,
            REQ,
            "The batch runs after this agent's validated output.",
        ),
        field(
            "source",
            Kind::Object {
                shape: &BATCH_SOURCE,
                nullable: false,
            },
            REQ,
            "Where the task list comes from.",
        ),
        field(
            "worker",
            Kind::Object {
                shape: &BATCH_WORKER,
                nullable: false,
            },
            Default::Object,
            "How a task maps to a worker call.",
        ),
        field(
            "execution",
            Kind::Object {
                shape: &BATCH_EXECUTION,
                nullable: false,
            },
            Default::Object,
            "Concurrency, dependencies, failure policy.",
        ),
        field(
            "result",
            Kind::Object {
                shape: &BATCH_RESULT,
                nullable: false,
            },
            REQ,
            "Where results and status are written.",
        ),
        field(
            "recovery",
            Kind::Object {
                shape: &BATCH_RECOVERY,
                nullable: true,
            },
            Default::Null,
            "Bounded continuation of failed tasks.",
        ),
        field(
            "allowed_execution_agents",
            list_clean(false, false, false, false),
            Default::EmptyList,
            "Restricts the worker agents.",
        ),
    ],
    legacy: &[],
    rules: &[batch_recovery],
};

static BATCH_SOURCE: Object = Object {
    name: "task batch source",
    doc: "Where the tasks come from.",
    fields: &[
        field(
            "kind",
            Kind::Enum {
                values: &["context_variable", "structured_output"],
                nullable: false,
            },
            REQ,
            "`context_variable` or `structured_output` (of the trigger agent).",
        ),
        field("path", TEXT_REQ, REQ, "Dot path to the task list."),
        field(
            "task_model",
            TEXT_REQ,
            REQ,
            "Task model name or `${var}` (advisory).",
        ),
    ],
    legacy: &[],
    rules: &[],
};

static BATCH_WORKER: Object = Object {
    name: "task batch worker",
    doc: "How a task item maps to a worker agent call.",
    fields: &[
        field(
            "mode",
            Kind::Enum {
                values: &["ag2_agent"],
                nullable: false,
            },
            Default::Str("ag2_agent"),
            "Only `ag2_agent`.",
        ),
        field(
            "agent_field",
            TEXT_REQ,
            Default::Str("initial_agent"),
            "Task field naming the worker agent.",
        ),
        field(
            "prompt_field",
            TEXT_REQ,
            Default::Str("initial_message"),
            "Task field holding the worker prompt.",
        ),
        field(
            "context_fields",
            list_clean(false, false, false, false),
            Default::EmptyList,
            "Task fields copied into the worker context.",
        ),
    ],
    legacy: &[],
    rules: &[],
};

/// Execution settings shared by explicit batches (`execution:`) and conveyors.
const CONCURRENCY: Field = field(
    "concurrency",
    int(Some(1), Some(32), false),
    Default::Int(4),
    "Tasks run at once, 1–32.",
);
const FAILURE_POLICY: Field = field(
    "failure_policy",
    Kind::Enum {
        values: FAILURE_POLICIES,
        nullable: false,
    },
    Default::Str("fail_batch"),
    "fail_batch, continue_with_available or collect_errors.",
);
const RETRY_LIMIT: Field = field(
    "retry_limit",
    int(Some(0), Some(5), false),
    Default::Int(0),
    "Retries per task, 0–5.",
);
const TIMEOUT_SECONDS: Field = field(
    "timeout_seconds",
    int(Some(1), None, true),
    Default::Null,
    "Per-attempt timeout (null: 120 s).",
);

static BATCH_EXECUTION: Object = Object {
    name: "task batch execution",
    doc: "Execution policy.",
    fields: &[
        CONCURRENCY,
        field(
            "dependency_field",
            TEXT_REQ,
            Default::Str("depends_on"),
            "Task field listing dependencies.",
        ),
        FAILURE_POLICY,
        RETRY_LIMIT,
        TIMEOUT_SECONDS,
    ],
    legacy: &[],
    rules: &[],
};

static BATCH_RESULT: Object = Object {
    name: "task batch result",
    doc: "Where a batch writes its results.",
    fields: &[
        field(
            "context_key",
            TEXT_REQ,
            REQ,
            "Declared variable receiving the merged results.",
        ),
        field(
            "status_key",
            TEXT_REQ,
            REQ,
            "Declared variable receiving the batch status.",
        ),
        field(
            "merge_strategy",
            Kind::Enum {
                values: &["collect_task_outputs", "collect_outputs"],
                nullable: false,
            },
            Default::Str("collect_task_outputs"),
            "How outputs merge.",
        ),
        field(
            "require_owned_paths",
            BOOL,
            Default::Bool(true),
            "Tasks must declare owned_paths.",
        ),
    ],
    legacy: &[],
    rules: &[],
};

static BATCH_RECOVERY: Object = Object {
    name: "task batch recovery",
    doc: "Bounded continuation of a batch's failed tasks.",
    fields: &[
        field(
            "trigger_agent",
            Kind::Text(TextKind::Min1),
            REQ,
            "Agent whose turn triggers recovery (not the batch trigger).",
        ),
        field(
            "request_key",
            Kind::Text(TextKind::Min1),
            REQ,
            "Declared variable holding the recovery request.",
        ),
        field(
            "outcome_key",
            Kind::Text(TextKind::Min1),
            REQ,
            "Declared variable receiving the recovery outcome.",
        ),
        field(
            "status_key",
            Kind::Text(TextKind::Min1),
            REQ,
            "Declared variable receiving the recovery status.",
        ),
        field(
            "input_keys",
            Kind::List(ListKind::Raw),
            Default::EmptyList,
            "Declared variables the recovery reads.",
        ),
    ],
    legacy: &[],
    rules: &[],
};

static CONVEYOR: Object = Object {
    name: "conveyor",
    doc: "A decomposition agent's plan run by execution agents.",
    fields: &[
        field(
            "id",
            TEXT_REQ,
            REQ,
            "Unique id; results go to `<id>_results` and `<id>_status`.",
        ),
        field(
            "decomposition_agent",
            TEXT_REQ,
            REQ,
            "Agent whose output holds `DecompositionPlan.tasks`.",
        ),
        field(
            "execution_agents",
            list_clean(false, false, true, false),
            REQ,
            "Agents allowed to run tasks (at least one).",
        ),
        CONCURRENCY,
        FAILURE_POLICY,
        RETRY_LIMIT,
        TIMEOUT_SECONDS,
        field(
            "require_owned_paths",
            BOOL,
            Default::Bool(false),
            "Tasks must declare owned_paths.",
        ),
    ],
    legacy: &[],
    rules: &[],
};

fn batch_recovery(obj: &Obj, cx: &mut RuleContext<'_>) {
    let Some(recovery) = obj.obj("recovery") else {
        return;
    };
    if obj
        .obj("source")
        .and_then(|s| s.str("kind"))
        .is_some_and(|k| k != "context_variable")
    {
        cx.report(
            Rule::TaskBatchRecovery,
            obj.key_range("recovery"),
            "a batch with `recovery` needs `source.kind: context_variable` (an authoritative task inventory)",
        );
    }
    if recovery.str("trigger_agent").is_some()
        && recovery.str("trigger_agent") == obj.str("trigger_agent")
    {
        cx.report(
            Rule::TaskBatchRecovery,
            recovery.value_range("trigger_agent"),
            "the recovery trigger_agent must differ from the batch's trigger_agent",
        );
    }
    let result = obj.obj("result");
    let keys: Vec<(&str, crate::syntax::TextRange)> = [
        result.and_then(|r| {
            r.str("context_key")
                .map(|k| (k, r.value_range("context_key")))
        }),
        result.and_then(|r| {
            r.str("status_key")
                .map(|k| (k, r.value_range("status_key")))
        }),
        recovery
            .str("request_key")
            .map(|k| (k, recovery.value_range("request_key"))),
        recovery
            .str("outcome_key")
            .map(|k| (k, recovery.value_range("outcome_key"))),
        recovery
            .str("status_key")
            .map(|k| (k, recovery.value_range("status_key"))),
    ]
    .into_iter()
    .flatten()
    .collect();
    for (i, (key, range)) in keys.iter().enumerate() {
        if keys[..i].iter().any(|(k, _)| k == key) {
            cx.report(
                Rule::TaskBatchRecovery,
                *range,
                format!("`{key}` is used twice: the result context/status keys and the recovery request/outcome/status keys must all be distinct"),
            );
        }
    }
}

fn batch_ids_unique(obj: &Obj, cx: &mut RuleContext<'_>) {
    let mut seen: Vec<(String, crate::syntax::TextRange)> = Vec::new();
    let all = obj.list("batches").iter().chain(obj.list("conveyors"));
    for item in all {
        let Some(o) = item.as_obj() else { continue };
        let Some(id) = o.str("id") else { continue };
        let range = o.value_range("id");
        if let Some((_, first)) = seen.iter().find(|(n, _)| n == id) {
            cx.out.push(
                crate::diagnostics::Diagnostic::new(
                    Rule::DuplicateName,
                    cx.file,
                    range,
                    format!("duplicate task batch id `{id}` (batch and conveyor ids share one namespace); rename one"),
                )
                .with_related(cx.file, *first, "first declared here"),
            );
        } else {
            seen.push((id.to_string(), range));
        }
    }
}
