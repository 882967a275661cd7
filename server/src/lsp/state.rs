//! The server's state: the open documents and their versions, what was
//! published, what the client supports, and the analysis host (the bundles'
//! analyses and what they keep between them).

use std::path::PathBuf;

use mzk_analyzer::base::hash::{HashMap, HashSet};
use mzk_analyzer::syntax::ColumnUnit;
use mzk_analyzer::{AnalysisHost, ConfigSource, OnConfigError};
use ropey::Rope;
use tower_lsp_server::ls_types::Uri;

use super::caps::ClientCaps;

/// An open document.
pub(crate) struct Document {
    pub(crate) text: Rope,
    pub(crate) version: i32,
}

pub(crate) struct State {
    pub(crate) documents: HashMap<PathBuf, Document>,
    /// The bundles' analyses and what they keep between them.
    pub(crate) host: AnalysisHost,
    /// The URIs last published per bundle, to clear files that leave it.
    pub(crate) published: HashMap<PathBuf, HashSet<Uri>>,
    /// The workspace folders, whose bundles are analysed without being opened.
    pub(crate) roots: Vec<PathBuf>,
    /// The version of each open document the kept analyses read (what a
    /// pulled report must wait for).
    pub(crate) analysed_versions: HashMap<PathBuf, i32>,
    /// What the client supports (see `caps.rs`).
    pub(crate) client: ClientCaps,
    /// The server's own watcher over the roots, for clients that cannot
    /// watch files for us (dropping it stops watching).
    pub(crate) fallback_watcher: Option<notify::RecommendedWatcher>,
    /// The client has pulled workspace diagnostics (`workspace/diagnostic`):
    /// from then on no file's findings are pushed, or they would show twice.
    pub(crate) workspace_pulled: bool,
    /// The semantic tokens last sent for each open document, with their
    /// result id: a `full/delta` request answers the difference from them.
    pub(crate) semantic_tokens:
        HashMap<PathBuf, (String, Vec<tower_lsp_server::ls_types::SemanticToken>)>,
    /// The counter the result ids of semantic tokens come from.
    pub(crate) semantic_tokens_id: u64,
}

impl Default for State {
    fn default() -> State {
        State {
            documents: HashMap::default(),
            // The editor keeps checking while the author fixes mzk.toml.
            host: AnalysisHost::new(ConfigSource::default(), OnConfigError::UseDefaults),
            published: HashMap::default(),
            roots: Vec::new(),
            analysed_versions: HashMap::default(),
            client: ClientCaps::default(),
            fallback_watcher: None,
            workspace_pulled: false,
            semantic_tokens: HashMap::default(),
            semantic_tokens_id: 0,
        }
    }
}

impl State {
    pub(crate) fn unit(&self) -> ColumnUnit {
        self.client.unit
    }
}
