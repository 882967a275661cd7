//! What the page can show over the graph, read from what runs leave in the
//! bundle's `.mzk/`: the last `mzk test`'s transition coverage, and a run's
//! path from the run history.

use std::path::Path;

use mzk_analyzer::Analysis;
use mzk_runtime::events::Event;
use mzk_runtime::history::{default_path, History};
use mzk_runtime::suite::Coverage;

use super::{CoverageOverlay, RunOverlay};

/// The saved coverage of the analysed bundle, for the rules it still
/// describes; `None` when no `mzk test` saved one.
pub fn coverage(analysis: &Analysis) -> Option<CoverageOverlay> {
    let coverage = Coverage::load(&analysis.bundle.dir)?;
    let hits = analysis
        .bundle
        .rules
        .iter()
        .filter_map(|rule| {
            coverage
                .entry_for(&analysis.bundle, rule)
                .map(|e| (rule.index, e.hits))
        })
        .collect();
    Some(CoverageOverlay {
        scenarios: coverage.scenarios,
        hits,
    })
}

/// The rules run `id` (or the one run whose id it begins) took, from the
/// bundle's history; an error says what is missing.
pub fn run(bundle_dir: &Path, id: &str) -> Result<RunOverlay, String> {
    let db = default_path(bundle_dir);
    if !db.is_file() {
        return Err(format!(
            "{} has no run history ({}); `mzk run {}` makes one",
            bundle_dir.display(),
            db.display(),
            bundle_dir.display()
        ));
    }
    let history = History::open(&db).map_err(|e| e.to_string())?;
    let summary = history
        .find(id)
        .map_err(|e| e.to_string())?
        .ok_or_else(|| format!("no run `{id}` in {}; `mzk runs` lists them", db.display()))?;
    let events = history.events(&summary.id).map_err(|e| e.to_string())?;
    let rules = events
        .iter()
        .filter_map(|e| match serde_json::from_value::<Event>(e.event.clone()) {
            Ok(Event::Transition {
                rule: Some(rule), ..
            }) => Some(rule),
            _ => None,
        })
        .collect();
    Ok(RunOverlay {
        id: summary.id,
        outcome: format!("{} ({})", summary.status, summary.reason),
        rules,
    })
}
