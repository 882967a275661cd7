//! MZ8xx: what agents are told. Static prompt prose repeated across agents
//! (identical or nearly, `duplicates`), prose output formats on agents whose
//! output a registry model already enforces (`output_format`), prompts over
//! the token budget (here), and the context exposure block: variables an
//! agent is shown but never uses, and objects or lists shown in full
//! whatever their size (`exposure`). The composition itself is
//! `crate::prompt`; the thresholds are `PromptLimits`, which the
//! configuration sets, so these checks run when an analysis is given its
//! settings.

mod duplicates;
mod exposure;
mod output_format;

use crate::base::hash::HashSet;
use crate::base::memo::Memo;
use crate::diagnostics::Diagnostic;
use crate::model::Bundle;
use crate::prompt::{compose, PromptLimits};
use crate::rules::Rule;
use crate::tokens::TokenCounts;

/// What these checks derive from texts, kept across analyses (the caller's
/// cache owns it): the editor re-runs them on every keystroke, and nearly
/// every prompt and Python file is as it was.
#[derive(Debug)]
pub struct PromptMemos {
    /// Word runs by section text.
    word_runs: Memo<duplicates::WordRuns>,
    /// Prose by the texts it is made of.
    prose: Memo<exposure::Prose>,
    /// Quoted words by Python file text.
    quoted: Memo<HashSet<String>>,
}

impl Default for PromptMemos {
    fn default() -> PromptMemos {
        PromptMemos {
            word_runs: Memo::new(8192),
            prose: Memo::new(1024),
            quoted: Memo::new(1024),
        }
    }
}

/// `merge_exposure`: an entry both unused (MZ804) and unbounded (MZ805) is
/// reported once, as MZ804 saying both (removing the entry fixes both).
pub fn check(
    bundle: &Bundle,
    limits: &PromptLimits,
    merge_exposure: bool,
    memos: &PromptMemos,
    tokens: &TokenCounts,
    out: &mut Vec<Diagnostic>,
) {
    duplicates::check(bundle, limits, memos, out);
    output_format::check(bundle, out);
    over_budget(bundle, limits, tokens, out);
    exposure::check(bundle, merge_exposure, memos, out);
}

/// Thousands separated by commas, as the messages print sizes.
fn grouped(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn over_budget(
    bundle: &Bundle,
    limits: &PromptLimits,
    counts: &TokenCounts,
    out: &mut Vec<Diagnostic>,
) {
    let budget = limits.max_prompt_tokens;
    for prompt in compose(bundle) {
        let Some(tokens) = counts.over_budget(&prompt.text, budget) else {
            continue;
        };
        let mut parts: Vec<(usize, &crate::prompt::PromptPart)> = prompt
            .parts
            .iter()
            .map(|p| (counts.count(&p.text), p))
            .collect();
        parts.sort_by_key(|p| std::cmp::Reverse(p.0));
        // An agent that owns an auto tool gets no LLM-callable tools, and a
        // context variable in its view is rendered into every prompt anyway.
        let auto_tool = bundle
            .tools
            .iter()
            .any(|t| t.auto_tool_call && t.agents.iter().any(|a| a.text == prompt.agent));
        let advice = if auto_tool {
            "it owns an auto tool, so it cannot fetch material through tools: drop what its registry model already enforces (MZ802), move material needed only in some modes into prompt middleware that adds it only then"
        } else {
            "move reference material the agent needs only sometimes into a tool it calls when needed, or into prompt middleware that adds it only then, drop what its registry model already enforces (MZ802)"
        };
        let mut d = Diagnostic::new(
            Rule::PromptOverBudget,
            prompt.file,
            prompt.range,
            format!(
                "the static prompt of `{}` is {} tokens ({} chars), over the budget of {} tokens, and every model call of this agent pays for it; {advice}, or raise `max-prompt-tokens` in the `[context]` settings",
                prompt.agent,
                grouped(tokens),
                grouped(prompt.text.chars().count()),
                grouped(budget)
            ),
        );
        for (tokens, part) in parts.into_iter().take(3) {
            d = d.with_related(
                part.file,
                part.range,
                format!("{}: {} tokens", part.label, grouped(tokens)),
            );
        }
        out.push(d);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_grouped_by_thousands() {
        assert_eq!(grouped(7), "7");
        assert_eq!(grouped(8000), "8,000");
        assert_eq!(grouped(1234567), "1,234,567");
    }
}
