//! Completion on the raw text of a file.

use crate::analysis::Analysis;
use crate::base::TextRange;
use crate::schema::{Field, Refers};

/// What a completion item inserts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CompletionKind {
    Key,
    Value,
    Agent,
    Variable,
    Model,
    Function,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompletionItem {
    pub label: String,
    pub kind: CompletionKind,
    pub insert: String,
    pub documentation: String,
    /// The range the insert replaces (the partly typed word).
    pub replace: TextRange,
}

/// Completions at `offset` of a file's current text. Works on the raw text, so
/// a half-typed line or a syntax error elsewhere in the file does not matter;
/// names come from the bundle's latest analysis.
pub fn completions(
    analysis: &Analysis,
    kind: crate::base::FileKind,
    text: &str,
    offset: u32,
) -> Vec<CompletionItem> {
    let offset = (offset as usize).min(text.len());
    let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let before = &text[line_start..offset];
    let indent = before.len() - before.trim_start().len();
    let mut body = before.trim_start();
    let mut key_column = indent;
    let list_item = body.starts_with("- ");
    if let Some(rest) = body.strip_prefix("- ") {
        body = rest.trim_start();
        key_column = before.len() - body.len();
    }
    let word_start = offset - before.len()
        + before
            .char_indices()
            .rfind(|(_, c)| c.is_whitespace() || matches!(c, ':' | ',' | '[' | '{'))
            // Unicode whitespace (a no-break space) is several bytes long.
            .map_or(0, |(i, c)| i + c.len_utf8());
    let replace = TextRange::new(word_start as u32, offset as u32);
    let partial = &text[word_start..offset];
    let path = parent_path(text, line_start, key_column);
    let object = resolve_object(kind, &path);
    let names = |kind: CompletionKind, items: Vec<(String, String)>| -> Vec<CompletionItem> {
        items
            .into_iter()
            .filter(|(n, _)| n.starts_with(partial))
            .map(|(label, documentation)| CompletionItem {
                insert: label.clone(),
                label,
                kind: kind.clone(),
                documentation,
                replace,
            })
            .collect()
    };
    // `${` inside a value: context variables.
    if let Some(open) = before.rfind("${") {
        if !before[open..].contains('}') {
            let start = line_start + open + 2;
            let partial = &text[start..offset];
            return analysis
                .bundle
                .variables
                .iter()
                .filter(|v| v.name.text.starts_with(partial.trim()))
                .map(|v| CompletionItem {
                    label: v.name.text.clone(),
                    kind: CompletionKind::Variable,
                    insert: format!("{}}}", v.name.text),
                    documentation: v
                        .declared_type
                        .as_ref()
                        .map_or(String::new(), |t| format!("type {}", t.text)),
                    replace: TextRange::new(start as u32, offset as u32),
                })
                .collect();
        }
    }
    // `- x` under a key whose value is a list of names or enum values: an
    // item of that key's value, not a key.
    let scalar_item_of = (list_item && !body.contains(':') && object.is_none())
        .then(|| path.split_last())
        .flatten()
        .map(|(key, parents)| (key.as_str(), resolve_object(kind, parents)));
    let value_of = match body.split_once(':') {
        Some((key, _)) => Some((key.trim(), object)),
        None => scalar_item_of,
    };
    match value_of {
        // Completing a key of the object under the cursor.
        None => {
            let Some(object) = object else {
                return Vec::new();
            };
            object
                .fields
                .iter()
                .filter(|f| f.name.starts_with(partial))
                .map(|f| CompletionItem {
                    label: f.name.to_string(),
                    kind: CompletionKind::Key,
                    insert: format!("{}: ", f.name),
                    documentation: f.doc.to_string(),
                    replace,
                })
                .collect()
        }
        // Completing the value of `key:` (or an item of its list).
        Some((key, object)) => {
            let field = object.and_then(|o| o.field(key));
            if let Some(values) = field.and_then(|f| enum_values(&f.kind)) {
                return names(
                    CompletionKind::Value,
                    values
                        .iter()
                        .map(|v| (v.to_string(), String::new()))
                        .collect(),
                );
            }
            // What the value names comes from the schema: the field's own
            // description, or the registry whose entry this is.
            let refers = field.map(Field::references).or_else(|| {
                let (last, parents) = path.split_last()?;
                Some(resolve_object(kind, parents)?.field(last)?.references())
            });
            match refers {
                Some(Refers::Agent { user, terminate }) => {
                    let mut items: Vec<(String, String)> = analysis
                        .bundle
                        .agents
                        .iter()
                        .map(|a| (a.name.text.clone(), "agent".to_string()))
                        .collect();
                    if user {
                        items.push(("user".into(), "the human user (reserved)".into()));
                    }
                    if terminate {
                        items.push(("terminate".into(), "end the run (reserved)".into()));
                    }
                    names(CompletionKind::Agent, items)
                }
                Some(Refers::Variable) => names(
                    CompletionKind::Variable,
                    analysis
                        .bundle
                        .variables
                        .iter()
                        .map(|v| {
                            (
                                v.name.text.clone(),
                                v.declared_type
                                    .as_ref()
                                    .map_or(String::new(), |t| format!("type {}", t.text)),
                            )
                        })
                        .collect(),
                ),
                Some(Refers::Model { primitives }) => {
                    let mut items: Vec<(String, String)> = analysis
                        .bundle
                        .models
                        .iter()
                        .map(|m| (m.name.text.clone(), "definition".to_string()))
                        .collect();
                    if primitives {
                        items.extend(
                            crate::model::symbols::PRIMITIVE_FIELD_TYPES
                                .iter()
                                .map(|p| (p.to_string(), "primitive".to_string())),
                        );
                    }
                    names(CompletionKind::Model, items)
                }
                Some(Refers::Function) => names(
                    CompletionKind::Function,
                    analysis
                        .bundle
                        .python
                        .iter()
                        .flat_map(|p| {
                            let file = analysis.bundle.file(p.file).map_or("", |f| &f.relative);
                            p.module.defined.iter().zip(&p.module.docstrings).map(
                                move |((n, _), doc)| {
                                    let mut documentation = format!("Python function in {file}");
                                    if let Some(doc) = doc {
                                        documentation.push_str("\n\n");
                                        documentation.push_str(doc);
                                    }
                                    (n.clone(), documentation)
                                },
                            )
                        })
                        .collect(),
                ),
                Some(Refers::Nothing) | None => Vec::new(),
            }
        }
    }
}

fn enum_values(kind: &crate::schema::Kind) -> Option<Vec<&'static str>> {
    use crate::schema::Kind;
    Some(match kind {
        Kind::Enum { values, .. } | Kind::LowerEnum { values } | Kind::Catalog { values } => {
            values.to_vec()
        }
        Kind::EnumList { values, .. } => values.to_vec(),
        Kind::ToolType { .. } => crate::schema::TOOL_TYPES.to_vec(),
        Kind::Bool { .. } => vec!["true", "false"],
        _ => return None,
    })
}

/// The keys enclosing a line, outermost first (`-` for a list item), found by
/// indentation on the raw text.
pub(super) fn parent_path(text: &str, line_start: usize, column: usize) -> Vec<String> {
    let mut path = Vec::new();
    let mut limit = column;
    // After a list item, its parent key may stand at the item's own
    // indentation (`rules:` then `- a: 1` in the same column).
    let mut parent_at_limit = false;
    let mut end = line_start;
    while end > 0 && (limit > 0 || parent_at_limit) {
        let start = text[..end - 1].rfind('\n').map_or(0, |i| i + 1);
        let line = &text[start..end - 1];
        end = start;
        let trimmed = line.trim_start();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let indent = line.len() - trimmed.len();
        if let Some(rest) = trimmed.strip_prefix("- ") {
            // A list item: its own key sits two columns in.
            let item_column = indent + 2;
            if item_column < limit || (item_column == limit && column == limit) {
                if item_column < limit {
                    if let Some((key, value)) = rest.split_once(':') {
                        if value.trim().is_empty() && item_column < limit && column > item_column {
                            path.push(key.trim().to_string());
                        }
                    }
                }
                path.push("-".to_string());
                limit = indent;
                parent_at_limit = true;
            }
            continue;
        }
        let parent_here = parent_at_limit
            && indent == limit
            && trimmed
                .split_once(':')
                .is_some_and(|(_, v)| v.trim().is_empty());
        if indent < limit || parent_here {
            if let Some((key, _)) = trimmed.split_once(':') {
                path.push(key.trim().trim_matches(['"', '\'']).to_string());
            }
            limit = indent;
            parent_at_limit = false;
        }
    }
    path.reverse();
    path
}

/// The schema object at a key path.
pub(super) fn resolve_object(
    kind: crate::base::FileKind,
    path: &[String],
) -> Option<&'static crate::schema::Object> {
    use crate::schema::Kind;
    let mut object = crate::schema::file_schema(kind).root;
    let mut i = 0;
    while i < path.len() {
        let field = object.field(&path[i])?;
        i += 1;
        object = match field.kind {
            Kind::Object { shape, .. } => shape,
            Kind::ObjectList(shape) => {
                if path.get(i).map(String::as_str) == Some("-") {
                    i += 1;
                }
                shape
            }
            Kind::ObjectMap { shape, .. } => {
                i += 1; // the entry's name
                shape
            }
            Kind::ModelDefinitions => {
                i += 1; // the definition's name
                &crate::schema::files::SO_MODEL
            }
            _ => return None,
        };
    }
    Some(object)
}

#[cfg(test)]
mod completion_tests {
    use std::path::Path;

    use super::*;
    use crate::analyze_bundle;

    fn support_desk() -> crate::MemoryFs {
        crate::ide::tests::support_desk_fs()
    }

    fn complete(file: crate::base::FileKind, text: &str) -> Vec<String> {
        let fs = support_desk();
        let analysis = analyze_bundle(&fs, Path::new("/w/SupportDesk"));
        let at = text.find('|').unwrap();
        let text = text.replace('|', "");
        completions(&analysis, file, &text, at as u32)
            .into_iter()
            .map(|c| c.label)
            .collect()
    }

    /// Labels offered at the `$0` of an inline fixture.
    fn complete_at(text: &str) -> Vec<String> {
        let f = crate::ide::fixture::fixture(text);
        let file = f.analysis.bundle.file(f.file).unwrap();
        let kind = crate::base::FileKind::from_path(&file.relative).unwrap();
        completions(&f.analysis, kind, &file.text, f.offset)
            .into_iter()
            .map(|c| c.label)
            .collect()
    }

    #[test]
    fn agent_values_offer_the_bundles_agents_and_the_reserved_names_the_key_allows() {
        let agents = "
            //- /agents.yaml
            agents:
              - name: ResearchAgent
                system_message: Research.
              - name: ReplyAgent
                system_message: Reply.
        ";
        let target = complete_at(&format!(
            "{agents}
            //- /transition_graph.yaml
            transition_rules:
              - source_agent: ResearchAgent
                target_agent: Re$0
            "
        ));
        assert_eq!(target, ["ResearchAgent", "ReplyAgent"]);
        let reserved = complete_at(&format!(
            "{agents}
            //- /transition_graph.yaml
            transition_rules:
              - target_agent: $0
            "
        ));
        assert_eq!(
            reserved,
            ["ResearchAgent", "ReplyAgent", "user", "terminate"]
        );
        // A tool's agent is never `user` or `terminate`.
        let tool = complete_at(&format!(
            "{agents}
            //- /tools.yaml
            tools:
              - agent: $0
            "
        ));
        assert_eq!(tool, ["ResearchAgent", "ReplyAgent"]);
    }

    #[test]
    fn completion_of_keys_and_values_from_the_schema_and_the_bundle() {
        use crate::base::FileKind as F;
        let keys = complete(
            F::TransitionGraph,
            "transition_rules:\n  - source_agent: A\n    condition_|\n",
        );
        assert_eq!(keys, ["condition_type", "condition_key", "condition_value"]);
        let first_item = complete(F::TransitionGraph, "transition_rules:\n  - sou|");
        assert_eq!(first_item, ["source_agent"]);
        let nested = complete(F::Tools, "tools:\n  - agent: A\n    ui:\n      work|\n");
        assert_eq!(nested, ["workflow_primitive"]);
        let map_entry = complete(F::ContextVariables, "definitions:\n  my_var:\n    auth|\n");
        assert_eq!(map_entry, ["authority_class", "authorization"]);
        // A no-break space (two bytes) before the word.
        let after_nbsp = complete(
            F::TransitionGraph,
            "transition_rules:\n  - target_agent:\u{a0}t|",
        );
        assert_eq!(after_nbsp, ["terminate"]);
        let enum_values = complete(
            F::TransitionGraph,
            "transition_rules:\n  - transition_type: |",
        );
        assert_eq!(enum_values, ["after_turn", "condition"]);
        let variables = complete(
            F::TransitionGraph,
            "transition_rules:\n  - context_expression: \"${triage_o|\"",
        );
        assert_eq!(variables, ["triage_outcome"]);
        let models = complete(F::StructuredOutputs, "registry:\n  IntakeAgent: Cust|\n");
        assert_eq!(models, ["CustomerReply"]);
        let writers = complete(
            F::ContextVariables,
            "definitions:\n  flag:\n    writer_ids:\n      - determ|\n",
        );
        assert_eq!(writers, ["deterministic_tool"]);
        let flow_writers = complete(
            F::ContextVariables,
            "definitions:\n  flag:\n    writer_ids: [runtime, determ|]\n",
        );
        assert_eq!(flow_writers, ["deterministic_tool"]);
        let view = complete(
            F::ContextVariables,
            "agents:\n  IntakeAgent:\n    variables:\n      - triage_o|\n",
        );
        assert_eq!(view, ["triage_outcome"]);
        let functions = complete(F::Tools, "tools:\n  - function: look|");
        assert_eq!(functions, ["lookup_plan"]);
        // A syntax error elsewhere in the file does not matter.
        let broken = complete(F::Orchestrator, "workflow_name: [unclosed\nmax_|");
        assert_eq!(broken, ["max_turns"]);
    }
}
