//! Editor features as plain data over an [`Analysis`]: definition, references,
//! hover, outline, rename, completion and fixes. The language server only converts these to protocol types.

use crate::analysis::Analysis;
use crate::diagnostics::{Diagnostic, FileId};
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
    symbol_hover(analysis, file, offset).or_else(|| key_hover(analysis, file, offset))
}

/// A key's documentation from the schema: what it is, whether it is required,
/// its default.
fn key_hover(analysis: &Analysis, file: FileId, offset: u32) -> Option<(TextRange, String)> {
    let f = analysis.bundle.file(file)?;
    let kind = f.kind?;
    let text = f.text.as_str();
    let offset = (offset as usize).min(text.len());
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

/// What a code lens offers to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LensAction {
    RunWorkflow,
    ShowGraph,
    RunFromAgent(String),
}

/// A code lens: an action shown above a range.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lens {
    pub range: TextRange,
    pub action: LensAction,
}

/// "Run workflow" and "Show graph" at the top of orchestrator.yaml, and "Run
/// from this agent" on each agent declared in the file.
pub fn code_lenses(analysis: &Analysis, file: FileId) -> Vec<Lens> {
    let mut lenses = Vec::new();
    let Some(f) = analysis.bundle.file(file) else {
        return lenses;
    };
    if f.kind == Some(crate::schema::FileKind::Orchestrator) {
        let top = TextRange::empty(0);
        lenses.push(Lens {
            range: top,
            action: LensAction::RunWorkflow,
        });
        lenses.push(Lens {
            range: top,
            action: LensAction::ShowGraph,
        });
    }
    for d in analysis
        .symbols
        .definitions
        .iter()
        .filter(|d| d.kind == SymbolKind::Agent && d.name.file == file)
    {
        lenses.push(Lens {
            range: d.name.range,
            action: LensAction::RunFromAgent(d.name.text.clone()),
        });
    }
    lenses
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
        if let Some(narrowed) = word_range(analysis, e.file, e.range, old) {
            e.range = narrowed;
        }
    }
    edits.sort_by_key(|e| (e.file, e.range.start));
    edits.dedup();
    Ok(edits)
}

/// The first whole-word occurrence of `word` in `text`.
/// The edit that applies a diagnostic's fix: the misspelt word inside the
/// diagnostic's range (which may also cover quotes or a `list[...]` wrapper).
pub fn fix_edit(analysis: &Analysis, diagnostic: &Diagnostic) -> Option<TextEdit> {
    let fix = diagnostic.fix.as_ref()?;
    Some(TextEdit {
        file: diagnostic.file,
        range: word_range(analysis, diagnostic.file, diagnostic.range, &fix.original)?,
        new_text: fix.replacement.clone(),
    })
}

/// The range of `word` within `range` of a file: the range itself when it
/// holds exactly the word, else the word's first whole-word occurrence in it.
fn word_range(
    analysis: &Analysis,
    file: FileId,
    range: TextRange,
    word: &str,
) -> Option<TextRange> {
    let text = &analysis.bundle.file(file)?.text;
    let raw = text.get(range.start as usize..range.end as usize)?;
    let at = if raw == word {
        0
    } else {
        whole_word(raw, word)?
    };
    let start = range.start + at as u32;
    Some(TextRange::new(start, start + word.len() as u32))
}

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
    use crate::{analyze_bundle, FileSystem, MemoryFs};
    use std::path::{Path, PathBuf};

    pub(super) fn support_desk_fs() -> MemoryFs {
        support_desk()
    }

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
        let f = before.bundle.file_at(file).unwrap();
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

    /// Misspells `original` in `file`, applies every fix mzk offers, and checks
    /// that the bundle is back to its clean diagnostics.
    fn fix_restores(file: &str, original: &str, misspelt: &str) {
        let dir = Path::new("/w/SupportDesk");
        let mut fs = support_desk();
        let clean = analyze_bundle(&fs, dir).diagnostics.len();
        let path = dir.join(file);
        let text = String::from_utf8(fs.read(&path).unwrap()).unwrap();
        assert!(text.contains(original), "{original} not in {file}");
        fs.insert(&path, text.replacen(original, misspelt, 1));
        let broken = analyze_bundle(&fs, dir);
        let edits: Vec<TextEdit> = broken
            .diagnostics
            .iter()
            .filter_map(|d| fix_edit(&broken, d))
            .collect();
        assert_eq!(edits.len(), 1, "{:?}", broken.diagnostics);
        let target = broken.bundle.file(edits[0].file).unwrap();
        let mut fixed = target.text.clone();
        fixed.replace_range(
            edits[0].range.start as usize..edits[0].range.end as usize,
            &edits[0].new_text,
        );
        assert_eq!(fixed, text);
        fs.insert(&path, fixed);
        assert_eq!(analyze_bundle(&fs, dir).diagnostics.len(), clean);
    }

    #[test]
    fn fixes_restore_misspelt_names_keys_and_values() {
        fix_restores(
            "transition_graph.yaml",
            "target_agent: ClassifierAgent",
            "target_agent: ClasifierAgent",
        );
        fix_restores(
            "transition_graph.yaml",
            "condition_type: context_equals",
            "condition_type: context_equal",
        );
        fix_restores(
            "transition_graph.yaml",
            "    condition_key: ticket_captured",
            "    conditon_key: ticket_captured",
        );
        fix_restores(
            "transition_graph.yaml",
            "${research_status} in",
            "${research_stats} in",
        );
        fix_restores(
            "transition_graph.yaml",
            "condition_key: ticket_captured",
            "condition_key: ticket_capture",
        );
    }

    #[test]
    fn no_fix_is_offered_without_a_close_candidate() {
        let dir = Path::new("/w/SupportDesk");
        let mut fs = support_desk();
        let path = dir.join("transition_graph.yaml");
        let text = String::from_utf8(fs.read(&path).unwrap()).unwrap();
        fs.insert(
            &path,
            text.replacen("target_agent: ClassifierAgent", "target_agent: Zebra", 1),
        );
        let broken = analyze_bundle(&fs, dir);
        assert!(broken
            .diagnostics
            .iter()
            .any(|d| d.rule == crate::rules::Rule::UnknownAgent));
        assert!(broken
            .diagnostics
            .iter()
            .all(|d| fix_edit(&broken, d).is_none()));
    }

    #[test]
    fn lenses_on_the_orchestrator_and_on_each_agent() {
        let fs = support_desk();
        let analysis = analyze_bundle(&fs, Path::new("/w/SupportDesk"));
        let file = |name: &str| analysis.bundle.file_at(name).unwrap();
        let actions = |name: &str| -> Vec<LensAction> {
            code_lenses(&analysis, file(name).id)
                .into_iter()
                .map(|l| l.action)
                .collect()
        };
        assert_eq!(
            actions("orchestrator.yaml"),
            [LensAction::RunWorkflow, LensAction::ShowGraph]
        );
        let agents = file("agents.yaml");
        let lenses = code_lenses(&analysis, agents.id);
        let names: Vec<&str> = agents
            .text
            .lines()
            .filter_map(|l| l.trim().strip_prefix("- name: "))
            .collect();
        assert_eq!(lenses.len(), names.len());
        for (lens, name) in lenses.iter().zip(names) {
            assert_eq!(lens.action, LensAction::RunFromAgent(name.to_string()));
            assert_eq!(
                &agents.text[lens.range.start as usize..lens.range.end as usize],
                name
            );
        }
        assert!(actions("transition_graph.yaml").is_empty());
    }

    #[test]
    fn hover_on_a_key_shows_its_schema_documentation() {
        let fs = support_desk();
        let analysis = analyze_bundle(&fs, Path::new("/w/SupportDesk"));
        let graph = analysis.bundle.file_at("transition_graph.yaml").unwrap();
        let at = graph.text.find("condition_type: context_equals").unwrap() as u32;
        let (range, text) = hover(&analysis, graph.id, at + 3).unwrap();
        assert_eq!(
            &graph.text[range.start as usize..range.end as usize],
            "condition_type"
        );
        assert!(
            text.starts_with("**`condition_type`** in transition rule"),
            "{text}"
        );
        // A list item's first key.
        let at = graph.text.find("- source_agent").unwrap() as u32 + 4;
        let (_, text) = hover(&analysis, graph.id, at).unwrap();
        assert!(text.contains("**`source_agent`**"), "{text}");
        // On the value side there is no key documentation.
        let at = graph.text.find("transition_type: condition").unwrap() as u32 + 19;
        assert!(key_hover(&analysis, graph.id, at).is_none());
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
        let agents = analysis.bundle.file_at("agents.yaml").unwrap();
        let at = agents.text.find("name: ReplyAgent").unwrap() as u32 + 8;
        assert!(rename(&analysis, agents.id, at, "user").is_err());
        assert!(rename(&analysis, agents.id, at, "IntakeAgent").is_err());
        assert!(rename(&analysis, agents.id, at, "two words").is_err());
        let cv = analysis.bundle.file_at("context_variables.yaml").unwrap();
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

/// Keys whose values name agents, variables, models or functions.
const AGENT_KEYS: &[&str] = &[
    "source_agent",
    "target_agent",
    "initial_agent",
    "agent",
    "trigger_agent",
    "decomposition_agent",
    "execution_agents",
    "allowed_execution_agents",
    "visual_agents",
];
const VARIABLE_KEYS: &[&str] = &[
    "condition_key",
    "failure_message_key",
    "variables",
    "context_key",
    "attempts_key",
    "status_key",
    "request_key",
    "outcome_key",
    "input_keys",
];
const MODEL_KEYS: &[&str] = &["items", "task_model"];

/// Completions at `offset` of a file's current text. Works on the raw text, so
/// a half-typed line or a syntax error elsewhere in the file does not matter;
/// names come from the bundle's latest analysis.
pub fn completions(
    analysis: &Analysis,
    kind: crate::schema::FileKind,
    text: &str,
    offset: u32,
) -> Vec<CompletionItem> {
    let offset = (offset as usize).min(text.len());
    let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let before = &text[line_start..offset];
    let indent = before.len() - before.trim_start().len();
    let mut body = before.trim_start();
    let mut key_column = indent;
    if let Some(rest) = body.strip_prefix("- ") {
        body = rest.trim_start();
        key_column = before.len() - body.len();
    }
    let word_start = offset - before.len()
        + before
            .rfind(|c: char| c.is_whitespace() || c == ':' || c == ',' || c == '[' || c == '{')
            .map_or(0, |i| i + 1);
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
    match body.split_once(':') {
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
        // Completing the value of `key:` (or an item of its flow list).
        Some((key, _)) => {
            let key = key.trim();
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
            if AGENT_KEYS.contains(&key) {
                let mut items: Vec<(String, String)> = analysis
                    .bundle
                    .agents
                    .iter()
                    .map(|a| (a.name.text.clone(), "agent".to_string()))
                    .collect();
                if matches!(key, "source_agent" | "target_agent" | "initial_agent") {
                    items.push(("user".into(), "the human user (reserved)".into()));
                }
                if key == "target_agent" {
                    items.push(("terminate".into(), "end the run (reserved)".into()));
                }
                return names(CompletionKind::Agent, items);
            }
            if VARIABLE_KEYS.contains(&key) {
                return names(
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
                );
            }
            if MODEL_KEYS.contains(&key)
                || (key == "type"
                    && kind == crate::schema::FileKind::StructuredOutputs
                    && path.len() >= 3)
                || (path.first().map(String::as_str) == Some("registry"))
            {
                let mut items: Vec<(String, String)> = analysis
                    .bundle
                    .models
                    .iter()
                    .map(|m| (m.name.text.clone(), "definition".to_string()))
                    .collect();
                if key != "task_model" && path.first().map(String::as_str) != Some("registry") {
                    items.extend(
                        crate::model::symbols::PRIMITIVE_FIELD_TYPES
                            .iter()
                            .map(|p| (p.to_string(), "primitive".to_string())),
                    );
                }
                return names(CompletionKind::Model, items);
            }
            if matches!(key, "function" | "tool_name") {
                return names(
                    CompletionKind::Function,
                    analysis
                        .bundle
                        .python
                        .iter()
                        .flat_map(|p| {
                            p.module
                                .defined
                                .iter()
                                .map(|(n, _)| (n.clone(), "Python function".to_string()))
                        })
                        .collect(),
                );
            }
            Vec::new()
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
        Kind::ToolType { .. } => vec!["Agent_Tool", "UI_Tool", "UI_Surface"],
        Kind::Bool { .. } => vec!["true", "false"],
        _ => return None,
    })
}

/// The keys enclosing a line, outermost first (`-` for a list item), found by
/// indentation on the raw text.
fn parent_path(text: &str, line_start: usize, column: usize) -> Vec<String> {
    let mut path = Vec::new();
    let mut limit = column;
    let mut end = line_start;
    while end > 0 && limit > 0 {
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
            }
            continue;
        }
        if indent < limit {
            if let Some((key, _)) = trimmed.split_once(':') {
                path.push(key.trim().trim_matches(['"', '\'']).to_string());
            }
            limit = indent;
        }
    }
    path.reverse();
    path
}

/// The schema object at a key path.
fn resolve_object(
    kind: crate::schema::FileKind,
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
    use super::*;
    use crate::analyze_bundle;
    use std::path::Path;

    fn support_desk() -> crate::MemoryFs {
        super::tests::support_desk_fs()
    }

    fn complete(file: crate::schema::FileKind, text: &str) -> Vec<String> {
        let fs = support_desk();
        let analysis = analyze_bundle(&fs, Path::new("/w/SupportDesk"));
        let at = text.find('|').unwrap();
        let text = text.replace('|', "");
        completions(&analysis, file, &text, at as u32)
            .into_iter()
            .map(|c| c.label)
            .collect()
    }

    #[test]
    fn completion_of_keys_and_values_from_the_schema_and_the_bundle() {
        use crate::schema::FileKind as F;
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
        let agents = complete(
            F::TransitionGraph,
            "transition_rules:\n  - source_agent: Intake\n    target_agent: Re|\n",
        );
        assert_eq!(agents, ["ResearchPlannerAgent", "ReplyAgent"]);
        let reserved = complete(
            F::TransitionGraph,
            "transition_rules:\n  - target_agent: t|",
        );
        assert_eq!(reserved, ["terminate"]);
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
        let functions = complete(F::Tools, "tools:\n  - function: look|");
        assert_eq!(functions, ["lookup_plan"]);
        // A syntax error elsewhere in the file does not matter.
        let broken = complete(F::Orchestrator, "workflow_name: [unclosed\nmax_|");
        assert_eq!(broken, ["max_turns"]);
    }
}
