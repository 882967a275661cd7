//! MZ801: static prompt prose repeated across agents, identical or nearly
//! (runs of words shared between sections).

use std::sync::Arc;

use super::PromptMemos;
use crate::base::hash::HashMap;
use crate::base::memo;
use crate::diagnostics::Diagnostic;
use crate::model::{Bundle, PromptSection};
use crate::prompt::PromptLimits;
use crate::rules::Rule;

/// A word as compared: FNV-1a over its ASCII-lowercased bytes (ASCII case
/// does not count; words are split on ASCII whitespace, so runs of
/// whitespace do not count either). Hashes, not strings: the check runs on
/// every keystroke in the editor, over every section.
fn word_hashes(text: &str) -> Vec<u64> {
    text.split_ascii_whitespace()
        .map(|word| {
            word.bytes().fold(0xcbf2_9ce4_8422_2325, |h: u64, b| {
                (h ^ b.to_ascii_lowercase() as u64).wrapping_mul(0x0100_0000_01b3)
            })
        })
        .collect()
}

/// Whether two texts have the same words, ASCII case aside.
fn same_words(a: &str, b: &str) -> bool {
    let (mut a, mut b) = (a.split_ascii_whitespace(), b.split_ascii_whitespace());
    loop {
        match (a.next(), b.next()) {
            (None, None) => return true,
            (Some(x), Some(y)) if x.eq_ignore_ascii_case(y) => {}
            _ => return false,
        }
    }
}

/// Runs of this many words are what near-identical sections share.
const SHINGLE_WORDS: usize = 5;

/// The hashes of every run of `SHINGLE_WORDS` words, sorted and unique.
fn shingles(words: &[u64]) -> Vec<u64> {
    let mut out: Vec<u64> = words
        .windows(SHINGLE_WORDS.min(words.len()).max(1))
        .map(|run| {
            run.iter().fold(0x9e37_79b9_7f4a_7c15, |h: u64, w| {
                (h.rotate_left(5) ^ w).wrapping_mul(0x0100_0000_01b3)
            })
        })
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// Jaccard similarity of two sorted, unique lists that share `shared` items.
fn jaccard(a: &[u64], b: &[u64], shared: usize) -> f64 {
    let union = a.len() + b.len() - shared;
    if union == 0 {
        1.0
    } else {
        shared as f64 / union as f64
    }
}

/// Jaccard similarity of two sorted, unique lists.
#[cfg(test)]
fn similarity(a: &[u64], b: &[u64]) -> f64 {
    similar_at_least(a, b, 0.0).unwrap_or(0.0)
}

/// The Jaccard similarity of two sorted, unique lists when it is at least
/// `least`. The merge stops as soon as the items left cannot lift the
/// shared count to the fewest the threshold needs: nearly every pair of
/// sections is far apart, and the check runs on every keystroke.
fn similar_at_least(a: &[u64], b: &[u64], least: f64) -> Option<f64> {
    // The similarity grows with the shared count: the fewest shared items
    // that reach `least`, by the very formula the score is given by.
    let most = a.len().min(b.len());
    let (mut needed, mut above) = (0, most + 1);
    while needed < above {
        let mid = (needed + above) / 2;
        if jaccard(a, b, mid) < least {
            needed = mid + 1;
        } else {
            above = mid;
        }
    }
    if needed > most {
        return None;
    }
    let (mut i, mut j, mut shared) = (0, 0, 0usize);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                shared += 1;
                i += 1;
                j += 1;
                continue;
            }
        }
        if shared + (a.len() - i).min(b.len() - j) < needed {
            return None;
        }
    }
    (shared >= needed).then(|| jaccard(a, b, shared))
}

struct Candidate<'a> {
    agent: &'a str,
    section: &'a PromptSection,
    runs: Arc<WordRuns>,
}

/// What the comparison needs of one section's text.
pub(super) struct WordRuns {
    /// Characters once whitespace runs are collapsed to one space.
    chars: usize,
    words: Vec<u64>,
    shingles: Vec<u64>,
}

fn word_runs(memos: &PromptMemos, text: &str) -> Arc<WordRuns> {
    memos.word_runs.get_or(memo::key([text]), || {
        let spaces = text.split_ascii_whitespace().count().saturating_sub(1);
        let chars = text.chars().filter(|c| !c.is_ascii_whitespace()).count() + spaces;
        let words = word_hashes(text);
        WordRuns {
            chars,
            shingles: shingles(&words),
            words,
        }
    })
}

/// Finds each disjoint set's representative (path halving).
fn find(parent: &mut [usize], mut i: usize) -> usize {
    while parent[i] != i {
        parent[i] = parent[parent[i]];
        i = parent[i];
    }
    i
}

pub(super) fn check(
    bundle: &Bundle,
    limits: &PromptLimits,
    memos: &PromptMemos,
    out: &mut Vec<Diagnostic>,
) {
    let mut candidates: Vec<Candidate> = Vec::new();
    for agent in &bundle.agents {
        for section in agent.sent_sections() {
            // Collapsing whitespace never lengthens the text.
            if section.content.text.len() < limits.duplicate_min_chars {
                continue;
            }
            let runs = word_runs(memos, &section.content.text);
            if runs.chars >= limits.duplicate_min_chars {
                candidates.push(Candidate {
                    agent: &agent.name.text,
                    section,
                    runs,
                });
            }
        }
    }
    // Pairs of sections of different agents that are copies, with their
    // similarity (1 and identical for the same words). Jaccard similarity
    // t needs the smaller set to hold at least t of the larger, so with
    // candidates ordered by size each one meets only its size neighbours.
    let near = limits.near_duplicate_similarity;
    let mut order: Vec<usize> = (0..candidates.len()).collect();
    order.sort_by_key(|&i| candidates[i].runs.shingles.len());
    let mut pairs: HashMap<(usize, usize), (f64, bool)> = HashMap::default();
    let mut parent: Vec<usize> = (0..candidates.len()).collect();
    for (k, &i) in order.iter().enumerate() {
        for &j in &order[k + 1..] {
            let (a, b) = (&candidates[i], &candidates[j]);
            if near >= 1.0 && a.runs.shingles.len() != b.runs.shingles.len() {
                break;
            }
            if (a.runs.shingles.len() as f64) < near.min(1.0) * b.runs.shingles.len() as f64 {
                break;
            }
            if a.agent == b.agent {
                continue;
            }
            let identical = a.runs.words == b.runs.words
                && same_words(&a.section.content.text, &b.section.content.text);
            let score = if identical {
                Some(1.0)
            } else if near < 1.0 {
                similar_at_least(&a.runs.shingles, &b.runs.shingles, near)
            } else {
                None
            };
            if let Some(score) = score {
                pairs.insert((i.min(j), i.max(j)), (score, identical));
                let (ri, rj) = (find(&mut parent, i), find(&mut parent, j));
                parent[ri.max(rj)] = ri.min(rj);
            }
        }
    }
    let mut groups: HashMap<usize, Vec<usize>> = HashMap::default();
    for i in 0..candidates.len() {
        let root = find(&mut parent, i);
        groups.entry(root).or_default().push(i);
    }
    let mut groups: Vec<Vec<usize>> = groups.into_values().filter(|g| g.len() > 1).collect();
    groups.sort();
    for group in groups {
        // Candidates are in agents.yaml order: the first copy is the original.
        for &member in &group[1..] {
            // Named against its closest copy, the earlier one on a tie.
            let Some((&other, &(score, identical))) = group
                .iter()
                .filter(|&&o| o != member)
                .filter_map(|o| pairs.get(&(member.min(*o), member.max(*o))).map(|p| (o, p)))
                .max_by(|(oa, a), (ob, b)| a.0.total_cmp(&b.0).then(ob.cmp(oa)))
            else {
                continue;
            };
            let (this, that) = (&candidates[member], &candidates[other]);
            let extra = group.len() - 2;
            let more = match extra {
                0 => String::new(),
                1 => " and 1 more copy".into(),
                n => format!(" and {n} more copies"),
            };
            let verb = if identical {
                format!(
                    "repeats ({} chars)",
                    this.section.content.text.chars().count()
                )
            } else {
                format!(
                    "nearly repeats ({} chars, {:.0}% of their 5-word runs shared)",
                    this.section.content.text.chars().count(),
                    (score * 100.0).floor()
                )
            };
            let mut d = Diagnostic::new(
                Rule::DuplicatedPromptSection,
                this.section.heading.file,
                this.section.heading.range,
                format!(
                    "the section `{}` of `{}` {verb} the section `{}` of `{}`{more}; copies drift apart when one of them is edited and the others are not — keep one source: a YAML anchor on the first copy and aliases in the others (`&name` / `*name`), or prompt middleware that adds the text to the agents that need it",
                    this.section.heading.text, this.agent, that.section.heading.text, that.agent
                ),
            );
            for &o in group.iter().filter(|&&o| o != member) {
                let copy = &candidates[o];
                let how = if copy.runs.words == this.runs.words
                    && same_words(&copy.section.content.text, &this.section.content.text)
                {
                    "the same text"
                } else {
                    "a similar text"
                };
                d = d.with_related(
                    copy.section.heading.file,
                    copy.section.heading.range,
                    format!("{how} in `{}`", copy.agent),
                );
            }
            out.push(d);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn similarity_of_word_runs() {
        let a = shingles(&word_hashes("one two three four five six seven eight"));
        let b = shingles(&word_hashes("ONE two  three four five six seven nine"));
        assert_eq!(a.len(), 4);
        // Three of the four runs are shared: 3 / (4 + 4 - 3).
        assert!((similarity(&a, &b) - 0.6).abs() < 1e-9);
        assert_eq!(similarity(&a, &a), 1.0);
        // Fewer words than a run: one run of all of them.
        assert_eq!(shingles(&word_hashes("just two")).len(), 1);
        assert!(same_words(
            "Refunds  are\n GRANTED.",
            "refunds are granted."
        ));
        assert!(!same_words(
            "refunds are granted",
            "refunds are granted now"
        ));
        assert!(!same_words("Ünïcode", "üNÏcode")); // only ASCII case is folded
    }

    /// The merge that stops early answers as the full merge does, at every
    /// threshold, on lists that share much, little or nothing.
    #[test]
    fn a_threshold_gives_the_full_similarity_or_nothing() {
        let mut next = crate::base::seeded::xorshift(0x2545_f491_4f6c_dd1d);
        for _ in 0..300 {
            let universe = 1 + next() % 60;
            let (keep_a, keep_b) = (next() % 101, next() % 101);
            let a: Vec<u64> = (0..universe).filter(|_| next() % 100 < keep_a).collect();
            let b: Vec<u64> = (0..universe).filter(|_| next() % 100 < keep_b).collect();
            let full = {
                let shared = a.iter().filter(|x| b.contains(x)).count();
                jaccard(&a, &b, shared)
            };
            for least in [0.0, 0.1, 0.5, 0.8, 0.95, 1.0, full] {
                let expected = (full >= least).then_some(full);
                assert_eq!(
                    similar_at_least(&a, &b, least),
                    expected,
                    "{a:?} {b:?} {least}"
                );
            }
        }
    }
}
