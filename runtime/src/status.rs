//! The status of a run.

use serde::{Deserialize, Serialize};

/// Where a run is: under way, waiting for the user's reply, or ended — and
/// how. Stored and printed in lower case (`"paused"`), as run history,
/// `--json` events and scenario expectations spell it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    #[default]
    Running,
    /// Handed over to the user; resumed by a reply.
    Paused,
    Completed,
    Failed,
    /// The process stopped during the run (found so by the next one);
    /// resumed without a reply.
    Interrupted,
}

impl RunStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Paused => "paused",
            RunStatus::Completed => "completed",
            RunStatus::Failed => "failed",
            RunStatus::Interrupted => "interrupted",
        }
    }

    /// Whether the run has ended: nothing resumes it but `mzk run --resume`
    /// of an interrupted one.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            RunStatus::Completed | RunStatus::Failed | RunStatus::Interrupted
        )
    }
}

impl std::fmt::Display for RunStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
