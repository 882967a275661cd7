//! MZ8xx: what agents are told. Static prompt prose repeated across agents,
//! and prose output formats on agents whose output a registry model already
//! enforces (the composition itself is `crate::prompt`).

use std::collections::HashMap;

use crate::diagnostics::Diagnostic;
use crate::model::{Bundle, PromptSection};
use crate::rules::Rule;

/// Sections shorter than this (after whitespace is collapsed) are not
/// reported as duplicates: short shared lines ("Be concise.") are fine.
pub const DUPLICATE_MIN_CHARS: usize = 400;

pub fn check(bundle: &Bundle, out: &mut Vec<Diagnostic>) {
    duplicated_sections(bundle, out);
    output_format_sections(bundle, out);
}

/// The sections that reach the prompt: `prompt_sections`, else the custom ones.
fn sent_sections(agent: &crate::model::Agent) -> &[PromptSection] {
    if agent.prompt_sections.is_empty() {
        &agent.prompt_sections_custom
    } else {
        &agent.prompt_sections
    }
}

/// Content compared for duplicates: ASCII case and runs of whitespace do
/// not count.
fn normalized(text: &str) -> String {
    text.split_ascii_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_ascii_lowercase()
}

/// A hash and the length in characters of `normalized(text)`, computed in
/// one pass over the bytes without building it: the check runs on every
/// keystroke in the editor, over every section.
fn normalized_key(text: &str) -> (u64, usize) {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut chars = 0;
    let (mut started, mut space) = (false, false);
    for &byte in text.as_bytes() {
        if byte.is_ascii_whitespace() {
            space = started;
            continue;
        }
        if space {
            hash = (hash ^ b' ' as u64).wrapping_mul(0x0100_0000_01b3);
            chars += 1;
            space = false;
        }
        started = true;
        hash = (hash ^ byte.to_ascii_lowercase() as u64).wrapping_mul(0x0100_0000_01b3);
        // Count characters, not UTF-8 continuation bytes.
        if byte & 0xC0 != 0x80 {
            chars += 1;
        }
    }
    (hash, chars)
}

fn duplicated_sections(bundle: &Bundle, out: &mut Vec<Diagnostic>) {
    // Candidates grouped by the normalized content's hash and length, then
    // confirmed by comparing the normalized texts (only for shared keys).
    let mut keyed: HashMap<(u64, usize), Vec<(&str, &PromptSection)>> = HashMap::new();
    for agent in &bundle.agents {
        for section in sent_sections(agent) {
            if section.content.text.len() < DUPLICATE_MIN_CHARS {
                continue; // normalizing never lengthens the text
            }
            let key = normalized_key(&section.content.text);
            if key.1 >= DUPLICATE_MIN_CHARS {
                keyed
                    .entry(key)
                    .or_default()
                    .push((&agent.name.text, section));
            }
        }
    }
    let mut copies: HashMap<String, Vec<(&str, &PromptSection)>> = HashMap::new();
    for candidates in keyed.into_values().filter(|c| c.len() > 1) {
        for (agent, section) in candidates {
            copies
                .entry(normalized(&section.content.text))
                .or_default()
                .push((agent, section));
        }
    }
    for group in copies.values() {
        let agents: Vec<&str> = group.iter().map(|(a, _)| *a).collect();
        let distinct = {
            let mut a = agents.clone();
            a.sort_unstable();
            a.dedup();
            a.len()
        };
        if distinct < 2 {
            continue;
        }
        let (first_agent, first) = group[0];
        for (agent, section) in &group[1..] {
            let chars = section.content.text.chars().count();
            let mut d = Diagnostic::new(
                Rule::DuplicatedPromptSection,
                section.heading.file,
                section.heading.range,
                format!(
                    "the section `{}` of `{agent}` repeats ({} chars) the section `{}` of `{first_agent}`{}; every agent pays for the copy on every model call — keep the fact in one place (a shared context variable or the one agent that needs it)",
                    section.heading.text,
                    chars,
                    first.heading.text,
                    if group.len() > 2 {
                        format!(" and {} more cop{}", group.len() - 2, if group.len() == 3 { "y" } else { "ies" })
                    } else {
                        String::new()
                    }
                ),
            );
            for (other_agent, other) in group
                .iter()
                .filter(|(a, s)| !(a == agent && std::ptr::eq(*s, *section)))
            {
                d = d.with_related(
                    other.heading.file,
                    other.heading.range,
                    format!("the same text in `{other_agent}`"),
                );
            }
            out.push(d);
        }
    }
}

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

fn output_format_sections(bundle: &Bundle, out: &mut Vec<Diagnostic>) {
    for agent in &bundle.agents {
        let Some(model) = bundle.registry_model(&agent.name.text) else {
            continue;
        };
        for section in sent_sections(agent).iter().filter(|s| is_output_format(s)) {
            out.push(
                Diagnostic::new(
                    Rule::OutputFormatSection,
                    section.heading.file,
                    section.heading.range,
                    format!(
                        "the section `{}` of `{}` describes the reply's format ({} chars), which the registry model `{}` already enforces (the provider gets its schema and mozaiks validates every reply); keep only what the schema cannot say",
                        section.heading.text,
                        agent.name.text,
                        section.content.text.chars().count(),
                        model.text
                    ),
                )
                .with_related(model.file, model.range, "the registry entry"),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_is_the_normalized_texts() {
        for (a, b) in [
            ("Refunds  are\n granted.", "refunds are granted."),
            ("  Ünïcode\tTEXT ", "Ünïcode text"),
        ] {
            assert_eq!(normalized(a), normalized(b));
            assert_eq!(normalized_key(a), normalized_key(b));
            assert_eq!(normalized_key(a).1, normalized(a).chars().count());
        }
        assert_ne!(normalized_key("a b"), normalized_key("ab"));
    }
}
