//! The request handlers: each reads the latest analysis of the document's
//! bundle, asks `analyzer::ide`, and converts the answer.

use std::collections::HashMap;
use std::path::PathBuf;

use mzk_analyzer::diagnostics::Applicability;
use mzk_analyzer::ide;
use mzk_analyzer::syntax::LineCol;
use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::*;

use crate::lsp::caps::{server_capabilities, ClientCaps};
use crate::lsp::from_proto::path_of;
use crate::lsp::guard::guarded;
use crate::lsp::to_proto::{completion_kind, file_uri, symbol_kind, to_lsp_diagnostic, to_range};
use crate::lsp::{
    coverage, runs, Backend, FIX_ALL, RUN_FROM_AGENT, RUN_WORKFLOW, SHOW_GRAPH, SHOW_PROMPT,
};

pub(crate) async fn initialize(
    backend: &Backend,
    params: InitializeParams,
) -> Result<InitializeResult> {
    #[cfg(unix)]
    if let (true, Some(pid)) = (backend.exit_with_parent, params.process_id) {
        tokio::spawn(crate::lsp::main_loop::exit_with_parent(pid));
    }
    let (client, encoding) = ClientCaps::read(&params.capabilities);
    let capabilities = server_capabilities(encoding, &client);
    *backend.runs.settings.lock().await = runs::RunSettings::from_initialization(
        params.initialization_options.as_ref(),
        client.work_done_progress,
    );
    {
        let mut state = backend.state.lock().await;
        state.client = client;
        #[allow(deprecated)] // root_uri: older clients send only it
        let roots: Vec<PathBuf> = match &params.workspace_folders {
            Some(folders) if !folders.is_empty() => {
                folders.iter().filter_map(|f| path_of(&f.uri)).collect()
            }
            _ => params
                .root_uri
                .as_ref()
                .and_then(path_of)
                .into_iter()
                .collect(),
        };
        state.roots = roots;
    }
    Ok(InitializeResult {
        capabilities,
        server_info: Some(ServerInfo {
            name: "mzk".into(),
            version: Some(env!("MZK_VERSION").into()),
        }),
        offset_encoding: None,
    })
}

pub(crate) async fn symbol(
    backend: &Backend,
    params: WorkspaceSymbolParams,
) -> Result<Option<WorkspaceSymbolResponse>> {
    let (analyses, unit, client) = {
        let state = backend.state.lock().await;
        (
            state.host.analyses().cloned().collect::<Vec<_>>(),
            state.unit(),
            state.client.clone(),
        )
    };
    let query = params.query.to_lowercase();
    let mut symbols = Vec::new();
    for analysis in &analyses {
        let bundle_name = analysis
            .bundle
            .dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned());
        for d in &analysis.symbols.definitions {
            if !d.name.text.to_lowercase().contains(&query) {
                continue;
            }
            let Some(uri) = file_uri(analysis, d.name.file) else {
                continue;
            };
            #[allow(deprecated)] // `deprecated` is a required field of the type
            symbols.push(SymbolInformation {
                name: d.name.text.clone(),
                kind: client.workspace_symbol_kind(symbol_kind(d.kind)),
                tags: None,
                deprecated: None,
                location: Location::new(uri, to_range(analysis, d.name.file, d.name.range, unit)),
                container_name: bundle_name.clone(),
            });
        }
    }
    symbols.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(Some(WorkspaceSymbolResponse::Flat(symbols)))
}

/// After `mzk test`: how often each rule fired, at the end of its line.
pub(crate) async fn inlay_hint(
    backend: &Backend,
    params: InlayHintParams,
) -> Result<Option<Vec<InlayHint>>> {
    let uri = params.text_document.uri;
    let Some((analysis, file, _, unit)) = backend.locate(&uri, Position::new(0, 0)).await else {
        return Ok(None);
    };
    let Some(coverage) = mzk_runtime::suite::Coverage::load(&analysis.bundle.dir) else {
        return Ok(None);
    };
    let hints = guarded("inlayHint", || {
        coverage::hints(&analysis, file, &coverage, params.range, unit)
    })?;
    Ok(Some(hints))
}

pub(crate) async fn code_lens(
    backend: &Backend,
    params: CodeLensParams,
) -> Result<Option<Vec<CodeLens>>> {
    let uri = params.text_document.uri;
    let Some((analysis, file, _, unit)) = backend.locate(&uri, Position::new(0, 0)).await else {
        return Ok(None);
    };
    let dir = serde_json::Value::String(analysis.bundle.dir.to_string_lossy().into_owned());
    let lenses = guarded("codeLens", || ide::code_lenses(&analysis, file))?
        .into_iter()
        .map(|lens| {
            let (title, command, arguments) = match lens.action {
                ide::LensAction::RunWorkflow => (
                    "▶ Run workflow".to_string(),
                    RUN_WORKFLOW,
                    vec![dir.clone()],
                ),
                ide::LensAction::ShowGraph => {
                    ("Show graph".to_string(), SHOW_GRAPH, vec![dir.clone()])
                }
                ide::LensAction::RunFromAgent(agent) => (
                    "▶ Run from this agent".to_string(),
                    RUN_FROM_AGENT,
                    vec![dir.clone(), serde_json::Value::String(agent)],
                ),
                ide::LensAction::PromptSize {
                    agent,
                    tokens,
                    chars,
                } => (
                    format!("prompt: {tokens} tokens, {chars} chars"),
                    SHOW_PROMPT,
                    vec![dir.clone(), serde_json::Value::String(agent)],
                ),
            };
            CodeLens {
                range: to_range(&analysis, file, lens.range, unit),
                command: Some(Command::new(title, command.to_string(), Some(arguments))),
                data: None,
            }
        })
        .collect();
    Ok(Some(lenses))
}

pub(crate) async fn goto_definition(
    backend: &Backend,
    params: GotoDefinitionParams,
) -> Result<Option<GotoDefinitionResponse>> {
    let p = params.text_document_position_params;
    let Some((analysis, file, offset, unit)) =
        backend.locate(&p.text_document.uri, p.position).await
    else {
        return Ok(None);
    };
    Ok(
        guarded("definition", || ide::definition(&analysis, file, offset))?.and_then(|target| {
            let uri = file_uri(&analysis, target.file)?;
            Some(GotoDefinitionResponse::Scalar(Location::new(
                uri,
                to_range(&analysis, target.file, target.range, unit),
            )))
        }),
    )
}

pub(crate) async fn references(
    backend: &Backend,
    params: ReferenceParams,
) -> Result<Option<Vec<Location>>> {
    let p = params.text_document_position;
    let Some((analysis, file, offset, unit)) =
        backend.locate(&p.text_document.uri, p.position).await
    else {
        return Ok(None);
    };
    let locations: Vec<Location> = guarded("references", || {
        ide::references(&analysis, file, offset, params.context.include_declaration)
    })?
    .into_iter()
    .filter_map(|r| {
        Some(Location::new(
            file_uri(&analysis, r.file)?,
            to_range(&analysis, r.file, r.range, unit),
        ))
    })
    .collect();
    Ok(Some(locations))
}

/// Every occurrence of the symbol under the cursor in this file; the
/// declaration is a write, uses are reads, so editors tell them apart.
pub(crate) async fn document_highlight(
    backend: &Backend,
    params: DocumentHighlightParams,
) -> Result<Option<Vec<DocumentHighlight>>> {
    let p = params.text_document_position_params;
    let Some((analysis, file, offset, unit)) =
        backend.locate(&p.text_document.uri, p.position).await
    else {
        return Ok(None);
    };
    let Some(id) = analysis.symbols.at(file, offset) else {
        return Ok(None);
    };
    let declaration = analysis.symbols.definition(id).name.clone();
    let highlights = guarded("documentHighlight", || {
        ide::references(&analysis, file, offset, true)
    })?
    .into_iter()
    .filter(|r| r.file == file)
    .map(|r| DocumentHighlight {
        range: to_range(&analysis, file, r.range, unit),
        kind: Some(
            if r.file == declaration.file && r.range == declaration.range {
                DocumentHighlightKind::WRITE
            } else {
                DocumentHighlightKind::READ
            },
        ),
    })
    .collect();
    Ok(Some(highlights))
}

/// A quick fix per fixable diagnostic touching the range, and one
/// `source.fixAll.mzk` action applying every fix in the file.
pub(crate) async fn code_action(
    backend: &Backend,
    params: CodeActionParams,
) -> Result<Option<CodeActionResponse>> {
    let uri = params.text_document.uri;
    let Some((analysis, file, _, unit)) = backend.locate(&uri, params.range.start).await else {
        return Ok(None);
    };
    let client = backend.state.lock().await.client.clone();
    // Without literal support a client takes only commands, and no command
    // of the server edits files.
    if !client.code_action_literals {
        return Ok(Some(Vec::new()));
    }
    let related = client.related_information;
    let wants = |kind: &CodeActionKind| {
        params
            .context
            .only
            .as_ref()
            .is_none_or(|only| only.iter().any(|o| kind.as_str().starts_with(o.as_str())))
    };
    let workspace_edit = |edits: &[ide::TextEdit]| {
        let mut changes: HashMap<Uri, Vec<TextEdit>> = HashMap::new();
        for e in edits {
            let Some(target_uri) = file_uri(&analysis, e.file) else {
                continue;
            };
            changes.entry(target_uri).or_default().push(TextEdit::new(
                to_range(&analysis, e.file, e.range, unit),
                e.new_text.clone(),
            ));
        }
        WorkspaceEdit {
            changes: Some(changes),
            ..WorkspaceEdit::default()
        }
    };
    let fixable: Vec<_> = guarded("codeAction", || {
        analysis
            .diagnostics
            .iter()
            .filter(|d| d.file == file)
            .map(|d| (d, ide::fixes(&analysis, d)))
            .filter(|(_, fixes)| !fixes.is_empty())
            .collect()
    })?;
    let mut actions = Vec::new();
    if wants(&CodeActionKind::QUICKFIX) {
        for (d, fixes) in &fixable {
            let diagnostic = to_lsp_diagnostic(&analysis, d, unit, related);
            let range = diagnostic.range;
            let touches = range.start <= params.range.end && params.range.start <= range.end;
            if !touches {
                continue;
            }
            for (i, fix) in fixes.iter().enumerate() {
                let safe = fix.applicability == Applicability::Safe;
                actions.push(CodeActionOrCommand::CodeAction(CodeAction {
                    title: if safe {
                        fix.title.clone()
                    } else {
                        format!("{} (review the change)", fix.title)
                    },
                    kind: Some(CodeActionKind::QUICKFIX),
                    diagnostics: Some(vec![diagnostic.clone()]),
                    edit: Some(workspace_edit(&fix.edits)),
                    is_preferred: client.preferred_actions.then_some(i == 0 && safe),
                    ..CodeAction::default()
                }));
            }
        }
    }
    let fix_all = CodeActionKind::new(FIX_ALL);
    if wants(&fix_all) {
        // The same choice as `mzk check --fix`.
        let chosen = ide::fix_all(&analysis, fixable.iter().map(|(d, _)| *d), false);
        let edits = chosen.edits;
        if !edits.is_empty() {
            actions.push(CodeActionOrCommand::CodeAction(CodeAction {
                title: format!("Apply all {} safe fixes mzk offers", chosen.fixes),
                kind: Some(fix_all),
                edit: Some(workspace_edit(&edits)),
                ..CodeAction::default()
            }));
        }
    }
    Ok(Some(actions))
}

pub(crate) async fn completion(
    backend: &Backend,
    params: CompletionParams,
) -> Result<Option<CompletionResponse>> {
    let p = params.text_document_position;
    let Some(path) = path_of(&p.text_document.uri) else {
        return Ok(None);
    };
    let Some((analysis, file, _, unit)) = backend.locate(&p.text_document.uri, p.position).await
    else {
        return Ok(None);
    };
    let Some(kind) = analysis.bundle.file(file).and_then(|f| f.kind) else {
        return Ok(None);
    };
    // Complete against what the editor shows now.
    let text = match backend.state.lock().await.documents.get(&path) {
        Some(doc) => doc.text.to_string(),
        None => analysis
            .bundle
            .file(file)
            .map(|f| f.text.to_string())
            .unwrap_or_default(),
    };
    let index = mzk_analyzer::syntax::LineIndex::new(&text);
    let offset = index.offset(
        &text,
        LineCol {
            line: p.position.line,
            col: p.position.character,
        },
        unit,
    );
    let position = |at: u32| {
        let LineCol { line, col } = index.position(&text, at, unit);
        Position::new(line, col)
    };
    let client = backend.state.lock().await.client.clone();
    let items: Vec<CompletionItem> = guarded("completion", || {
        ide::completions(&analysis, kind, &text, offset)
    })?
    .into_iter()
    .map(|c| CompletionItem {
        label: c.label,
        kind: Some(client.completion_kind(completion_kind(c.kind))),
        documentation: (!c.documentation.is_empty())
            .then_some(Documentation::String(c.documentation)),
        text_edit: Some(CompletionTextEdit::Edit(TextEdit::new(
            Range::new(position(c.replace.start), position(c.replace.end)),
            c.insert,
        ))),
        ..CompletionItem::default()
    })
    .collect();
    Ok(Some(CompletionResponse::Array(items)))
}

pub(crate) async fn document_symbol(
    backend: &Backend,
    params: DocumentSymbolParams,
) -> Result<Option<DocumentSymbolResponse>> {
    let Some((analysis, file, _, unit)) = backend
        .locate(&params.text_document.uri, Position::new(0, 0))
        .await
    else {
        return Ok(None);
    };
    let client = backend.state.lock().await.client.clone();
    let items = guarded("documentSymbol", || ide::document_symbols(&analysis, file))?;
    if !client.hierarchical_symbols {
        // A client without nested symbols takes the flat form.
        let Some(uri) = file_uri(&analysis, file) else {
            return Ok(None);
        };
        #[allow(deprecated)] // `deprecated` is a required field of the protocol type
        let symbols = items
            .into_iter()
            .map(|item| SymbolInformation {
                name: item.name,
                kind: client.symbol_kind(symbol_kind(item.kind)),
                tags: None,
                deprecated: None,
                location: Location::new(uri.clone(), to_range(&analysis, file, item.range, unit)),
                container_name: None,
            })
            .collect();
        return Ok(Some(DocumentSymbolResponse::Flat(symbols)));
    }
    #[allow(deprecated)] // `deprecated` is a required field of the protocol type
    let symbols: Vec<DocumentSymbol> = items
        .into_iter()
        .map(|item| {
            let range = to_range(&analysis, file, item.range, unit);
            DocumentSymbol {
                name: item.name,
                detail: Some(item.kind.describe().to_string()),
                kind: client.symbol_kind(symbol_kind(item.kind)),
                tags: None,
                deprecated: None,
                range,
                selection_range: range,
                children: None,
            }
        })
        .collect();
    Ok(Some(DocumentSymbolResponse::Nested(symbols)))
}

pub(crate) async fn prepare_rename(
    backend: &Backend,
    params: TextDocumentPositionParams,
) -> Result<Option<PrepareRenameResponse>> {
    let Some((analysis, file, offset, unit)) = backend
        .locate(&params.text_document.uri, params.position)
        .await
    else {
        return Ok(None);
    };
    match guarded("prepareRename", || {
        ide::prepare_rename(&analysis, file, offset)
    })? {
        Ok((_, range)) => Ok(Some(PrepareRenameResponse::Range(to_range(
            &analysis, file, range, unit,
        )))),
        Err(why) => Err(tower_lsp_server::jsonrpc::Error::invalid_params(why)),
    }
}

pub(crate) async fn rename(
    backend: &Backend,
    params: RenameParams,
) -> Result<Option<WorkspaceEdit>> {
    let p = params.text_document_position;
    let Some((analysis, file, offset, unit)) =
        backend.locate(&p.text_document.uri, p.position).await
    else {
        return Ok(None);
    };
    let edits = guarded("rename", || {
        ide::rename(&analysis, file, offset, &params.new_name)
    })?
    .map_err(tower_lsp_server::jsonrpc::Error::invalid_params)?;
    let mut changes: HashMap<Uri, Vec<TextEdit>> = HashMap::new();
    for e in edits {
        if let Some(uri) = file_uri(&analysis, e.file) {
            changes.entry(uri).or_default().push(TextEdit::new(
                to_range(&analysis, e.file, e.range, unit),
                e.new_text,
            ));
        }
    }
    Ok(Some(WorkspaceEdit {
        changes: Some(changes),
        ..WorkspaceEdit::default()
    }))
}

pub(crate) async fn hover(backend: &Backend, params: HoverParams) -> Result<Option<Hover>> {
    let p = params.text_document_position_params;
    let Some((analysis, file, offset, unit)) =
        backend.locate(&p.text_document.uri, p.position).await
    else {
        return Ok(None);
    };
    let client = backend.state.lock().await.client.clone();
    Ok(
        guarded("hover", || ide::hover(&analysis, file, offset))?.map(|(range, text)| Hover {
            contents: client.hover_contents(text),
            range: Some(to_range(&analysis, file, range, unit)),
        }),
    )
}

/// The agent (or `user`/`terminate`) under the cursor as a call hierarchy
/// item (`ide::prepare_call_hierarchy`).
pub(crate) async fn prepare_call_hierarchy(
    backend: &Backend,
    params: CallHierarchyPrepareParams,
) -> Result<Option<Vec<CallHierarchyItem>>> {
    let p = params.text_document_position_params;
    let Some((analysis, file, offset, unit)) =
        backend.locate(&p.text_document.uri, p.position).await
    else {
        return Ok(None);
    };
    let item = guarded("prepareCallHierarchy", || {
        ide::prepare_call_hierarchy(&analysis, file, offset)
    })?;
    Ok(item
        .and_then(|item| call_item(&analysis, &item, unit))
        .map(|item| vec![item]))
}

/// The rules that hand the turn to the item, grouped by source agent.
pub(crate) async fn incoming_calls(
    backend: &Backend,
    params: CallHierarchyIncomingCallsParams,
) -> Result<Option<Vec<CallHierarchyIncomingCall>>> {
    calls(
        backend,
        &params.item,
        ide::incoming_calls,
        |from, from_ranges| CallHierarchyIncomingCall { from, from_ranges },
    )
    .await
}

/// The rules that leave the item, grouped by target (`user` and `terminate`
/// included).
pub(crate) async fn outgoing_calls(
    backend: &Backend,
    params: CallHierarchyOutgoingCallsParams,
) -> Result<Option<Vec<CallHierarchyOutgoingCall>>> {
    calls(
        backend,
        &params.item,
        ide::outgoing_calls,
        |to, from_ranges| CallHierarchyOutgoingCall { to, from_ranges },
    )
    .await
}

/// The calls `find` gives for the item's node, each made by `make` from the
/// other end's item and the rules' ranges.
async fn calls<T>(
    backend: &Backend,
    item: &CallHierarchyItem,
    find: fn(&mzk_analyzer::Analysis, &mzk_analyzer::graph::Node) -> Vec<ide::Call>,
    make: impl Fn(CallHierarchyItem, Vec<Range>) -> T,
) -> Result<Option<Vec<T>>> {
    let Some((analysis, node, unit)) = hierarchy_node(backend, item).await else {
        return Ok(None);
    };
    let calls = guarded("callHierarchy", || find(&analysis, &node))?;
    Ok(Some(
        calls
            .into_iter()
            .filter_map(|call| {
                let other = call_item(&analysis, &call.item, unit)?;
                Some(make(other, call_ranges(&analysis, &call, unit)))
            })
            .collect(),
    ))
}

/// The node an item from `prepareCallHierarchy` stands for, and the analysis
/// of its bundle. The item's `data` names the node; a client that dropped
/// `data` still gets an answer from the item's name.
async fn hierarchy_node(
    backend: &Backend,
    item: &CallHierarchyItem,
) -> Option<(
    std::sync::Arc<mzk_analyzer::Analysis>,
    mzk_analyzer::graph::Node,
    mzk_analyzer::syntax::ColumnUnit,
)> {
    use mzk_analyzer::graph::Node;
    let (analysis, _, _, unit) = backend.locate(&item.uri, Position::new(0, 0)).await?;
    let kind = item
        .data
        .as_ref()
        .and_then(|d| d.get("node"))
        .and_then(|k| k.as_str());
    let name = item.name.clone();
    let node = match kind {
        Some("user") => Node::User,
        Some("terminate") => Node::Terminate,
        Some("unknown") => Node::Unknown(name),
        Some("agent") => Node::Agent(name),
        _ if name.eq_ignore_ascii_case("user") => Node::User,
        _ if name.eq_ignore_ascii_case("terminate") => Node::Terminate,
        _ if analysis.bundle.agent(&name).is_some() => Node::Agent(name),
        _ => Node::Unknown(name),
    };
    Some((analysis, node, unit))
}

fn call_item(
    analysis: &mzk_analyzer::Analysis,
    item: &ide::CallItem,
    unit: mzk_analyzer::syntax::ColumnUnit,
) -> Option<CallHierarchyItem> {
    use mzk_analyzer::graph::Node;
    let (kind, tag, detail) = match &item.node {
        Node::Agent(_) => (SymbolKind::CLASS, "agent", "agent"),
        Node::User => (SymbolKind::EVENT, "user", "the user's turn"),
        Node::Terminate => (SymbolKind::NULL, "terminate", "ends the run"),
        Node::Unknown(_) => (SymbolKind::NULL, "unknown", "no such agent"),
    };
    Some(CallHierarchyItem {
        name: item.node.label().to_string(),
        kind,
        tags: None,
        detail: Some(detail.to_string()),
        uri: file_uri(analysis, item.range.file)?,
        range: to_range(analysis, item.range.file, item.range.range, unit),
        selection_range: to_range(analysis, item.name.file, item.name.range, unit),
        data: Some(serde_json::json!({ "node": tag })),
    })
}

/// The `target_agent` values of a call's rules, in transition_graph.yaml:
/// the file of the items they belong to (`ide::call_hierarchy::item`
/// locates every node with rules at its first rule), as the protocol reads
/// them.
fn call_ranges(
    analysis: &mzk_analyzer::Analysis,
    call: &ide::Call,
    unit: mzk_analyzer::syntax::ColumnUnit,
) -> Vec<Range> {
    call.ranges
        .iter()
        .map(|r| to_range(analysis, r.file, r.range, unit))
        .collect()
}
