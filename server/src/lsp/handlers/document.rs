//! Requests about a whole document's structure: folding ranges, selection
//! ranges, document links, semantic tokens and pulled diagnostics (of one
//! document, or of every analysed file of the workspace).

use mzk_analyzer::base::hash::HashMap;
use mzk_analyzer::ide;
use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::*;

use crate::lsp::from_proto::path_of;
use crate::lsp::guard::guarded;
use crate::lsp::to_proto::{file_uri, to_lsp_diagnostic, to_range};
use crate::lsp::Backend;

/// Folds of agents, rules, sections and block scalars (`ide::folding_ranges`).
pub(crate) async fn folding_range(
    backend: &Backend,
    params: FoldingRangeParams,
) -> Result<Option<Vec<FoldingRange>>> {
    let Some((analysis, file, _, _)) = backend
        .locate(&params.text_document.uri, Position::new(0, 0))
        .await
    else {
        return Ok(None);
    };
    let folds = guarded("foldingRange", || ide::folding_ranges(&analysis, file))?
        .into_iter()
        .map(|fold| FoldingRange {
            start_line: fold.start_line,
            end_line: fold.end_line,
            ..FoldingRange::default()
        })
        .collect();
    Ok(Some(folds))
}

/// For each position, the ranges around it from the innermost out
/// (`ide::selection_ranges`), as the protocol's parent chain.
pub(crate) async fn selection_range(
    backend: &Backend,
    params: SelectionRangeParams,
) -> Result<Option<Vec<SelectionRange>>> {
    let mut answers = Vec::with_capacity(params.positions.len());
    for position in params.positions {
        let Some((analysis, file, offset, unit)) =
            backend.locate(&params.text_document.uri, position).await
        else {
            return Ok(None);
        };
        let ranges = guarded("selectionRange", || {
            ide::selection_ranges(&analysis, file, offset)
        })?;
        // Built from the outside in: each range's parent is the next larger.
        let mut chain: Option<SelectionRange> = None;
        for range in ranges.into_iter().rev() {
            chain = Some(SelectionRange {
                range: to_range(&analysis, file, range, unit),
                parent: chain.map(Box::new),
            });
        }
        // The protocol wants one answer per position: the position itself
        // when nothing surrounds it.
        answers.push(chain.unwrap_or(SelectionRange {
            range: Range::new(position, position),
            parent: None,
        }));
    }
    Ok(Some(answers))
}

/// `file:` values of tools, lifecycle tools and middleware, linked to the
/// Python file each resolves to (`ide::document_links`).
pub(crate) async fn document_link(
    backend: &Backend,
    params: DocumentLinkParams,
) -> Result<Option<Vec<DocumentLink>>> {
    let Some((analysis, file, _, unit)) = backend
        .locate(&params.text_document.uri, Position::new(0, 0))
        .await
    else {
        return Ok(None);
    };
    let links = guarded("documentLink", || ide::document_links(&analysis, file))?
        .into_iter()
        .filter_map(|link| {
            Some(DocumentLink {
                range: to_range(&analysis, file, link.range, unit),
                target: Some(file_uri(&analysis, link.target)?),
                tooltip: None,
                data: None,
            })
        })
        .collect();
    Ok(Some(links))
}

/// Pulled diagnostics of one file: those of the analysis that holds the
/// document's current text, with a result id (a digest of the report) so an
/// unchanged report costs the client nothing.
pub(crate) async fn diagnostic(
    backend: &Backend,
    params: DocumentDiagnosticParams,
) -> Result<DocumentDiagnosticReportResult> {
    let uri = params.text_document.uri;
    let unchanged_or_empty = |items: Vec<Diagnostic>| {
        let result_id = report_id(&items);
        let report = match params.previous_result_id.as_deref() == Some(result_id.as_str()) {
            true => DocumentDiagnosticReport::Unchanged(RelatedUnchangedDocumentDiagnosticReport {
                related_documents: None,
                unchanged_document_diagnostic_report: UnchangedDocumentDiagnosticReport {
                    result_id,
                },
            }),
            false => DocumentDiagnosticReport::Full(RelatedFullDocumentDiagnosticReport {
                related_documents: None,
                full_document_diagnostic_report: FullDocumentDiagnosticReport {
                    result_id: Some(result_id),
                    items,
                },
            }),
        };
        DocumentDiagnosticReportResult::Report(report)
    };
    let Some(path) = path_of(&uri) else {
        return Ok(unchanged_or_empty(Vec::new()));
    };
    backend.wait_for_current_analysis(&path).await;
    let Some((analysis, file, _, unit)) = backend.locate(&uri, Position::new(0, 0)).await else {
        return Ok(unchanged_or_empty(Vec::new()));
    };
    let related = backend.state.lock().await.client.related_information;
    let items = guarded("diagnostic", || {
        analysis
            .diagnostics
            .iter()
            .filter(|d| d.file == file)
            .map(|d| to_lsp_diagnostic(&analysis, d, unit, related))
            .collect::<Vec<_>>()
    })?;
    Ok(unchanged_or_empty(items))
}

/// Pulled diagnostics of every analysed file of every bundle (LSP 3.17
/// `workspace/diagnostic`), each with the same result id a document pull
/// gives it: a file whose id the client sent back unchanged is reported
/// `unchanged`. The answer comes at once (no long poll); the server's
/// `workspace/diagnostic/refresh` after each analysis asks for the next.
pub(crate) async fn workspace_diagnostic(
    backend: &Backend,
    params: WorkspaceDiagnosticParams,
) -> Result<WorkspaceDiagnosticReportResult> {
    // Open documents edited a moment ago: answer with their new findings.
    let open: Vec<std::path::PathBuf> = {
        let state = backend.state.lock().await;
        state.documents.keys().cloned().collect()
    };
    for path in &open {
        backend.wait_for_current_analysis(path).await;
    }
    let (mut analyses, related, unit, versions, cleared) = {
        let mut state = backend.state.lock().await;
        // The first workspace pull takes over from pushing: what was pushed
        // is cleared so no file shows its findings twice.
        let cleared: Vec<Uri> = match std::mem::replace(&mut state.workspace_pulled, true) {
            true => Vec::new(),
            false => state.published.values().flatten().cloned().collect(),
        };
        let versions: HashMap<std::path::PathBuf, i32> = state
            .documents
            .iter()
            .map(|(p, d)| (p.clone(), d.version))
            .collect();
        (
            state
                .host
                .analyses()
                .map(|a| (a.bundle.dir.clone(), a.clone()))
                .collect::<Vec<_>>(),
            state.client.related_information,
            state.unit(),
            versions,
            cleared,
        )
    };
    for uri in cleared {
        backend
            .client
            .publish_diagnostics(uri, Vec::new(), None)
            .await;
    }
    analyses.sort_by(|a, b| a.0.cmp(&b.0));
    let previous: HashMap<&Uri, &str> = params
        .previous_result_ids
        .iter()
        .map(|p| (&p.uri, p.value.as_str()))
        .collect();
    let mut items = Vec::new();
    for (_, analysis) in analyses {
        let reports = guarded("workspace/diagnostic", || {
            let mut per_file: HashMap<_, Vec<Diagnostic>> = HashMap::default();
            for d in &analysis.diagnostics {
                per_file
                    .entry(d.file)
                    .or_default()
                    .push(to_lsp_diagnostic(&analysis, d, unit, related));
            }
            analysis
                .bundle
                .files
                .iter()
                .filter_map(|file| {
                    let uri = file_uri(&analysis, file.id)?;
                    let path = analysis.bundle.path_of(file);
                    let found = per_file.remove(&file.id).unwrap_or_default();
                    Some((uri, versions.get(&path).map(|v| i64::from(*v)), found))
                })
                .collect::<Vec<_>>()
        })?;
        for (uri, version, found) in reports {
            let result_id = report_id(&found);
            let report = match previous.get(&uri).copied() == Some(result_id.as_str()) {
                true => WorkspaceDocumentDiagnosticReport::Unchanged(
                    WorkspaceUnchangedDocumentDiagnosticReport {
                        uri,
                        version,
                        unchanged_document_diagnostic_report: UnchangedDocumentDiagnosticReport {
                            result_id,
                        },
                    },
                ),
                false => {
                    WorkspaceDocumentDiagnosticReport::Full(WorkspaceFullDocumentDiagnosticReport {
                        uri,
                        version,
                        full_document_diagnostic_report: FullDocumentDiagnosticReport {
                            result_id: Some(result_id),
                            items: found,
                        },
                    })
                }
            };
            items.push(report);
        }
    }
    Ok(WorkspaceDiagnosticReportResult::Report(
        WorkspaceDiagnosticReport { items },
    ))
}

/// A digest of a report: equal reports, equal ids.
fn report_id(items: &[Diagnostic]) -> String {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    serde_json::to_string(items)
        .unwrap_or_default()
        .hash(&mut hasher);
    format!("{:016x}", hasher.finish())
}

/// Names in values by what they are (`ide::semantic_tokens`), kept with a
/// result id so the next request can be answered as a delta.
pub(crate) async fn semantic_tokens_full(
    backend: &Backend,
    params: SemanticTokensParams,
) -> Result<Option<SemanticTokensResult>> {
    let Some(data) = encoded_tokens(backend, &params.text_document.uri, None).await? else {
        return Ok(None);
    };
    let result_id = remember_tokens(backend, &params.text_document.uri, &data).await;
    Ok(Some(SemanticTokensResult::Tokens(SemanticTokens {
        result_id,
        data,
    })))
}

/// The tokens as edits of those last sent (one edit: what lies between the
/// unchanged start and end), or all of them when the client's result id is
/// not the one kept.
pub(crate) async fn semantic_tokens_delta(
    backend: &Backend,
    params: SemanticTokensDeltaParams,
) -> Result<Option<SemanticTokensFullDeltaResult>> {
    let uri = &params.text_document.uri;
    let Some(data) = encoded_tokens(backend, uri, None).await? else {
        return Ok(None);
    };
    let previous = {
        let state = backend.state.lock().await;
        path_of(uri)
            .and_then(|path| state.semantic_tokens.get(&path).cloned())
            .filter(|(id, _)| *id == params.previous_result_id)
    };
    let result_id = remember_tokens(backend, uri, &data).await;
    Ok(Some(match previous {
        Some((_, before)) => SemanticTokensFullDeltaResult::TokensDelta(SemanticTokensDelta {
            result_id,
            edits: token_edits(&before, &data),
        }),
        None => SemanticTokensFullDeltaResult::Tokens(SemanticTokens { result_id, data }),
    }))
}

/// The tokens of the lines in a range (a client shows the visible part
/// first); no result id, since a range is no base for a delta.
pub(crate) async fn semantic_tokens_range(
    backend: &Backend,
    params: SemanticTokensRangeParams,
) -> Result<Option<SemanticTokensRangeResult>> {
    let Some(data) = encoded_tokens(backend, &params.text_document.uri, Some(params.range)).await?
    else {
        return Ok(None);
    };
    Ok(Some(SemanticTokensRangeResult::Tokens(SemanticTokens {
        result_id: None,
        data,
    })))
}

/// The document's tokens, encoded; only those that overlap `range` when given.
async fn encoded_tokens(
    backend: &Backend,
    uri: &Uri,
    range: Option<Range>,
) -> Result<Option<Vec<SemanticToken>>> {
    let Some((analysis, file, _, unit)) = backend.locate(uri, Position::new(0, 0)).await else {
        return Ok(None);
    };
    // The range's ends as byte offsets (clamped like any client position).
    let bounds = match range {
        Some(range) => {
            let start = backend.locate(uri, range.start).await.map(|l| l.2);
            let end = backend.locate(uri, range.end).await.map(|l| l.2);
            Some((start.unwrap_or(0), end.unwrap_or(u32::MAX)))
        }
        None => None,
    };
    let data = guarded("semanticTokens", || {
        let mut tokens = ide::semantic_tokens(&analysis, file);
        if let Some((start, end)) = bounds {
            tokens.retain(|t| t.range.end > start && t.range.start < end);
        }
        crate::lsp::to_proto::semantic_tokens(&analysis, file, &tokens, unit)
    })?;
    Ok(Some(data))
}

/// Keeps the tokens sent for an open document under a new result id.
async fn remember_tokens(backend: &Backend, uri: &Uri, data: &[SemanticToken]) -> Option<String> {
    let path = path_of(uri)?;
    let mut state = backend.state.lock().await;
    if !state.documents.contains_key(&path) {
        // Only open documents are asked again; a closed one would stay forever.
        return None;
    }
    state.semantic_tokens_id += 1;
    let id = state.semantic_tokens_id.to_string();
    state
        .semantic_tokens
        .insert(path, (id.clone(), data.to_vec()));
    Some(id)
}

/// One edit turning `before` into `after`: the tokens between their common
/// start and their common end replaced. Offsets count the protocol's
/// integers, five per token.
fn token_edits(before: &[SemanticToken], after: &[SemanticToken]) -> Vec<SemanticTokensEdit> {
    let prefix = before.iter().zip(after).take_while(|(a, b)| a == b).count();
    let suffix = before[prefix..]
        .iter()
        .rev()
        .zip(after[prefix..].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    let removed = before.len() - prefix - suffix;
    let inserted = &after[prefix..after.len() - suffix];
    if removed == 0 && inserted.is_empty() {
        return Vec::new();
    }
    vec![SemanticTokensEdit {
        start: 5 * prefix as u32,
        delete_count: 5 * removed as u32,
        data: Some(inserted.to_vec()),
    }]
}
