//! Semantic tokens: the names written in a YAML file's values (and keys that
//! declare them) by what they are — agents, variables (`${var}` inside
//! expressions included), structured-output models and their fields, tools
//! and functions, task batches, UI components, writer ids — and the reserved
//! words (`user`, `terminate`, middleware `all`, primitive field types).

use crate::analysis::Analysis;
use crate::base::{FileId, TextRange};
use crate::model::symbols::{Resolution, SymbolKind};

/// What a token names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TokenKind {
    Agent,
    Variable,
    Model,
    ModelField,
    Function,
    Batch,
    UiComponent,
    WriterId,
    /// A name with a built-in meaning.
    Reserved,
}

/// A name of a file and what it is; `declaration` where it is defined.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SemanticToken {
    pub range: TextRange,
    pub kind: TokenKind,
    pub declaration: bool,
}

fn token_kind(kind: SymbolKind) -> TokenKind {
    match kind {
        SymbolKind::Agent => TokenKind::Agent,
        SymbolKind::Variable => TokenKind::Variable,
        SymbolKind::Model => TokenKind::Model,
        SymbolKind::ModelField => TokenKind::ModelField,
        SymbolKind::Tool
        | SymbolKind::LifecycleTool
        | SymbolKind::Middleware
        | SymbolKind::PythonFunction => TokenKind::Function,
        SymbolKind::Batch => TokenKind::Batch,
        SymbolKind::UiComponent => TokenKind::UiComponent,
        SymbolKind::WriterId => TokenKind::WriterId,
    }
}

/// The tokens of a YAML file of the bundle, sorted, never overlapping, each
/// on one line (names are). Python files keep their own highlighting.
pub fn semantic_tokens(analysis: &Analysis, file: FileId) -> Vec<SemanticToken> {
    let Some(f) = analysis.bundle.file(file) else {
        return Vec::new();
    };
    if f.kind.is_none() {
        return Vec::new();
    }
    let definitions = analysis
        .symbols
        .definitions
        .iter()
        .filter(|d| d.name.file == file)
        .map(|d| SemanticToken {
            range: d.name.range,
            kind: token_kind(d.kind),
            declaration: true,
        });
    let references = analysis
        .symbols
        .references
        .iter()
        .filter(|r| r.name.file == file)
        .filter_map(|r| {
            let kind = match r.resolution {
                Resolution::Reserved(_) => TokenKind::Reserved,
                Resolution::Definition(_) => token_kind(r.kind),
                // A misspelt name is the diagnostic's business, not a colour.
                Resolution::Unresolved => return None,
            };
            Some(SemanticToken {
                range: r.name.range,
                kind,
                declaration: false,
            })
        });
    // Declarations first, so where a name both declares and refers (a tool
    // named after its Python function) the declaration wins.
    let mut tokens: Vec<SemanticToken> = definitions.chain(references).collect();
    tokens.sort_by_key(|t| (t.range.start, !t.declaration, t.range.end));
    let mut kept: Vec<SemanticToken> = Vec::with_capacity(tokens.len());
    for token in tokens {
        let single_line = f
            .text
            .get(token.range.start as usize..token.range.end as usize)
            .is_some_and(|text| !text.is_empty() && !text.contains('\n'));
        let overlaps = kept
            .last()
            .is_some_and(|last| token.range.start < last.range.end);
        if single_line && !overlaps {
            kept.push(token);
        }
    }
    kept
}
