//! MZ804 and MZ805: the context exposure block. Variables an agent is shown
//! but never uses, and objects or lists shown in full whatever their size.

use std::sync::Arc;

use super::PromptMemos;
use crate::base::hash::{HashMap, HashSet};
use crate::base::{memo, FileId};
use crate::diagnostics::Diagnostic;
use crate::model::python::{BindingOwner, BindingTarget};
use crate::model::{Agent, Bundle, Name, Variable};
use crate::rules::Rule;
use crate::syntax::NodeKind;

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

/// Prompt prose, lowercased, searched for variable names, with the answers
/// given: the language server asks the same prose about the same names on
/// every keystroke, and each search reads tens of kilobytes.
#[derive(Default)]
pub(super) struct Prose {
    text: String,
    answers: std::sync::Mutex<HashMap<String, bool>>,
}

impl Prose {
    fn of(memos: &PromptMemos, texts: &[&str]) -> Arc<Prose> {
        memos.prose.get_or(memo::key(texts.iter().copied()), || {
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
        let answers = || self.answers.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(&known) = answers().get(name) {
            return known;
        }
        let found = self.search(name);
        answers().insert(name.to_string(), found);
        found
    }

    fn search(&self, name: &str) -> bool {
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
        memos: &PromptMemos,
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
        let prose = Prose::of(memos, &texts);
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
    let mut out = HashSet::default();
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
pub(super) fn check(bundle: &Bundle, merge: bool, memos: &PromptMemos, out: &mut Vec<Diagnostic>) {
    let quoted_by_file: HashMap<FileId, Arc<HashSet<String>>> = bundle
        .bindings
        .iter()
        .filter_map(|b| match b.target {
            BindingTarget::File(id) => bundle.file(id).map(|f| {
                let words = memos.quoted.get_or(memo::key([f.text.as_ref()]), || {
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
        let uses = AgentUses::of(bundle, agent, memos, &quoted_by_file);
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
}
