//! Conversions to the protocol: byte offsets to positions in the negotiated
//! encoding, analyzer diagnostics and symbol kinds to their LSP types.

use mzk_analyzer::base::{FileId, Severity, TextRange};
use mzk_analyzer::syntax::{ColumnUnit, LineCol};
use mzk_analyzer::Analysis;
use tower_lsp_server::ls_types::*;

pub(crate) fn to_position(
    analysis: &Analysis,
    file: FileId,
    offset: u32,
    unit: ColumnUnit,
) -> Position {
    let Some(f) = analysis.bundle.file(file) else {
        return Position::new(0, 0);
    };
    let LineCol { line, col } = f.line_index.position(&f.text, offset, unit);
    Position::new(line, col)
}

pub(crate) fn to_range(
    analysis: &Analysis,
    file: FileId,
    range: TextRange,
    unit: ColumnUnit,
) -> Range {
    Range::new(
        to_position(analysis, file, range.start, unit),
        to_position(analysis, file, range.end, unit),
    )
}

pub(crate) fn to_lsp_diagnostic(
    analysis: &Analysis,
    d: &mzk_analyzer::diagnostics::Diagnostic,
    unit: ColumnUnit,
    related_support: bool,
) -> Diagnostic {
    let mut message = d.message.clone();
    if !related_support {
        // A client without related information reads the places in the
        // message instead: `path:line:column: what is there`, one a line.
        for r in &d.related {
            let Some(f) = analysis.bundle.file(r.file) else {
                continue;
            };
            let at = to_position(analysis, r.file, r.range.start, unit);
            message.push_str(&format!(
                "\n{}:{}:{}: {}",
                f.relative,
                at.line + 1,
                at.character + 1,
                r.message
            ));
        }
    }
    let related = d
        .related
        .iter()
        .filter_map(|r| {
            Some(DiagnosticRelatedInformation {
                location: Location::new(
                    file_uri(analysis, r.file)?,
                    to_range(analysis, r.file, r.range, unit),
                ),
                message: r.message.clone(),
            })
        })
        .collect::<Vec<_>>();
    Diagnostic {
        range: to_range(analysis, d.file, d.range, unit),
        severity: Some(match d.severity {
            Severity::Error => DiagnosticSeverity::ERROR,
            Severity::Warning => DiagnosticSeverity::WARNING,
            Severity::Info => DiagnosticSeverity::INFORMATION,
        }),
        code: Some(NumberOrString::String(d.rule.code().to_string())),
        source: Some("mzk".into()),
        message,
        related_information: (related_support && !related.is_empty()).then_some(related),
        ..Diagnostic::default()
    }
}

pub(crate) fn file_uri(analysis: &Analysis, file: FileId) -> Option<Uri> {
    let f = analysis.bundle.file(file)?;
    Uri::from_file_path(analysis.bundle.path_of(f))
}

pub(crate) fn symbol_kind(kind: mzk_analyzer::model::SymbolKind) -> SymbolKind {
    use mzk_analyzer::model::SymbolKind as K;
    match kind {
        K::Agent => SymbolKind::CLASS,
        K::Variable => SymbolKind::VARIABLE,
        K::Tool | K::LifecycleTool | K::Middleware | K::PythonFunction => SymbolKind::FUNCTION,
        K::Model => SymbolKind::STRUCT,
        K::ModelField => SymbolKind::FIELD,
        K::Batch => SymbolKind::EVENT,
        K::UiComponent => SymbolKind::INTERFACE,
        K::WriterId => SymbolKind::CONSTANT,
    }
}

pub(crate) fn completion_kind(kind: mzk_analyzer::ide::CompletionKind) -> CompletionItemKind {
    use mzk_analyzer::ide::CompletionKind as K;
    match kind {
        K::Key => CompletionItemKind::PROPERTY,
        K::Value => CompletionItemKind::ENUM_MEMBER,
        K::Agent => CompletionItemKind::CLASS,
        K::Variable => CompletionItemKind::VARIABLE,
        K::Model => CompletionItemKind::STRUCT,
        K::Function => CompletionItemKind::FUNCTION,
    }
}

/// Semantic tokens in the protocol's relative encoding: each token's line
/// and start as deltas from the previous one, lengths in the negotiated
/// unit, the type as its index in `caps::TOKEN_TYPES`.
pub(crate) fn semantic_tokens(
    analysis: &Analysis,
    file: FileId,
    tokens: &[mzk_analyzer::ide::SemanticToken],
    unit: ColumnUnit,
) -> Vec<SemanticToken> {
    use mzk_analyzer::ide::TokenKind as K;
    let mut encoded = Vec::with_capacity(tokens.len());
    let (mut line, mut start) = (0, 0);
    for token in tokens {
        let from = to_position(analysis, file, token.range.start, unit);
        let to = to_position(analysis, file, token.range.end, unit);
        if to.line != from.line || to.character <= from.character {
            continue; // a token is one line, never empty
        }
        let token_type = match token.kind {
            K::Agent => 0,
            K::Variable => 1,
            K::Model => 2,
            K::ModelField => 3,
            K::Function => 4,
            K::Batch => 5,
            K::UiComponent => 6,
            K::WriterId => 7,
            K::Reserved => 8,
        };
        let delta_line = from.line - line;
        let delta_start = if delta_line == 0 {
            from.character - start
        } else {
            from.character
        };
        encoded.push(SemanticToken {
            delta_line,
            delta_start,
            length: to.character - from.character,
            token_type,
            token_modifiers_bitset: u32::from(token.declaration),
        });
        (line, start) = (from.line, from.character);
    }
    encoded
}
