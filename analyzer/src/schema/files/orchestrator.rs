//! `orchestrator.yaml`.

use super::{field, int, FileSchema, BOOL, REQ, STARTUP_MODES, TEXT_OPT, TEXT_REQ};
use crate::base::FileKind;
use crate::rules::Rule;
use crate::schema::kinds::{Default, Kind};
use crate::schema::normalized::Obj;
use crate::schema::{Object, Refers, RuleContext};

pub(super) static ORCHESTRATOR_FILE: FileSchema = FileSchema {
    kind: FileKind::Orchestrator,
    doc: "The workflow's identity and start: name, startup mode, first agent, turn budget. The only required file of a bundle.",
    root: &ORCHESTRATOR,
};

pub(super) static ORCHESTRATOR: Object = Object {
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
            "The agent that speaks first, or `user` to let the user-sourced rules choose it. 0.2.0 has no first-agent fallback: set it.").refers(Refers::Agent { user: true, terminate: false }),
        field("failure_message_key", TEXT_OPT, Default::Null,
            "A context variable declared with `type: string` whose value is shown to the user when the run ends as workflow_failed.").refers(Refers::Variable),
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

pub(super) static ORCHESTRATOR_TRIGGER: Object = Object {
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

pub(super) fn orchestrator_trigger_needs_kind(obj: &Obj, cx: &mut RuleContext<'_>) {
    if !["type", "event", "endpoint"].iter().any(|k| obj.has(k)) {
        cx.report(
            Rule::IncompleteTrigger,
            cx.anchor,
            "this trigger must declare at least one of `type`, `event` or `endpoint` (e.g. `type: chat`)",
        );
    }
}
