//! Scenario suites: every scenario under a bundle's `scenarios/` folder,
//! run with the scenario backend and compared with its expected outcome.
//! `mzk test` and the conformance tests use it.

use std::path::{Path, PathBuf};

use mzk_analyzer::model::Bundle;

use crate::backend::ScenarioBackend;
use crate::engine::{Engine, Recorder, RunOptions, RunState};
use crate::events::Event;
use crate::scenario::{self, Scenario};

/// The scenario files of a bundle, sorted by name.
pub fn scenario_files(bundle_dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(bundle_dir.join("scenarios"))
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| {
                    p.is_file()
                        && matches!(
                            p.extension().and_then(|e| e.to_str()),
                            Some("yaml" | "yml" | "json")
                        )
                })
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

pub struct ScenarioRun {
    pub path: PathBuf,
    pub scenario: Scenario,
    pub state: RunState,
    pub events: Vec<Event>,
    /// `None` when the outcome matched (or nothing was expected).
    pub divergence: Option<String>,
}

/// Runs one scenario to its end (or pause) with an in-memory event log.
pub async fn run_scenario(
    bundle: &Bundle,
    scenario: Scenario,
    path: PathBuf,
    mut options: RunOptions,
) -> ScenarioRun {
    let backend = Box::new(ScenarioBackend::from_scenario(bundle, &scenario));
    options.max_turns = options.max_turns.or(scenario.max_turns);
    options.message = options.message.or_else(|| scenario.message.clone());
    options.context.extend(scenario.context.clone());
    options.user = scenario.user.clone();
    let mut recorder = Recorder::default();
    let state = {
        let mut engine = Engine::new(bundle, backend, &mut recorder, options);
        engine.start().await;
        engine.shutdown().await;
        engine.state.clone()
    };
    let divergence = scenario
        .expect
        .as_ref()
        .and_then(|e| e.first_divergence(&state.observed()));
    ScenarioRun {
        path,
        scenario,
        state,
        events: recorder.events,
        divergence,
    }
}

/// Loads and runs a scenario file; a file that cannot be read is an error.
pub async fn run_file(
    bundle: &Bundle,
    path: &Path,
    options: RunOptions,
) -> Result<ScenarioRun, String> {
    let scenario = scenario::load(path)?;
    Ok(run_scenario(bundle, scenario, path.to_path_buf(), options).await)
}
