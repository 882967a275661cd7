//! Rename across the bundle's files, and the fixes diagnostics offer.

use super::{hovered_range, whole_word, word_range, TextEdit};
use crate::analysis::Analysis;
use crate::base::{FileId, TextRange};
use crate::model::symbols::{DefId, SymbolKind};

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
