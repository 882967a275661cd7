//! Hover: a key's schema documentation, or what the bundle knows about the symbol under the cursor.

use super::completion::{parent_path, resolve_object};
use super::hovered_range;
use crate::analysis::Analysis;
use crate::base::{FileId, TextRange};
use crate::model::symbols::{RefSite, Reference, SymbolKind};
use crate::model::{authority, Name};
use crate::syntax::ColumnUnit;

/// Markdown describing the symbol under the cursor, and its range.
pub fn hover(analysis: &Analysis, file: FileId, offset: u32) -> Option<(TextRange, String)> {
    let offset = super::char_offset(analysis, file, offset);
    symbol_hover(analysis, file, offset).or_else(|| key_hover(analysis, file, offset))
}

/// A key's documentation from the schema: what it is, whether it is required,
/// its default.
pub(super) fn key_hover(
    analysis: &Analysis,
    file: FileId,
    offset: u32,
) -> Option<(TextRange, String)> {
    let f = analysis.bundle.file(file)?;
    let kind = f.kind?;
    let text = f.text.as_ref();
    let offset = (offset as usize).min(text.len());
    // The parsed tree knows every layout (block lists in the parent's column,
    // flow style); a file that does not parse is read line by line.
    let (path, key, key_start, key_end) =
        key_in_tree(text, offset).or_else(|| key_on_line(text, offset))?;
    let object = resolve_object(kind, &path)?;
    let field = object.field(key.trim_matches(['"', '\'']))?;
    let mut doc = format!("**`{}`** in {}", field.name, object.name);
    if let Some(alias) = field.alias {
        doc.push_str(&format!(" (also spelt `{alias}`)"));
    }
    doc.push_str("\n\n");
    if !field.doc.is_empty() {
        doc.push_str(field.doc);
        doc.push_str("\n\n");
    }
    match (field.required, field.default.display()) {
        (true, _) => doc.push_str("Required."),
        (false, Some(default)) => doc.push_str(&format!("Optional; default `{default}`.")),
        (false, None) => doc.push_str("Optional."),
    }
    Some((TextRange::new(key_start as u32, key_end as u32), doc))
}

/// The key under `offset` in the file's YAML tree: the keys and list items
/// enclosing it (`-` for an item), the key, and where it is written.
fn key_in_tree(text: &str, offset: usize) -> Option<(Vec<String>, String, usize, usize)> {
    use crate::syntax::{Node, NodeKind};
    let mut diagnostics = Vec::new();
    let document = crate::syntax::parse(text, FileId(0), &mut diagnostics);
    let mut node: &Node = document.root.as_ref()?;
    let mut path = Vec::new();
    let inside =
        |range: TextRange| (range.start as usize) <= offset && offset <= range.end as usize;
    loop {
        match &node.kind {
            NodeKind::Map(entries) => {
                let entry = entries
                    .iter()
                    .find(|e| inside(e.key.range) || inside(e.value.range))?;
                let key = entry.key.as_str()?.to_string();
                if inside(entry.key.range) {
                    let range = entry.key.range;
                    return Some((path, key, range.start as usize, range.end as usize));
                }
                path.push(key);
                node = &entry.value;
            }
            NodeKind::Seq(items) => {
                node = items.iter().find(|item| inside(item.range))?;
                path.push("-".to_string());
            }
            _ => return None,
        }
    }
}

/// The key written on the line of `offset` (`key:` or `- key:`), with the
/// enclosing keys found by indentation: for a file that does not parse.
fn key_on_line(text: &str, offset: usize) -> Option<(Vec<String>, String, usize, usize)> {
    let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[offset..].find('\n').map_or(text.len(), |i| offset + i);
    let line = &text[line_start..line_end];
    let mut body = line.trim_start();
    if let Some(rest) = body.strip_prefix("- ") {
        body = rest.trim_start();
    }
    let key_column = line.len() - body.len();
    let colon = body.find(':')?;
    let key = body[..colon].trim_end();
    let key_start = line_start + key_column;
    let key_end = key_start + key.len();
    if offset < key_start || offset > key_end || key.is_empty() {
        return None;
    }
    let path = parent_path(text, line_start, key_column);
    Some((path, key.to_string(), key_start, key_end))
}

fn symbol_hover(analysis: &Analysis, file: FileId, offset: u32) -> Option<(TextRange, String)> {
    let id = analysis.symbols.at(file, offset)?;
    let range = hovered_range(analysis, id, file, offset)?;
    let def = analysis.symbols.definition(id);
    let bundle = &analysis.bundle;
    let name = &def.name.text;
    let mut text = format!("**{}** `{name}`\n\n", def.kind.describe());
    match def.kind {
        SymbolKind::Agent => {
            let outgoing: Vec<String> = bundle
                .rules
                .iter()
                .filter(|r| &r.source.text == name)
                .map(|r| {
                    format!(
                        "- → `{}` ({})",
                        r.target.text,
                        crate::graph::edge_label(bundle, r)
                    )
                })
                .collect();
            let incoming: Vec<String> = bundle
                .rules
                .iter()
                .filter(|r| &r.target.text == name)
                .map(|r| {
                    format!(
                        "- ← `{}` ({})",
                        r.source.text,
                        crate::graph::edge_label(bundle, r)
                    )
                })
                .collect();
            if let Some(model) = bundle.registry_model(name) {
                text.push_str(&format!("Structured output: `{}`\n\n", model.text));
            }
            text.push_str(&format!(
                "Outgoing transitions:\n{}\n\n",
                if outgoing.is_empty() {
                    "- none".into()
                } else {
                    outgoing.join("\n")
                }
            ));
            text.push_str(&format!(
                "Incoming transitions:\n{}\n",
                if incoming.is_empty() {
                    "- none".into()
                } else {
                    incoming.join("\n")
                }
            ));
            if let Some(agent) = bundle.agent(name) {
                text.push('\n');
                text.push_str(
                    &crate::prompt::compose_one(bundle, agent)
                        .summary_markdown(false, &analysis.memos.tokens),
                );
            }
        }
        SymbolKind::Variable => {
            if let Some(var) = bundle.variable(name) {
                let auth = authority::infer(bundle, var);
                let ty = var
                    .declared_type
                    .as_ref()
                    .map_or("(untyped)", |t| t.text.as_str());
                let default = var
                    .default
                    .as_ref()
                    .map_or("null".to_string(), |d| d.python_str());
                let writers = if auth.writers.is_empty() {
                    "any".to_string()
                } else {
                    auth.writers.join(", ")
                };
                let readers: Vec<String> = analysis
                    .symbols
                    .references_to(id)
                    .filter(|r| r.name.file != var.name.file || r.name.range != var.name.range)
                    .map(|r| format!("- {} ({})", reader(bundle, r), location(analysis, &r.name)))
                    .collect();
                let values = match bundle.domains().of(name) {
                    Some(crate::model::domains::Domain::Known(k)) => format!(
                        "Values: {}{} ({})\n\n",
                        k.values
                            .iter()
                            .map(|v| format!("`{}`", crate::model::domains::show(v)))
                            .collect::<Vec<_>>()
                            .join(", "),
                        if k.may_be_null {
                            ", `null` until set"
                        } else {
                            ""
                        },
                        k.sources.join("; ")
                    ),
                    Some(crate::model::domains::Domain::Integers(d)) => format!(
                        "Values: any integer{} ({})\n\n",
                        if d.may_be_null { ", or `null`" } else { "" },
                        d.sources.join("; ")
                    ),
                    Some(crate::model::domains::Domain::Unknown(why)) => {
                        format!("Values: not known ({why})\n\n")
                    }
                    None => String::new(),
                };
                text.push_str(&format!(
                    "Type `{ty}`, default `{default}`\n\n{values}Authority: `{}` ({}); routing: {}, persisted: {}\n\nWriters: {writers}\n\nReaders:\n{}",
                    auth.class.as_str(),
                    auth.reason,
                    auth.routing,
                    auth.persisted,
                    if readers.is_empty() {
                        "- none in the bundle's YAML".to_string()
                    } else {
                        readers.join("\n")
                    }
                ));
            }
        }
        SymbolKind::Tool | SymbolKind::PythonFunction => {
            let function = bundle
                .python
                .iter()
                .flat_map(|p| p.module.functions.iter().map(move |f| (p.file, f)))
                .find(|(_, f)| &f.name == name);
            if let Some((_, f)) = function {
                let params: Vec<String> = f
                    .params
                    .iter()
                    .map(|p| {
                        let prefix = match p.kind {
                            crate::syntax::python::ParamKind::VarPositional => "*",
                            crate::syntax::python::ParamKind::VarKeyword => "**",
                            _ => "",
                        };
                        format!(
                            "{prefix}{}{}",
                            p.name,
                            if p.has_default { "=…" } else { "" }
                        )
                    })
                    .collect();
                text.push_str(&format!(
                    "```python\n{}def {}({})\n```\n",
                    if f.is_async { "async " } else { "" },
                    f.name,
                    params.join(", ")
                ));
                if let Some(doc) = &f.docstring {
                    text.push_str(&format!("\n{doc}\n"));
                }
            }
        }
        _ => {}
    }
    Some((range, text))
}

/// What a reference to a variable does there, in a few words.
fn reader(bundle: &crate::model::Bundle, r: &Reference) -> String {
    let at = |n: &Name| n.file == r.name.file && n.range == r.name.range;
    match r.site {
        RefSite::ConditionKey | RefSite::ExpressionVariable => bundle
            .rules
            .iter()
            .find(|rule| {
                rule.condition_key.as_ref().is_some_and(at) || rule.expression_refs.iter().any(at)
            })
            .map_or("a transition rule".into(), |rule| {
                format!("rule `{} -> {}`", rule.source.text, rule.target.text)
            }),
        RefSite::AgentViewVariable => bundle
            .agent_views
            .iter()
            .find(|v| v.variables.iter().any(at))
            .map_or("an agent view".into(), |v| {
                format!("shown to `{}`", v.agent.text)
            }),
        RefSite::FailureMessageKey => "failure_message_key".into(),
        RefSite::BatchResultKey => "a task batch result".into(),
        RefSite::RecoveryKey => "a task batch recovery".into(),
        RefSite::OutcomeKey => "a tool outcome".into(),
        RefSite::TaskModel => "a task_model".into(),
        _ => "a reference".into(),
    }
}

/// `file:line` of a name, 1-based.
fn location(analysis: &Analysis, name: &Name) -> String {
    analysis
        .bundle
        .file(name.file)
        .map_or_else(String::new, |f| {
            let line = f
                .line_index
                .position(&f.text, name.range.start, ColumnUnit::Char)
                .line
                + 1;
            format!("{}:{line}", f.relative)
        })
}
