//! The analyzer as a function: a bundle folder's files, its settings and
//! the caller's cache → the typed `Bundle` and every diagnostic, in a
//! deterministic order. [`analyze`] is the one entry point: `mzk check`, the
//! language server, `mzk run` and the tests all call it. File access goes
//! through [`FileSystem`] so the language server can feed unsaved buffers.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::base::fs::FileSystem;
use crate::base::{FileId, TextRange, FILE_KINDS};
use crate::cache::{AnalysisCache, Memos};
use crate::config::Config;
use crate::diagnostics::{sort_diagnostics, Diagnostic};
use crate::model::file_cache::YamlMemo;
use crate::model::{self, Bundle, SourceFile};
use crate::rules::Rule;
use crate::schema::validate_file;
use crate::syntax::{self, LineIndex};

/// The result of analysing one bundle.
#[derive(Debug, Clone)]
pub struct Analysis {
    pub bundle: Bundle,
    pub symbols: model::SymbolTable,
    pub diagnostics: Vec<Diagnostic>,
    /// Bundle files that could not be read to their end (bad encoding, a
    /// syntax error, too large): findings that would depend on them are held
    /// back, and no fix touches them.
    pub incomplete: Vec<FileId>,
    /// Findings of opt-in rules that the configuration left off (neither
    /// selected nor ignored), per rule: counted when it is applied, so a
    /// report can say how many there are.
    pub opt_in_hidden: std::collections::BTreeMap<crate::rules::Rule, usize>,
    /// The memos it was made with, for what is asked of it later (prompt
    /// sizes in hovers and lenses).
    pub memos: Arc<Memos>,
}

/// Analyses the bundle in `dir` (a folder holding orchestrator.yaml): its
/// typed model, symbols and findings, reusing what `cache` kept from earlier
/// analyses. With `settings` (the configuration that governs the bundle) the
/// prompt checks run with its `[context]` thresholds, then its rule
/// selection, severities and the files' suppression comments are applied:
/// what `mzk check`, `mzk run` and the language server report. Without, the
/// other checks' findings are returned as they make them (tests, and
/// commands that read only the model).
pub fn analyze(
    fs: &dyn FileSystem,
    dir: &Path,
    settings: Option<&Config>,
    cache: &mut AnalysisCache,
) -> Analysis {
    let mut analysis = analyze_files(fs, dir, settings, cache);
    if let Some(config) = settings {
        let complete = analysis.incomplete.is_empty();
        config.apply(
            &analysis.bundle,
            complete,
            &mut analysis.diagnostics,
            &mut analysis.opt_in_hidden,
        );
    }
    analysis
}

/// The prompt checks with `config`'s thresholds, after the other findings.
fn prompt_findings(bundle: &Bundle, config: &Config, memos: &Memos) -> Vec<Diagnostic> {
    // One finding per view entry: an unused entry that is also unbounded is
    // one MZ804, unless only MZ805 is wanted.
    let merge =
        config.enabled(Rule::UnusedViewVariable) || !config.enabled(Rule::UnboundedExposure);
    let mut out = Vec::new();
    crate::checks::prompt_findings(
        bundle,
        &config.prompt_limits,
        merge,
        &memos.prompts,
        &memos.tokens,
        &mut out,
    );
    out
}

/// [`analyze`] without settings and with a cache of its own (tests).
pub fn analyze_bundle(fs: &dyn FileSystem, dir: &Path) -> Analysis {
    analyze(fs, dir, None, &mut AnalysisCache::new())
}

/// Everything but applying the settings (whose prompt thresholds the prompt
/// checks take; without settings they do not run).
fn analyze_files(
    fs: &dyn FileSystem,
    dir: &Path,
    settings: Option<&Config>,
    cache: &mut AnalysisCache,
) -> Analysis {
    let shared = cache.shared(dir.parent().unwrap_or(dir));
    let memos = cache.memos().clone();
    let cache = &mut cache.files;
    let mut bundle = Bundle::default();
    bundle.folder_name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    bundle.dir = dir.to_path_buf();
    bundle.built = memos.built.clone();
    let mut diagnostics = Vec::new();
    let mut incomplete = Vec::new();
    for &kind in FILE_KINDS {
        let path = dir.join(kind.path());
        let id = FileId(bundle.files.len() as u32);
        let bytes = match fs.read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(e) => {
                let rule = if e.kind() == io::ErrorKind::FileTooLarge {
                    Rule::FileTooLarge
                } else {
                    Rule::InvalidEncoding
                };
                diagnostics.push(Diagnostic::new(
                    rule,
                    id,
                    TextRange::empty(0),
                    format!(
                        "{} could not be read ({e}); mzk analysed the other files",
                        kind.path()
                    ),
                ));
                incomplete.push(id);
                bundle.files.push(SourceFile {
                    id,
                    relative: kind.path().to_string(),
                    kind: Some(kind),
                    line_index: LineIndex::new(""),
                    text: Arc::from(""),
                });
                continue;
            }
        };
        let memo = cache.yaml(&path, bytes, |bytes| read_yaml(kind, bytes, id));
        diagnostics.extend(memo.diagnostics_for(id));
        if !memo.complete {
            incomplete.push(id);
        }
        bundle.files.push(SourceFile {
            id,
            relative: kind.path().to_string(),
            kind: Some(kind),
            line_index: memo.line_index.clone(),
            text: memo.text.clone(),
        });
        if let Some(root) = &memo.root {
            model::lower(&mut bundle, kind, id, root);
        }
    }
    bundle.index();
    model::python::load(&mut bundle, fs, cache);
    // The modules the bundle's tools import, where the bridge flows into them.
    model::python_imports::load(&mut bundle, fs, cache);
    // While a file cannot be read, cross-file findings are held back (see
    // `hold_back`), and the prompt checks read every file. The checks that
    // read the prompts read the lowered model alone, so they run beside the
    // symbols, the mentions and the other checks (an editor's keystroke
    // waits for the longer of the two sides, not their sum).
    let prompts = settings.filter(|_| incomplete.is_empty());
    let (symbols, (reach_diagnostics, prompt_diagnostics)) = std::thread::scope(|scope| {
        let bundle = &bundle;
        let work = || {
            let reach = crate::checks::prompt_reach_findings(bundle);
            (
                reach,
                prompts.map(|config| prompt_findings(bundle, config, &memos)),
            )
        };
        let beside = std::thread::Builder::new()
            .stack_size(crate::base::limits::THREAD_STACK_BYTES)
            .spawn_scoped(scope, work)
            .ok();
        let symbols = model::symbols::build(bundle);
        let mut unreferenced = crate::checks::unreferenced_variables(bundle, &symbols);
        unreferenced.extend(crate::checks::unreferenced_models(bundle, &symbols));
        let mentioned = model::mentions::scan(bundle, fs, &unreferenced, &shared, cache);
        // The cell is new and set only here.
        let _ = bundle.mentioned_elsewhere.set(mentioned);
        crate::checks::run(bundle, &symbols, &mut diagnostics);
        let beside = match beside {
            Some(thread) => thread
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
            // No thread to be had: here.
            None => work(),
        };
        (symbols, beside)
    });
    diagnostics.extend(reach_diagnostics);
    hold_back(&bundle, &incomplete, &mut diagnostics);
    sort_diagnostics(&mut diagnostics);
    diagnostics.extend(prompt_diagnostics.unwrap_or_default());
    cache.finish();
    Analysis {
        bundle,
        symbols,
        diagnostics,
        incomplete,
        opt_in_hidden: Default::default(),
        memos,
    }
}

/// While a file of the bundle cannot be read to its end, nothing is reported
/// *because of* what could not be read: every finding of a rule that reads
/// more than the file it is reported in is held back (a reference into the
/// broken file would look unresolved, a rule written there missing), and no
/// fix is offered inside the broken file, whose analysis is partial. The
/// broken file's first error says so. Findings of rules that read only their
/// own file stay, in every file.
fn hold_back(bundle: &Bundle, incomplete: &[FileId], diagnostics: &mut Vec<Diagnostic>) {
    if incomplete.is_empty() {
        return;
    }
    diagnostics.retain(|d| d.rule.reads_only_its_file());
    for d in diagnostics
        .iter_mut()
        .filter(|d| incomplete.contains(&d.file))
    {
        d.fixes.clear();
    }
    for &id in incomplete {
        let name = bundle.file(id).map_or("", |f| f.relative.as_str());
        if let Some(first) = diagnostics
            .iter_mut()
            .filter(|d| d.file == id && d.severity == crate::base::Severity::Error)
            .min_by_key(|d| d.range.start)
        {
            first.message.push_str(&held_back_note(name));
        }
    }
}

/// What the first error of a file that cannot be read says about the checks
/// held back meanwhile.
fn held_back_note(name: &str) -> String {
    format!(
        " (until {name} can be read to its end, mzk holds back the checks that read it together with other files: references, the transition graph, authority, Python bindings, structured outputs, prompts and unused suppressions)"
    )
}

/// An editor's view while files cannot be read: `current` is the analysis of
/// the texts as they are, `last_readable` that of the same texts with each
/// unreadable file replaced by the last version of it that could be read.
/// The other files keep the findings of `last_readable` (so they do not
/// change while the author types one broken line), the unreadable files keep
/// their own (the syntax error). Fixes that would edit an unreadable file are
/// dropped: they were computed on a text that is no longer there.
pub fn merge_last_readable(current: &mut Analysis, last_readable: Analysis) {
    let unreadable: Vec<&str> = current
        .incomplete
        .iter()
        .filter_map(|id| current.bundle.file(*id).map(|f| f.relative.as_str()))
        .collect();
    let current_id = |relative: &str| current.bundle.file_at(relative).map(|f| f.id);
    let kind_unreadable = |kind: crate::base::FileKind| unreadable.contains(&kind.path());
    let mut merged: Vec<Diagnostic> = Vec::new();
    for mut d in last_readable.diagnostics {
        let Some(file) = last_readable.bundle.file(d.file) else {
            continue;
        };
        if unreadable.contains(&file.relative.as_str()) {
            continue;
        }
        let Some(id) = current_id(&file.relative) else {
            continue;
        };
        d.file = id;
        // Related locations in files both analyses share keep their place.
        let related = std::mem::take(&mut d.related);
        d.related = related
            .into_iter()
            .filter_map(|mut r| {
                let relative = &last_readable.bundle.file(r.file)?.relative;
                if unreadable.contains(&relative.as_str()) {
                    return None;
                }
                r.file = current_id(relative)?;
                Some(r)
            })
            .collect();
        d.fixes.retain(|fix| {
            fix.edits_other_file()
                .is_none_or(|kind| !kind_unreadable(kind))
        });
        merged.push(d);
    }
    for d in &current.diagnostics {
        let Some(file) = current.bundle.file(d.file) else {
            continue;
        };
        if !unreadable.contains(&file.relative.as_str()) {
            continue;
        }
        let mut d = d.clone();
        let note = held_back_note(&file.relative);
        if let Some(message) = d.message.strip_suffix(&note) {
            d.message = format!(
                "{message} (meanwhile mzk checks the other files against the last version of {} that could be read)",
                file.relative
            );
        }
        merged.push(d);
    }
    sort_diagnostics(&mut merged);
    current.diagnostics = merged;
}

/// [`analyze`] of several bundles, each with its settings (`settings[i]` is
/// that of `dirs[i]`; a bundle past the end of `settings` is analysed
/// without), on all available cores, results in input order. They
/// share the caller's `memos`, and the shared folders of each workflows root
/// are read once.
pub fn analyze_bundles(
    fs: &(dyn FileSystem + Sync),
    dirs: &[PathBuf],
    settings: &[Config],
    memos: &Arc<Memos>,
) -> Vec<Analysis> {
    let mut shared: Vec<(PathBuf, Arc<crate::model::mentions::SharedMentions>)> = Vec::new();
    for dir in dirs {
        let root = dir.parent().unwrap_or(dir).to_path_buf();
        if !shared.iter().any(|(r, _)| *r == root) {
            let mentions = Arc::new(crate::model::mentions::SharedMentions::of(&root));
            shared.push((root, mentions));
        }
    }
    let analyze_one = |i: usize, dir: &PathBuf| {
        let root = dir.parent().unwrap_or(dir);
        let mut cache = AnalysisCache::sharing(memos.clone());
        cache.use_shared(
            root,
            shared
                .iter()
                .find(|(r, _)| r == root)
                .map(|(_, s)| s.clone()),
        );
        analyze(fs, dir, settings.get(i), &mut cache)
    };
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(dirs.len())
        .max(1);
    if workers == 1 {
        return dirs
            .iter()
            .enumerate()
            .map(|(i, d)| analyze_one(i, d))
            .collect();
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut results: Vec<Option<Analysis>> = (0..dirs.len()).map(|_| None).collect();
    let slots = std::sync::Mutex::new(&mut results);
    std::thread::scope(|scope| {
        for _ in 0..workers {
            let work = || loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(dir) = dirs.get(i) else { break };
                let analysis = analyze_one(i, dir);
                if let Ok(mut slots) = slots.lock() {
                    slots[i] = Some(analysis);
                }
            };
            let spawned = std::thread::Builder::new()
                .stack_size(crate::base::limits::THREAD_STACK_BYTES)
                .spawn_scoped(scope, work);
            if spawned.is_err() {
                // No thread to be had: the bundles left are analysed by the
                // workers already running, or here.
                work();
            }
        }
    });
    results.into_iter().flatten().collect()
}

/// A bundle YAML file's own work: decode, parse, validate. The bytes come
/// back when the text is not exactly them.
fn read_yaml(
    kind: crate::base::FileKind,
    bytes: Vec<u8>,
    id: FileId,
) -> (YamlMemo, Option<Vec<u8>>) {
    let mut diagnostics = Vec::new();
    let (text, undecoded) = decode(bytes, id, &mut diagnostics);
    let readable = undecoded.is_none();
    let mut root = None;
    let mut complete = false;
    if readable {
        let document = syntax::parse(&text, id, &mut diagnostics);
        complete = !document.failed;
        if complete {
            root = validate_file(kind, document.root, id, &mut diagnostics);
        }
    }
    let memo = YamlMemo {
        line_index: LineIndex::new(&text),
        text: text.into(),
        diagnostics,
        file: id,
        root,
        complete,
    };
    (memo, undecoded)
}

/// Bytes → text. Invalid UTF-8 is reported (the range ends at the first bad
/// byte) and the file is not parsed; the text is then read lossily, and the
/// bytes are given back (the text is not them).
fn decode(bytes: Vec<u8>, file: FileId, out: &mut Vec<Diagnostic>) -> (String, Option<Vec<u8>>) {
    if bytes.starts_with(&[0xFF, 0xFE]) || bytes.starts_with(&[0xFE, 0xFF]) {
        out.push(Diagnostic::new(
            Rule::InvalidEncoding,
            file,
            TextRange::empty(0),
            "this file is UTF-16; mozaiks reads UTF-8 only: re-save it as UTF-8",
        ));
        return (String::new(), Some(bytes));
    }
    match String::from_utf8(bytes) {
        Ok(text) => (text, None),
        Err(err) => {
            let valid = err.utf8_error().valid_up_to();
            let bytes = err.into_bytes();
            let text = String::from_utf8_lossy(&bytes).into_owned();
            let line_start = text[..valid].rfind('\n').map_or(0, |i| i + 1);
            out.push(Diagnostic::new(
                Rule::InvalidEncoding,
                file,
                TextRange::new(line_start as u32, valid as u32),
                format!(
                    "invalid UTF-8: byte 0x{:02x} at offset {valid} cannot be decoded; mozaiks reads UTF-8 only, so re-save the file as UTF-8",
                    bytes[valid]
                ),
            ));
            (text, Some(bytes))
        }
    }
}

/// Finds bundle folders: `path` itself when it holds orchestrator.yaml, else
/// every folder below it that does (sorted, symlinks not followed).
pub fn discover_bundles(fs: &dyn FileSystem, path: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    walk(fs, path, 0, &mut found);
    found
}

fn walk(fs: &dyn FileSystem, dir: &Path, depth: usize, found: &mut Vec<PathBuf>) {
    if fs.is_file(&dir.join("orchestrator.yaml")) {
        found.push(dir.to_path_buf());
        return;
    }
    if depth >= 12 {
        return;
    }
    let Ok(entries) = fs.read_dir(dir) else {
        return;
    };
    for (child, is_dir) in entries {
        let name = child
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if is_dir && !crate::workspace::is_skipped_folder(&name) {
            walk(fs, &child, depth + 1, found);
        }
    }
}
