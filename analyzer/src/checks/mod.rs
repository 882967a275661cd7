//! Cross-file checks over the typed bundle, one module per rule family.

mod authority;
mod context_contract;
mod exhaustive;
mod graph;
mod outcome_contract;
mod prompt_budget;
mod prompt_reach;
mod python;
mod references;
mod structured_outputs;
mod task_batches;

pub use prompt_budget::PromptMemos;
pub use references::unreferenced_variables;
pub use structured_outputs::unreferenced_models;

use crate::diagnostics::Diagnostic;
use crate::model::{Bundle, SymbolTable};

/// The routing checks alone (MZ3xx), for benchmarks of the graph analysis.
pub fn graph_findings(bundle: &Bundle) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    graph::check(bundle, &mut out);
    out
}

/// The prompt checks (MZ801–MZ805), whose thresholds are settings: they run when
/// an analysis is given its settings (`analysis::analyze`); public for the
/// benchmarks, which time them alone.
pub fn prompt_findings(
    bundle: &Bundle,
    limits: &crate::prompt::PromptLimits,
    merge_exposure: bool,
    memos: &PromptMemos,
    tokens: &crate::tokens::TokenCounts,
    out: &mut Vec<Diagnostic>,
) {
    prompt_budget::check(bundle, limits, merge_exposure, memos, tokens, out);
}

/// Runs every cross-file check but those that read the prompts.
pub fn run(bundle: &Bundle, symbols: &SymbolTable, out: &mut Vec<Diagnostic>) {
    context_contract::check(bundle, out);
    outcome_contract::check(bundle, out);
    references::check(bundle, symbols, out);
    structured_outputs::check(bundle, symbols, out);
    authority::check(bundle, out);
    task_batches::check(bundle, out);
    python::check(bundle, out);
    graph::check(bundle, out);
}

/// What the prompts say about tools and variables, checked against the
/// model (`prompt_reach`): whatever the settings, beside [`run`] (it reads
/// the lowered model alone).
pub fn prompt_reach_findings(bundle: &Bundle) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    prompt_reach::check(bundle, &mut out);
    out
}
