//! MZ802: prose output formats on agents whose output a registry model
//! already enforces.

use super::grouped;
use crate::base::hash::HashSet;
use crate::diagnostics::Diagnostic;
use crate::model::{Bundle, PromptSection};
use crate::rules::Rule;

/// Whether a section describes the reply's format, by its id or heading.
fn is_output_format(section: &PromptSection) -> bool {
    let words = |text: &str| -> String {
        text.chars()
            .map(|c| {
                if c.is_alphanumeric() {
                    c.to_ascii_lowercase()
                } else {
                    ' '
                }
            })
            .collect::<String>()
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    let id = section
        .id
        .as_ref()
        .map(|i| words(&i.text))
        .unwrap_or_default();
    let heading = words(&section.heading.text);
    [id.as_str(), heading.as_str()].iter().any(|t| {
        t.contains("output format")
            || t.contains("response format")
            || t.contains("output schema")
            || t.contains("json format")
    })
}

/// Output-format sections shorter than this are reminders ("Respond with
/// ONLY valid JSON"), not worth a finding: they cost a few tokens.
const OUTPUT_FORMAT_MIN_CHARS: usize = 400;

/// What in a section restates the reply's shape: lines of a JSON example or
/// skeleton (`"field": value`), and lines listing fields of the bundle's
/// models one by one (`- field: meaning`, `` `field` (string): ``). Prose
/// about how to choose values (`Set outcome to ready when …`) is neither:
/// the schema cannot say it.
fn shape_lines(content: &str, field_names: &HashSet<&str>) -> (usize, usize) {
    let mut json_keys = 0;
    let mut listed_fields = 0;
    for line in content.lines() {
        let line = line.trim_start();
        if let Some(rest) = line.strip_prefix('"') {
            if let Some((key, after)) = rest.split_once('"') {
                if !key.is_empty() && !key.contains(' ') && after.trim_start().starts_with(':') {
                    json_keys += 1;
                    continue;
                }
            }
        }
        let item = line
            .strip_prefix("- ")
            .or_else(|| line.strip_prefix("* "))
            .unwrap_or(line)
            .trim_start();
        let name_end = item
            .char_indices()
            .find(|(_, c)| !(c.is_alphanumeric() || *c == '_' || *c == '`'))
            .map_or(item.len(), |(i, _)| i);
        let name = item[..name_end].trim_matches('`');
        let after = item[name_end..].trim_start();
        if !name.is_empty()
            && field_names.contains(name)
            && (after.starts_with(':') || after.starts_with('('))
        {
            listed_fields += 1;
        }
    }
    (json_keys, listed_fields)
}

pub(super) fn check(bundle: &Bundle, out: &mut Vec<Diagnostic>) {
    let field_names: HashSet<&str> = bundle
        .models
        .iter()
        .flat_map(|m| m.fields.iter().map(|f| f.name.text.as_str()))
        .collect();
    for agent in &bundle.agents {
        let Some(model) = bundle.registry_model(&agent.name.text) else {
            continue;
        };
        for section in agent.sent_sections().iter().filter(|s| is_output_format(s)) {
            let chars = section.content.text.chars().count();
            if chars < OUTPUT_FORMAT_MIN_CHARS {
                continue;
            }
            let (json_keys, listed_fields) = shape_lines(&section.content.text, &field_names);
            let what = if json_keys >= 2 {
                "a JSON example of the reply"
            } else if listed_fields >= 3 {
                "the model's fields, one by one"
            } else {
                continue;
            };
            out.push(
                Diagnostic::new(
                    Rule::OutputFormatSection,
                    section.heading.file,
                    section.heading.range,
                    format!(
                        "the section `{}` of `{}` restates the reply's shape ({} chars, {what}), which the registry model `{}` already enforces: the provider gets its schema and mozaiks validates every reply, so the copy costs tokens on every call and goes stale when the model changes; keep only what the schema cannot say (how to choose values)",
                        section.heading.text,
                        agent.name.text,
                        grouped(chars),
                        model.text
                    ),
                )
                .with_related(model.file, model.range, "the registry entry"),
            );
        }
    }
}
