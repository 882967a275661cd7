//! `mzk lsp`: the language server. Thin glue over the analyzer: documents
//! are kept in ropes, every change re-analyses the whole bundle off the
//! message loop, diagnostics are published for every file of the bundle, and
//! definition, references and hover come from `analyzer::ide`.

mod coverage;
mod framing;
mod runs;

use std::collections::{HashMap, HashSet};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use mzk_analyzer::analysis::{FileStamp, FileSystem};
use mzk_analyzer::diagnostics::{Applicability, FileId, Severity};
use mzk_analyzer::graph::{mermaid, TransitionGraph};
use mzk_analyzer::model::mentions::SharedMentions;
use mzk_analyzer::syntax::{ColumnUnit, LineCol, TextRange};
use mzk_analyzer::{
    analyze_bundle, analyze_bundle_cached, discover_bundles, ide, Analysis, Config, FileCache,
    RealFs,
};
use ropey::Rope;
use tokio::sync::Mutex;
use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::*;
use tower_lsp_server::{Client, LanguageServer, LspService, Server};

/// The code action kind of "apply every fix in this file", requested by
/// editors on save (`editor.codeActionsOnSave`).
const FIX_ALL: &str = "source.fixAll.mzk";

const RUN_WORKFLOW: &str = "mzk.runWorkflow";
const RUN_FROM_AGENT: &str = "mzk.runFromAgent";
const SHOW_GRAPH: &str = "mzk.showGraph";
const SHOW_PROMPT: &str = "mzk.showPrompt";
const REPLY: &str = "mzk.reply";
const CANCEL_RUN: &str = "mzk.cancelRun";
/// The commands the server executes (code lenses, the editor extensions).
pub const COMMANDS: [&str; 6] = [
    RUN_WORKFLOW,
    RUN_FROM_AGENT,
    SHOW_GRAPH,
    SHOW_PROMPT,
    REPLY,
    CANCEL_RUN,
];

/// An open document.
struct Document {
    text: Rope,
    version: i32,
}

#[derive(Default)]
struct State {
    unit: Option<ColumnUnit>,
    documents: HashMap<PathBuf, Document>,
    /// The latest analysis of each bundle (by folder).
    analyses: HashMap<PathBuf, Arc<Analysis>>,
    /// A counter per bundle: an analysis whose generation is no longer the
    /// latest is stale and dropped.
    generations: HashMap<PathBuf, u64>,
    /// The URIs last published per bundle, to clear files that leave it.
    published: HashMap<PathBuf, HashSet<Uri>>,
    /// The workspace folders, whose bundles are analysed without being opened.
    roots: Vec<PathBuf>,
    /// Whether the client lets us register file watchers.
    can_watch: bool,
    /// Whether the client re-asks for inlay hints when told to (after
    /// `mzk test` rewrites a coverage file).
    can_refresh_hints: bool,
    /// Whether the client shows a diagnostic's related locations (else they
    /// go into its message).
    related_information: bool,
    /// Per bundle, the per-file work of its last analyses (see `FileCache`).
    caches: HashMap<PathBuf, Arc<std::sync::Mutex<FileCache>>>,
    /// Per workflows root, what its shared folders mention; dropped when a
    /// file outside every bundle changes.
    shared: HashMap<PathBuf, Arc<SharedMentions>>,
    /// The configuration error last shown per bundle: shown once, not on
    /// every keystroke.
    config_errors: HashMap<PathBuf, String>,
    /// The server's own watcher over the roots, for clients that cannot
    /// watch files for us (dropping it stops watching).
    fallback_watcher: Option<notify::RecommendedWatcher>,
    /// The last text of each open bundle file that could be read to its end:
    /// while the author's current text cannot, the other files are checked
    /// against it (see `merge_last_readable`).
    last_readable: HashMap<PathBuf, Arc<str>>,
}

impl State {
    fn unit(&self) -> ColumnUnit {
        self.unit.unwrap_or(ColumnUnit::Utf16)
    }
}

#[derive(Clone)]
pub struct Backend {
    client: Client,
    state: Arc<Mutex<State>>,
    /// Whether the process ends when the editor's `processId` is gone: only
    /// for the `mzk lsp` process, never for a server embedded in a test.
    exit_with_parent: bool,
    /// Runs started from the editor.
    runs: Arc<runs::Runs>,
    /// Told whenever an analysis is kept, for requests waiting for one.
    analysed: Arc<tokio::sync::Notify>,
}

/// Open documents over the disk: what the editor shows wins.
struct Overlay {
    open: HashMap<PathBuf, String>,
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

/// The bundle folder a file belongs to: the nearest ancestor with orchestrator.yaml.
fn bundle_of(path: &Path, overlay_has: impl Fn(&Path) -> bool) -> Option<PathBuf> {
    path.ancestors()
        .skip(1)
        .take(8)
        .find(|dir| {
            overlay_has(&dir.join("orchestrator.yaml")) || dir.join("orchestrator.yaml").is_file()
        })
        .map(Path::to_path_buf)
}

fn path_of(uri: &Uri) -> Option<PathBuf> {
    uri.to_file_path().map(|p| p.into_owned())
}

/// LSP position → char index in a rope, in the negotiated unit. Clamped as
/// the protocol says: a character past the end of its line means the line's
/// end (before its line break), a line past the last means the text's end.
fn char_index(rope: &Rope, pos: Position, unit: ColumnUnit) -> usize {
    let line = pos.line as usize;
    if line >= rope.len_lines() {
        return rope.len_chars();
    }
    let line_start = rope.line_to_char(line);
    let text = rope.line(line);
    let mut content = text.len_chars();
    if content > 0 && text.char(content - 1) == '\n' {
        content -= 1;
    }
    if content > 0 && text.char(content - 1) == '\r' {
        content -= 1;
    }
    let content = text.slice(..content);
    let col = pos.character as usize;
    let within = match unit {
        // Inside a surrogate pair, the character it belongs to.
        ColumnUnit::Utf16 => content.utf16_cu_to_char(col.min(content.len_utf16_cu())),
        // Inside a multi-byte character, that character.
        ColumnUnit::Utf8 => content.byte_to_char(col.min(content.len_bytes())),
        ColumnUnit::Char => col.min(content.len_chars()),
    };
    line_start + within
}

/// Applies one change of a `didChange` to a document's text.
fn apply_change(text: &mut Rope, change: TextDocumentContentChangeEvent, unit: ColumnUnit) {
    match change.range {
        Some(range) => {
            let start = char_index(text, range.start, unit);
            let end = char_index(text, range.end, unit).max(start);
            text.remove(start..end);
            text.insert(start, &change.text);
        }
        None => *text = Rope::from_str(&change.text),
    }
}

fn to_position(analysis: &Analysis, file: FileId, offset: u32, unit: ColumnUnit) -> Position {
    let Some(f) = analysis.bundle.file(file) else {
        return Position::new(0, 0);
    };
    let LineCol { line, col } = f.line_index.position(&f.text, offset, unit);
    Position::new(line, col)
}

fn to_range(analysis: &Analysis, file: FileId, range: TextRange, unit: ColumnUnit) -> Range {
    Range::new(
        to_position(analysis, file, range.start, unit),
        to_position(analysis, file, range.end, unit),
    )
}

fn to_lsp_diagnostic(
    analysis: &Analysis,
    d: &mzk_analyzer::diagnostics::Diagnostic,
    unit: ColumnUnit,
    related_support: bool,
) -> Diagnostic {
    let mut message = d.message.clone();
    if !related_support {
        // A client without related information reads the places in the
        // message instead: `path:line:column: what is there`, one a line.
        for r in &d.related {
            let Some(f) = analysis.bundle.file(r.file) else {
                continue;
            };
            let at = to_position(analysis, r.file, r.range.start, unit);
            message.push_str(&format!(
                "\n{}:{}:{}: {}",
                f.relative,
                at.line + 1,
                at.character + 1,
                r.message
            ));
        }
    }
    let related = d
        .related
        .iter()
        .filter_map(|r| {
            Some(DiagnosticRelatedInformation {
                location: Location::new(
                    file_uri(analysis, r.file)?,
                    to_range(analysis, r.file, r.range, unit),
                ),
                message: r.message.clone(),
            })
        })
        .collect::<Vec<_>>();
    Diagnostic {
        range: to_range(analysis, d.file, d.range, unit),
        severity: Some(match d.severity {
            Severity::Error => DiagnosticSeverity::ERROR,
            Severity::Warning => DiagnosticSeverity::WARNING,
            Severity::Info => DiagnosticSeverity::INFORMATION,
        }),
        code: Some(NumberOrString::String(d.rule.code().to_string())),
        source: Some("mzk".into()),
        message,
        related_information: (related_support && !related.is_empty()).then_some(related),
        ..Diagnostic::default()
    }
}

fn file_uri(analysis: &Analysis, file: FileId) -> Option<Uri> {
    let f = analysis.bundle.file(file)?;
    Uri::from_file_path(normalize(&analysis.bundle.dir.join(&f.relative)))
}

/// `a/b/../c` → `a/c`, so `../_shared` files get a clean URI.
fn normalize(path: &Path) -> PathBuf {
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
fn root_of(bundle: &Path) -> &Path {
    bundle.parent().unwrap_or(bundle)
}

/// How long the fallback watcher waits for more events before re-analysing.
const WATCH_QUIET_PERIOD: std::time::Duration = std::time::Duration::from_millis(150);

/// How long a request waits for the first analysis of its bundle.
const FIRST_ANALYSIS_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// The latest analysis holding the file at `path`.
fn analysis_of(state: &State, path: &Path) -> Option<Arc<Analysis>> {
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

impl Backend {
    /// Analyses (and publishes the diagnostics of) every bundle under `roots`.
    async fn analyse_roots(&self, roots: &[PathBuf]) {
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
    async fn reanalyse(&self, path: &Path) {
        let (bundle, generation, overlay, cache, shared, last_readable) = {
            let mut state = self.state.lock().await;
            let open: HashMap<PathBuf, String> = state
                .documents
                .iter()
                .map(|(p, d)| (p.clone(), d.text.to_string()))
                .collect();
            let Some(bundle) = bundle_of(path, |p| open.contains_key(p)) else {
                return;
            };
            let last_readable: HashMap<PathBuf, Arc<str>> = state
                .last_readable
                .iter()
                .filter(|(p, _)| p.starts_with(&bundle))
                .map(|(p, t)| (p.clone(), t.clone()))
                .collect();
            let generation = state.generations.entry(bundle.clone()).or_insert(0);
            *generation += 1;
            let generation = *generation;
            let cache = state.caches.entry(bundle.clone()).or_default().clone();
            let shared = state.shared.get(root_of(&bundle)).cloned();
            (
                bundle,
                generation,
                Overlay { open },
                cache,
                shared,
                last_readable,
            )
        };
        let dir = bundle.clone();
        let Ok((analysis, shared, config_error)) = tokio::task::spawn_blocking(move || {
            let shared =
                shared.unwrap_or_else(|| Arc::new(SharedMentions::scan(&overlay, root_of(&dir))));
            // A panic in an earlier analysis leaves whole entries only.
            let mut cache = cache.lock().unwrap_or_else(|e| e.into_inner());
            let mut analysis = analyze_bundle_cached(&overlay, &dir, &shared, &mut cache);
            // The same configuration and suppressions as `mzk check`; a broken
            // configuration falls back to the defaults and is reported.
            let (config, config_error) = match Config::discover(&overlay, &dir) {
                Ok(config) => (config, None),
                Err(e) => (Config::defaults(&dir), Some(e)),
            };
            config.apply(&mut analysis);
            // Files the author is typing in that cannot be read right now:
            // check the others against their last readable version.
            let substitutes: Vec<(PathBuf, String)> = analysis
                .incomplete
                .iter()
                .filter_map(|id| {
                    let path = normalize(&dir.join(&analysis.bundle.file(*id)?.relative));
                    let text = last_readable.get(&path)?.to_string();
                    Some((path, text))
                })
                .collect();
            // Only then are the open texts copied: not on every keystroke.
            if !substitutes.is_empty() {
                let mut open = overlay.open;
                open.extend(substitutes);
                let overlay = Overlay { open };
                let mut last = analyze_bundle_cached(&overlay, &dir, &shared, &mut cache);
                config.apply(&mut last);
                mzk_analyzer::analysis::merge_last_readable(&mut analysis, last);
            }
            (analysis, shared, config_error)
        })
        .await
        else {
            return; // the analysis panicked: keep the previous diagnostics
        };
        let message =
            config_error.map(|e| format!("mzk: {e}; using the default settings until it is fixed"));
        let shown = {
            let mut state = self.state.lock().await;
            match &message {
                Some(m) => {
                    state
                        .config_errors
                        .insert(bundle.clone(), m.clone())
                        .as_ref()
                        != Some(m)
                }
                None => {
                    state.config_errors.remove(&bundle);
                    false
                }
            }
        };
        if let (true, Some(message)) = (shown, message) {
            self.client.show_message(MessageType::ERROR, message).await;
        }
        self.state
            .lock()
            .await
            .shared
            .entry(root_of(&bundle).to_path_buf())
            .or_insert(shared);
        let analysis = Arc::new(analysis);
        let (unit, related, versions, previous) = {
            let mut state = self.state.lock().await;
            if state.generations.get(&bundle) != Some(&generation) {
                return; // stale: a newer change is being analysed
            }
            state.analyses.insert(bundle.clone(), analysis.clone());
            self.analysed.notify_waiters();
            // Open files read to their end become their last readable text.
            for file in &analysis.bundle.files {
                if file.kind.is_none() || analysis.incomplete.contains(&file.id) {
                    continue;
                }
                let path = normalize(&analysis.bundle.dir.join(&file.relative));
                if state.documents.contains_key(&path) {
                    state
                        .last_readable
                        .insert(path, Arc::from(file.text.as_str()));
                }
            }
            let versions: HashMap<PathBuf, i32> = state
                .documents
                .iter()
                .map(|(p, d)| (p.clone(), d.version))
                .collect();
            let previous = state.published.remove(&bundle).unwrap_or_default();
            (state.unit(), state.related_information, versions, previous)
        };
        let mut now: HashSet<Uri> = HashSet::new();
        let mut per_file: HashMap<FileId, Vec<Diagnostic>> = HashMap::new();
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
            let path = normalize(&analysis.bundle.dir.join(&file.relative));
            let diagnostics = per_file.remove(&file.id).unwrap_or_default();
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
    }

    /// An open document changed (opened, edited, closed): its bundle is
    /// analysed again, or, for a configuration file, every bundle below it.
    async fn document_changed(&self, path: &Path) {
        if path.extension().is_some_and(|e| e == "toml") {
            self.files_changed(vec![path.to_path_buf()]).await;
        } else {
            self.reanalyse(path).await;
        }
    }

    /// Files changed on disk (a tools/*.py, a closed YAML file, a deletion):
    /// re-analyse each bundle they belong to once. Open documents keep their
    /// editor text.
    async fn files_changed(&self, paths: Vec<PathBuf>) {
        // A coverage file written by `mzk test` changes hints, not analyses;
        // a new folder may hold one the watcher never reported.
        let (coverage, paths): (Vec<PathBuf>, Vec<PathBuf>) = paths
            .into_iter()
            .partition(|p| p.ends_with(".mzk/coverage.json"));
        let new_folder = paths.iter().any(|p| p.is_dir());
        if (new_folder || !coverage.is_empty()) && self.state.lock().await.can_refresh_hints {
            let _ = self.client.inlay_hint_refresh().await;
        }
        let mut bundles: Vec<PathBuf> = Vec::new();
        let mut shared_changed: Vec<PathBuf> = Vec::new();
        for path in paths {
            // A configuration governs every bundle below its folder.
            if path.extension().is_some_and(|e| e == "toml") {
                let folder = path.parent().unwrap_or(&path).to_path_buf();
                let state = self.state.lock().await;
                for b in state.analyses.keys().filter(|b| b.starts_with(&folder)) {
                    if !bundles.contains(b) {
                        bundles.push(b.clone());
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
            let mut state = self.state.lock().await;
            let roots: Vec<PathBuf> = state
                .shared
                .keys()
                .filter(|root| shared_changed.iter().any(|p| p.starts_with(root)))
                .cloned()
                .collect();
            for root in &roots {
                state.shared.remove(root);
            }
            let beside: Vec<PathBuf> = state
                .analyses
                .keys()
                .filter(|b| roots.iter().any(|r| root_of(b) == r.as_path()))
                .cloned()
                .collect();
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

    /// Watches `roots` with the server's own watcher, for clients that do
    /// not offer `workspace/didChangeWatchedFiles` registration. Events are
    /// gathered for a short quiet period so a save that touches several files
    /// (or an editor's write-rename dance) re-analyses a bundle once.
    async fn watch_roots(&self, roots: &[PathBuf]) {
        use notify::Watcher;
        let mut state = self.state.lock().await;
        if state.fallback_watcher.is_none() {
            let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<PathBuf>();
            let watcher =
                notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
                    if let Ok(event) = event {
                        for path in crate::changed_paths(event) {
                            let _ = tx.send(path);
                        }
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
                    let mut paths = vec![first];
                    while let Ok(Some(path)) =
                        tokio::time::timeout(WATCH_QUIET_PERIOD, rx.recv()).await
                    {
                        paths.push(path);
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

    /// The analysis holding a document and the file id and byte offset of a position in it.
    /// The analysis of the bundle a command names in its first argument:
    /// the latest one, else a fresh one from disk.
    async fn analysis_for_command(
        &self,
        command: &str,
        dir: Option<PathBuf>,
    ) -> Result<Arc<Analysis>> {
        let Some(dir) = dir else {
            return Err(invalid_params(&format!(
                "{command} takes the bundle folder as its first argument"
            )));
        };
        if let Some(analysis) = self.state.lock().await.analyses.get(&dir).cloned() {
            return Ok(analysis);
        }
        if !dir.join("orchestrator.yaml").is_file() {
            return Err(invalid_params(&format!(
                "{}: not a bundle (no orchestrator.yaml)",
                dir.display()
            )));
        }
        match tokio::task::spawn_blocking(move || analyze_bundle(&RealFs, &dir)).await {
            Ok(a) => Ok(Arc::new(a)),
            Err(_) => Err(tower_lsp_server::jsonrpc::Error::internal_error()),
        }
    }

    async fn locate(
        &self,
        uri: &Uri,
        pos: Position,
    ) -> Option<(Arc<Analysis>, FileId, u32, ColumnUnit)> {
        let path = path_of(uri)?;
        let found = {
            let state = self.state.lock().await;
            analysis_of(&state, &path)
        };
        // A request can come before the first analysis of its bundle (right
        // after the editor opened a large bundle): analyse it now, then
        // answer, rather than answer nothing.
        let analysis = match found {
            Some(analysis) => analysis,
            None => {
                let kept = self.analysed.notified();
                self.reanalyse(&path).await;
                let found = analysis_of(&*self.state.lock().await, &path);
                match found {
                    Some(analysis) => analysis,
                    None => {
                        // A newer analysis of the bundle overtook this one
                        // (the workspace's, or an edit's): wait for it.
                        let _ = tokio::time::timeout(FIRST_ANALYSIS_WAIT, kept).await;
                        analysis_of(&*self.state.lock().await, &path)?
                    }
                }
            }
        };
        let unit = self.state.lock().await.unit();
        let file = analysis
            .bundle
            .files
            .iter()
            .find(|f| normalize(&analysis.bundle.dir.join(&f.relative)) == path)?;
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

/// Runs an `ide` computation, turning a panic into an error response: one bad
/// request must not take the server (and the editor's diagnostics) down.
fn guarded<T>(request: &str, f: impl FnOnce() -> T) -> Result<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).map_err(|panic| {
        let detail = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        tower_lsp_server::jsonrpc::Error {
            code: tower_lsp_server::jsonrpc::ErrorCode::InternalError,
            message: format!(
                "mzk: internal error in {request} ({detail}); please report it — the server keeps running"
            )
            .into(),
            data: None,
        }
    })
}

fn invalid_params(message: &str) -> tower_lsp_server::jsonrpc::Error {
    tower_lsp_server::jsonrpc::Error::invalid_params(message.to_string())
}

impl LanguageServer for Backend {
    async fn initialize(&self, params: InitializeParams) -> Result<InitializeResult> {
        #[cfg(unix)]
        if let (true, Some(pid)) = (self.exit_with_parent, params.process_id) {
            tokio::spawn(exit_with_parent(pid));
        }
        *self.runs.settings.lock().await = runs::RunSettings::from_initialization(
            params.initialization_options.as_ref(),
            params
                .capabilities
                .window
                .as_ref()
                .and_then(|w| w.work_done_progress)
                .unwrap_or(false),
        );
        let offered = params
            .capabilities
            .general
            .as_ref()
            .and_then(|g| g.position_encodings.clone())
            .unwrap_or_default();
        let (unit, kind) = if offered.contains(&PositionEncodingKind::UTF8) {
            (ColumnUnit::Utf8, PositionEncodingKind::UTF8)
        } else {
            (ColumnUnit::Utf16, PositionEncodingKind::UTF16)
        };
        {
            let mut state = self.state.lock().await;
            state.unit = Some(unit);
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
            let workspace = params.capabilities.workspace.as_ref();
            state.can_watch = workspace
                .and_then(|w| w.did_change_watched_files.as_ref())
                .and_then(|d| d.dynamic_registration)
                .unwrap_or(false);
            state.can_refresh_hints = workspace
                .and_then(|w| w.inlay_hint.as_ref())
                .and_then(|h| h.refresh_support)
                .unwrap_or(false);
            // Absent means unsupported (LSP 3.17).
            state.related_information = params
                .capabilities
                .text_document
                .as_ref()
                .and_then(|t| t.publish_diagnostics.as_ref())
                .and_then(|p| p.related_information)
                .unwrap_or(false);
        }
        Ok(InitializeResult {
            capabilities: ServerCapabilities {
                position_encoding: Some(kind),
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
                code_action_provider: Some(CodeActionProviderCapability::Options(
                    CodeActionOptions {
                        code_action_kinds: Some(vec![
                            CodeActionKind::QUICKFIX,
                            CodeActionKind::new(FIX_ALL),
                        ]),
                        ..CodeActionOptions::default()
                    },
                )),
                hover_provider: Some(HoverProviderCapability::Simple(true)),
                inlay_hint_provider: Some(OneOf::Left(true)),
                document_symbol_provider: Some(OneOf::Left(true)),
                completion_provider: Some(CompletionOptions {
                    trigger_characters: Some(vec![":".into(), " ".into(), "{".into(), "-".into()]),
                    ..CompletionOptions::default()
                }),
                rename_provider: Some(OneOf::Right(RenameOptions {
                    prepare_provider: Some(true),
                    work_done_progress_options: WorkDoneProgressOptions::default(),
                })),
                ..ServerCapabilities::default()
            },
            server_info: Some(ServerInfo {
                name: "mzk".into(),
                version: Some(env!("MZK_VERSION").into()),
            }),
            offset_encoding: None,
        })
    }

    /// Analyses every bundle under the workspace folders, so problems show
    /// before a file is opened, and asks the client to report file changes.
    async fn initialized(&self, _: InitializedParams) {
        // Prompt sizes (lenses, hover, MZ803) need the tokenizer; load it
        // off the message loop before the first file is opened.
        tokio::task::spawn_blocking(mzk_analyzer::tokens::preload);
        let (roots, can_watch) = {
            let state = self.state.lock().await;
            (state.roots.clone(), state.can_watch)
        };
        if can_watch {
            let watchers = [
                "**/*.yaml",
                "**/*.yml",
                "**/*.py",
                "**/*.toml",
                "**/.mzk/coverage.json",
            ]
            .into_iter()
            .map(|glob| FileSystemWatcher {
                glob_pattern: GlobPattern::String(glob.into()),
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
            let client = self.client.clone();
            tokio::spawn(async move {
                let _ = client.register_capability(vec![registration]).await;
            });
        } else {
            self.watch_roots(&roots).await;
        }
        self.analyse_roots(&roots).await;
    }

    async fn did_change_workspace_folders(&self, params: DidChangeWorkspaceFoldersParams) {
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
            let mut state = self.state.lock().await;
            state.roots.retain(|r| !removed.contains(r));
            state.roots.extend(added.iter().cloned());
            let open: Vec<PathBuf> = state.documents.keys().cloned().collect();
            let dropped: Vec<PathBuf> = state
                .analyses
                .keys()
                .filter(|b| {
                    removed.iter().any(|r| b.starts_with(r))
                        && !open.iter().any(|o| o.starts_with(b))
                })
                .cloned()
                .collect();
            dropped
                .into_iter()
                .map(|b| {
                    state.analyses.remove(&b);
                    state.generations.remove(&b);
                    state.caches.remove(&b);
                    let uris = state.published.remove(&b).unwrap_or_default();
                    (b, uris)
                })
                .collect()
        };
        for (_, uris) in gone {
            for uri in uris {
                self.client.publish_diagnostics(uri, Vec::new(), None).await;
            }
        }
        let own_watcher = self.state.lock().await.fallback_watcher.is_some();
        if own_watcher {
            self.watch_roots(&added).await;
            let mut state = self.state.lock().await;
            if let Some(watcher) = state.fallback_watcher.as_mut() {
                use notify::Watcher;
                for root in &removed {
                    let _ = watcher.unwatch(root);
                }
            }
        }
        self.analyse_roots(&added).await;
    }

    /// A file changed on disk (a tools/*.py, a closed YAML file, a deletion):
    /// re-analyse its bundle. Open documents keep their editor text.
    async fn did_change_watched_files(&self, params: DidChangeWatchedFilesParams) {
        let paths = params
            .changes
            .iter()
            .filter_map(|change| path_of(&change.uri))
            .collect();
        self.files_changed(paths).await;
    }

    async fn symbol(
        &self,
        params: WorkspaceSymbolParams,
    ) -> Result<Option<WorkspaceSymbolResponse>> {
        let (analyses, unit) = {
            let state = self.state.lock().await;
            (
                state.analyses.values().cloned().collect::<Vec<_>>(),
                state.unit(),
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
                    kind: symbol_kind(d.kind),
                    tags: None,
                    deprecated: None,
                    location: Location::new(
                        uri,
                        to_range(analysis, d.name.file, d.name.range, unit),
                    ),
                    container_name: bundle_name.clone(),
                });
            }
        }
        symbols.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(Some(WorkspaceSymbolResponse::Flat(symbols)))
    }

    /// After `mzk test`: how often each rule fired, at the end of its line.
    async fn inlay_hint(&self, params: InlayHintParams) -> Result<Option<Vec<InlayHint>>> {
        let uri = params.text_document.uri;
        let Some((analysis, file, _, unit)) = self.locate(&uri, Position::new(0, 0)).await else {
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

    async fn code_lens(&self, params: CodeLensParams) -> Result<Option<Vec<CodeLens>>> {
        let uri = params.text_document.uri;
        let Some((analysis, file, _, unit)) = self.locate(&uri, Position::new(0, 0)).await else {
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

    /// `mzk.showGraph` answers the bundle's transition graph as Mermaid text,
    /// `mzk.showPrompt` an agent's static prompt with its sizes as Markdown;
    /// the run commands start, answer and cancel runs (see `runs.rs`).
    async fn execute_command(
        &self,
        params: ExecuteCommandParams,
    ) -> Result<Option<serde_json::Value>> {
        let dir = params
            .arguments
            .first()
            .and_then(|a| a.as_str())
            .map(|a| normalize(Path::new(a)));
        match params.command.as_str() {
            SHOW_GRAPH => {
                let analysis = self.analysis_for_command(SHOW_GRAPH, dir).await?;
                let graph = TransitionGraph::build(&analysis.bundle);
                Ok(Some(serde_json::Value::String(mermaid(
                    &analysis.bundle,
                    &graph,
                ))))
            }
            SHOW_PROMPT => {
                let analysis = self.analysis_for_command(SHOW_PROMPT, dir).await?;
                let agent = params
                    .arguments
                    .get(1)
                    .and_then(|a| a.as_str())
                    .unwrap_or("");
                let Some(found) = analysis.bundle.agent(agent) else {
                    return Err(invalid_params(&format!(
                        "mzk.showPrompt takes the bundle folder and an agent of it; `{agent}` is not one"
                    )));
                };
                let prompt = mzk_analyzer::prompt::compose_one(&analysis.bundle, found);
                let text = guarded("showPrompt", || {
                    format!("# {agent}\n\n{}", prompt.summary_markdown(true))
                })?;
                Ok(Some(serde_json::Value::String(text)))
            }
            RUN_WORKFLOW | RUN_FROM_AGENT => {
                let analysis = self.analysis_for_command(&params.command, dir).await?;
                let agent = if params.command == RUN_FROM_AGENT {
                    match params.arguments.get(1).and_then(|a| a.as_str()) {
                        Some(agent) => Some(agent.to_string()),
                        None => {
                            return Err(invalid_params(
                                "mzk.runFromAgent takes the bundle folder and an agent of it",
                            ))
                        }
                    }
                } else {
                    None
                };
                self.runs
                    .start(self.client.clone(), analysis, agent, &params.arguments)
                    .await
                    .map(Some)
            }
            REPLY => {
                let (Some(run_id), Some(text)) = (
                    params.arguments.first().and_then(|a| a.as_str()),
                    params.arguments.get(1).and_then(|a| a.as_str()),
                ) else {
                    return Err(invalid_params(
                        "mzk.reply takes the run id and the reply text",
                    ));
                };
                let bundle = self.runs.bundle_of(run_id).await;
                self.runs
                    .reply(
                        self.client.clone(),
                        self.analysis_for_command(REPLY, bundle),
                        run_id,
                        text,
                    )
                    .await
                    .map(Some)
            }
            CANCEL_RUN => {
                let Some(run_id) = params.arguments.first().and_then(|a| a.as_str()) else {
                    return Err(invalid_params("mzk.cancelRun takes the run id"));
                };
                self.runs.cancel(run_id).await.map(Some)
            }
            other => Err(invalid_params(&format!(
                "unknown command `{other}` (mzk offers {})",
                COMMANDS.join(", ")
            ))),
        }
    }

    async fn shutdown(&self) -> Result<()> {
        Ok(())
    }

    async fn did_open(&self, params: DidOpenTextDocumentParams) {
        let Some(path) = path_of(&params.text_document.uri) else {
            return;
        };
        self.state.lock().await.documents.insert(
            path.clone(),
            Document {
                text: Rope::from_str(&params.text_document.text),
                version: params.text_document.version,
            },
        );
        self.document_changed(&path).await;
    }

    async fn did_change(&self, params: DidChangeTextDocumentParams) {
        let Some(path) = path_of(&params.text_document.uri) else {
            return;
        };
        {
            let mut state = self.state.lock().await;
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
                    self.client
                        .show_message(
                            MessageType::ERROR,
                            "mzk: an edit of this file could not be applied; close and reopen it so that mzk reads it again",
                        )
                        .await;
                    return;
                }
            }
        }
        self.document_changed(&path).await;
    }

    async fn did_save(&self, params: DidSaveTextDocumentParams) {
        if let Some(path) = path_of(&params.text_document.uri) {
            self.document_changed(&path).await;
        }
    }

    async fn did_close(&self, params: DidCloseTextDocumentParams) {
        let Some(path) = path_of(&params.text_document.uri) else {
            return;
        };
        {
            let mut state = self.state.lock().await;
            state.documents.remove(&path);
            state.last_readable.remove(&path);
        }
        // The file is read from disk again from now on.
        self.document_changed(&path).await;
    }

    async fn goto_definition(
        &self,
        params: GotoDefinitionParams,
    ) -> Result<Option<GotoDefinitionResponse>> {
        let p = params.text_document_position_params;
        let Some((analysis, file, offset, unit)) =
            self.locate(&p.text_document.uri, p.position).await
        else {
            return Ok(None);
        };
        Ok(
            guarded("definition", || ide::definition(&analysis, file, offset))?.and_then(
                |target| {
                    let uri = file_uri(&analysis, target.file)?;
                    Some(GotoDefinitionResponse::Scalar(Location::new(
                        uri,
                        to_range(&analysis, target.file, target.range, unit),
                    )))
                },
            ),
        )
    }

    async fn references(&self, params: ReferenceParams) -> Result<Option<Vec<Location>>> {
        let p = params.text_document_position;
        let Some((analysis, file, offset, unit)) =
            self.locate(&p.text_document.uri, p.position).await
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
    async fn document_highlight(
        &self,
        params: DocumentHighlightParams,
    ) -> Result<Option<Vec<DocumentHighlight>>> {
        let p = params.text_document_position_params;
        let Some((analysis, file, offset, unit)) =
            self.locate(&p.text_document.uri, p.position).await
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
    async fn code_action(&self, params: CodeActionParams) -> Result<Option<CodeActionResponse>> {
        let uri = params.text_document.uri;
        let Some((analysis, file, _, unit)) = self.locate(&uri, params.range.start).await else {
            return Ok(None);
        };
        let related = self.state.lock().await.related_information;
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
                        is_preferred: Some(i == 0 && safe),
                        ..CodeAction::default()
                    }));
                }
            }
        }
        let fix_all = CodeActionKind::new(FIX_ALL);
        if wants(&fix_all) {
            // The first safe fix of each diagnostic, each edit once, never
            // two that overlap (the same choice as `mzk check --fix`).
            let chosen: Vec<&ide::FileFix> = fixable
                .iter()
                .filter_map(|(_, fixes)| {
                    fixes
                        .iter()
                        .find(|f| f.applicability == Applicability::Safe)
                })
                .collect();
            let edits = ide::non_overlapping(chosen.iter().flat_map(|f| f.edits.iter().cloned()));
            if !edits.is_empty() {
                actions.push(CodeActionOrCommand::CodeAction(CodeAction {
                    title: format!("Apply all {} safe fixes mzk offers", chosen.len()),
                    kind: Some(fix_all),
                    edit: Some(workspace_edit(&edits)),
                    ..CodeAction::default()
                }));
            }
        }
        Ok(Some(actions))
    }

    async fn completion(&self, params: CompletionParams) -> Result<Option<CompletionResponse>> {
        let p = params.text_document_position;
        let Some(path) = path_of(&p.text_document.uri) else {
            return Ok(None);
        };
        let Some((analysis, file, _, unit)) = self.locate(&p.text_document.uri, p.position).await
        else {
            return Ok(None);
        };
        let Some(kind) = analysis.bundle.file(file).and_then(|f| f.kind) else {
            return Ok(None);
        };
        // Complete against what the editor shows now.
        let text = match self.state.lock().await.documents.get(&path) {
            Some(doc) => doc.text.to_string(),
            None => analysis
                .bundle
                .file(file)
                .map(|f| f.text.clone())
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
        let items: Vec<CompletionItem> = guarded("completion", || {
            ide::completions(&analysis, kind, &text, offset)
        })?
        .into_iter()
        .map(|c| CompletionItem {
            label: c.label,
            kind: Some(match c.kind {
                ide::CompletionKind::Key => CompletionItemKind::PROPERTY,
                ide::CompletionKind::Value => CompletionItemKind::ENUM_MEMBER,
                ide::CompletionKind::Agent => CompletionItemKind::CLASS,
                ide::CompletionKind::Variable => CompletionItemKind::VARIABLE,
                ide::CompletionKind::Model => CompletionItemKind::STRUCT,
                ide::CompletionKind::Function => CompletionItemKind::FUNCTION,
            }),
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

    async fn document_symbol(
        &self,
        params: DocumentSymbolParams,
    ) -> Result<Option<DocumentSymbolResponse>> {
        let Some((analysis, file, _, unit)) = self
            .locate(&params.text_document.uri, Position::new(0, 0))
            .await
        else {
            return Ok(None);
        };
        #[allow(deprecated)] // `deprecated` is a required field of the protocol type
        let symbols: Vec<DocumentSymbol> =
            guarded("documentSymbol", || ide::document_symbols(&analysis, file))?
                .into_iter()
                .map(|item| {
                    let range = to_range(&analysis, file, item.range, unit);
                    DocumentSymbol {
                        name: item.name,
                        detail: Some(item.kind.describe().to_string()),
                        kind: symbol_kind(item.kind),
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

    async fn prepare_rename(
        &self,
        params: TextDocumentPositionParams,
    ) -> Result<Option<PrepareRenameResponse>> {
        let Some((analysis, file, offset, unit)) = self
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

    async fn rename(&self, params: RenameParams) -> Result<Option<WorkspaceEdit>> {
        let p = params.text_document_position;
        let Some((analysis, file, offset, unit)) =
            self.locate(&p.text_document.uri, p.position).await
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

    async fn hover(&self, params: HoverParams) -> Result<Option<Hover>> {
        let p = params.text_document_position_params;
        let Some((analysis, file, offset, unit)) =
            self.locate(&p.text_document.uri, p.position).await
        else {
            return Ok(None);
        };
        Ok(
            guarded("hover", || ide::hover(&analysis, file, offset))?.map(|(range, text)| Hover {
                contents: HoverContents::Markup(MarkupContent {
                    kind: MarkupKind::Markdown,
                    value: text,
                }),
                range: Some(to_range(&analysis, file, range, unit)),
            }),
        )
    }
}

fn symbol_kind(kind: mzk_analyzer::model::SymbolKind) -> SymbolKind {
    use mzk_analyzer::model::SymbolKind as K;
    match kind {
        K::Agent => SymbolKind::CLASS,
        K::Variable => SymbolKind::VARIABLE,
        K::Tool | K::LifecycleTool | K::Middleware | K::PythonFunction => SymbolKind::FUNCTION,
        K::Model => SymbolKind::STRUCT,
        K::ModelField => SymbolKind::FIELD,
        K::Batch => SymbolKind::EVENT,
        K::UiComponent => SymbolKind::INTERFACE,
        K::WriterId => SymbolKind::CONSTANT,
    }
}

/// Serves the protocol on a reader and a writer (stdio for `mzk lsp`).
pub async fn serve<I, O>(input: I, output: O)
where
    I: tokio::io::AsyncRead + Unpin + Send + 'static,
    O: tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    serve_with(input, output, false).await
}

async fn serve_with<I, O>(input: I, output: O, exit_with_parent: bool)
where
    I: tokio::io::AsyncRead + Unpin + Send + 'static,
    O: tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (service, socket) = LspService::new(|client| Backend {
        client,
        state: Arc::new(Mutex::new(State::default())),
        exit_with_parent,
        runs: Arc::new(runs::Runs::default()),
        analysed: Arc::new(tokio::sync::Notify::new()),
    });
    // The client's frames pass through the guard (framing.rs) on their way
    // in; the server's output and the guard's answers merge on the way out.
    let (server_input, guard_output) = tokio::io::duplex(1 << 16);
    let (server_output, merge_input) = tokio::io::duplex(1 << 16);
    let (answers, answers_rx) = tokio::sync::mpsc::unbounded_channel();
    // Not awaited: after `exit` it may be blocked reading a stdin the client keeps open.
    tokio::spawn(framing::filter_input(input, guard_output, answers));
    let merge = tokio::spawn(framing::merge_output(merge_input, output, answers_rx));
    Server::new(server_input, server_output, socket)
        .serve(service)
        .await;
    // The server's output half is dropped: the merge ends once it is flushed.
    let _ = merge.await;
}

/// `mzk lsp`.
pub fn main() -> std::process::ExitCode {
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_stack_size(mzk_analyzer::limits::THREAD_STACK_BYTES)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("mzk: cannot start the language server runtime: {err}");
            return std::process::ExitCode::from(2);
        }
    };
    runtime.block_on(serve_with(tokio::io::stdin(), tokio::io::stdout(), true));
    // After `exit` a blocking read of stdin may still be pending (the client
    // keeps the pipe open); never let the runtime wait on it.
    runtime.shutdown_timeout(std::time::Duration::from_millis(100));
    std::process::ExitCode::SUCCESS
}

/// The editor that started the server may die without closing the pipes
/// (a crash, or pipes inherited by another process); the protocol's answer
/// is `processId`: when that process is gone, the server exits too, and
/// leaves no orphan behind.
#[cfg(unix)]
async fn exit_with_parent(pid: u32) {
    loop {
        tokio::time::sleep(std::time::Duration::from_secs(1)).await;
        // Signal 0 is not sent: kill only reports whether the process
        // exists (EPERM: it does, under another user).
        // SAFETY: kill with signal 0 has no effect on any process.
        let found = unsafe { libc::kill(pid as libc::pid_t, 0) } == 0
            || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM);
        if !found {
            eprintln!("mzk lsp: the editor (process {pid}) is gone; exiting");
            std::process::exit(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{char_index, guarded};
    use mzk_analyzer::syntax::ColumnUnit;
    use ropey::Rope;
    use tower_lsp_server::ls_types::Position;

    /// Positions past a line's end, past the text's end, inside a surrogate
    /// pair, inside a UTF-8 character and inside a CRLF, in every unit.
    #[test]
    fn positions_are_clamped_as_the_protocol_says() {
        let rope = Rope::from_str("a😀b\r\ncd\n");
        let at = |line, character, unit| char_index(&rope, Position::new(line, character), unit);
        for unit in [ColumnUnit::Utf16, ColumnUnit::Utf8, ColumnUnit::Char] {
            // Past the end of line 0: its end, before the CRLF.
            assert_eq!(at(0, 1_000, unit), 3, "{unit:?}");
            assert_eq!(at(1, u32::MAX, unit), 7, "{unit:?}");
            // Past the last line: the end of the text.
            assert_eq!(at(5, 0, unit), rope.len_chars(), "{unit:?}");
            assert_eq!(at(u32::MAX, u32::MAX, unit), rope.len_chars(), "{unit:?}");
        }
        // Inside the emoji (a surrogate pair; four UTF-8 bytes): the emoji.
        assert_eq!(at(0, 2, ColumnUnit::Utf16), 1);
        assert_eq!(at(0, 3, ColumnUnit::Utf16), 2);
        assert_eq!(at(0, 3, ColumnUnit::Utf8), 1);
        assert_eq!(at(0, 5, ColumnUnit::Utf8), 2);
    }

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
