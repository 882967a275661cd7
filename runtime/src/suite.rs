//! Scenario suites: every scenario under a bundle's `scenarios/` folder,
//! run with the scenario backend and compared with its expected outcome.
//! `mzk test` and the conformance tests use it.

use std::path::{Path, PathBuf};

use mzk_analyzer::model::{Bundle, TransitionRule};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::choice::EngineKind;
use crate::compare::Trace;
use crate::engine::{initial_context, Engine, Recorder, RunOptions, RunState};
use crate::error::Error;
use crate::events::Event;
use crate::mozaiks::MozaiksEngine;
use crate::scenario::{self, Scenario};
use crate::scripted::ScenarioBackend;

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
    /// The context the run started from.
    pub initial_context: Map<String, Value>,
}

impl ScenarioRun {
    /// The run's outline, for comparing engines.
    pub fn trace(&self) -> Trace {
        Trace::of(&self.state, &self.events, &self.initial_context)
    }
}

/// Runs one scenario to its end (or pause) with an in-memory event log, on
/// the engine named.
pub async fn run_scenario(
    bundle: &Bundle,
    scenario: Scenario,
    path: PathBuf,
    mut options: RunOptions,
    engine: EngineKind,
) -> ScenarioRun {
    let backend = Box::new(ScenarioBackend::from_scenario(bundle, &scenario));
    options.max_turns = options.max_turns.or(scenario.max_turns);
    options.message = options.message.or_else(|| scenario.message.clone());
    options.context.extend(scenario.context.clone());
    options.user = scenario.user.clone();
    let initial_context = initial_context(bundle, &options);
    let mut recorder = Recorder::default();
    let state = match engine {
        EngineKind::Mzk => {
            let mut engine = Engine::new(bundle, backend, &mut recorder, options);
            engine.start().await;
            engine.shutdown().await;
            engine.state.clone()
        }
        EngineKind::Mozaiks => {
            let mut engine = MozaiksEngine::new(bundle, backend, &mut recorder, options);
            engine.start().await;
            engine.state.clone()
        }
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
        initial_context,
    }
}

/// Loads and runs a scenario file; a file that cannot be read is an error.
pub async fn run_file(
    bundle: &Bundle,
    path: &Path,
    options: RunOptions,
    engine: EngineKind,
) -> Result<ScenarioRun, Error> {
    let scenario = scenario::load(path)?;
    Ok(run_scenario(bundle, scenario, path.to_path_buf(), options, engine).await)
}

/// Transition coverage of a bundle's scenarios: how often each rule of
/// transition_graph.yaml fired. `mzk test` prints it and saves the last one
/// beside the run history (`.mzk/coverage.json`), where the language server
/// reads it for its hints.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Coverage {
    /// The scenarios with an expected outcome that ran.
    pub scenarios: usize,
    pub rules: Vec<RuleCoverage>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RuleCoverage {
    /// The rule's index in transition_rules.
    pub index: usize,
    /// `source → target (condition)`: a hint is shown only while the rule at
    /// `index` still reads the same, so an edited graph shows no stale counts.
    pub rule: String,
    /// How many times the rule fired, over all scenarios.
    pub hits: usize,
}

/// How a rule is named in coverage reports.
pub fn rule_label(bundle: &Bundle, rule: &TransitionRule) -> String {
    format!(
        "{} → {} ({})",
        rule.source.text,
        rule.target.text,
        mzk_analyzer::graph::edge_label(bundle, rule)
    )
}

impl Coverage {
    /// Coverage of `bundle`'s rules by the rule indexes `fired` (one entry
    /// per firing) over `scenarios` scenarios.
    pub fn of(bundle: &Bundle, scenarios: usize, fired: &[usize]) -> Coverage {
        let rules = bundle
            .rules
            .iter()
            .map(|r| RuleCoverage {
                index: r.index,
                rule: rule_label(bundle, r),
                hits: fired.iter().filter(|i| **i == r.index).count(),
            })
            .collect();
        Coverage { scenarios, rules }
    }

    pub fn covered(&self) -> usize {
        self.rules.iter().filter(|r| r.hits > 0).count()
    }

    /// The share of rules that fired, in percent (100 for a graph without rules).
    pub fn percent(&self) -> f64 {
        if self.rules.is_empty() {
            return 100.0;
        }
        100.0 * self.covered() as f64 / self.rules.len() as f64
    }

    /// Where the last `mzk test` of a bundle keeps its coverage.
    pub fn path(bundle_dir: &Path) -> PathBuf {
        bundle_dir.join(".mzk").join("coverage.json")
    }

    pub fn save(&self, bundle_dir: &Path) -> Result<(), Error> {
        let path = Coverage::path(bundle_dir);
        let write = || -> std::io::Result<()> {
            std::fs::create_dir_all(path.parent().unwrap_or(bundle_dir))?;
            // Written whole and renamed, so a reader never sees half a file.
            let partial = path.with_extension(format!("json.{}", std::process::id()));
            std::fs::write(&partial, serde_json::to_vec_pretty(self)?)?;
            std::fs::rename(&partial, &path)
        };
        write().map_err(|source| Error::Write { path, source })
    }

    /// The saved coverage of a bundle, if there is a readable one.
    pub fn load(bundle_dir: &Path) -> Option<Coverage> {
        let text = std::fs::read(Coverage::path(bundle_dir)).ok()?;
        serde_json::from_slice(&text).ok()
    }

    /// The saved entry of `rule`, when it still describes that rule.
    pub fn entry_for(&self, bundle: &Bundle, rule: &TransitionRule) -> Option<&RuleCoverage> {
        let label = rule_label(bundle, rule);
        self.rules
            .iter()
            .find(|c| c.index == rule.index && c.rule == label)
    }
}
