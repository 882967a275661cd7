//! A language-server client for tests: the server runs in-process over an
//! in-memory duplex, and the client speaks the protocol byte for byte as an
//! editor would, answering the server's own requests.

use std::path::Path;
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::mpsc;

pub fn uri(path: &Path) -> String {
    format!("file://{}", path.display())
}

pub struct Client {
    pub writer: DuplexStream,
    pub incoming: mpsc::UnboundedReceiver<Value>,
    pub next_id: i64,
    /// Requests the server sent us (each answered with a null result, or
    /// with the result set in `answers` for its method).
    pub server_requests: Vec<Value>,
    pub answers: std::collections::HashMap<String, Value>,
    /// Every message the server sent, when recording (see `record`).
    pub seen: Option<Vec<Value>>,
}

impl Client {
    /// Opens a YAML document with its text at `version`.
    pub async fn open(&mut self, uri: &str, version: i64, text: &str) {
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": "yaml", "version": version, "text": text}}),
        )
        .await;
    }

    /// `shutdown` then `exit`; the server task must end promptly.
    pub async fn stop(mut self, server: tokio::task::JoinHandle<()>) {
        let _ = self.request("shutdown", Value::Null).await;
        self.notify("exit", Value::Null).await;
        tokio::time::timeout(Duration::from_secs(5), server)
            .await
            .expect("the server exits")
            .unwrap();
    }

    pub async fn start(encodings: &[&str]) -> (Client, tokio::task::JoinHandle<()>, Value) {
        Client::start_with(json!({"capabilities": {"general": {"positionEncodings": encodings}}, "processId": null, "rootUri": null})).await
    }

    /// Starts a server for a client with `params`; the client declares the
    /// text-document features every editor mzk ships for has (code action
    /// literals and their preferred one, nested symbols, Markdown hovers) unless `params` says
    /// otherwise. The capability matrix (`capabilities.rs`) tests clients
    /// without them.
    pub async fn start_with(mut params: Value) -> (Client, tokio::task::JoinHandle<()>, Value) {
        let text_document = &mut params["capabilities"]["textDocument"];
        for (feature, declared) in [
            (
                "codeAction",
                json!({"codeActionLiteralSupport": {"codeActionKind": {"valueSet": ["quickfix", "source"]}}, "isPreferredSupport": true}),
            ),
            (
                "documentSymbol",
                json!({"hierarchicalDocumentSymbolSupport": true}),
            ),
            ("hover", json!({"contentFormat": ["markdown", "plaintext"]})),
        ] {
            if text_document.get(feature).is_none() {
                text_document[feature] = declared;
            }
        }
        Client::start_exactly(params).await
    }

    /// Starts a server for a client that declares exactly `params`.
    pub async fn start_exactly(params: Value) -> (Client, tokio::task::JoinHandle<()>, Value) {
        let (client_end, server_end) = tokio::io::duplex(1 << 20);
        let (server_read, server_write) = tokio::io::split(server_end);
        let server = tokio::spawn(mzk_server::lsp::serve(server_read, server_write));
        let (client_read, client_write) = tokio::io::split(client_end);
        let (tx, incoming) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            let mut reader = BufReader::new(client_read);
            loop {
                let mut length = 0usize;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).await.unwrap_or(0) == 0 {
                        return;
                    }
                    let line = line.trim_end();
                    if line.is_empty() {
                        break;
                    }
                    if let Some(n) = line.strip_prefix("Content-Length: ") {
                        length = n.parse().unwrap();
                    }
                }
                let mut body = vec![0; length];
                reader.read_exact(&mut body).await.unwrap();
                let _ = tx.send(serde_json::from_slice::<Value>(&body).unwrap());
            }
        });
        // The duplex is one stream; keep writing on the client half.
        let mut client = Client {
            writer: unsplit_writer(client_write),
            incoming,
            next_id: 1,
            server_requests: Vec::new(),
            answers: Default::default(),
            seen: None,
        };
        let init = client.request("initialize", params).await;
        client.notify("initialized", json!({})).await;
        (client, server, init)
    }

    pub async fn send(&mut self, message: Value) {
        self.send_raw(&serde_json::to_vec(&message).unwrap()).await;
    }

    /// Sends `body` as one framed message, whatever it holds.
    pub async fn send_raw(&mut self, body: &[u8]) {
        let header = format!("Content-Length: {}\r\n\r\n", body.len());
        self.writer.write_all(header.as_bytes()).await.unwrap();
        self.writer.write_all(body).await.unwrap();
        self.writer.flush().await.unwrap();
    }

    pub async fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params}))
            .await;
    }

    pub async fn request(&mut self, method: &str, params: Value) -> Value {
        let message = self.request_raw(method, params).await;
        assert!(message.get("error").is_none(), "{method}: {message}");
        message["result"].clone()
    }

    /// The whole response, error included.
    pub async fn request_raw(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        loop {
            let message = self.next().await;
            if message["id"] == id && message.get("method").is_none() {
                return message;
            }
        }
    }

    pub async fn next(&mut self) -> Value {
        let message = tokio::time::timeout(Duration::from_secs(20), self.incoming.recv())
            .await
            .expect("the server answers")
            .expect("the stream is open");
        if let Some(seen) = &mut self.seen {
            seen.push(message.clone());
        }
        if message.get("method").is_some() && message.get("id").is_some() {
            let method = message["method"].as_str().unwrap_or("");
            let result = self.answers.get(method).cloned().unwrap_or(Value::Null);
            self.send(json!({"jsonrpc": "2.0", "id": message["id"], "result": result}))
                .await;
            self.server_requests.push(message.clone());
        }
        message
    }

    /// Waits for the diagnostics of `uri` at `version`.
    pub async fn diagnostics(&mut self, uri: &str, version: Option<i64>) -> Vec<Value> {
        loop {
            let message = self.next().await;
            if message["method"] == "textDocument/publishDiagnostics"
                && message["params"]["uri"] == uri
            {
                let got = message["params"]["version"].as_i64();
                if version.is_none() || got == version {
                    return message["params"]["diagnostics"].as_array().unwrap().clone();
                }
            }
        }
    }
}

fn unsplit_writer(write: tokio::io::WriteHalf<DuplexStream>) -> DuplexStream {
    // WriteHalf cannot be unsplit without its reader; wrap it instead.
    let (a, b) = tokio::io::duplex(1 << 20);
    let (mut from, _unused) = tokio::io::split(b);
    let mut write = write;
    tokio::spawn(async move {
        let _ = tokio::io::copy(&mut from, &mut write).await;
    });
    a
}
