//! MZ8xx: what agents are told. Static prompt prose repeated across agents
//! (identical or nearly), prose output formats on agents whose output a
//! registry model already enforces, prompts over the token budget, and the
//! context exposure block: variables an agent is shown but never uses, and
//! objects or lists shown in full whatever their size. The composition
//! itself is `crate::prompt`; the thresholds are `PromptLimits`, which the
//! configuration sets, so these checks run when it is applied.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use crate::memo::{self, Memo};

use crate::diagnostics::{Diagnostic, FileId};
use crate::model::python::{BindingOwner, BindingTarget};
use crate::model::{Agent, Bundle, Name, PromptSection, Variable};
use crate::prompt::{compose, PromptLimits};
use crate::rules::Rule;
use crate::syntax::NodeKind;

/// `merge_exposure`: an entry both unused (MZ804) and unbounded (MZ805) is
/// reported once, as MZ804 saying both (removing the entry fixes both).
pub fn check(
    bundle: &Bundle,
    limits: &PromptLimits,
    merge_exposure: bool,
    out: &mut Vec<Diagnostic>,
) {
    duplicated_sections(bundle, limits, out);
    output_format_sections(bundle, out);
    over_budget(bundle, limits, out);
    exposure(bundle, merge_exposure, out);
}

/// The sections that reach the prompt: `prompt_sections`, else the custom ones.
fn sent_sections(agent: &Agent) -> &[PromptSection] {
    if agent.prompt_sections.is_empty() {
        &agent.prompt_sections_custom
    } else {
        &agent.prompt_sections
    }
}

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

/// Jaccard similarity of two sorted, unique lists.
fn similarity(a: &[u64], b: &[u64]) -> f64 {
    let (mut i, mut j, mut shared) = (0, 0, 0usize);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                shared += 1;
                i += 1;
                j += 1;
            }
        }
    }
    let union = a.len() + b.len() - shared;
    if union == 0 {
        1.0
    } else {
        shared as f64 / union as f64
    }
}

struct Candidate<'a> {
    agent: &'a str,
    section: &'a PromptSection,
    runs: Arc<WordRuns>,
}

/// What the comparison needs of one section's text.
struct WordRuns {
    /// Characters once whitespace runs are collapsed to one space.
    chars: usize,
    words: Vec<u64>,
    shingles: Vec<u64>,
}

/// Word runs by section text (see `memo`).
static WORD_RUNS: Memo<WordRuns> = Memo::new(8192);

fn word_runs(text: &str) -> Arc<WordRuns> {
    WORD_RUNS.get_or(memo::key([text]), || {
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

fn duplicated_sections(bundle: &Bundle, limits: &PromptLimits, out: &mut Vec<Diagnostic>) {
    let mut candidates: Vec<Candidate> = Vec::new();
    for agent in &bundle.agents {
        for section in sent_sections(agent) {
            // Collapsing whitespace never lengthens the text.
            if section.content.text.len() < limits.duplicate_min_chars {
                continue;
            }
            let runs = word_runs(&section.content.text);
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
    let mut pairs: HashMap<(usize, usize), (f64, bool)> = HashMap::new();
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
                1.0
            } else {
                similarity(&a.runs.shingles, &b.runs.shingles)
            };
            if identical || (near < 1.0 && score >= near) {
                pairs.insert((i.min(j), i.max(j)), (score, identical));
                let (ri, rj) = (find(&mut parent, i), find(&mut parent, j));
                parent[ri.max(rj)] = ri.min(rj);
            }
        }
    }
    let mut groups: HashMap<usize, Vec<usize>> = HashMap::new();
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

/// Whether a section describes the reply's format, by its id or heading.
fn is_output_format(section: &PromptSection) -> bool {
    let words = |text: &str| -> String {
        text.chars()
            .map(|c| {
                if c.is_alphanumeric() {
                    c.to_ascii_lowercase()
                } else {
                    ' '
                }
            })
            .collect::<String>()
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    let id = section
        .id
        .as_ref()
        .map(|i| words(&i.text))
        .unwrap_or_default();
    let heading = words(&section.heading.text);
    [id.as_str(), heading.as_str()].iter().any(|t| {
        t.contains("output format")
            || t.contains("response format")
            || t.contains("output schema")
            || t.contains("json format")
    })
}

/// Output-format sections shorter than this are reminders ("Respond with
/// ONLY valid JSON"), not worth a finding: they cost a few tokens.
const OUTPUT_FORMAT_MIN_CHARS: usize = 400;

/// What in a section restates the reply's shape: lines of a JSON example or
/// skeleton (`"field": value`), and lines listing fields of the bundle's
/// models one by one (`- field: meaning`, `` `field` (string): ``). Prose
/// about how to choose values (`Set outcome to ready when …`) is neither:
/// the schema cannot say it.
fn shape_lines(content: &str, field_names: &HashSet<&str>) -> (usize, usize) {
    let mut json_keys = 0;
    let mut listed_fields = 0;
    for line in content.lines() {
        let line = line.trim_start();
        if let Some(rest) = line.strip_prefix('"') {
            if let Some((key, after)) = rest.split_once('"') {
                if !key.is_empty() && !key.contains(' ') && after.trim_start().starts_with(':') {
                    json_keys += 1;
                    continue;
                }
            }
        }
        let item = line
            .strip_prefix("- ")
            .or_else(|| line.strip_prefix("* "))
            .unwrap_or(line)
            .trim_start();
        let name_end = item
            .char_indices()
            .find(|(_, c)| !(c.is_alphanumeric() || *c == '_' || *c == '`'))
            .map_or(item.len(), |(i, _)| i);
        let name = item[..name_end].trim_matches('`');
        let after = item[name_end..].trim_start();
        if !name.is_empty()
            && field_names.contains(name)
            && (after.starts_with(':') || after.starts_with('('))
        {
            listed_fields += 1;
        }
    }
    (json_keys, listed_fields)
}

fn output_format_sections(bundle: &Bundle, out: &mut Vec<Diagnostic>) {
    let field_names: HashSet<&str> = bundle
        .models
        .iter()
        .flat_map(|m| m.fields.iter().map(|f| f.name.text.as_str()))
        .collect();
    for agent in &bundle.agents {
        let Some(model) = bundle.registry_model(&agent.name.text) else {
            continue;
        };
        for section in sent_sections(agent).iter().filter(|s| is_output_format(s)) {
            let chars = section.content.text.chars().count();
            if chars < OUTPUT_FORMAT_MIN_CHARS {
                continue;
            }
            let (json_keys, listed_fields) = shape_lines(&section.content.text, &field_names);
            let what = if json_keys >= 2 {
                "a JSON example of the reply"
            } else if listed_fields >= 3 {
                "the model's fields, one by one"
            } else {
                continue;
            };
            out.push(
                Diagnostic::new(
                    Rule::OutputFormatSection,
                    section.heading.file,
                    section.heading.range,
                    format!(
                        "the section `{}` of `{}` restates the reply's shape ({} chars, {what}), which the registry model `{}` already enforces: the provider gets its schema and mozaiks validates every reply, so the copy costs tokens on every call and goes stale when the model changes; keep only what the schema cannot say (how to choose values)",
                        section.heading.text,
                        agent.name.text,
                        grouped(chars),
                        model.text
                    ),
                )
                .with_related(model.file, model.range, "the registry entry"),
            );
        }
    }
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

fn over_budget(bundle: &Bundle, limits: &PromptLimits, out: &mut Vec<Diagnostic>) {
    let budget = limits.max_prompt_tokens;
    for prompt in compose(bundle) {
        let Some(tokens) = crate::tokens::over_budget(&prompt.text, budget) else {
            continue;
        };
        let mut parts: Vec<(usize, &crate::prompt::PromptPart)> = prompt
            .parts
            .iter()
            .map(|p| (crate::tokens::count(&p.text), p))
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

/// What the agent's own prompt and code say, for telling whether a variable
/// in its view is used: the words of its prompt prose, the quoted words of
/// the Python modules of its tools, lifecycle tools and prompt middleware,
/// and the variables its outgoing rules test. Gathered once per agent:
/// views of real bundles list dozens of variables against prompts of tens
/// of kilobytes.
struct AgentUses<'a> {
    prose: Arc<Prose>,
    modules: Vec<&'a HashSet<String>>,
    routed: HashSet<&'a str>,
}

/// Prompt prose, lowercased, searched for variable names.
#[derive(Default)]
struct Prose {
    text: String,
}

/// Prose by the texts it is made of (see `memo`).
static PROSE: Memo<Prose> = Memo::new(1024);

/// Quoted words by Python file text.
static QUOTED: Memo<HashSet<String>> = Memo::new(1024);

impl Prose {
    fn of(texts: &[&str]) -> Arc<Prose> {
        PROSE.get_or(memo::key(texts.iter().copied()), || {
            let mut prose = Prose::default();
            for t in texts {
                prose.add(t);
            }
            prose
        })
    }

    fn add(&mut self, text: &str) {
        // A new text never continues the previous one's words.
        self.text.push('\n');
        self.text.push_str(&text.to_lowercase());
    }

    /// Whether `name` is written as a whole word (letters, digits and `_`
    /// make words), or, for `snake_case`, as its parts separated by single
    /// spaces: "customer plan" for `customer_plan`.
    fn names(&self, name: &str) -> bool {
        let lower = name.to_lowercase();
        let spaced = lower.replace('_', " ");
        std::iter::once(lower.as_str())
            .chain((spaced != lower).then_some(spaced.as_str()))
            .any(|needle| self.has_word(needle))
    }

    fn has_word(&self, needle: &str) -> bool {
        let is_word = |c: char| c.is_alphanumeric() || c == '_';
        let text = self.text.as_str();
        memchr::memmem::find_iter(text.as_bytes(), needle.as_bytes()).any(|at| {
            let before = text[..at].chars().next_back();
            let after = text[at + needle.len()..].chars().next();
            !before.is_some_and(is_word) && !after.is_some_and(is_word)
        })
    }
}

impl<'a> AgentUses<'a> {
    fn of(
        bundle: &'a Bundle,
        agent: &Agent,
        quoted_by_file: &'a HashMap<FileId, Arc<HashSet<String>>>,
    ) -> AgentUses<'a> {
        let name = agent.name.text.as_str();
        let mut texts: Vec<&str> = Vec::new();
        for s in agent
            .prompt_sections
            .iter()
            .chain(&agent.prompt_sections_custom)
        {
            texts.push(&s.heading.text);
            texts.push(&s.content.text);
        }
        if let Some(m) = &agent.system_message {
            texts.push(&m.text);
        }
        let prose = Prose::of(&texts);
        let owns = |owner: BindingOwner| match owner {
            BindingOwner::Tool(i) => bundle.tools[i].agents.iter().any(|a| a.text == name),
            BindingOwner::Middleware(i) => bundle.middleware[i]
                .agent
                .as_ref()
                .is_some_and(|a| a.text == name),
            BindingOwner::Lifecycle(i) => bundle.lifecycle_tools[i]
                .agent
                .as_ref()
                .is_some_and(|a| a.text == name),
        };
        let modules = bundle
            .bindings
            .iter()
            .filter(|b| owns(b.owner))
            .filter_map(|b| match b.target {
                BindingTarget::File(id) => quoted_by_file.get(&id).map(|q| &**q),
                _ => None,
            })
            .collect();
        let routed = bundle
            .rules
            .iter()
            .filter(|r| r.source.text == name)
            .flat_map(|r| r.condition_key.iter().chain(&r.expression_refs))
            .map(|n| n.text.as_str())
            .collect();
        AgentUses {
            prose,
            modules,
            routed,
        }
    }

    fn uses(&self, variable: &str) -> bool {
        self.routed.contains(variable)
            || self.modules.iter().any(|m| m.contains(variable))
            || self.prose.names(variable)
    }
}

/// The words written between matching quotes in Python source
/// (`"customer_plan"`, `'customer_plan'`).
fn quoted_words(text: &str) -> HashSet<&str> {
    let bytes = text.as_bytes();
    let mut out = HashSet::new();
    let mut i = 0;
    while i < bytes.len() {
        let quote = bytes[i];
        i += 1;
        if quote != b'"' && quote != b'\'' {
            continue;
        }
        let start = i;
        let mut j = i;
        while j < bytes.len() && (bytes[j].is_ascii_alphanumeric() || bytes[j] == b'_') {
            j += 1;
        }
        if j > start && bytes.get(j) == Some(&quote) {
            out.insert(&text[start..j]);
            i = j + 1;
        }
    }
    out
}

/// Whether a variable holds an object or a list, by its declared type or,
/// without one, by its default.
fn is_collection(variable: &Variable) -> Option<&'static str> {
    let declared = variable
        .declared_type
        .as_ref()
        .map(|t| t.text.trim().to_ascii_lowercase());
    match declared.as_deref() {
        Some("object" | "dict" | "map") => Some("object"),
        Some("array" | "list") => Some("array"),
        None | Some("" | "any") => match variable.default.as_ref().map(|d| &d.kind) {
            Some(NodeKind::Map(_)) => Some("object"),
            Some(NodeKind::Seq(_)) => Some("array"),
            _ => None,
        },
        _ => None,
    }
}

/// Why a variable's value is only known at run time, if it is: a source
/// that fills it then, or a writer (tool code, tool outcome, task batch, UI
/// answer). `None`: the declared default (or environment value) is all it
/// ever holds, already sized in the prompt.
fn filled_at_run_time(bundle: &Bundle, variable: &Variable) -> Option<String> {
    let name = variable.name.text.as_str();
    let source = variable
        .source_type
        .as_ref()
        .map_or("", |s| s.text.as_str());
    if !matches!(source, "state" | "config") {
        return Some(format!("its source is `{source}`"));
    }
    for binding in &bundle.bindings {
        let BindingTarget::File(id) = binding.target else {
            continue;
        };
        let writes = bundle
            .python
            .iter()
            .find(|p| p.file == id)
            .is_some_and(|p| p.module.context_writes.iter().any(|(k, _)| k == name));
        if writes {
            let function = binding.function.as_ref().map_or("?", |f| f.text.as_str());
            return Some(format!("the Python code of `{function}` writes it"));
        }
    }
    if let Some(tool) = bundle.tools.iter().find(|t| {
        t.outcome.as_ref().is_some_and(|o| {
            o.context_key
                .iter()
                .chain(&o.attempts_key)
                .any(|k| k.text == name)
        })
    }) {
        let function = tool.function.as_ref().map_or("?", |f| f.text.as_str());
        return Some(format!("the outcome of `{function}` writes it"));
    }
    if crate::model::authority::batch_keys(bundle).contains(&name) {
        return Some("a task batch writes its results to it".into());
    }
    if variable
        .triggers
        .iter()
        .any(|t| t.trigger_type.text == "ui_response")
    {
        return Some("a UI answer writes it".into());
    }
    None
}

/// MZ804 and MZ805, on each entry of each agent view.
fn exposure(bundle: &Bundle, merge: bool, out: &mut Vec<Diagnostic>) {
    let quoted_by_file: HashMap<FileId, Arc<HashSet<String>>> = bundle
        .bindings
        .iter()
        .filter_map(|b| match b.target {
            BindingTarget::File(id) => bundle.file(id).map(|f| {
                let words = QUOTED.get_or(memo::key([f.text.as_str()]), || {
                    quoted_words(&f.text)
                        .into_iter()
                        .map(str::to_string)
                        .collect()
                });
                (id, words)
            }),
            _ => None,
        })
        .collect();
    for view in &bundle.agent_views {
        // An unknown agent is MZ2xx's finding.
        let Some(agent) = bundle.agent(&view.agent.text) else {
            continue;
        };
        let uses = AgentUses::of(bundle, agent, &quoted_by_file);
        for entry in &view.variables {
            // An undeclared variable is another rule's finding.
            let Some(variable) = bundle.variable(&entry.text) else {
                continue;
            };
            let unused = !uses.uses(&entry.text);
            let unbounded = is_collection(variable)
                .and_then(|kind| Some((kind, filled_at_run_time(bundle, variable)?)));
            match (unused, unbounded) {
                (true, Some((kind, why))) if merge => {
                    out.push(unused_and_unbounded(entry, agent, kind, &why));
                }
                (unused, unbounded) => {
                    if unused {
                        out.push(unused_view_variable(entry, agent));
                    }
                    if let Some((kind, why)) = unbounded {
                        out.push(unbounded_exposure(entry, agent, kind, &why));
                    }
                }
            }
        }
    }
}

fn unused_view_variable(entry: &Name, agent: &Agent) -> Diagnostic {
    Diagnostic::new(
        Rule::UnusedViewVariable,
        entry.file,
        entry.range,
        format!(
            "`{}` is in the view of `{}`, so every prompt of that agent carries `{}: <value>`, yet nothing of the agent uses it: its prompt never names it, its tools and prompt middleware never mention it, no rule leaving it tests it; remove it from the view, or say in the prompt what the agent should do with it",
            entry.text,
            agent.name.text,
            entry.text.to_uppercase()
        ),
    )
    .with_related(agent.name.file, agent.name.range, "the agent")
}

fn unused_and_unbounded(entry: &Name, agent: &Agent, kind: &str, why: &str) -> Diagnostic {
    Diagnostic::new(
        Rule::UnusedViewVariable,
        entry.file,
        entry.range,
        format!(
            "`{}` ({kind}) is in the view of `{}` and filled at run time ({why}), so every prompt of that agent carries all of it, whatever its size, yet nothing of the agent uses it: its prompt never names it, its tools and prompt middleware never mention it, no rule leaving it tests it; remove it from the view",
            entry.text, agent.name.text
        ),
    )
    .with_related(agent.name.file, agent.name.range, "the agent")
}

fn unbounded_exposure(entry: &Name, agent: &Agent, kind: &str, why: &str) -> Diagnostic {
    Diagnostic::new(
        Rule::UnboundedExposure,
        entry.file,
        entry.range,
        format!(
            "`{}` ({kind}) is filled at run time ({why}) and rendered in full into every prompt of `{}`, whatever its size; nothing in the bundle bounds it — expose a bounded summary instead (a string variable its writer keeps short), or take it out of the view when the agent does not need all of it",
            entry.text, agent.name.text
        ),
    )
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

    #[test]
    fn words_are_matched_whole() {
        let mut prose = Prose::default();
        prose.add("Use the PLAN below; the planner decides.\nThe customer plan, and current_plan.");
        prose.add("report card");
        for present in [
            "plan",
            "planner",
            "customer_plan",
            "the_customer_plan",
            "current_plan",
            "report_card",
        ] {
            assert!(prose.names(present), "{present}");
        }
        // Parts join across a space only, never across punctuation, lines or texts.
        for absent in [
            "below_the",
            "decides_the",
            "pla",
            "plan_and",
            "current_plan_report",
        ] {
            assert!(!prose.names(absent), "{absent}");
        }
        let quoted = quoted_words("ctx.get(\"customer_plan\")\nx = 'a b'\ny = \"mixed'");
        assert!(quoted.contains("customer_plan"));
        assert_eq!(quoted.len(), 1, "{quoted:?}");
    }

    #[test]
    fn sizes_are_grouped_by_thousands() {
        assert_eq!(grouped(7), "7");
        assert_eq!(grouped(8000), "8,000");
        assert_eq!(grouped(1234567), "1,234,567");
    }
}
