//! The server's own file watcher, for clients that cannot watch files for it.

use std::path::PathBuf;

use tower_lsp_server::ls_types::MessageType;

use super::Backend;

/// How long the fallback watcher waits for more events before re-analysing.
pub(crate) const WATCH_QUIET_PERIOD: std::time::Duration = std::time::Duration::from_millis(150);

impl Backend {
    /// Watches `roots` with the server's own watcher, for clients that do
    /// not offer `workspace/didChangeWatchedFiles` registration. Events are
    /// gathered for a short quiet period so a save that touches several files
    /// (or an editor's write-rename dance) re-analyses a bundle once.
    pub(crate) async fn watch_roots(&self, roots: &[PathBuf]) {
        use notify::Watcher;
        let mut state = self.state.lock().await;
        if state.fallback_watcher.is_none() {
            let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<notify::Event>();
            let watcher =
                notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
                    if let Ok(event) = event {
                        let _ = tx.send(event);
                    }
                });
            match watcher {
                Ok(watcher) => state.fallback_watcher = Some(watcher),
                Err(e) => {
                    let client = self.client.clone();
                    tokio::spawn(async move {
                        client
                            .log_message(
                                MessageType::WARNING,
                                format!("mzk: cannot watch files ({e}); changes to closed files show after the next edit"),
                            )
                            .await;
                    });
                    return;
                }
            }
            let backend = self.clone();
            tokio::spawn(async move {
                while let Some(first) = rx.recv().await {
                    let mut events = vec![first];
                    while let Ok(Some(event)) =
                        tokio::time::timeout(WATCH_QUIET_PERIOD, rx.recv()).await
                    {
                        events.push(event);
                    }
                    let roots = backend.state.lock().await.roots.clone();
                    let mut paths: Vec<PathBuf> = events
                        .into_iter()
                        .flat_map(|event| crate::changed_paths(event, &roots))
                        .collect();
                    if paths.is_empty() {
                        continue;
                    }
                    paths.sort();
                    paths.dedup();
                    backend.files_changed(paths).await;
                }
            });
        }
        if let Some(watcher) = state.fallback_watcher.as_mut() {
            for root in roots {
                let _ = watcher.watch(root, notify::RecursiveMode::Recursive);
            }
        }
    }
}
