//! `mzk lsp`: the language server. Thin glue over the analyzer: documents
//! are kept in ropes, every change re-analyses the whole bundle off the
//! message loop, diagnostics are published for every file of the bundle, and
//! every editor feature comes from `analyzer::ide`.
//!
//! The modules follow the seams of rust-analyzer's server: `state` (open
//! documents, analyses, the overlay), `from_proto`/`to_proto` (conversions),
//! `dispatch` (the protocol's entry points, guarded against panics),
//! `handlers` (what each message does), `scheduling` (when to analyse),
//! `watch` (the fallback file watcher) and `main_loop` (the entry point).

mod analysis_pool;
mod caps;
mod coverage;
mod dispatch;
mod framing;
mod from_proto;
mod guard;
mod handlers;
mod main_loop;
mod runs;
mod scheduling;
mod state;
mod to_proto;
mod watch;

use std::sync::Arc;

pub use main_loop::{main, serve};
use tokio::sync::Mutex;
use tower_lsp_server::Client;

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

#[derive(Clone)]
pub struct Backend {
    client: Client,
    state: Arc<Mutex<state::State>>,
    /// Whether the process ends when the editor's `processId` is gone: only
    /// for the `mzk lsp` process, never for a server embedded in a test.
    exit_with_parent: bool,
    /// Runs started from the editor.
    runs: Arc<runs::Runs>,
    /// Told whenever an analysis is kept, for requests waiting for one.
    analysed: Arc<tokio::sync::Notify>,
    /// The threads analyses run on.
    analyses: Arc<analysis_pool::AnalysisPool>,
}
