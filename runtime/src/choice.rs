//! Which model a run talks to: one decision for `mzk run` and for runs
//! started from the editor (the VS Code extension's `mzk.run.backend`
//! setting lists the same names; a test compares them).

use std::time::Duration;

use mzk_analyzer::model::Bundle;

use crate::backend::{BackendKind, ModelBackend};
use crate::openai::{OpenAiBackend, OpenAiConfig};
use crate::scenario::Scenario;
use crate::scripted::ScenarioBackend;
use crate::synthetic::SyntheticBackend;

/// Which runtime executes a run: mzk's own engine, or the real mozaiks
/// installed in the run's Python (`crate::mozaiks`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum EngineKind {
    #[default]
    Mzk,
    Mozaiks,
}

impl EngineKind {
    pub const ALL: [EngineKind; 2] = [EngineKind::Mzk, EngineKind::Mozaiks];

    pub fn name(self) -> &'static str {
        match self {
            EngineKind::Mzk => "mzk",
            EngineKind::Mozaiks => "mozaiks",
        }
    }

    pub fn parse(name: &str) -> Result<EngineKind, String> {
        EngineKind::ALL
            .into_iter()
            .find(|kind| kind.name() == name)
            .ok_or_else(|| format!("unknown engine `{name}` (mzk, mozaiks)"))
    }
}

/// What decides a run's model, strongest first.
#[derive(Debug, Default)]
pub struct ModelChoice<'a> {
    /// Asked for this run (`mzk run --backend`).
    pub asked: Option<BackendKind>,
    /// The run's scenario: its replies unless asked otherwise.
    pub scenario: Option<&'a Scenario>,
    /// The configured default (the editor's `mzk.run.backend`).
    pub configured: Option<BackendKind>,
    /// For `openai`: the endpoint and model (else from the environment).
    pub endpoint: Option<String>,
    pub model: Option<String>,
    /// For `openai`: how long one request may take.
    pub timeout: Duration,
}

/// Why no model could be chosen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChoiceError {
    /// `scenario` was chosen but the run has no scenario file.
    NoScenario,
    /// The endpoint's settings are incomplete (no key, no model).
    OpenAi(String),
}

impl ModelChoice<'_> {
    /// The kind this choice settles on: the one asked for, else the
    /// scenario's replies when there is a scenario, else the configured one,
    /// else the synthetic model.
    pub fn kind(&self) -> BackendKind {
        self.asked
            .or(self.scenario.map(|_| BackendKind::Scenario))
            .or(self.configured)
            .unwrap_or(BackendKind::Synthetic)
    }

    pub fn backend(self, bundle: &Bundle) -> Result<Box<dyn ModelBackend>, ChoiceError> {
        match (self.kind(), self.scenario) {
            (BackendKind::Scenario, Some(s)) => {
                Ok(Box::new(ScenarioBackend::from_scenario(bundle, s)))
            }
            (BackendKind::Scenario, None) => Err(ChoiceError::NoScenario),
            (BackendKind::Synthetic, _) => Ok(Box::new(SyntheticBackend::new(bundle))),
            (BackendKind::Openai, _) => {
                OpenAiConfig::resolve(self.endpoint, self.model, self.timeout)
                    .map(|c| Box::new(OpenAiBackend::new(c, bundle)) as Box<dyn ModelBackend>)
                    .map_err(|e| ChoiceError::OpenAi(e.to_string()))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn asked_beats_scenario_beats_configured() {
        let scenario = Scenario::default();
        let choice = |asked, scenario, configured| {
            ModelChoice {
                asked,
                scenario,
                configured,
                ..ModelChoice::default()
            }
            .kind()
        };
        let (synthetic, openai) = (BackendKind::Synthetic, BackendKind::Openai);
        assert_eq!(choice(None, None, None), synthetic);
        assert_eq!(choice(None, None, Some(openai)), openai);
        assert_eq!(
            choice(None, Some(&scenario), Some(openai)),
            BackendKind::Scenario
        );
        assert_eq!(choice(Some(synthetic), Some(&scenario), None), synthetic);
        for kind in BackendKind::ALL {
            assert_eq!(BackendKind::parse(kind.name()), Ok(kind));
        }
        assert!(BackendKind::parse("gpt")
            .unwrap_err()
            .contains("scenario, synthetic, openai"));
    }
}
