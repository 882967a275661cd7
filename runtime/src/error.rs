//! The runtime library's error: one variant per kind of failure a caller may
//! treat differently. Its `Display` is the exact text users see; the CLI and
//! the language server add their own context ("error: ", a notification).

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The run history database failed a query.
    #[error("run history: {0}")]
    Storage(#[from] rusqlite::Error),
    /// The run history's folder cannot be created.
    #[error("run history: cannot create {}: {source}", .path.display())]
    HistoryFolder {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The run history database cannot be opened or set up.
    #[error("run history {}: {source}", .path.display())]
    HistoryOpen {
        path: PathBuf,
        source: rusqlite::Error,
    },
    /// A saved run state that does not read back (another version wrote it).
    #[error("run {run_id}: unreadable state: {source}")]
    UnreadableState {
        run_id: String,
        source: serde_json::Error,
    },
    /// An event or a run state that does not serialize.
    #[error("{0}")]
    Encode(#[from] serde_json::Error),
    /// A scenario or smoke file that cannot be read or does not parse.
    #[error("{}: {message}", .path.display())]
    Scenario { path: PathBuf, message: String },
    /// A file the runner saves (coverage) cannot be written.
    #[error("cannot write {}: {source}", .path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    /// JSON or YAML text a user gives the runner that does not parse.
    #[error("{0}")]
    Parse(String),
    /// The bundle cannot run as written: a transition rule that does not
    /// compile, task dependencies that are unknown or cyclic.
    #[error("{0}")]
    Graph(String),
    /// No run with this id in the run history.
    #[error("no run {run_id} in {}", .history.display())]
    UnknownRun { run_id: String, history: PathBuf },
    /// The run is not in a state that allows the request (a reply to a run
    /// that is not paused, a recovery with nothing to re-run).
    #[error("{0}")]
    RunState(String),
    /// The model backend: incomplete configuration, an endpoint that fails,
    /// an answer that cannot be read.
    #[error("{0}")]
    Model(String),
    /// The Python worker cannot be started, or a lifecycle tool it runs fails.
    #[error("{0}")]
    Worker(String),
    /// A context write the authority policy refuses (the reference's text).
    #[error("{0}")]
    Denied(String),
    /// What Python raises evaluating an expression or a comparison.
    #[error("{0}")]
    Eval(String),
    /// A structured output that does not match its model.
    #[error("{0}")]
    Output(String),
    /// A tool call the run cannot serve (a UI tool with no scripted answer).
    #[error("{0}")]
    Unavailable(String),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
