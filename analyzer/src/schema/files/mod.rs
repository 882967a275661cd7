//! The declarative description of every bundle file kind, true to mozaiks
//! 0.2.0's contracts (bundle-format §5–§16, scalar-coercion §8).

use a2a::A2A_FILE;
use agents::AGENTS_FILE;
use context_variables::CONTEXT_VARIABLES_FILE;
use middleware::MIDDLEWARE_FILE;
use orchestrator::ORCHESTRATOR_FILE;
use structured_outputs::STRUCTURED_OUTPUTS_FILE;
use task_batches::TASK_BATCHES_FILE;
use tools::TOOLS_FILE;
use transition_graph::TRANSITION_GRAPH_FILE;
use ui_config::UI_CONFIG_FILE;

use super::kinds::{Default, Kind, ListKind, TextKind};
use super::{Field, Object, Refers};
use crate::base::FileKind;

mod a2a;
mod agents;
mod context_variables;
mod middleware;
mod orchestrator;
mod structured_outputs;
mod task_batches;
mod tools;
mod transition_graph;
mod ui_config;

pub use structured_outputs::{SO_LITERAL, SO_MODEL, SO_UNION};

/// A file kind's description.
#[derive(Debug)]
pub struct FileSchema {
    pub kind: FileKind,
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

pub(super) const fn field(
    name: &'static str,
    kind: Kind,
    default: Default,
    doc: &'static str,
) -> Field {
    Field {
        name,
        alias: None,
        kind,
        required: matches!(default, Default::None),
        default,
        doc,
        refers: Refers::Nothing,
    }
}

pub(super) const REQ: Default = Default::None;
/// What most agent fields name: one of the bundle's agents, the reserved
/// `user` and `terminate` not allowed.
pub(super) const AGENT: Refers = Refers::Agent {
    user: false,
    terminate: false,
};
pub(super) const TEXT_REQ: Kind = Kind::Text(TextKind::Required);
pub(super) const TEXT_OPT: Kind = Kind::Text(TextKind::Optional);
pub(super) const BOOL: Kind = Kind::Bool { nullable: false };
pub(super) const BOOL_OPT: Kind = Kind::Bool { nullable: true };
pub(super) const fn list_clean(
    nullable: bool,
    empty_to_null: bool,
    non_empty: bool,
    reserved: bool,
) -> Kind {
    Kind::List(ListKind::Clean {
        nullable,
        empty_to_null,
        non_empty,
        reserved,
    })
}
pub(super) const fn int(min: Option<i64>, max: Option<i64>, nullable: bool) -> Kind {
    Kind::Int {
        min,
        max,
        nullable,
        strict: false,
    }
}

// ---------------------------------------------------------------- vocabulary

pub const STARTUP_MODES: &[&str] = &["AgentDriven", "UserDriven", "BackendOnly"];
/// The `tool_type` values, in their canonical spelling.
pub const TOOL_TYPES: &[&str] = &["Agent_Tool", "UI_Tool", "UI_Surface"];
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
