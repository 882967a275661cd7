//! `a2a.yaml`.

use super::agents::duplicates_in_list;
use super::{field, int, list_clean, FileSchema, BOOL, BOOL_OPT, REQ, TEXT_REQ};
use crate::base::FileKind;
use crate::schema::kinds::{Default, Kind, ListKind};
use crate::schema::normalized::Obj;
use crate::schema::{Object, RuleContext};

pub(super) static A2A_FILE: FileSchema = FileSchema {
    kind: FileKind::A2a,
    doc: "Remote (A2A) agents that replace same-named agents.yaml entries.",
    root: &A2A,
};

pub(super) static A2A: Object = Object {
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

pub(super) static A2A_AGENT: Object = Object {
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

pub(super) static A2A_CLIENT: Object = Object {
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

pub(super) fn a2a_names_unique(obj: &Obj, cx: &mut RuleContext<'_>) {
    duplicates_in_list(obj.list("agents"), "name", "a2a agent name", cx);
}
