//! MZ806–MZ807: prompts that ask for what the agent cannot have. The static
//! prompt (the sections mozaiks sends, else the system message) names a
//! context variable the agent's view does not expose, or tells the agent to
//! call a tool it is never offered. Matching is deliberately narrow: whole
//! words, variable names with an underscore (in their exposure form
//! `NAME_IN_CAPS` or as declared), tool names only after a calling verb or
//! followed by `(`. Agents with prompt middleware are skipped (it may add
//! anything to the prompt).

use crate::base::hash::HashSet;
use crate::base::TextRange;
use crate::diagnostics::Diagnostic;
use crate::model::{Agent, Bundle, Name};
use crate::rules::Rule;

pub fn check(bundle: &Bundle, out: &mut Vec<Diagnostic>) {
    let shared = Shared::of(bundle);
    for agent in &bundle.agents {
        let parts = sent_parts(agent);
        if parts.is_empty() {
            continue;
        }
        hidden_variables(bundle, &shared, agent, &parts, out);
        uncallable_tools(&shared, bundle, agent, &parts, out);
    }
}

/// The text of every prompt middleware module that runs for the agent.
fn middleware_texts<'b>(bundle: &'b Bundle, agent: &str) -> Option<Vec<&'b str>> {
    use crate::model::python::{BindingOwner, BindingTarget};
    let mut texts = Vec::new();
    for b in &bundle.bindings {
        let BindingOwner::Middleware(i) = b.owner else {
            continue;
        };
        let applies = bundle.middleware[i]
            .agent
            .as_ref()
            .is_some_and(|a| a.text == agent || a.text == "all");
        if !applies {
            continue;
        }
        match b.target {
            BindingTarget::File(id) => texts.push(bundle.file(id)?.text.as_ref()),
            // An import path: its code is not read.
            _ => return None,
        }
    }
    Some(texts)
}

/// The texts mozaiks sends as the agent's prompt (§1.5 a).
fn sent_parts(agent: &Agent) -> Vec<&Name> {
    let sections = agent.sent_sections();
    if sections.is_empty() {
        agent.system_message.iter().collect()
    } else {
        sections
            .iter()
            .flat_map(|s| [&s.heading, &s.content])
            .collect()
    }
}

/// The whole words of `text` (runs of letters, digits and `_`) that hold an
/// `_`, with their offsets: every name these checks look up has one
/// (`by_name`, `by_caps` and `by_function` keep only such names), and
/// finding the underscores first skips the prose between them.
fn underscored_words(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut done = 0;
    memchr::memchr_iter(b'_', text.as_bytes()).filter_map(move |at| {
        if at < done {
            return None;
        }
        let start = text[..at]
            .char_indices()
            .rev()
            .take_while(|&(_, c)| is_word(c))
            .last()
            .map_or(at, |(i, _)| i);
        let end = text[at..]
            .char_indices()
            .find(|&(_, c)| !is_word(c))
            .map_or(text.len(), |(i, _)| at + i);
        done = end;
        Some((start, &text[start..end]))
    })
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Byte offsets of `needle` written as a whole word in `text`.
fn word_at(text: &str, needle: &str) -> Vec<usize> {
    text.match_indices(needle)
        .filter(|(at, _)| {
            let before = text[..*at].chars().next_back();
            let after = text[at + needle.len()..].chars().next();
            !before.is_some_and(is_word) && !after.is_some_and(is_word)
        })
        .map(|(at, _)| at)
        .collect()
}

/// The range of the word in the file when the scalar is written verbatim
/// there, else the whole value.
fn locate(bundle: &Bundle, part: &Name, word: &str) -> TextRange {
    locate_nth(bundle, part, word, 0)
}

/// The `nth` whole-word occurrence of `word` in the file within the value
/// (the same occurrence as in the decoded text when the scalar is written
/// verbatim), else the first, else the whole value.
fn locate_nth(bundle: &Bundle, part: &Name, word: &str, nth: usize) -> TextRange {
    let Some(file) = bundle.file(part.file) else {
        return part.range;
    };
    let (start, end) = (part.range.start as usize, part.range.end as usize);
    let Some(slice) = file.text.get(start..end) else {
        return part.range;
    };
    let found = word_at(slice, word);
    match found.get(nth).or(found.first()) {
        Some(&at) => TextRange::new((start + at) as u32, (start + at + word.len()) as u32),
        None => part.range,
    }
}

/// What every agent's check reads, computed once per bundle.
struct Shared<'b> {
    /// Agent → the variables of its view.
    views: crate::base::hash::HashMap<&'b str, HashSet<&'b str>>,
    /// Lowercased names that are also something else the prompt may be
    /// talking about: a field of a structured output, a model, a tool or its
    /// parameter, an agent.
    other_meaning: HashSet<String>,
    /// Declared variables with an underscore in their name, by name and by
    /// exposure name (`NAME_IN_CAPS`); the first declaration wins.
    by_name: crate::base::hash::HashMap<&'b str, &'b crate::model::Variable>,
    by_caps: crate::base::hash::HashMap<String, &'b crate::model::Variable>,
    /// Agent → the tools it owns (indexes into `tools`).
    owned: crate::base::hash::HashMap<&'b str, Vec<usize>>,
    /// Tool function (with an underscore) → its first tools.yaml entry.
    by_function: crate::base::hash::HashMap<&'b str, usize>,
}

impl<'b> Shared<'b> {
    fn of(bundle: &'b Bundle) -> Shared<'b> {
        let mut views: crate::base::hash::HashMap<&str, HashSet<&str>> =
            crate::base::hash::HashMap::default();
        for v in &bundle.agent_views {
            views
                .entry(v.agent.text.as_str())
                .or_default()
                .extend(v.variables.iter().map(|n| n.text.as_str()));
        }
        let mut other_meaning: HashSet<String> = HashSet::default();
        for m in &bundle.models {
            other_meaning.extend(m.fields.iter().map(|f| f.name.text.to_lowercase()));
            other_meaning.insert(m.name.text.to_lowercase());
        }
        for t in &bundle.tools {
            other_meaning.extend(t.function.iter().map(|f| f.text.to_lowercase()));
        }
        for py in &bundle.python {
            for f in &py.module.functions {
                other_meaning.extend(f.params.iter().map(|p| p.name.to_lowercase()));
            }
        }
        other_meaning.extend(bundle.agents.iter().map(|a| a.name.text.to_lowercase()));
        let mut by_name = crate::base::hash::HashMap::default();
        let mut by_caps = crate::base::hash::HashMap::default();
        for var in bundle
            .variables
            .iter()
            .filter(|v| v.name.text.contains('_'))
        {
            by_name.entry(var.name.text.as_str()).or_insert(var);
            by_caps.entry(var.name.text.to_uppercase()).or_insert(var);
        }
        let mut owned: crate::base::hash::HashMap<&str, Vec<usize>> =
            crate::base::hash::HashMap::default();
        let mut by_function = crate::base::hash::HashMap::default();
        for (i, t) in bundle.tools.iter().enumerate() {
            for a in &t.agents {
                owned.entry(a.text.as_str()).or_default().push(i);
            }
            if let Some(f) = t.function.as_ref().filter(|f| f.text.contains('_')) {
                by_function.entry(f.text.as_str()).or_insert(i);
            }
        }
        Shared {
            views,
            other_meaning,
            by_name,
            by_caps,
            owned,
            by_function,
        }
    }
}

fn hidden_variables(
    bundle: &Bundle,
    shared: &Shared<'_>,
    agent: &Agent,
    parts: &[&Name],
    out: &mut Vec<Diagnostic>,
) {
    let name = agent.name.text.as_str();
    // Prompt middleware may add anything to the prompt: a module that
    // dumps the context, or one that names the variable, may show it.
    let Some(middleware) = middleware_texts(bundle, name) else {
        return;
    };
    if middleware.iter().any(|t| t.contains("snapshot(")) {
        return;
    }
    let empty = HashSet::default();
    let view = shared.views.get(name).unwrap_or(&empty);
    let other_meaning = &shared.other_meaning;
    // Whole words of the prompt, looked up by name: (part, word, offset).
    let mut hits: Vec<(&Name, &str, &crate::model::Variable)> = Vec::new();
    let mut seen: HashSet<&str> = HashSet::default();
    for part in parts {
        let text = part.text.as_str();
        for (at, word) in underscored_words(text) {
            let (var, caps) = match (shared.by_caps.get(word), shared.by_name.get(word)) {
                (Some(v), _) => (*v, true),
                (None, Some(v)) => (*v, false),
                (None, None) => continue,
            };
            let v = var.name.text.as_str();
            if seen.contains(v)
                || view.contains(v)
                || other_meaning.contains(&v.to_lowercase())
                || (!caps && !read_from_context(text, at, word.len()))
            {
                continue;
            }
            seen.insert(v);
            hits.push((part, word, var));
        }
    }
    for (part, needle, var) in hits {
        let v = var.name.text.as_str();
        if middleware.iter().any(|t| !word_at(t, v).is_empty()) {
            continue;
        }
        let exposed_to: Vec<&str> = bundle
            .agent_views
            .iter()
            .filter(|view| view.variables.iter().any(|n| n.text == v))
            .map(|view| view.agent.text.as_str())
            .collect();
        out.push(
            Diagnostic::new(
                Rule::PromptHiddenVariable,
                part.file,
                locate(bundle, part, needle),
                format!(
                    "the prompt of `{name}` names `{needle}`, but context variable `{v}` is not in its view, so the model never sees its value{}; add `{v}` to `agents.{name}.variables` in context_variables.yaml, or reword the prompt",
                    if exposed_to.is_empty() {
                        String::new()
                    } else {
                        format!(
                            " (only {} {} it)",
                            exposed_to
                                .iter()
                                .map(|a| format!("`{a}`"))
                                .collect::<Vec<_>>()
                                .join(", "),
                            if exposed_to.len() == 1 { "sees" } else { "see" }
                        )
                    }
                ),
            )
            .with_related(var.name.file, var.name.range, "declared here"),
        );
    }
}

/// Whether the name at `at` is written as read from the context: after
/// `ContextVariables.` / `context_variables.` / `context.`, or in the same
/// clause as "in (the) context", "from (the) context", "context variable".
fn read_from_context(text: &str, at: usize, len: usize) -> bool {
    let before = text[..at].trim_end_matches('`');
    // Only the end of the text before the name is compared, without ASCII
    // case: the same answer as lowercasing all of it (no other character
    // lowercases to these letters; the Kelvin sign's `k` is not among
    // them), without lowercasing a long prompt once per name in it.
    let receiver = |p: &str| {
        before.len() >= p.len()
            && before.as_bytes()[before.len() - p.len()..].eq_ignore_ascii_case(p.as_bytes())
    };
    if ["contextvariables.", "context_variables.", "context."]
        .iter()
        .any(|p| receiver(p))
    {
        return true;
    }
    let start = before
        .rfind(['.', '!', '?', ';', '\n'])
        .map_or(0, |i| i + 1);
    let end = text[at + len..]
        .find(['.', '!', '?', ';', '\n'])
        .map_or(text.len(), |i| at + len + i);
    let clause = text[start..end].to_lowercase();
    [
        "in context",
        "in the context",
        "from context",
        "from the context",
        "context variable",
        "context key",
        "context value",
        "contextvariables",
    ]
    .iter()
    .any(|phrase| clause.contains(phrase))
}

const CALL_VERBS: &[&str] = &[
    "call", "calls", "calling", "invoke", "invoking", "use", "using", "run", "execute",
];

/// Whether the tool name at `at` is phrased as something to call: a calling
/// verb among the three words before it, or `(` right after it.
fn phrased_as_call(text: &str, at: usize, len: usize) -> bool {
    let before = &text[..at];
    // Within the same sentence, which may wrap onto the next line of a
    // prompt; a list item or a paragraph starts a new one.
    let clause = &before[clause_start(before)..];
    let words: Vec<String> = clause
        .split_whitespace()
        .map(|w| {
            w.trim_matches(|c: char| !c.is_alphanumeric() && c != '\'')
                .to_lowercase()
        })
        .collect();
    // "do not call", "never use", "avoid calling": not an instruction to call.
    if words.iter().any(|w| {
        matches!(
            w.as_str(),
            "not" | "never" | "don't" | "dont" | "avoid" | "without" | "no"
        )
    }) {
        return false;
    }
    let after = text[at + len..].trim_start_matches('`');
    after.starts_with('(')
        || words
            .iter()
            .rev()
            .take(4)
            .any(|w| CALL_VERBS.contains(&w.as_str()))
}

/// Where the sentence ending at the end of `before` starts: after sentence
/// punctuation, or at a line that starts a list item or follows a blank line.
fn clause_start(before: &str) -> usize {
    let bytes = before.as_bytes();
    let mut i = bytes.len();
    while i > 0 {
        i -= 1;
        match bytes[i] {
            b'.' | b'!' | b'?' | b':' | b';' => return i + 1,
            b'\n' => {
                let line = before[i + 1..].trim_start();
                let item = line.starts_with("- ")
                    || line.starts_with("* ")
                    || line.split_once(". ").is_some_and(|(n, _)| {
                        !n.is_empty() && n.bytes().all(|c| c.is_ascii_digit())
                    });
                let paragraph = before[..i]
                    .trim_end_matches([' ', '\t', '\r'])
                    .ends_with('\n');
                if item || paragraph || i == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
    }
    0
}

fn uncallable_tools(
    shared: &Shared<'_>,
    bundle: &Bundle,
    agent: &Agent,
    parts: &[&Name],
    out: &mut Vec<Diagnostic>,
) {
    let name = agent.name.text.as_str();
    let owned: Vec<&crate::model::Tool> = shared
        .owned
        .get(name)
        .map(|ix| ix.iter().map(|&i| &bundle.tools[i]).collect())
        .unwrap_or_default();
    let auto = owned
        .iter()
        .find(|t| t.auto_tool_call)
        .and_then(|t| t.function.as_ref());
    let offered: HashSet<&str> = if auto.is_some() {
        HashSet::default()
    } else {
        owned
            .iter()
            .filter(|t| !t.auto_tool_call)
            .filter_map(|t| t.function.as_ref().map(|f| f.text.as_str()))
            .collect()
    };
    let mut reported: HashSet<&str> = HashSet::default();
    let mut calls: Vec<(&Name, &crate::model::Tool, &str, usize)> = Vec::new();
    for part in parts {
        for (at, word) in underscored_words(&part.text) {
            let Some(&i) = shared.by_function.get(word) else {
                continue;
            };
            if offered.contains(word)
                || reported.contains(word)
                || !phrased_as_call(&part.text, at, word.len())
            {
                continue;
            }
            reported.insert(word);
            let nth = word_at(&part.text, word)
                .iter()
                .position(|&w| w == at)
                .unwrap_or(0);
            calls.push((part, &bundle.tools[i], word, nth));
        }
    }
    for (part, tool, function, nth) in calls {
        let why = match auto {
            Some(auto_fn) => format!(
                "`{name}` owns the auto tool `{}`, so mozaiks offers it no LLM-callable tool at all{}",
                auto_fn.text,
                if auto_fn.text == function {
                    format!("; `{function}` runs by itself on its structured output")
                } else {
                    String::new()
                }
            ),
            None => {
                let owners: Vec<String> = tool.agents.iter().map(|a| format!("`{}`", a.text)).collect();
                if tool.auto_tool_call {
                    format!(
                        "`{function}` is an auto tool of {}, run on that agent's structured output",
                        owners.join(", ")
                    )
                } else {
                    format!("`{function}` is bound to {} only", owners.join(", "))
                }
            }
        };
        out.push(Diagnostic::new(
            Rule::PromptUncallableTool,
            part.file,
            locate_nth(bundle, part, function, nth),
            format!(
                "the prompt of `{name}` tells it to call `{function}`, which it is never offered: {why}; {}",
                if auto.is_some() {
                    "reword the prompt, or give the call to an agent without an auto tool".to_string()
                } else {
                    format!("reword the prompt, or bind `{function}` to `{name}` in tools.yaml")
                }
            ),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_read_from_the_context_are_told_apart() {
        let read = |t: &str, name: &str| read_from_context(t, t.find(name).unwrap(), name.len());
        assert!(read("Use ContextVariables.plan_id here", "plan_id"));
        assert!(read("Use `CONTEXT_VARIABLES.plan_id` here", "plan_id"));
        assert!(read("Ünïcödé first. Then Context.plan_id", "plan_id"));
        assert!(read("The plan_id in the context tells which", "plan_id"));
        assert!(!read("Return the plan_id you chose", "plan_id"));
        // The receiver is the end of what comes before, as it always was.
        assert!(read("subcontext.plan_id", "plan_id"));
        assert!(!read("é.plan_id", "plan_id"));
    }

    #[test]
    fn a_call_wrapped_onto_the_next_line_is_a_call() {
        let t = "9. If it needs a credential, call\n   `record_integration_need`. Then stop.";
        let at = t.find("record_integration_need").unwrap();
        assert!(phrased_as_call(t, at, "record_integration_need".len()));
        // A new list item or paragraph is a new sentence.
        for t in [
            "- call it when ready\n- `record_integration_need` lists needs",
            "Then call it\n\n`record_integration_need` lists needs",
        ] {
            let at = t.find("record_integration_need").unwrap();
            assert!(
                !phrased_as_call(t, at, "record_integration_need".len()),
                "{t}"
            );
        }
    }

    #[test]
    fn calls_are_told_apart_from_mentions() {
        let t = "Call `save_plan` when done.";
        assert!(phrased_as_call(t, t.find("save_plan").unwrap(), 9));
        let t = "Then use the save_plan tool.";
        assert!(phrased_as_call(t, t.find("save_plan").unwrap(), 9));
        let t = "save_plan(plan) stores it.";
        assert!(phrased_as_call(t, 0, 9));
        let t = "The save_plan tool records your answer.";
        assert!(!phrased_as_call(t, t.find("save_plan").unwrap(), 9));
        let t = "Do not call `save_plan` yourself.";
        assert!(!phrased_as_call(t, t.find("save_plan").unwrap(), 9));
        let t = "Never use save_plan here.";
        assert!(!phrased_as_call(t, t.find("save_plan").unwrap(), 9));
        assert_eq!(word_at("a NAME_X b NAME_XY", "NAME_X"), vec![2]);
    }

    #[test]
    fn underscored_words_are_the_whole_words_with_an_underscore() {
        let text = "_a plain __x__ ÉTAT_été, snake_case(x_1) tail_";
        let all: Vec<(usize, &str)> = {
            let mut start = None;
            text.char_indices()
                .chain(std::iter::once((text.len(), ' ')))
                .filter_map(|(i, c)| {
                    if is_word(c) {
                        start.get_or_insert(i);
                        None
                    } else {
                        start.take().map(|s| (s, &text[s..i]))
                    }
                })
                .filter(|(_, w)| w.contains('_'))
                .collect()
        };
        assert_eq!(underscored_words(text).collect::<Vec<_>>(), all);
        assert_eq!(all.len(), 6);
    }
}
