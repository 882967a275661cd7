//! The notification handlers: documents opened, edited, saved and closed,
//! workspace folders and watched files.

use std::path::{Path, PathBuf};

use mzk_analyzer::base::hash::HashSet;
use ropey::Rope;
use tower_lsp_server::ls_types::*;

use crate::lsp::from_proto::{apply_change, path_of};
use crate::lsp::state::Document;
use crate::lsp::Backend;

/// Analyses every bundle under the workspace folders, so problems show
/// before a file is opened, and asks the client to report file changes.
pub(crate) async fn initialized(backend: &Backend, _: InitializedParams) {
    let (roots, can_watch) = {
        let state = backend.state.lock().await;
        (state.roots.clone(), state.client.can_watch)
    };
    if can_watch {
        // What the server's own watcher would report: every watched
        // extension (one glob each, as every client reads them) and the
        // coverage file of the last `mzk test`.
        let globs = mzk_analyzer::workspace::watched_extensions()
            .map(|extension| format!("**/*.{extension}"))
            .chain([format!(
                "**/{}/coverage.json",
                mzk_analyzer::workspace::STATE_FOLDER
            )]);
        let watchers = globs
            .into_iter()
            .map(|glob| FileSystemWatcher {
                glob_pattern: GlobPattern::String(glob),
                kind: None,
            })
            .collect();
        let registration = Registration {
            id: "mzk-watch".into(),
            method: "workspace/didChangeWatchedFiles".into(),
            register_options: serde_json::to_value(DidChangeWatchedFilesRegistrationOptions {
                watchers,
            })
            .ok(),
        };
        // Not awaited here: a client slow to answer must not delay the analysis.
        let client = backend.client.clone();
        tokio::spawn(async move {
            let _ = client.register_capability(vec![registration]).await;
        });
    } else {
        backend.watch_roots(&roots).await;
    }
    backend.analyse_roots(&roots).await;
}

pub(crate) async fn did_change_workspace_folders(
    backend: &Backend,
    params: DidChangeWorkspaceFoldersParams,
) {
    let added: Vec<PathBuf> = params
        .event
        .added
        .iter()
        .filter_map(|f| path_of(&f.uri))
        .collect();
    let removed: Vec<PathBuf> = params
        .event
        .removed
        .iter()
        .filter_map(|f| path_of(&f.uri))
        .collect();
    let gone: Vec<(PathBuf, HashSet<Uri>)> = {
        let mut state = backend.state.lock().await;
        state.roots.retain(|r| !removed.contains(r));
        state.roots.extend(added.iter().cloned());
        let open: Vec<PathBuf> = state.documents.keys().cloned().collect();
        let dropped: Vec<PathBuf> = state
            .host
            .bundles()
            .filter(|b| {
                removed.iter().any(|r| b.starts_with(r)) && !open.iter().any(|o| o.starts_with(b))
            })
            .map(Path::to_path_buf)
            .collect();
        dropped
            .into_iter()
            .map(|b| {
                state.host.remove_bundle(&b);
                let uris = state.published.remove(&b).unwrap_or_default();
                (b, uris)
            })
            .collect()
    };
    for (_, uris) in gone {
        for uri in uris {
            backend
                .client
                .publish_diagnostics(uri, Vec::new(), None)
                .await;
        }
    }
    let own_watcher = backend.state.lock().await.fallback_watcher.is_some();
    if own_watcher {
        backend.watch_roots(&added).await;
        let mut state = backend.state.lock().await;
        if let Some(watcher) = state.fallback_watcher.as_mut() {
            use notify::Watcher;
            for root in &removed {
                let _ = watcher.unwatch(root);
            }
        }
    }
    backend.analyse_roots(&added).await;
}

/// A file changed on disk (a tools/*.py, a closed YAML file, a deletion):
/// re-analyse its bundle. Open documents keep their editor text.
pub(crate) async fn did_change_watched_files(
    backend: &Backend,
    params: DidChangeWatchedFilesParams,
) {
    // The client's watcher reports what its globs match, dependency and
    // hidden folders included: keep what the server's own watcher would
    // (and folders, which stand for what they held).
    let roots = backend.state.lock().await.roots.clone();
    let paths = params
        .changes
        .iter()
        .filter_map(|change| path_of(&change.uri))
        .filter(|path| crate::watched_path(path, &roots) || path.extension().is_none())
        .collect();
    backend.files_changed(paths).await;
}

pub(crate) async fn did_open(backend: &Backend, params: DidOpenTextDocumentParams) {
    let Some(path) = path_of(&params.text_document.uri) else {
        return;
    };
    backend.state.lock().await.documents.insert(
        path.clone(),
        Document {
            text: Rope::from_str(&params.text_document.text),
            version: params.text_document.version,
        },
    );
    backend.document_changed(&path).await;
}

pub(crate) async fn did_change(backend: &Backend, params: DidChangeTextDocumentParams) {
    let Some(path) = path_of(&params.text_document.uri) else {
        return;
    };
    {
        let mut state = backend.state.lock().await;
        let unit = state.unit();
        let Some(doc) = state.documents.get_mut(&path) else {
            return;
        };
        // Whatever a client sends, applying it must not take the message
        // loop down: on a panic the text stays as it was.
        let before = doc.text.clone();
        let mut text = doc.text.clone();
        let applied = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            for change in params.content_changes {
                apply_change(&mut text, change, unit);
            }
            text
        }));
        match applied {
            Ok(text) => {
                doc.text = text;
                doc.version = params.text_document.version;
            }
            Err(_) => {
                doc.text = before;
                drop(state);
                backend.client
                    .show_message(
                        MessageType::ERROR,
                        "mzk: an edit of this file could not be applied; close and reopen it so that mzk reads it again",
                    )
                    .await;
                return;
            }
        }
    }
    backend.document_changed(&path).await;
}

/// A file whose save panics in unit tests only: how the dispatch's guard
/// is proven end to end.
#[cfg(test)]
pub(crate) const TEST_PANIC_FILE: &str = "mzk-test-panic.yaml";

pub(crate) async fn did_save(backend: &Backend, params: DidSaveTextDocumentParams) {
    #[cfg(test)]
    if params.text_document.uri.as_str().ends_with(TEST_PANIC_FILE) {
        panic!("test hook: a notification handler panics");
    }
    if let Some(path) = path_of(&params.text_document.uri) {
        backend.document_changed(&path).await;
    }
}

pub(crate) async fn did_close(backend: &Backend, params: DidCloseTextDocumentParams) {
    let Some(path) = path_of(&params.text_document.uri) else {
        return;
    };
    {
        let mut state = backend.state.lock().await;
        state.documents.remove(&path);
        state.host.closed(&path);
        state.analysed_versions.remove(&path);
        state.semantic_tokens.remove(&path);
    }
    // The file is read from disk again from now on.
    backend.document_changed(&path).await;
}
