//! Editor features as plain data over an [`Analysis`]: definition, references
//! and hover. The language server only converts these to protocol types.

use crate::analysis::Analysis;
use crate::diagnostics::FileId;
use crate::model::authority;
use crate::model::symbols::{DefId, SymbolKind};
use crate::syntax::TextRange;

/// A range in one file of the bundle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileRange {
    pub file: FileId,
    pub range: TextRange,
}

/// The definition of the symbol under the cursor.
pub fn definition(analysis: &Analysis, file: FileId, offset: u32) -> Option<FileRange> {
    let id = analysis.symbols.at(file, offset)?;
    let def = analysis.symbols.definition(id);
    // A tool's name in tools.yaml is also a reference to its Python function.
    if def.kind == SymbolKind::Tool
        || def.kind == SymbolKind::LifecycleTool
        || def.kind == SymbolKind::Middleware
    {
        if let Some(python) = bound_function(analysis, file, offset) {
            return Some(python);
        }
    }
    Some(FileRange {
        file: def.name.file,
        range: def.name.range,
    })
}

/// The Python `def` a `function:` value under the cursor binds to.
fn bound_function(analysis: &Analysis, file: FileId, offset: u32) -> Option<FileRange> {
    let r = analysis.symbols.references.iter().find(|r| {
        r.kind == SymbolKind::PythonFunction
            && r.name.file == file
            && r.name.range.start <= offset
            && offset <= r.name.range.end
    })?;
    match r.resolution {
        crate::model::symbols::Resolution::Definition(id) => {
            let d = analysis.symbols.definition(id);
            Some(FileRange {
                file: d.name.file,
                range: d.name.range,
            })
        }
        _ => None,
    }
}

/// Every place that names the symbol under the cursor.
pub fn references(
    analysis: &Analysis,
    file: FileId,
    offset: u32,
    include_declaration: bool,
) -> Vec<FileRange> {
    let Some(id) = analysis.symbols.at(file, offset) else {
        return Vec::new();
    };
    let mut out: Vec<FileRange> = Vec::new();
    if include_declaration {
        let d = analysis.symbols.definition(id);
        out.push(FileRange {
            file: d.name.file,
            range: d.name.range,
        });
    }
    out.extend(analysis.symbols.references_to(id).map(|r| FileRange {
        file: r.name.file,
        range: r.name.range,
    }));
    out
}

/// Markdown describing the symbol under the cursor, and its range.
pub fn hover(analysis: &Analysis, file: FileId, offset: u32) -> Option<(TextRange, String)> {
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
                .map(|r| format!("- → `{}` ({})", r.target.text, crate::graph::edge_label(r)))
                .collect();
            let incoming: Vec<String> = bundle
                .rules
                .iter()
                .filter(|r| &r.target.text == name)
                .map(|r| format!("- ← `{}` ({})", r.source.text, crate::graph::edge_label(r)))
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
                let readers = analysis
                    .symbols
                    .references_to(id)
                    .filter(|r| r.name.file != var.name.file || r.name.range != var.name.range)
                    .count();
                text.push_str(&format!(
                    "Type `{ty}`, default `{default}`\n\nAuthority: `{}` ({}); routing: {}, persisted: {}\n\nWriters: {writers}\n\nReferenced {readers} time(s) in the bundle",
                    auth.class.as_str(),
                    auth.reason,
                    auth.routing,
                    auth.persisted
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
            }
        }
        _ => {}
    }
    Some((range, text))
}

/// The name under the cursor (the definition or the reference).
fn hovered_range(analysis: &Analysis, id: DefId, file: FileId, offset: u32) -> Option<TextRange> {
    let inside = |f: FileId, r: TextRange| f == file && r.start <= offset && offset <= r.end;
    let def = analysis.symbols.definition(id);
    if inside(def.name.file, def.name.range) {
        return Some(def.name.range);
    }
    analysis
        .symbols
        .references_to(id)
        .find(|r| inside(r.name.file, r.name.range))
        .map(|r| r.name.range)
}

/// One entry of a file's outline.
#[derive(Debug, Clone, PartialEq)]
pub struct OutlineItem {
    pub name: String,
    pub kind: SymbolKind,
    pub range: TextRange,
}

/// The symbols defined in a file, in source order.
pub fn document_symbols(analysis: &Analysis, file: FileId) -> Vec<OutlineItem> {
    let mut items: Vec<OutlineItem> = analysis
        .symbols
        .definitions
        .iter()
        .filter(|d| d.name.file == file)
        .map(|d| OutlineItem {
            name: d.name.text.clone(),
            kind: d.kind,
            range: d.name.range,
        })
        .collect();
    items.sort_by_key(|i| i.range.start);
    items
}

/// An edit replacing a range with new text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextEdit {
    pub file: FileId,
    pub range: TextRange,
    pub new_text: String,
}

/// The renameable name under the cursor, or why it cannot be renamed.
pub fn prepare_rename(
    analysis: &Analysis,
    file: FileId,
    offset: u32,
) -> Result<(DefId, TextRange), String> {
    let Some(id) = analysis.symbols.at(file, offset) else {
        return Err("there is no agent, context variable, model or tool here to rename".into());
    };
    let def = analysis.symbols.definition(id);
    match def.kind {
        SymbolKind::Agent | SymbolKind::Variable | SymbolKind::Model | SymbolKind::Tool => {}
        other => {
            return Err(format!(
                "a {} cannot be renamed from here",
                other.describe()
            ))
        }
    }
    // Conveyors name their variables `<id>_results`/`<id>_status`: renaming one
    // would need the conveyor id changed, which is not a plain rename.
    let written_elsewhere = analysis.symbols.references_to(id).any(|r| {
        let raw = analysis
            .bundle
            .file(r.name.file)
            .and_then(|f| {
                f.text
                    .get(r.name.range.start as usize..r.name.range.end as usize)
            })
            .unwrap_or("");
        whole_word(raw, &def.name.text).is_none()
    });
    if written_elsewhere {
        return Err(format!("`{}` is named by a conveyor id (`<id>_results`/`<id>_status`); rename the conveyor instead", def.name.text));
    }
    let range = hovered_range(analysis, id, file, offset).unwrap_or(def.name.range);
    Ok((id, range))
}

/// The edits that rename the symbol under the cursor everywhere in the bundle.
pub fn rename(
    analysis: &Analysis,
    file: FileId,
    offset: u32,
    new_name: &str,
) -> Result<Vec<TextEdit>, String> {
    let (id, _) = prepare_rename(analysis, file, offset)?;
    let def = analysis.symbols.definition(id);
    let new_name = new_name.trim();
    let valid = match def.kind {
        SymbolKind::Variable => {
            new_name
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic())
                && new_name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_')
                && crate::schema::reserved_context_name(new_name).is_none()
        }
        SymbolKind::Tool => {
            new_name
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && new_name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_')
        }
        _ => {
            !new_name.is_empty()
                && new_name
                    .chars()
                    .all(|c| c.is_alphanumeric() || c == '_' || c == '-')
        }
    };
    if !valid {
        return Err(format!(
            "`{new_name}` is not a valid {} name",
            def.kind.describe()
        ));
    }
    if def.kind == SymbolKind::Agent
        && ["user", "terminate"].contains(&new_name.to_ascii_lowercase().as_str())
    {
        return Err(format!(
            "`{new_name}` is reserved: rules would read it as the {} ",
            if new_name.eq_ignore_ascii_case("user") {
                "human user"
            } else {
                "end of the run"
            }
        ));
    }
    if analysis.symbols.lookup(def.kind, new_name).is_some() {
        return Err(format!(
            "a {} named `{new_name}` already exists",
            def.kind.describe()
        ));
    }
    let edit = |file: FileId, range: TextRange| TextEdit {
        file,
        range,
        new_text: new_name.to_string(),
    };
    let mut edits = vec![edit(def.name.file, def.name.range)];
    edits.extend(
        analysis
            .symbols
            .references_to(id)
            .map(|r| edit(r.name.file, r.name.range)),
    );
    // A tool's name is its Python function's name: rename the `def` too.
    if def.kind == SymbolKind::Tool {
        for r in analysis.symbols.references.iter().filter(|r| {
            r.kind == SymbolKind::PythonFunction
                && r.name.file == def.name.file
                && r.name.range == def.name.range
        }) {
            if let crate::model::symbols::Resolution::Definition(py) = r.resolution {
                let d = analysis.symbols.definition(py);
                edits.push(edit(d.name.file, d.name.range));
            }
        }
    }
    // Some recorded ranges cover more than the name (quotes, `list[Name]`):
    // narrow each edit to the name itself, as a whole word.
    let old = def.name.text.as_str();
    for e in &mut edits {
        if let Some(f) = analysis.bundle.file(e.file) {
            let raw = f
                .text
                .get(e.range.start as usize..e.range.end as usize)
                .unwrap_or("");
            if raw != old {
                if let Some(at) = whole_word(raw, old) {
                    e.range = TextRange::new(
                        e.range.start + at as u32,
                        e.range.start + (at + old.len()) as u32,
                    );
                }
            }
        }
    }
    edits.sort_by_key(|e| (e.file, e.range.start));
    edits.dedup();
    Ok(edits)
}

/// The first whole-word occurrence of `word` in `text`.
fn whole_word(text: &str, word: &str) -> Option<usize> {
    let is_word = |c: char| c.is_alphanumeric() || c == '_';
    text.match_indices(word).map(|(i, _)| i).find(|&i| {
        !text[..i].chars().next_back().is_some_and(is_word)
            && !text[i + word.len()..].chars().next().is_some_and(is_word)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{analyze_bundle, MemoryFs};
    use std::path::{Path, PathBuf};

    /// The SupportDesk example in memory, under /w/SupportDesk.
    fn support_desk() -> MemoryFs {
        let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("../bundles/SupportDesk");
        let mut fs = MemoryFs::new();
        let mut stack = vec![source.clone()];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    stack.push(path);
                } else {
                    let relative = path.strip_prefix(&source).unwrap();
                    fs.insert(
                        PathBuf::from("/w/SupportDesk").join(relative),
                        std::fs::read(&path).unwrap(),
                    );
                }
            }
        }
        fs
    }

    /// Renames the symbol at the first occurrence of `needle` in `file` and
    /// checks that the bundle's diagnostics are unchanged and the old name is gone.
    fn rename_keeps_the_bundle_clean(
        file: &str,
        needle: &str,
        new_name: &str,
        edits_at_least: usize,
    ) {
        let dir = Path::new("/w/SupportDesk");
        let mut fs = support_desk();
        let before = analyze_bundle(&fs, dir);
        let f = before
            .bundle
            .files
            .iter()
            .find(|f| f.relative == file)
            .unwrap();
        let last = needle.split_whitespace().last().unwrap();
        let offset = (f.text.find(needle).unwrap() + needle.rfind(last).unwrap()) as u32 + 1;
        let edits = rename(&before, f.id, offset, new_name).unwrap();
        assert!(edits.len() >= edits_at_least, "{edits:?}");
        for file in &before.bundle.files {
            let mut text = file.text.clone();
            let mut mine: Vec<&TextEdit> = edits.iter().filter(|e| e.file == file.id).collect();
            mine.sort_by_key(|e| std::cmp::Reverse(e.range.start));
            for e in mine {
                text.replace_range(e.range.start as usize..e.range.end as usize, &e.new_text);
            }
            fs.insert(before.bundle.dir.join(&file.relative), text);
        }
        let after = analyze_bundle(&fs, dir);
        assert_eq!(
            after.diagnostics.len(),
            before.diagnostics.len(),
            "{:?}",
            after.diagnostics
        );
        let old = needle.split_whitespace().last().unwrap();
        assert!(
            after.symbols.definitions.iter().all(|d| d.name.text != old),
            "{old} survived"
        );
        assert!(after
            .symbols
            .definitions
            .iter()
            .any(|d| d.name.text == new_name));
    }

    #[test]
    fn rename_agents_variables_models_and_tools_across_files() {
        rename_keeps_the_bundle_clean("agents.yaml", "name: ClassifierAgent", "TriageAgent", 8);
        rename_keeps_the_bundle_clean(
            "context_variables.yaml",
            "  triage_outcome",
            "triage_result",
            5,
        );
        rename_keeps_the_bundle_clean("structured_outputs.yaml", "  Evidence", "Proof", 2);
        rename_keeps_the_bundle_clean("tools.yaml", "function: lookup_plan", "find_plan", 2);
    }

    #[test]
    fn rename_refuses_reserved_duplicate_and_derived_names() {
        let fs = support_desk();
        let analysis = analyze_bundle(&fs, Path::new("/w/SupportDesk"));
        let agents = analysis
            .bundle
            .files
            .iter()
            .find(|f| f.relative == "agents.yaml")
            .unwrap();
        let at = agents.text.find("name: ReplyAgent").unwrap() as u32 + 8;
        assert!(rename(&analysis, agents.id, at, "user").is_err());
        assert!(rename(&analysis, agents.id, at, "IntakeAgent").is_err());
        assert!(rename(&analysis, agents.id, at, "two words").is_err());
        let cv = analysis
            .bundle
            .files
            .iter()
            .find(|f| f.relative == "context_variables.yaml")
            .unwrap();
        let derived = cv.text.find("  research_status").unwrap() as u32 + 4;
        assert!(prepare_rename(&analysis, cv.id, derived)
            .unwrap_err()
            .contains("conveyor"));
        assert!(prepare_rename(&analysis, cv.id, 0).is_err());
        let outline = document_symbols(&analysis, agents.id);
        assert_eq!(outline.len(), 6);
        assert_eq!(outline[0].name, "IntakeAgent");
    }
}
