//! Transition coverage as inlay hints: after `mzk test`, each rule of
//! transition_graph.yaml shows how often it fired in the bundle's scenarios,
//! read from the bundle's `.mzk/coverage.json`.

use mzk_analyzer::base::FileId;
use mzk_analyzer::syntax::ColumnUnit;
use mzk_analyzer::Analysis;
use mzk_runtime::suite::Coverage;
use tower_lsp_server::ls_types::{InlayHint, InlayHintLabel, InlayHintTooltip, Range};

/// The hints of the rules of `file` whose first line lies in `range`. A rule
/// edited since the coverage was measured (another source, target or
/// condition at its index) gets none.
pub fn hints(
    analysis: &Analysis,
    file: FileId,
    coverage: &Coverage,
    range: Range,
    unit: ColumnUnit,
) -> Vec<InlayHint> {
    let Some(source) = analysis.bundle.file(file) else {
        return Vec::new();
    };
    let text = &source.text;
    let scenarios = match coverage.scenarios {
        1 => "1 scenario".to_string(),
        n => format!("{n} scenarios"),
    };
    analysis
        .bundle
        .rules
        .iter()
        .filter(|rule| rule.file == file)
        .filter_map(|rule| {
            let entry = coverage.entry_for(&analysis.bundle, rule)?;
            // The end of the rule's first line.
            let start = rule.range.start as usize;
            let end = text[start.min(text.len())..]
                .find(['\n', '\r'])
                .map_or(text.len(), |i| start + i);
            let position = source.line_index.position(text, end as u32, unit);
            if position.line < range.start.line || position.line > range.end.line {
                return None;
            }
            let label = match entry.hits {
                0 => format!("never fired in {scenarios}"),
                1 => format!("fired once in {scenarios}"),
                n => format!("fired {n}× in {scenarios}"),
            };
            Some(InlayHint {
                position: tower_lsp_server::ls_types::Position::new(position.line, position.col),
                label: InlayHintLabel::String(label),
                kind: None,
                text_edits: None,
                tooltip: Some(InlayHintTooltip::String(
                    "transition coverage of the last `mzk test` (.mzk/coverage.json)".into(),
                )),
                padding_left: Some(true),
                padding_right: None,
                data: None,
            })
        })
        .collect()
}
