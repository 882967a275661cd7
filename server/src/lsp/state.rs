//! The server's state: the open documents, the latest analysis of each
//! bundle and what belongs to it, and the overlay that shows the analyzer the
//! editor's texts over the disk.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use mzk_analyzer::base::fs::{FileStamp, FileSystem};
use mzk_analyzer::base::hash::{HashMap, HashSet};
use mzk_analyzer::model::mentions::SharedMentions;
use mzk_analyzer::syntax::ColumnUnit;
use mzk_analyzer::{Analysis, AnalysisCache, Memos, RealFs};
use ropey::Rope;
use tower_lsp_server::ls_types::Uri;

use super::caps::ClientCaps;

/// An open document.
pub(crate) struct Document {
    pub(crate) text: Rope,
    pub(crate) version: i32,
}

#[derive(Default)]
pub(crate) struct State {
    pub(crate) documents: HashMap<PathBuf, Document>,
    /// The latest analysis of each bundle (by folder).
    pub(crate) analyses: HashMap<PathBuf, Arc<Analysis>>,
    /// A counter per bundle: an analysis whose generation is no longer the
    /// latest is stale and dropped.
    pub(crate) generations: HashMap<PathBuf, u64>,
    /// The URIs last published per bundle, to clear files that leave it.
    pub(crate) published: HashMap<PathBuf, HashSet<Uri>>,
    /// The workspace folders, whose bundles are analysed without being opened.
    pub(crate) roots: Vec<PathBuf>,
    /// The version of each open document the kept analyses read (what a
    /// pulled report must wait for).
    pub(crate) analysed_versions: HashMap<PathBuf, i32>,
    /// What the client supports (see `caps.rs`).
    pub(crate) client: ClientCaps,
    /// Per bundle, what its last analyses keep for the next (see
    /// `AnalysisCache`), all sharing `memos`.
    pub(crate) caches: HashMap<PathBuf, Arc<std::sync::Mutex<AnalysisCache>>>,
    /// What is derived from texts alone (token counts, built names …),
    /// shared by the analyses of every bundle for the server's life.
    pub(crate) memos: Arc<Memos>,
    /// Per workflows root, what its shared folders mention; dropped when a
    /// file outside every bundle changes.
    pub(crate) shared: HashMap<PathBuf, Arc<SharedMentions>>,
    /// The configuration error last shown per bundle: shown once, not on
    /// every keystroke.
    pub(crate) config_errors: HashMap<PathBuf, String>,
    /// The server's own watcher over the roots, for clients that cannot
    /// watch files for us (dropping it stops watching).
    pub(crate) fallback_watcher: Option<notify::RecommendedWatcher>,
    /// The last text of each open bundle file that could be read to its end:
    /// while the author's current text cannot, the other files are checked
    /// against it (see `merge_last_readable`).
    pub(crate) last_readable: HashMap<PathBuf, Arc<str>>,
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

impl State {
    pub(crate) fn unit(&self) -> ColumnUnit {
        self.client.unit
    }
}

/// Open documents over the disk: what the editor shows wins.
pub(crate) struct Overlay {
    pub(crate) open: HashMap<PathBuf, String>,
}

impl FileSystem for Overlay {
    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        match self.open.get(path) {
            Some(text) => Ok(text.clone().into_bytes()),
            None => RealFs.read(path),
        }
    }

    fn read_dir(&self, path: &Path) -> io::Result<Vec<(PathBuf, bool)>> {
        RealFs.read_dir(path)
    }

    fn is_file(&self, path: &Path) -> bool {
        self.open.contains_key(path) || RealFs.is_file(path)
    }

    /// Open documents have no stamp: the editor's text is compared instead.
    fn stamp(&self, path: &Path) -> Option<FileStamp> {
        match self.open.contains_key(path) {
            true => None,
            false => RealFs.stamp(path),
        }
    }
}

/// `a/b/../c` → `a/c`, so `../_shared` files get a clean URI.
pub(crate) fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// The workflows root a bundle sits in (where its shared folders are).
pub(crate) fn root_of(bundle: &Path) -> &Path {
    bundle.parent().unwrap_or(bundle)
}

/// The latest analysis holding the file at `path`.
pub(crate) fn analysis_of(state: &State, path: &Path) -> Option<Arc<Analysis>> {
    state
        .analyses
        .iter()
        .find(|(dir, _)| path.starts_with(dir))
        .map(|(_, a)| a.clone())
        .or_else(|| {
            state
                .analyses
                .values()
                .find(|a| {
                    a.bundle
                        .files
                        .iter()
                        .any(|f| normalize(&a.bundle.dir.join(&f.relative)) == path)
                })
                .cloned()
        })
}
