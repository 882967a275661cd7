//! `extended_orchestration/task_batches.yaml`.

use super::{field, int, list_clean, FileSchema, AGENT, BOOL, REQ, TEXT_REQ};
use crate::base::FileKind;
use crate::rules::Rule;
use crate::schema::kinds::{Default, Kind, ListKind, TextKind};
use crate::schema::normalized::Obj;
use crate::schema::{Field, Object, Refers, RuleContext};

pub(super) static TASK_BATCHES_FILE: FileSchema = FileSchema {
    kind: FileKind::TaskBatches,
    doc: "Task batches: after a trigger agent's turn, run a list of tasks through worker agents.",
    root: &TASK_BATCHES,
};

pub(super) static TASK_BATCHES: Object = Object {
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

pub(super) const FAILURE_POLICIES: &[&str] =
    &["fail_batch", "continue_with_available", "collect_errors"];

pub(super) static BATCH: Object = Object {
    name: "task batch",
    doc: "An explicit task batch.",
    fields: &[
        field("id", TEXT_REQ, REQ, "Unique batch id."),
        field(
            "trigger_agent",
            TEXT_REQ,
            REQ,
            "The batch runs after this agent's validated output.",
        )
        .refers(AGENT),
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
        )
        .refers(AGENT),
    ],
    legacy: &[],
    rules: &[batch_recovery],
};

pub(super) static BATCH_SOURCE: Object = Object {
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
        )
        .refers(Refers::Model { primitives: false }),
    ],
    legacy: &[],
    rules: &[],
};

pub(super) static BATCH_WORKER: Object = Object {
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
pub(super) const CONCURRENCY: Field = field(
    "concurrency",
    int(Some(1), Some(32), false),
    Default::Int(4),
    "Tasks run at once, 1–32.",
);
pub(super) const FAILURE_POLICY: Field = field(
    "failure_policy",
    Kind::Enum {
        values: FAILURE_POLICIES,
        nullable: false,
    },
    Default::Str("fail_batch"),
    "fail_batch, continue_with_available or collect_errors.",
);
pub(super) const RETRY_LIMIT: Field = field(
    "retry_limit",
    int(Some(0), Some(5), false),
    Default::Int(0),
    "Retries per task, 0–5.",
);
pub(super) const TIMEOUT_SECONDS: Field = field(
    "timeout_seconds",
    int(Some(1), None, true),
    Default::Null,
    "Per-attempt timeout (null: 120 s).",
);

pub(super) static BATCH_EXECUTION: Object = Object {
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

pub(super) static BATCH_RESULT: Object = Object {
    name: "task batch result",
    doc: "Where a batch writes its results.",
    fields: &[
        field(
            "context_key",
            TEXT_REQ,
            REQ,
            "Declared variable receiving the merged results.",
        )
        .refers(Refers::Variable),
        field(
            "status_key",
            TEXT_REQ,
            REQ,
            "Declared variable receiving the batch status.",
        )
        .refers(Refers::Variable),
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

pub(super) static BATCH_RECOVERY: Object = Object {
    name: "task batch recovery",
    doc: "Bounded continuation of a batch's failed tasks.",
    fields: &[
        field(
            "trigger_agent",
            Kind::Text(TextKind::Min1),
            REQ,
            "Agent whose turn triggers recovery (not the batch trigger).",
        )
        .refers(AGENT),
        field(
            "request_key",
            Kind::Text(TextKind::Min1),
            REQ,
            "Declared variable holding the recovery request.",
        )
        .refers(Refers::Variable),
        field(
            "outcome_key",
            Kind::Text(TextKind::Min1),
            REQ,
            "Declared variable receiving the recovery outcome.",
        )
        .refers(Refers::Variable),
        field(
            "status_key",
            Kind::Text(TextKind::Min1),
            REQ,
            "Declared variable receiving the recovery status.",
        )
        .refers(Refers::Variable),
        field(
            "input_keys",
            Kind::List(ListKind::Raw),
            Default::EmptyList,
            "Declared variables the recovery reads.",
        )
        .refers(Refers::Variable),
    ],
    legacy: &[],
    rules: &[],
};

pub(super) static CONVEYOR: Object = Object {
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
        )
        .refers(AGENT),
        field(
            "execution_agents",
            list_clean(false, false, true, false),
            REQ,
            "Agents allowed to run tasks (at least one).",
        )
        .refers(AGENT),
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

pub(super) fn batch_recovery(obj: &Obj, cx: &mut RuleContext<'_>) {
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
    let keys: Vec<(&str, crate::base::TextRange)> = [
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

pub(super) fn batch_ids_unique(obj: &Obj, cx: &mut RuleContext<'_>) {
    let mut seen: Vec<(String, crate::base::TextRange)> = Vec::new();
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
