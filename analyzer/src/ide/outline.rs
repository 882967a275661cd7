//! The outline of a file and the code lenses on it.

use crate::analysis::Analysis;
use crate::base::{FileId, TextRange};
use crate::model::symbols::SymbolKind;

/// One entry of a file's outline.
#[derive(Debug, Clone, PartialEq)]
pub struct OutlineItem {
    pub name: String,
    pub kind: SymbolKind,
    pub range: TextRange,
}

/// The symbols defined in a file, in source order.
pub fn document_symbols(analysis: &Analysis, file: FileId) -> Vec<OutlineItem> {
    let mut items: Vec<OutlineItem> = analysis
        .symbols
        .definitions
        .iter()
        .filter(|d| d.name.file == file)
        .map(|d| OutlineItem {
            name: d.name.text.clone(),
            kind: d.kind,
            range: d.name.range,
        })
        .collect();
    items.sort_by_key(|i| i.range.start);
    items
}

/// What a code lens offers to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LensAction {
    RunWorkflow,
    ShowGraph,
    RunFromAgent(String),
    /// The size of the agent's static prompt.
    PromptSize {
        agent: String,
        tokens: usize,
        chars: usize,
    },
}

/// A code lens: an action shown above a range.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lens {
    pub range: TextRange,
    pub action: LensAction,
}

/// "Run workflow" and "Show graph" at the top of orchestrator.yaml, "Run
/// from this agent" on each agent declared in the file, and beside it the
/// size of its static prompt.
pub fn code_lenses(analysis: &Analysis, file: FileId) -> Vec<Lens> {
    let mut lenses = Vec::new();
    let Some(f) = analysis.bundle.file(file) else {
        return lenses;
    };
    if f.kind == Some(crate::base::FileKind::Orchestrator) {
        let top = TextRange::empty(0);
        lenses.push(Lens {
            range: top,
            action: LensAction::RunWorkflow,
        });
        lenses.push(Lens {
            range: top,
            action: LensAction::ShowGraph,
        });
    }
    let mut prompts = Vec::new();
    for d in analysis
        .symbols
        .definitions
        .iter()
        .filter(|d| d.kind == SymbolKind::Agent && d.name.file == file)
    {
        lenses.push(Lens {
            range: d.name.range,
            action: LensAction::RunFromAgent(d.name.text.clone()),
        });
        if prompts.is_empty() {
            prompts = crate::prompt::compose(&analysis.bundle);
        }
        if let Some(p) = prompts.iter().find(|p| p.agent == d.name.text) {
            lenses.push(Lens {
                range: d.name.range,
                action: LensAction::PromptSize {
                    agent: p.agent.clone(),
                    tokens: analysis.memos.tokens.count(&p.text),
                    chars: p.text.chars().count(),
                },
            });
        }
    }
    lenses
}
