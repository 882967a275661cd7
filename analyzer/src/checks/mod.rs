//! Cross-file checks over the typed bundle, one module per rule family.

mod context_contract;
mod outcome_contract;

use crate::diagnostics::Diagnostic;
use crate::model::Bundle;

/// Runs every cross-file check.
pub fn run(bundle: &Bundle, out: &mut Vec<Diagnostic>) {
    context_contract::check(bundle, out);
    outcome_contract::check(bundle, out);
}
