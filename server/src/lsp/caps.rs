//! Capabilities: what the client declared it supports, read once at
//! `initialize` (absent means unsupported, LSP 3.17), and what the server
//! offers in return. Every message the server sends that a client may lack
//! support for asks `ClientCaps` first and degrades when it must.

use mzk_analyzer::syntax::ColumnUnit;
use tower_lsp_server::ls_types::*;

use super::{COMMANDS, FIX_ALL};

/// What the client supports, of what the server uses.
#[derive(Debug, Clone)]
pub(crate) struct ClientCaps {
    /// The negotiated position encoding.
    pub(crate) unit: ColumnUnit,
    /// The client lets us register file watchers.
    pub(crate) can_watch: bool,
    /// The client re-asks for inlay hints when told to (after `mzk test`
    /// rewrites a coverage file).
    pub(crate) can_refresh_hints: bool,
    /// The client shows a diagnostic's related locations (else they go into
    /// its message).
    pub(crate) related_information: bool,
    /// The client renders Markdown hovers (else they are sent as plain text).
    pub(crate) hover_markdown: bool,
    /// The client takes nested document symbols (else a flat list).
    pub(crate) hierarchical_symbols: bool,
    /// The client takes `CodeAction` literals (else only commands, and the
    /// server has no command that edits: no actions are offered).
    pub(crate) code_action_literals: bool,
    /// The client reads a code action's `isPreferred`.
    pub(crate) preferred_actions: bool,
    /// The completion item kinds the client knows; `None`: the protocol's
    /// initial set (Text to Reference).
    pub(crate) completion_kinds: Option<Vec<CompletionItemKind>>,
    /// The symbol kinds the client knows in document symbols, and in
    /// workspace symbols; `None`: the initial set (File to Array).
    pub(crate) symbol_kinds: Option<Vec<SymbolKind>>,
    pub(crate) workspace_symbol_kinds: Option<Vec<SymbolKind>>,
    /// The client pulls diagnostics (`textDocument/diagnostic`): open files'
    /// diagnostics are answered, not pushed (the client would show both).
    pub(crate) pull_diagnostics: bool,
    /// The client pulls again when told (`workspace/diagnostic/refresh`).
    pub(crate) diagnostic_refresh: bool,
    /// The client asks for semantic tokens in the relative format.
    pub(crate) semantic_tokens: bool,
    /// The client shows `$/progress` the server creates.
    pub(crate) work_done_progress: bool,
}

impl Default for ClientCaps {
    /// A client that declared nothing: UTF-16 positions, nothing optional.
    fn default() -> ClientCaps {
        ClientCaps::read(&ClientCapabilities::default()).0
    }
}

impl ClientCaps {
    /// The client's capabilities, and the position encoding chosen.
    pub(crate) fn read(caps: &ClientCapabilities) -> (ClientCaps, PositionEncodingKind) {
        let offered = caps
            .general
            .as_ref()
            .and_then(|g| g.position_encodings.clone())
            .unwrap_or_default();
        // UTF-8 counts as the analysis does (byte offsets); characters are
        // next cheapest; UTF-16, which every client supports, otherwise.
        let (unit, encoding) = if offered.contains(&PositionEncodingKind::UTF8) {
            (ColumnUnit::Utf8, PositionEncodingKind::UTF8)
        } else if offered.contains(&PositionEncodingKind::UTF32) {
            (ColumnUnit::Char, PositionEncodingKind::UTF32)
        } else {
            (ColumnUnit::Utf16, PositionEncodingKind::UTF16)
        };
        let workspace = caps.workspace.as_ref();
        let text = caps.text_document.as_ref();
        let read = ClientCaps {
            unit,
            can_watch: workspace
                .and_then(|w| w.did_change_watched_files.as_ref())
                .and_then(|d| d.dynamic_registration)
                .unwrap_or(false),
            can_refresh_hints: workspace
                .and_then(|w| w.inlay_hint.as_ref())
                .and_then(|h| h.refresh_support)
                .unwrap_or(false),
            related_information: text
                .and_then(|t| t.publish_diagnostics.as_ref())
                .and_then(|p| p.related_information)
                .unwrap_or(false),
            hover_markdown: text
                .and_then(|t| t.hover.as_ref())
                .and_then(|h| h.content_format.as_ref())
                .is_some_and(|formats| formats.contains(&MarkupKind::Markdown)),
            hierarchical_symbols: text
                .and_then(|t| t.document_symbol.as_ref())
                .and_then(|s| s.hierarchical_document_symbol_support)
                .unwrap_or(false),
            code_action_literals: text
                .and_then(|t| t.code_action.as_ref())
                .is_some_and(|c| c.code_action_literal_support.is_some()),
            preferred_actions: text
                .and_then(|t| t.code_action.as_ref())
                .and_then(|c| c.is_preferred_support)
                .unwrap_or(false),
            completion_kinds: text
                .and_then(|t| t.completion.as_ref())
                .and_then(|c| c.completion_item_kind.as_ref())
                .and_then(|k| k.value_set.clone()),
            symbol_kinds: text
                .and_then(|t| t.document_symbol.as_ref())
                .and_then(|s| s.symbol_kind.as_ref())
                .and_then(|k| k.value_set.clone()),
            workspace_symbol_kinds: workspace
                .and_then(|w| w.symbol.as_ref())
                .and_then(|s| s.symbol_kind.as_ref())
                .and_then(|k| k.value_set.clone()),
            pull_diagnostics: text.is_some_and(|t| t.diagnostic.is_some()),
            diagnostic_refresh: workspace
                .and_then(|w| w.diagnostics.as_ref())
                .and_then(|d| d.refresh_support)
                .unwrap_or(false),
            semantic_tokens: text
                .and_then(|t| t.semantic_tokens.as_ref())
                .is_some_and(|s| s.formats.contains(&TokenFormat::RELATIVE)),
            work_done_progress: caps
                .window
                .as_ref()
                .and_then(|w| w.work_done_progress)
                .unwrap_or(false),
        };
        (read, encoding)
    }

    /// `kind`, or the nearest kind of the protocol's initial set when the
    /// client does not know it.
    pub(crate) fn completion_kind(&self, kind: CompletionItemKind) -> CompletionItemKind {
        let known = match &self.completion_kinds {
            Some(set) => set.contains(&kind),
            None => {
                number(serde_json::to_value(kind))
                    <= number(serde_json::to_value(CompletionItemKind::REFERENCE))
            }
        };
        match (known, kind) {
            (true, _) => kind,
            (false, CompletionItemKind::ENUM_MEMBER) => CompletionItemKind::VALUE,
            (false, CompletionItemKind::STRUCT) => CompletionItemKind::CLASS,
            (false, _) => CompletionItemKind::TEXT,
        }
    }

    /// `kind` for a document symbol, or the nearest kind of the initial set
    /// when the client does not know it.
    pub(crate) fn symbol_kind(&self, kind: SymbolKind) -> SymbolKind {
        known_symbol_kind(&self.symbol_kinds, kind)
    }

    /// The same for a workspace symbol.
    pub(crate) fn workspace_symbol_kind(&self, kind: SymbolKind) -> SymbolKind {
        known_symbol_kind(&self.workspace_symbol_kinds, kind)
    }
    /// A hover's text in a format the client renders.
    pub(crate) fn hover_contents(&self, markdown: String) -> HoverContents {
        HoverContents::Markup(MarkupContent {
            kind: match self.hover_markdown {
                true => MarkupKind::Markdown,
                // Markdown source reads well enough as text.
                false => MarkupKind::PlainText,
            },
            value: markdown,
        })
    }
}

/// `kind`, if in the client's `set`, else the nearest kind of the initial set.
fn known_symbol_kind(set: &Option<Vec<SymbolKind>>, kind: SymbolKind) -> SymbolKind {
    let known = match set {
        Some(set) => set.contains(&kind),
        None => {
            number(serde_json::to_value(kind)) <= number(serde_json::to_value(SymbolKind::ARRAY))
        }
    };
    match (known, kind) {
        (true, _) => kind,
        (false, SymbolKind::STRUCT) => SymbolKind::CLASS,
        (false, SymbolKind::EVENT) => SymbolKind::NAMESPACE,
        (false, _) => SymbolKind::VARIABLE,
    }
}

/// A kind's number in the protocol (the types keep it private).
fn number(kind: serde_json::Result<serde_json::Value>) -> i64 {
    kind.ok().and_then(|n| n.as_i64()).unwrap_or(i64::MAX)
}

/// The token types of `ide::TokenKind`, in the order of the legend.
pub(crate) const TOKEN_TYPES: [SemanticTokenType; 9] = [
    SemanticTokenType::CLASS,       // agent
    SemanticTokenType::VARIABLE,    // context variable
    SemanticTokenType::STRUCT,      // structured-output model
    SemanticTokenType::PROPERTY,    // model field
    SemanticTokenType::FUNCTION,    // tool, lifecycle tool, middleware, Python function
    SemanticTokenType::EVENT,       // task batch
    SemanticTokenType::INTERFACE,   // UI component
    SemanticTokenType::ENUM_MEMBER, // writer id
    SemanticTokenType::KEYWORD,     // user, terminate, all, primitive types
];

/// The identifier of mzk's pulled diagnostics.
pub(crate) const DIAGNOSTIC_IDENTIFIER: &str = "mzk";

/// What the server offers to a client with `client`'s capabilities.
pub(crate) fn server_capabilities(
    encoding: PositionEncodingKind,
    client: &ClientCaps,
) -> ServerCapabilities {
    ServerCapabilities {
        // Offered only to clients that pull: the others get every file's
        // diagnostics pushed.
        diagnostic_provider: client.pull_diagnostics.then(|| {
            DiagnosticServerCapabilities::Options(DiagnosticOptions {
                identifier: Some(DIAGNOSTIC_IDENTIFIER.into()),
                // An edit in agents.yaml changes transition_graph.yaml's findings.
                inter_file_dependencies: true,
                // Every analysed file of every bundle (`workspace/diagnostic`).
                workspace_diagnostics: true,
                work_done_progress_options: WorkDoneProgressOptions::default(),
            })
        }),
        semantic_tokens_provider: client.semantic_tokens.then(|| {
            SemanticTokensServerCapabilities::SemanticTokensOptions(SemanticTokensOptions {
                legend: SemanticTokensLegend {
                    token_types: TOKEN_TYPES.to_vec(),
                    token_modifiers: vec![SemanticTokenModifier::DECLARATION],
                },
                // Deltas against the tokens last sent, and any range of lines.
                full: Some(SemanticTokensFullOptions::Delta { delta: Some(true) }),
                range: Some(true),
                work_done_progress_options: WorkDoneProgressOptions::default(),
            })
        }),
        position_encoding: Some(encoding),
        text_document_sync: Some(TextDocumentSyncCapability::Kind(
            TextDocumentSyncKind::INCREMENTAL,
        )),
        definition_provider: Some(OneOf::Left(true)),
        references_provider: Some(OneOf::Left(true)),
        document_highlight_provider: Some(OneOf::Left(true)),
        workspace_symbol_provider: Some(OneOf::Left(true)),
        code_lens_provider: Some(CodeLensOptions {
            resolve_provider: Some(false),
        }),
        execute_command_provider: Some(ExecuteCommandOptions {
            commands: COMMANDS.iter().map(|c| c.to_string()).collect(),
            ..ExecuteCommandOptions::default()
        }),
        workspace: Some(WorkspaceServerCapabilities {
            workspace_folders: Some(WorkspaceFoldersServerCapabilities {
                supported: Some(true),
                change_notifications: Some(OneOf::Left(true)),
            }),
            file_operations: None,
        }),
        code_action_provider: Some(CodeActionProviderCapability::Options(CodeActionOptions {
            code_action_kinds: Some(vec![CodeActionKind::QUICKFIX, CodeActionKind::new(FIX_ALL)]),
            ..CodeActionOptions::default()
        })),
        hover_provider: Some(HoverProviderCapability::Simple(true)),
        inlay_hint_provider: Some(OneOf::Left(true)),
        document_symbol_provider: Some(OneOf::Left(true)),
        completion_provider: Some(CompletionOptions {
            trigger_characters: Some(vec![":".into(), " ".into(), "{".into(), "-".into()]),
            ..CompletionOptions::default()
        }),
        call_hierarchy_provider: Some(CallHierarchyServerCapability::Simple(true)),
        folding_range_provider: Some(FoldingRangeProviderCapability::Simple(true)),
        selection_range_provider: Some(SelectionRangeProviderCapability::Simple(true)),
        document_link_provider: Some(DocumentLinkOptions {
            resolve_provider: Some(false),
            work_done_progress_options: WorkDoneProgressOptions::default(),
        }),
        rename_provider: Some(OneOf::Right(RenameOptions {
            prepare_provider: Some(true),
            work_done_progress_options: WorkDoneProgressOptions::default(),
        })),
        ..ServerCapabilities::default()
    }
}
