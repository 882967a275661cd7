//! The analysis host: what the front ends share between analyses, and the
//! one way a bundle is configured, then analysed. `mzk check` (for each
//! run, or each round of `--watch`), `mzk run`/`graph`/`context` and the
//! language server all hold an [`AnalysisHost`]; it owns, per bundle, the
//! cache of its earlier analyses, its latest analysis and generation, the
//! configuration error last reported and the last readable text of each of
//! its files the editor has open; per workflows root, what the shared
//! folders mention; and the memos every analysis shares.
//!
//! The server's threads run an analysis without holding the host: it hands
//! out an [`AnalysisJob`] (a snapshot of what the analysis needs), and takes
//! the result back with [`AnalysisHost::finish`], which drops it when a newer
//! change has been scheduled since.

mod overlay;
#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

pub use overlay::Overlay;

use crate::analysis::{analyze, analyze_bundles, merge_last_readable, Analysis};
use crate::base::fs::{normalize, FileSystem};
use crate::base::hash::HashMap;
use crate::cache::{AnalysisCache, Memos};
use crate::config::{Config, ConfigError, Overrides};
use crate::model::mentions::SharedMentions;

/// Where the configuration of a bundle comes from.
#[derive(Debug, Clone, Default)]
pub struct ConfigSource {
    /// A file named on the command line (`--config`), instead of the one
    /// found above each bundle.
    pub explicit: Option<Config>,
    /// Command-line selections over it (`--select`, `--ignore` …).
    pub overrides: Overrides,
}

impl ConfigSource {
    /// The configuration that governs the bundle in `dir`, read through
    /// `fs` (so an editor's unsaved `mzk.toml` counts).
    pub fn configure(&self, fs: &dyn FileSystem, dir: &Path) -> Result<Config, ConfigError> {
        let config = match &self.explicit {
            Some(config) => config.clone(),
            None => Config::discover(fs, dir)?,
        };
        config.with_overrides(&self.overrides)
    }
}

/// What becomes of a bundle whose configuration cannot be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnConfigError {
    /// Not analysed: the command line stops with the error (exit 2).
    Refuse,
    /// Analysed under the default settings, the error reported beside: the
    /// editor keeps checking while the author fixes `mzk.toml`.
    UseDefaults,
}

/// One bundle's state between analyses.
#[derive(Debug, Default)]
struct BundleState {
    cache: Arc<Mutex<AnalysisCache>>,
    /// Raised by every change: an analysis of an older generation is stale.
    generation: u64,
    analysis: Option<Arc<Analysis>>,
    /// The configuration error last reported, so it is reported once.
    config_error: Option<String>,
    /// The last text of each open file of the bundle that could be read to
    /// its end: while the author's current text cannot, the other files are
    /// checked against it.
    last_readable: HashMap<PathBuf, Arc<str>>,
}

#[derive(Debug)]
pub struct AnalysisHost {
    source: ConfigSource,
    on_config_error: OnConfigError,
    memos: Arc<Memos>,
    bundles: HashMap<PathBuf, BundleState>,
    /// Per workflows root, what its shared folders mention.
    shared: HashMap<PathBuf, Arc<SharedMentions>>,
    /// The last generation handed out, over every bundle: a bundle removed
    /// and added again never reuses a number a job still running holds.
    generations: u64,
}

/// An analysis to run away from the host (on a thread of the caller's).
pub struct AnalysisJob {
    pub dir: PathBuf,
    generation: u64,
    fs: Overlay,
    source: ConfigSource,
    on_config_error: OnConfigError,
    cache: Arc<Mutex<AnalysisCache>>,
    shared: Option<Arc<SharedMentions>>,
    last_readable: HashMap<PathBuf, Arc<str>>,
}

/// A job's result, for [`AnalysisHost::finish`].
pub struct FinishedJob {
    dir: PathBuf,
    generation: u64,
    shared: Arc<SharedMentions>,
    outcome: Result<(Analysis, Option<ConfigError>), ConfigError>,
}

/// What [`AnalysisHost::finish`] kept.
pub struct Finished {
    pub analysis: Arc<Analysis>,
    /// A configuration error not reported before (the bundle was analysed
    /// under the defaults meanwhile).
    pub new_config_error: Option<ConfigError>,
}

/// The workflows root a bundle sits in (where its shared folders are).
pub fn root_of(bundle: &Path) -> &Path {
    bundle.parent().unwrap_or(bundle)
}

impl AnalysisHost {
    pub fn new(source: ConfigSource, on_config_error: OnConfigError) -> AnalysisHost {
        AnalysisHost {
            source,
            on_config_error,
            memos: Arc::new(Memos::default()),
            bundles: HashMap::default(),
            shared: HashMap::default(),
            generations: 0,
        }
    }

    /// The configuration that governs the bundle in `dir`.
    pub fn configure(&self, fs: &dyn FileSystem, dir: &Path) -> Result<Config, ConfigError> {
        self.source.configure(fs, dir)
    }

    /// Analyses the bundle in `dir` now, on this thread, under its
    /// configuration (`configured`) or none (commands that read only the
    /// model); keeps the analysis as the bundle's latest.
    pub fn analyze(
        &mut self,
        fs: &dyn FileSystem,
        dir: &Path,
        configured: bool,
    ) -> Result<Arc<Analysis>, ConfigError> {
        let config = if configured {
            match (self.configure(fs, dir), self.on_config_error) {
                (Ok(config), _) => Some(config),
                (Err(e), OnConfigError::Refuse) => return Err(e),
                (Err(_), OnConfigError::UseDefaults) => Some(Config::defaults(dir)),
            }
        } else {
            None
        };
        let state = self.bundle(dir);
        let cache = state.cache.clone();
        let mut cache = cache.lock().unwrap_or_else(|e| e.into_inner());
        let analysis = Arc::new(analyze(fs, dir, config.as_ref(), &mut cache));
        self.bundle(dir).analysis = Some(analysis.clone());
        Ok(analysis)
    }

    /// Analyses several bundles on all the cores, each under the
    /// configuration given for it (`mzk check`; see
    /// [`crate::analysis::analyze_bundles`]).
    pub fn analyze_all(
        &self,
        fs: &(dyn FileSystem + Sync),
        dirs: &[PathBuf],
        configs: &[Config],
    ) -> Vec<Analysis> {
        analyze_bundles(fs, dirs, configs, &self.memos)
    }

    fn bundle(&mut self, dir: &Path) -> &mut BundleState {
        let memos = &self.memos;
        self.bundles
            .entry(dir.to_path_buf())
            .or_insert_with(|| BundleState {
                cache: Arc::new(Mutex::new(AnalysisCache::sharing(memos.clone()))),
                ..BundleState::default()
            })
    }

    /// Schedules an analysis of the bundle in `dir` as the editor shows it
    /// (`fs`, its buffers over the disk): every job scheduled before it is
    /// stale from now on.
    pub fn schedule(&mut self, dir: &Path, fs: Overlay) -> AnalysisJob {
        let (source, on_config_error) = (self.source.clone(), self.on_config_error);
        let shared = self.shared.get(root_of(dir)).cloned();
        self.generations += 1;
        let generation = self.generations;
        let state = self.bundle(dir);
        state.generation = generation;
        AnalysisJob {
            dir: dir.to_path_buf(),
            generation,
            fs,
            source,
            on_config_error,
            cache: state.cache.clone(),
            shared,
            last_readable: state.last_readable.clone(),
        }
    }

    /// Whether a job is still the latest scheduled for its bundle.
    pub fn is_current(&self, job: &AnalysisJob) -> bool {
        self.bundles
            .get(&job.dir)
            .is_some_and(|s| s.generation == job.generation)
    }

    /// Keeps a job's analysis as its bundle's latest, unless a newer job was
    /// scheduled meanwhile (`None`: it is stale and dropped) or the
    /// configuration refused it. The open files it read to their end
    /// (`is_open`) become their last readable texts.
    pub fn finish(
        &mut self,
        finished: FinishedJob,
        is_open: impl Fn(&Path) -> bool,
    ) -> Option<Result<Finished, ConfigError>> {
        let FinishedJob {
            dir,
            generation,
            shared,
            outcome,
        } = finished;
        let state = self.bundles.get_mut(&dir)?;
        if state.generation != generation {
            // Stale: what it read of the shared folders may be too (a shared
            // file may have changed since), so it is not kept either.
            return None;
        }
        self.shared
            .entry(root_of(&dir).to_path_buf())
            .or_insert(shared);
        let state = self.bundles.get_mut(&dir)?;
        let (analysis, config_error) = match outcome {
            Ok(done) => done,
            Err(e) => return Some(Err(e)),
        };
        for file in &analysis.bundle.files {
            if file.kind.is_none() || analysis.incomplete.contains(&file.id) {
                continue;
            }
            let path = analysis.bundle.path_of(file);
            if is_open(&path) {
                state.last_readable.insert(path, Arc::clone(&file.text));
            }
        }
        let new_config_error = match config_error {
            Some(e) => {
                let text = e.to_string();
                let new = state.config_error.as_ref() != Some(&text);
                state.config_error = Some(text);
                new.then_some(e)
            }
            None => {
                state.config_error = None;
                None
            }
        };
        let analysis = Arc::new(analysis);
        state.analysis = Some(analysis.clone());
        Some(Ok(Finished {
            analysis,
            new_config_error,
        }))
    }

    /// The latest analysis of the bundle in `dir`.
    pub fn analysis(&self, dir: &Path) -> Option<Arc<Analysis>> {
        self.bundles.get(dir)?.analysis.clone()
    }

    /// The latest analyses of every bundle.
    pub fn analyses(&self) -> impl Iterator<Item = &Arc<Analysis>> {
        self.bundles.values().filter_map(|s| s.analysis.as_ref())
    }

    /// The latest analysis holding the file at `path` (a bundle file, or a
    /// `_shared` module one of its tools binds).
    pub fn analysis_of(&self, path: &Path) -> Option<Arc<Analysis>> {
        // The innermost bundle folder holding the path (bundles may nest).
        let by_folder = self
            .bundles
            .iter()
            .filter(|(dir, s)| path.starts_with(dir) && s.analysis.is_some())
            .max_by_key(|(dir, _)| dir.components().count());
        if let Some((_, s)) = by_folder {
            return s.analysis.clone();
        }
        self.analyses()
            .find(|a| a.bundle.files.iter().any(|f| a.bundle.path_of(f) == path))
            .cloned()
    }

    /// Forgets the bundle in `dir` whole (its folder was deleted, or it
    /// left the workspace).
    pub fn remove_bundle(&mut self, dir: &Path) {
        self.bundles.remove(dir);
    }

    /// The bundles the host keeps.
    pub fn bundles(&self) -> impl Iterator<Item = &Path> {
        self.bundles.keys().map(PathBuf::as_path)
    }

    /// Forgets the last readable text of a file the editor closed.
    pub fn closed(&mut self, path: &Path) {
        for state in self.bundles.values_mut() {
            state.last_readable.remove(path);
        }
    }

    /// Files outside every bundle changed: forgets what the shared folders
    /// of each workflows root holding one of them mention (the next
    /// analysis reads them again), and returns the bundles under those
    /// roots, to analyse again.
    pub fn shared_changed(&mut self, paths: &[PathBuf]) -> Vec<PathBuf> {
        let roots: Vec<PathBuf> = self
            .shared
            .keys()
            .filter(|root| paths.iter().any(|p| p.starts_with(root)))
            .cloned()
            .collect();
        for root in &roots {
            self.shared.remove(root);
        }
        let mut beside: Vec<PathBuf> = self
            .bundles
            .keys()
            .filter(|b| roots.iter().any(|r| root_of(b) == r.as_path()))
            .cloned()
            .collect();
        beside.sort();
        beside
    }
}

impl AnalysisJob {
    /// Configures, then analyses; files that cannot be read right now are
    /// replaced by their last readable texts for the other files' checks.
    pub fn run(self) -> FinishedJob {
        let AnalysisJob {
            dir,
            generation,
            fs,
            source,
            on_config_error,
            cache,
            shared,
            last_readable,
        } = self;
        // A panic in an earlier analysis leaves whole entries only.
        let mut cache = cache.lock().unwrap_or_else(|e| e.into_inner());
        cache.use_shared(root_of(&dir), shared);
        let shared = cache.shared(root_of(&dir));
        let (config, config_error) = match (source.configure(&fs, &dir), on_config_error) {
            (Ok(config), _) => (config, None),
            (Err(e), OnConfigError::UseDefaults) => (Config::defaults(&dir), Some(e)),
            (Err(e), OnConfigError::Refuse) => {
                return FinishedJob {
                    dir,
                    generation,
                    shared,
                    outcome: Err(e),
                }
            }
        };
        let mut analysis = analyze(&fs, &dir, Some(&config), &mut cache);
        let substitutes: Vec<(PathBuf, String)> = analysis
            .incomplete
            .iter()
            .filter_map(|id| {
                let path = normalize(&dir.join(&analysis.bundle.file(*id)?.relative));
                let text = last_readable.get(&path)?.to_string();
                Some((path, text))
            })
            .collect();
        if !substitutes.is_empty() {
            let last = analyze(&fs.with(substitutes), &dir, Some(&config), &mut cache);
            merge_last_readable(&mut analysis, last);
        }
        FinishedJob {
            dir,
            generation,
            shared,
            outcome: Ok((analysis, config_error)),
        }
    }
}
