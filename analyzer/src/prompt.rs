//! What each agent is told: its system prompt as mozaiks 0.2.0 composes it
//! from the bundle's static parts (runtime-semantics §1.5 a and §3.6), with
//! where each part comes from, and what the agent can see, write and call.
//! Prompt middleware rewrites the prompt at run time; it is listed, never
//! guessed. Sizes in tokens come from [`crate::tokens`].

use crate::base::{FileId, TextRange};
use crate::model::python::{BindingOwner, BindingTarget};
use crate::model::{Agent, Bundle, PromptSection};
use crate::syntax::{Node, NodeKind, Value};

/// The thresholds of the prompt checks (MZ801, MZ803), set in the
/// `[context]` table of the configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct PromptLimits {
    /// MZ803: a static prompt over this many tokens is reported.
    pub max_prompt_tokens: usize,
    /// MZ801: shorter sections (whitespace collapsed) may repeat freely.
    pub duplicate_min_chars: usize,
    /// MZ801: two sections at least this similar (the share of their 5-word
    /// runs they have in common, 0 to 1) are copies; 1 means identical only.
    pub near_duplicate_similarity: f64,
}

impl Default for PromptLimits {
    fn default() -> Self {
        PromptLimits {
            max_prompt_tokens: 8000,
            duplicate_min_chars: 400,
            near_duplicate_similarity: 0.8,
        }
    }
}

/// One static part of a prompt, and where it is written.
#[derive(Debug, Clone, PartialEq)]
pub struct PromptPart {
    /// `section <id or heading>`, `system_message` or `context exposure`.
    pub label: String,
    pub file: FileId,
    pub range: TextRange,
    /// The part's text as it appears in the prompt.
    pub text: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct AgentPrompt {
    pub agent: String,
    pub file: FileId,
    pub range: TextRange,
    /// The parts, in prompt order (separators are not parts).
    pub parts: Vec<PromptPart>,
    /// The whole static prompt, as sent before middleware runs.
    pub text: String,
    /// Prompt middleware (`file:function`) that rewrites it before each call.
    pub middleware: Vec<String>,
    /// The context variables in its view (exposed in the prompt).
    pub visible: Vec<String>,
    /// The context variables its tools and triggers write.
    pub writable: Vec<String>,
    /// The tools bound to it (function names).
    pub tools: Vec<String>,
}

impl AgentPrompt {
    /// Markdown: the size of the prompt and of each part, then (with
    /// `with_text`) the prompt itself. Hover and the editor's prompt view
    /// show it. Counts go through `counts`, the analysis' memo.
    pub fn summary_markdown(&self, with_text: bool, counts: &crate::tokens::TokenCounts) -> String {
        let tokens = |text: &str| counts.count(text);
        let mut out = format!(
            "Static prompt: **{} tokens** ({}), {} chars\n\n",
            tokens(&self.text),
            crate::tokens::ENCODING,
            self.text.chars().count()
        );
        for part in &self.parts {
            out.push_str(&format!(
                "- {}: {} tokens, {} chars\n",
                part.label,
                tokens(&part.text),
                part.text.chars().count()
            ));
        }
        if !self.middleware.is_empty() {
            out.push_str(&format!(
                "- dynamic, not sized (prompt middleware): {}\n",
                self.middleware.join(", ")
            ));
        }
        if with_text {
            out.push_str("\n```text\n");
            out.push_str(&self.text.replace("```", "`\u{200b}``"));
            out.push_str("\n```\n");
        }
        out
    }
}

/// The prompt of every agent, in agents.yaml order.
pub fn compose(bundle: &Bundle) -> Vec<AgentPrompt> {
    bundle
        .agents
        .iter()
        .map(|a| compose_one(bundle, a))
        .collect()
}

fn section_label(section: &PromptSection) -> String {
    match &section.id {
        Some(id) => format!("section {}", id.text),
        None => format!("section {}", section.heading.text),
    }
}

/// The prompt of one agent.
pub fn compose_one(bundle: &Bundle, agent: &Agent) -> AgentPrompt {
    let name = agent.name.text.as_str();
    let file = agent.name.file;
    let sections = agent.sent_sections();
    let mut parts: Vec<PromptPart> = if !sections.is_empty() {
        sections
            .iter()
            .map(|s| PromptPart {
                label: section_label(s),
                file: s.heading.file,
                range: s.heading.range.cover(s.content.range),
                text: format!("{}\n{}", s.heading.text, s.content.text),
            })
            .collect()
    } else {
        agent
            .system_message
            .iter()
            .map(|m| PromptPart {
                label: "system_message".into(),
                file: m.file,
                range: m.range,
                text: m.text.clone(),
            })
            .collect()
    };
    let mut text = parts
        .iter()
        .map(|p| p.text.as_str())
        .collect::<Vec<_>>()
        .join("\n\n");
    // §3.6: the view's variables, one `NAME: value` line each, after a blank line.
    let view = bundle.agent_views.iter().find(|v| v.agent.text == name);
    let visible: Vec<String> = view
        .map(|v| v.variables.iter().map(|n| n.text.clone()).collect())
        .unwrap_or_default();
    if let Some(view) = view.filter(|v| !v.variables.is_empty()) {
        let lines: Vec<String> = view
            .variables
            .iter()
            .map(|n| {
                let value = bundle
                    .variable(&n.text)
                    .and_then(|v| v.default.as_ref())
                    .map_or_else(|| "None".to_string(), exposed_value);
                format!("{}: {value}", n.text.to_uppercase())
            })
            .collect();
        let block = lines.join("\n");
        let first = &view.variables[0];
        let last = &view.variables[view.variables.len() - 1];
        parts.push(PromptPart {
            label: "context exposure".into(),
            file: first.file,
            range: first.range.cover(last.range),
            text: block.clone(),
        });
        text = if text.is_empty() {
            block
        } else {
            format!("{text}\n\n{block}")
        };
    }
    let middleware = bundle
        .middleware
        .iter()
        .filter(|m| m.agent.as_ref().is_some_and(|a| a.text == name))
        .map(|m| {
            format!(
                "{}:{}",
                m.filename.as_ref().map_or("?", |f| f.text.as_str()),
                m.function.as_ref().map_or("?", |f| f.text.as_str())
            )
        })
        .collect();
    let owned: Vec<usize> = bundle
        .tools
        .iter()
        .enumerate()
        .filter(|(_, t)| t.agents.iter().any(|a| a.text == name))
        .map(|(i, _)| i)
        .collect();
    let tools = owned
        .iter()
        .filter_map(|&i| bundle.tools[i].function.as_ref().map(|f| f.text.clone()))
        .collect();
    let mut writable: Vec<String> = Vec::new();
    for &i in &owned {
        let tool = &bundle.tools[i];
        if let Some(outcome) = &tool.outcome {
            writable.extend(
                outcome
                    .context_key
                    .iter()
                    .chain(&outcome.attempts_key)
                    .map(|k| k.text.clone()),
            );
        }
        // Writes anywhere in the tool's module: statically the function's
        // own writes cannot be told from its helpers'.
        for binding in bundle
            .bindings
            .iter()
            .filter(|b| b.owner == BindingOwner::Tool(i))
        {
            let BindingTarget::File(id) = binding.target else {
                continue;
            };
            if let Some(py) = bundle.python.iter().find(|p| p.file == id) {
                writable.extend(py.module.context_writes.iter().map(|(k, _)| k.clone()));
            }
        }
    }
    for variable in &bundle.variables {
        let by_agent_text = variable.triggers.iter().any(|t| {
            t.trigger_type.text == "agent_text" && t.agent.as_ref().is_some_and(|a| a.text == name)
        });
        if by_agent_text {
            writable.push(variable.name.text.clone());
        }
    }
    writable.sort();
    writable.dedup();
    AgentPrompt {
        agent: name.to_string(),
        file,
        range: agent.name.range,
        parts,
        text,
        middleware,
        visible,
        writable,
        tools,
    }
}

/// A context value as the exposure block renders it (§3.6): booleans as
/// `true`/`false`, null as `None`, other scalars with Python `str()`,
/// collections as their Python repr.
fn exposed_value(node: &Node) -> String {
    match &node.kind {
        NodeKind::Scalar(s) => match &s.value {
            Value::Bool(b) => b.to_string(),
            Value::Null => "None".into(),
            other => other.python_str(),
        },
        _ => node.python_str(),
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::{analyze_bundle, MemoryFs};

    fn bundle(agents: &str, variables: &str) -> crate::Analysis {
        let mut fs = MemoryFs::new();
        fs.insert(
            "/w/B/orchestrator.yaml",
            "schema_version: mozaiks.orchestrator.v1\nworkflow_name: B\nworkflow_startup_mode: AgentDriven\ninitial_agent: A\n",
        );
        fs.insert("/w/B/agents.yaml", agents);
        fs.insert("/w/B/context_variables.yaml", variables);
        analyze_bundle(&fs, Path::new("/w/B"))
    }

    #[test]
    fn sections_then_the_exposure_block() {
        let analysis = bundle(
            "agents:\n  - name: A\n    structured_outputs_required: false\n    system_message: ignored when sections exist\n    prompt_sections:\n      - {id: role, heading: '[ROLE]', content: '  You triage.  '}\n      - {heading: '[RULES]', content: \"Be brief.\\nNo markdown.\"}\n",
            "definitions:\n  urgent: {type: boolean, source: {type: state, default: false}}\n  plan: {type: string, source: {type: computed, default: null}}\n  tags: {type: array, source: {type: state, default: [a, 1]}}\n  label: {type: string, source: {type: state, default: basic}}\nagents:\n  A: {variables: [urgent, plan, tags, label]}\n",
        );
        let prompts = compose(&analysis.bundle);
        assert_eq!(
            prompts[0].text,
            "[ROLE]\nYou triage.\n\n[RULES]\nBe brief.\nNo markdown.\n\nURGENT: false\nPLAN: None\nTAGS: ['a', 1]\nLABEL: basic"
        );
        let labels: Vec<&str> = prompts[0].parts.iter().map(|p| p.label.as_str()).collect();
        assert_eq!(
            labels,
            ["section role", "section [RULES]", "context exposure"]
        );
        assert_eq!(prompts[0].visible, ["urgent", "plan", "tags", "label"]);
    }

    #[test]
    fn system_message_and_no_view() {
        let analysis = bundle(
            "agents:\n  - name: A\n    structured_outputs_required: false\n    system_message: Say hello.\n    prompt_sections_custom: []\n",
            "definitions: {}\n",
        );
        let prompts = compose(&analysis.bundle);
        assert_eq!(prompts[0].text, "Say hello.");
        assert_eq!(prompts[0].parts.len(), 1);
        assert!(prompts[0].visible.is_empty() && prompts[0].middleware.is_empty());
    }
}
