//! `agents.yaml`.

use super::{field, int, FileSchema, BOOL, REQ, TEXT_OPT, TEXT_REQ};
use crate::base::FileKind;
use crate::rules::Rule;
use crate::schema::kinds::{Default, Kind};
use crate::schema::normalized::Obj;
use crate::schema::{Object, RuleContext};

pub(super) static AGENTS_FILE: FileSchema = FileSchema {
    kind: FileKind::Agents,
    doc: "The agents of the workflow and their prompts.",
    root: &AGENTS,
};

pub(super) static AGENTS: Object = Object {
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

pub(super) static AGENT: Object = Object {
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

pub(super) static PROMPT_SECTION: Object = Object {
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

pub(super) static IMAGE_GENERATION: Object = Object {
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

pub(super) fn agent_needs_prompt(obj: &Obj, cx: &mut RuleContext<'_>) {
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

pub(super) fn agent_names_unique(obj: &Obj, cx: &mut RuleContext<'_>) {
    duplicates_in_list(obj.list("agents"), "name", "agent name", cx);
}

/// Reports objects of a list that repeat `key`'s value.
pub(super) fn duplicates_in_list(
    items: &[crate::schema::Item],
    key: &str,
    what: &str,
    cx: &mut RuleContext<'_>,
) {
    let mut seen: crate::base::hash::HashMap<&str, crate::base::TextRange> =
        crate::base::hash::HashMap::default();
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
