//! The protocol's entry points: every request and notification goes to its
//! handler through a guard, so one bad message never takes the server down.

use std::future::Future;

use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::*;
use tower_lsp_server::LanguageServer;

use super::guard::{internal_error, panic_detail, CatchPanic};
#[cfg(test)]
use super::handlers::notification::TEST_PANIC_FILE;
use super::handlers::{command, document, notification, request};
use super::Backend;

/// Runs a request handler; a panic anywhere in it (conversions included,
/// not only the `ide` call) becomes an internal-error response.
async fn request<T>(method: &str, handler: impl Future<Output = Result<T>>) -> Result<T> {
    match CatchPanic(Box::pin(handler)).await {
        Ok(answer) => answer,
        Err(panic) => Err(internal_error(method, &panic_detail(&*panic))),
    }
}

impl Backend {
    /// Runs a notification handler; a panic in it is logged to the client
    /// (and to standard error, by the panic hook) and the server carries on:
    /// a notification has no response to carry the error.
    async fn notification(&self, method: &str, handler: impl Future<Output = ()>) {
        if let Err(panic) = CatchPanic(Box::pin(handler)).await {
            let detail = panic_detail(&*panic);
            self.client
                .log_message(
                    MessageType::ERROR,
                    format!("mzk: internal error in {method} ({detail}); please report it — the server keeps running"),
                )
                .await;
        }
    }
}

impl LanguageServer for Backend {
    async fn initialize(&self, params: InitializeParams) -> Result<InitializeResult> {
        request("initialize", request::initialize(self, params)).await
    }

    async fn symbol(
        &self,
        params: WorkspaceSymbolParams,
    ) -> Result<Option<WorkspaceSymbolResponse>> {
        request("workspace/symbol", request::symbol(self, params)).await
    }

    async fn inlay_hint(&self, params: InlayHintParams) -> Result<Option<Vec<InlayHint>>> {
        request("textDocument/inlayHint", request::inlay_hint(self, params)).await
    }

    async fn code_lens(&self, params: CodeLensParams) -> Result<Option<Vec<CodeLens>>> {
        request("textDocument/codeLens", request::code_lens(self, params)).await
    }

    async fn goto_definition(
        &self,
        params: GotoDefinitionParams,
    ) -> Result<Option<GotoDefinitionResponse>> {
        request(
            "textDocument/definition",
            request::goto_definition(self, params),
        )
        .await
    }

    async fn references(&self, params: ReferenceParams) -> Result<Option<Vec<Location>>> {
        request("textDocument/references", request::references(self, params)).await
    }

    async fn document_highlight(
        &self,
        params: DocumentHighlightParams,
    ) -> Result<Option<Vec<DocumentHighlight>>> {
        request(
            "textDocument/documentHighlight",
            request::document_highlight(self, params),
        )
        .await
    }

    async fn code_action(&self, params: CodeActionParams) -> Result<Option<CodeActionResponse>> {
        request(
            "textDocument/codeAction",
            request::code_action(self, params),
        )
        .await
    }

    async fn completion(&self, params: CompletionParams) -> Result<Option<CompletionResponse>> {
        request("textDocument/completion", request::completion(self, params)).await
    }

    async fn document_symbol(
        &self,
        params: DocumentSymbolParams,
    ) -> Result<Option<DocumentSymbolResponse>> {
        request(
            "textDocument/documentSymbol",
            request::document_symbol(self, params),
        )
        .await
    }

    async fn prepare_rename(
        &self,
        params: TextDocumentPositionParams,
    ) -> Result<Option<PrepareRenameResponse>> {
        request(
            "textDocument/prepareRename",
            request::prepare_rename(self, params),
        )
        .await
    }

    async fn rename(&self, params: RenameParams) -> Result<Option<WorkspaceEdit>> {
        request("textDocument/rename", request::rename(self, params)).await
    }

    async fn hover(&self, params: HoverParams) -> Result<Option<Hover>> {
        request("textDocument/hover", request::hover(self, params)).await
    }

    async fn prepare_call_hierarchy(
        &self,
        params: CallHierarchyPrepareParams,
    ) -> Result<Option<Vec<CallHierarchyItem>>> {
        request(
            "textDocument/prepareCallHierarchy",
            request::prepare_call_hierarchy(self, params),
        )
        .await
    }

    async fn incoming_calls(
        &self,
        params: CallHierarchyIncomingCallsParams,
    ) -> Result<Option<Vec<CallHierarchyIncomingCall>>> {
        request(
            "callHierarchy/incomingCalls",
            request::incoming_calls(self, params),
        )
        .await
    }

    async fn outgoing_calls(
        &self,
        params: CallHierarchyOutgoingCallsParams,
    ) -> Result<Option<Vec<CallHierarchyOutgoingCall>>> {
        request(
            "callHierarchy/outgoingCalls",
            request::outgoing_calls(self, params),
        )
        .await
    }

    async fn folding_range(&self, params: FoldingRangeParams) -> Result<Option<Vec<FoldingRange>>> {
        request(
            "textDocument/foldingRange",
            document::folding_range(self, params),
        )
        .await
    }

    async fn selection_range(
        &self,
        params: SelectionRangeParams,
    ) -> Result<Option<Vec<SelectionRange>>> {
        request(
            "textDocument/selectionRange",
            document::selection_range(self, params),
        )
        .await
    }

    async fn document_link(&self, params: DocumentLinkParams) -> Result<Option<Vec<DocumentLink>>> {
        request(
            "textDocument/documentLink",
            document::document_link(self, params),
        )
        .await
    }

    async fn diagnostic(
        &self,
        params: DocumentDiagnosticParams,
    ) -> Result<DocumentDiagnosticReportResult> {
        request(
            "textDocument/diagnostic",
            document::diagnostic(self, params),
        )
        .await
    }

    async fn workspace_diagnostic(
        &self,
        params: WorkspaceDiagnosticParams,
    ) -> Result<WorkspaceDiagnosticReportResult> {
        request(
            "workspace/diagnostic",
            document::workspace_diagnostic(self, params),
        )
        .await
    }

    async fn semantic_tokens_full(
        &self,
        params: SemanticTokensParams,
    ) -> Result<Option<SemanticTokensResult>> {
        request(
            "textDocument/semanticTokens/full",
            document::semantic_tokens_full(self, params),
        )
        .await
    }

    async fn semantic_tokens_full_delta(
        &self,
        params: SemanticTokensDeltaParams,
    ) -> Result<Option<SemanticTokensFullDeltaResult>> {
        request(
            "textDocument/semanticTokens/full/delta",
            document::semantic_tokens_delta(self, params),
        )
        .await
    }

    async fn semantic_tokens_range(
        &self,
        params: SemanticTokensRangeParams,
    ) -> Result<Option<SemanticTokensRangeResult>> {
        request(
            "textDocument/semanticTokens/range",
            document::semantic_tokens_range(self, params),
        )
        .await
    }

    async fn execute_command(
        &self,
        params: ExecuteCommandParams,
    ) -> Result<Option<serde_json::Value>> {
        request(
            "workspace/executeCommand",
            command::execute_command(self, params),
        )
        .await
    }

    async fn shutdown(&self) -> Result<()> {
        Ok(())
    }

    async fn initialized(&self, params: InitializedParams) {
        self.notification("initialized", notification::initialized(self, params))
            .await
    }

    async fn did_change_workspace_folders(&self, params: DidChangeWorkspaceFoldersParams) {
        self.notification(
            "workspace/didChangeWorkspaceFolders",
            notification::did_change_workspace_folders(self, params),
        )
        .await
    }

    async fn did_change_watched_files(&self, params: DidChangeWatchedFilesParams) {
        self.notification(
            "workspace/didChangeWatchedFiles",
            notification::did_change_watched_files(self, params),
        )
        .await
    }

    async fn did_open(&self, params: DidOpenTextDocumentParams) {
        self.notification("textDocument/didOpen", notification::did_open(self, params))
            .await
    }

    async fn did_change(&self, params: DidChangeTextDocumentParams) {
        self.notification(
            "textDocument/didChange",
            notification::did_change(self, params),
        )
        .await
    }

    async fn did_save(&self, params: DidSaveTextDocumentParams) {
        self.notification("textDocument/didSave", notification::did_save(self, params))
            .await
    }

    async fn did_close(&self, params: DidCloseTextDocumentParams) {
        self.notification(
            "textDocument/didClose",
            notification::did_close(self, params),
        )
        .await
    }
}

#[cfg(test)]
mod tests {
    use crate::lsp::guard::guarded;

    #[test]
    fn a_panicking_request_becomes_an_error_response() {
        // The panic is intended: keep its message and backtrace out of the
        // test output, where they would read as a failure.
        let hook = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        let error = guarded("hover", || -> u32 { panic!("boom") }).unwrap_err();
        std::panic::set_hook(hook);
        assert!(
            error.message.contains("internal error in hover (boom)"),
            "{}",
            error.message
        );
        assert_eq!(guarded("hover", || 7).unwrap(), 7);
    }
}

/// A notification handler that panics (a test-only hook in `didSave`) is
/// logged, and the server answers the next request as before.
#[cfg(test)]
mod notification_panics {
    use serde_json::{json, Value};
    use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};

    async fn send(writer: &mut (impl AsyncWriteExt + Unpin), message: Value) {
        let body = serde_json::to_vec(&message).unwrap_or_default();
        let header = format!("Content-Length: {}\r\n\r\n", body.len());
        let _ = writer.write_all(header.as_bytes()).await;
        let _ = writer.write_all(&body).await;
    }

    async fn receive(reader: &mut (impl AsyncBufReadExt + Unpin)) -> Option<Value> {
        let mut length = 0;
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).await.ok()? == 0 {
                return None;
            }
            match line.trim_end() {
                "" => break,
                header => {
                    if let Some(n) = header.strip_prefix("Content-Length: ") {
                        length = n.parse().ok()?;
                    }
                }
            }
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body).await.ok()?;
        serde_json::from_slice(&body).ok()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_panicking_notification_is_logged_and_the_server_keeps_answering() {
        let hook = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        let (client, server) = tokio::io::duplex(1 << 16);
        let (server_read, server_write) = tokio::io::split(server);
        let serving = tokio::spawn(crate::lsp::serve(server_read, server_write));
        let (client_read, mut writer) = tokio::io::split(client);
        let mut reader = BufReader::new(client_read);
        let request = |id: i64, method: &str, params: Value| json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        send(
            &mut writer,
            request(
                1,
                "initialize",
                json!({"capabilities": {}, "processId": null, "rootUri": null}),
            ),
        )
        .await;
        // Messages before the answer to `initialize` would be refused.
        while let Ok(Some(message)) =
            tokio::time::timeout(std::time::Duration::from_secs(20), receive(&mut reader)).await
        {
            if message["id"] == 1 {
                break;
            }
        }
        send(
            &mut writer,
            json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}),
        )
        .await;
        send(&mut writer, json!({"jsonrpc": "2.0", "method": "textDocument/didSave",
            "params": {"textDocument": {"uri": format!("file:///tmp/{}", super::TEST_PANIC_FILE)}}})).await;
        send(
            &mut writer,
            request(2, "workspace/symbol", json!({"query": ""})),
        )
        .await;
        let mut logged = None;
        let mut answered = None;
        // The log and the answer may come in either order.
        while answered.is_none() || logged.is_none() {
            let Ok(Some(message)) =
                tokio::time::timeout(std::time::Duration::from_secs(20), receive(&mut reader))
                    .await
            else {
                break;
            };
            if message["method"] == "window/logMessage" {
                logged = message["params"]["message"].as_str().map(str::to_string);
            }
            if message["id"] == 2 {
                answered = Some(message);
            }
        }
        std::panic::set_hook(hook);
        let answered = answered.expect("the request after the panic is answered");
        assert_eq!(answered["result"], json!([]), "{answered}");
        let logged = logged.expect("the panic is logged to the client");
        assert!(
            logged.contains("internal error in textDocument/didSave (test hook"),
            "{logged}"
        );
        drop(writer);
        serving.abort();
    }
}
