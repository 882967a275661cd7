//! When and what to analyse: a bundle is re-analysed off the message loop
//! after every change, with a generation counter so a stale result is never
//! published, and a request that comes before the first analysis of its
//! bundle waits for one.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use mzk_analyzer::base::hash::{HashMap, HashSet};
use mzk_analyzer::base::FileId;
use mzk_analyzer::syntax::{ColumnUnit, LineCol};
use mzk_analyzer::workspace::bundle_of;
use mzk_analyzer::{discover_bundles, Analysis, RealFs};
use tower_lsp_server::ls_types::*;

use super::from_proto::path_of;
use super::to_proto::{file_uri, to_lsp_diagnostic};
use super::Backend;
use mzk_analyzer::base::fs::normalize;
use mzk_analyzer::host::{Finished, Overlay};

/// How long a request waits for the first analysis of its bundle.
pub(crate) const FIRST_ANALYSIS_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

impl Backend {
    /// Analyses (and publishes the diagnostics of) every bundle under `roots`.
    pub(crate) async fn analyse_roots(&self, roots: &[PathBuf]) {
        for root in roots {
            let root = root.clone();
            let found = tokio::task::spawn_blocking(move || discover_bundles(&RealFs, &root))
                .await
                .unwrap_or_default();
            for bundle in found {
                self.reanalyse(&normalize(&bundle).join("orchestrator.yaml"))
                    .await;
            }
        }
    }

    /// Re-analyses the bundle holding `path`, off the message loop, and
    /// publishes the diagnostics of every file of it unless a newer analysis
    /// started meanwhile.
    pub(crate) async fn reanalyse(&self, path: &Path) {
        let job = {
            let mut state = self.state.lock().await;
            let open: HashMap<PathBuf, String> = state
                .documents
                .iter()
                .map(|(p, d)| (p.clone(), d.text.to_string()))
                .collect();
            let Some(bundle) = bundle_of(path, |p| open.contains_key(p) || p.is_file()) else {
                return;
            };
            state.host.schedule(&bundle, Overlay::new(open))
        };
        // Waits for a core; meanwhile a newer change may have superseded
        // this one, whose analysis would only be thrown away.
        let Some(slot) = self.analyses.slot().await else {
            return;
        };
        if !self.state.lock().await.host.is_current(&job) {
            return;
        }
        let bundle = job.dir.clone();
        let Ok(finished) = self.analyses.run(slot, move || job.run()).await else {
            return; // the analysis panicked: keep the previous diagnostics
        };
        let (
            analysis,
            config_error,
            unit,
            related,
            versions,
            previous,
            pull,
            refresh,
            workspace_pulled,
        ) = {
            let mut state = self.state.lock().await;
            let state = &mut *state;
            let documents = &state.documents;
            let kept = state.host.finish(finished, |p| documents.contains_key(p));
            let Some(Ok(Finished {
                analysis,
                new_config_error,
            })) = kept
            else {
                return; // stale: a newer change is being analysed
            };
            let versions: HashMap<PathBuf, i32> = state
                .documents
                .iter()
                .map(|(p, d)| (p.clone(), d.version))
                .collect();
            state.analysed_versions.extend(
                versions
                    .iter()
                    .filter(|(p, _)| p.starts_with(&bundle))
                    .map(|(p, v)| (p.clone(), *v)),
            );
            let previous = state.published.remove(&bundle).unwrap_or_default();
            (
                analysis,
                new_config_error,
                state.unit(),
                state.client.related_information,
                versions,
                previous,
                state.client.pull_diagnostics,
                state.client.diagnostic_refresh,
                state.workspace_pulled,
            )
        };
        // A broken configuration: the bundle was analysed under the defaults,
        // which the author is told once.
        if let Some(e) = config_error {
            let message = format!("mzk: {e}; using the default settings until it is fixed");
            self.client.show_message(MessageType::ERROR, message).await;
        }
        // Told after the state holds the analysis and its versions.
        self.analysed.notify_waiters();
        let mut now: HashSet<Uri> = HashSet::default();
        let mut per_file: HashMap<FileId, Vec<Diagnostic>> = HashMap::default();
        for d in &analysis.diagnostics {
            per_file
                .entry(d.file)
                .or_default()
                .push(to_lsp_diagnostic(&analysis, d, unit, related));
        }
        for file in &analysis.bundle.files {
            let Some(uri) = file_uri(&analysis, file.id) else {
                continue;
            };
            let path = analysis.bundle.path_of(file);
            let mut diagnostics = per_file.remove(&file.id).unwrap_or_default();
            // A client that pulls asks for open files itself (and for every
            // file once it pulls the workspace); pushed diagnostics beside its
            // pulled ones would show twice.
            if pull && (workspace_pulled || versions.contains_key(&path)) {
                diagnostics.clear();
            }
            self.client
                .publish_diagnostics(uri.clone(), diagnostics, versions.get(&path).copied())
                .await;
            now.insert(uri);
        }
        for gone in previous.difference(&now) {
            self.client
                .publish_diagnostics(gone.clone(), Vec::new(), None)
                .await;
        }
        self.state.lock().await.published.insert(bundle, now);
        if pull && refresh {
            // Open files of the bundle may have other findings now (an edit
            // in one file changes another's): the client pulls them again.
            // Not awaited: a client slow to answer must not hold the analysis.
            let client = self.client.clone();
            tokio::spawn(async move {
                let _ = client.workspace_diagnostic_refresh().await;
            });
        }
    }

    /// Waits (a bounded time) until an analysis has read the current text of
    /// the open document at `path`; at once for a file that is not open.
    pub(crate) async fn wait_for_current_analysis(&self, path: &Path) {
        let deadline = tokio::time::Instant::now() + FIRST_ANALYSIS_WAIT;
        loop {
            let kept = self.analysed.notified();
            {
                let state = self.state.lock().await;
                let Some(document) = state.documents.get(path) else {
                    return;
                };
                if state.analysed_versions.get(path) == Some(&document.version) {
                    return;
                }
            }
            if tokio::time::timeout_at(deadline, kept).await.is_err() {
                return;
            }
        }
    }

    /// An open document changed (opened, edited, closed): its bundle is
    /// analysed again, or, for a configuration file, every bundle below it.
    pub(crate) async fn document_changed(&self, path: &Path) {
        if path.extension().is_some_and(|e| e == "toml") {
            self.files_changed(vec![path.to_path_buf()]).await;
        } else {
            self.reanalyse(path).await;
        }
    }

    /// Files changed on disk (a tools/*.py, a closed YAML file, a deletion):
    /// re-analyse each bundle they belong to once. Open documents keep their
    /// editor text.
    pub(crate) async fn files_changed(&self, paths: Vec<PathBuf>) {
        // A coverage file written by `mzk test` changes hints, not analyses;
        // a new folder may hold one the watcher never reported.
        let (coverage, paths): (Vec<PathBuf>, Vec<PathBuf>) = paths
            .into_iter()
            .partition(|p| p.ends_with(".mzk/coverage.json"));
        let new_folder = paths.iter().any(|p| p.is_dir());
        if (new_folder || !coverage.is_empty()) && self.state.lock().await.client.can_refresh_hints
        {
            let _ = self.client.inlay_hint_refresh().await;
        }
        let mut bundles: Vec<PathBuf> = Vec::new();
        let mut shared_changed: Vec<PathBuf> = Vec::new();
        for path in paths {
            // A configuration governs every bundle below its folder.
            if path.extension().is_some_and(|e| e == "toml") {
                let folder = path.parent().unwrap_or(&path).to_path_buf();
                let state = self.state.lock().await;
                for b in state.host.bundles().filter(|b| b.starts_with(&folder)) {
                    if !bundles.iter().any(|known| known == b) {
                        bundles.push(b.to_path_buf());
                    }
                }
                continue;
            }
            match bundle_of(&path, |p| p.exists()) {
                Some(bundle) => {
                    if !bundles.contains(&bundle) {
                        bundles.push(bundle);
                    }
                }
                None => shared_changed.push(path),
            }
        }
        if !shared_changed.is_empty() {
            // A shared file changed: what every bundle beside it mentions may
            // have changed too.
            let beside = self.state.lock().await.host.shared_changed(&shared_changed);
            for b in beside {
                if !bundles.contains(&b) {
                    bundles.push(b);
                }
            }
        }
        for bundle in bundles {
            self.reanalyse(&bundle.join("orchestrator.yaml")).await;
        }
    }

    /// The analysis holding a document, and the file id and byte offset of a
    /// position in it (in the negotiated unit).
    pub(crate) async fn locate(
        &self,
        uri: &Uri,
        pos: Position,
    ) -> Option<(Arc<Analysis>, FileId, u32, ColumnUnit)> {
        let path = path_of(uri)?;
        let found = {
            let state = self.state.lock().await;
            state.host.analysis_of(&path)
        };
        // A request can come before the first analysis of its bundle (right
        // after the editor opened a large bundle): analyse it now, then
        // answer, rather than answer nothing.
        let analysis = match found {
            Some(analysis) => analysis,
            None => {
                let kept = self.analysed.notified();
                self.reanalyse(&path).await;
                let found = self.state.lock().await.host.analysis_of(&path);
                match found {
                    Some(analysis) => analysis,
                    None => {
                        // A newer analysis of the bundle overtook this one
                        // (the workspace's, or an edit's): wait for it.
                        let _ = tokio::time::timeout(FIRST_ANALYSIS_WAIT, kept).await;
                        self.state.lock().await.host.analysis_of(&path)?
                    }
                }
            }
        };
        let unit = self.state.lock().await.unit();
        let file = analysis
            .bundle
            .files
            .iter()
            .find(|f| analysis.bundle.path_of(f) == path)?;
        let offset = file.line_index.offset(
            &file.text,
            LineCol {
                line: pos.line,
                col: pos.character,
            },
            unit,
        );
        Some((analysis.clone(), file.id, offset, unit))
    }
}
