//! `ui_config.yaml`.

use super::{field, list_clean, FileSchema, AGENT};
use crate::base::FileKind;
use crate::schema::kinds::Default;
use crate::schema::Object;

pub(super) static UI_CONFIG_FILE: FileSchema = FileSchema {
    kind: FileKind::UiConfig,
    doc: "Which agents' messages the chat UI shows.",
    root: &UI_CONFIG,
};

pub(super) static UI_CONFIG: Object = Object {
    name: "ui_config.yaml",
    doc: "UI filtering.",
    fields: &[field("visual_agents", list_clean(true, false, false, false), Default::Null,
        "Agents whose messages are shown; `[]` shows all, null or absent hides every agent message.").refers(AGENT)],
    legacy: &[],
    rules: &[],
};
