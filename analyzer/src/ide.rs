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
