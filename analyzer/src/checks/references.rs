//! MZ2xx: references that resolve to nothing, reserved names used as
//! definitions, duplicate tool names and unused definitions.

use crate::diagnostics::{did_you_mean, Diagnostic, Fix};
use crate::model::symbols::{RefSite, Reference, Resolution, SymbolKind, SymbolTable};
use crate::model::{Bundle, Name};
use crate::rules::Rule;

pub fn check(bundle: &Bundle, symbols: &SymbolTable, out: &mut Vec<Diagnostic>) {
    for reference in &symbols.references {
        if reference.resolution == Resolution::Unresolved {
            unresolved(symbols, reference, out);
        }
    }
    reserved_agent_names(bundle, out);
    missing_initial_agent(bundle, out);
    tool_called_targets(bundle, symbols, out);
    duplicate_tools(bundle, out);
    transition_targets(bundle, out);
    hidden_messages(bundle, out);
    unused_variables(bundle, symbols, out);
}

/// Declared variables that no YAML reference names, excluding those the
/// runtime owns (identity names, `runtime` and `build_context` sources).
pub fn unreferenced_variables(bundle: &Bundle, symbols: &SymbolTable) -> Vec<String> {
    const RUNTIME_OWNED: &[&str] = &["app_id", "chat_id", "user_id", "workflow_name"];
    symbols
        .definitions
        .iter()
        .enumerate()
        .filter(|(_, d)| d.kind == SymbolKind::Variable)
        .filter(|(i, _)| {
            symbols
                .references_to(crate::model::symbols::DefId(*i as u32))
                .next()
                .is_none()
        })
        .filter_map(|(_, d)| bundle.variable(&d.name.text))
        .filter(|v| !RUNTIME_OWNED.contains(&v.name.text.as_str()))
        .filter(|v| {
            !matches!(
                v.source_type.as_ref().map(|s| s.text.as_str()),
                Some("runtime" | "build_context")
            )
        })
        .map(|v| v.name.text.clone())
        .collect()
}

/// A variable nothing refers to: no YAML reference, and no code, UI or data
/// file of the bundle or of the shared folders beside it mentions its name.
///
/// Journey relay state is used: a `source: state` variable that names
/// `transition_router` among its writers is seeded when a journey step or
/// transition launches the workflow, kept on its chat, and carried on to the
/// next step (mozaiks' `_project_launch_context`), though nothing inside the
/// workflow touches it.
fn unused_variables(bundle: &Bundle, symbols: &SymbolTable, out: &mut Vec<Diagnostic>) {
    for name in unreferenced_variables(bundle, symbols) {
        if bundle.is_mentioned_elsewhere(&name) {
            continue;
        }
        let Some(var) = bundle.variable(&name) else {
            continue;
        };
        let relay = var.source_type.as_ref().is_some_and(|s| s.text == "state")
            && var
                .writer_ids
                .iter()
                .flatten()
                .any(|w| w.text == "transition_router");
        if relay {
            continue;
        }
        out.push(Diagnostic::new(
            Rule::UnusedVariable,
            var.name.file,
            var.name.range,
            format!(
                "context variable `{name}` is never used: no rule, agent view, task batch or tool outcome refers to it, and no code, UI or data file mentions it; expose it to an agent or remove it"
            ),
        ));
    }
}

const LEGACY_USER_ALIASES: &[&str] = &["user_proxy", "userproxy", "userproxyagent"];

/// `transition_target` is checked when the graph compiles (runtime-semantics §2.1).
fn transition_targets(bundle: &Bundle, out: &mut Vec<Diagnostic>) {
    for rule in &bundle.rules {
        let Some(target_kind) = &rule.transition_target else {
            continue;
        };
        let lower = target_kind.text.to_ascii_lowercase();
        if lower == "null" {
            continue; // counts as absent at compile
        }
        let target = rule.target.text.to_ascii_lowercase();
        let message = match lower.as_str() {
            "agenttarget" => None,
            "terminatetarget" if target != "terminate" => Some(format!(
                "`TerminateTarget` requires `target_agent: terminate`, not `{}`; the graph fails to compile at run start",
                rule.target.text
            )),
            "reverttousertarget" if target != "user" => Some(format!(
                "`RevertToUserTarget` requires `target_agent: user`, not `{}`; the graph fails to compile at run start",
                rule.target.text
            )),
            "terminatetarget" | "reverttousertarget" => None,
            _ => Some(format!(
                "`{}` is not a transition_target mozaiks 0.2.0 knows (AgentTarget, TerminateTarget or RevertToUserTarget){}; the graph fails to compile at run start",
                target_kind.text,
                crate::diagnostics::suggestion(&target_kind.text, ["AgentTarget", "TerminateTarget", "RevertToUserTarget"])
            )),
        };
        if let Some(message) = message {
            out.push(Diagnostic::new(
                Rule::TransitionTarget,
                target_kind.file,
                target_kind.range,
                message,
            ));
        }
    }
}

/// A ui_config.yaml without a visual_agents list hides every agent message.
/// An explicit `visual_agents: null` is mozaiks' documented way to hide them
/// on purpose ("Explicit null is an authoring signal to hide all agent
/// text"), so only a missing key or an empty value is reported.
fn hidden_messages(bundle: &Bundle, out: &mut Vec<Diagnostic>) {
    let Some(ui) = &bundle.ui_config else { return };
    if ui.visual_agents.is_some() || ui.explicit_null {
        return;
    }
    out.push(Diagnostic::new(
        Rule::HiddenAgentMessages,
        ui.file,
        ui.key_range.unwrap_or_default(),
        "ui_config.yaml sets no `visual_agents` list, which hides every agent message from the chat; list the agents to show, write `visual_agents: []` to show all, or `visual_agents: null` to hide them on purpose",
    ));
}

fn unresolved(symbols: &SymbolTable, r: &Reference, out: &mut Vec<Diagnostic>) {
    let text = &r.name.text;
    let (rule, consequence) = match (r.kind, r.site) {
        // Reported by the reference's own contract checks (MZ1xx) or by the
        // structured-output and task-batch families.
        (
            SymbolKind::Variable,
            RefSite::ConditionKey | RefSite::ExpressionVariable | RefSite::AgentViewVariable,
        )
        | (
            SymbolKind::Variable,
            RefSite::BatchResultKey
            | RefSite::RecoveryKey
            | RefSite::FailureMessageKey
            | RefSite::OutcomeKey,
        )
        | (SymbolKind::Model, _)
        | (SymbolKind::WriterId, _)
        | (SymbolKind::PythonFunction, _) => return,
        (SymbolKind::Agent, RefSite::RuleSource) => {
            (Rule::UnknownAgent, "this rule can never fire")
        }
        (SymbolKind::Agent, RefSite::RuleTarget) => (
            Rule::UnknownAgent,
            "the graph fails to compile when a run starts",
        ),
        (SymbolKind::Agent, RefSite::InitialAgent) => (
            Rule::UnknownAgent,
            "every run fails at start (initial agent is not registered)",
        ),
        (SymbolKind::Agent, RefSite::ToolAgent) => {
            (Rule::UnknownAgent, "the tool is silently never bound")
        }
        (SymbolKind::Agent, RefSite::LifecycleAgent) => {
            (Rule::UnknownAgent, "the lifecycle tool never runs for it")
        }
        (SymbolKind::Agent, RefSite::MiddlewareAgent) => (
            Rule::UnknownAgent,
            "this middleware never runs (use an agent name or `all`)",
        ),
        (SymbolKind::Agent, RefSite::RegistryAgent) => {
            (Rule::UnknownAgent, "this registry entry is never used")
        }
        (SymbolKind::Agent, RefSite::AgentViewAgent) => {
            (Rule::UnknownAgent, "this view is never shown to anyone")
        }
        (SymbolKind::Agent, RefSite::TriggerAgent) => {
            (Rule::UnknownAgent, "this trigger never fires")
        }
        (SymbolKind::Agent, RefSite::BatchTriggerAgent | RefSite::RecoveryTriggerAgent) => {
            (Rule::UnknownAgent, "the batch never runs")
        }
        (SymbolKind::Agent, RefSite::BatchExecutionAgent) => {
            (Rule::UnknownAgent, "tasks given to it fail")
        }
        (SymbolKind::Agent, RefSite::VisualAgent) => {
            (Rule::UnknownVisualAgent, "the entry matches no agent")
        }
        (SymbolKind::Agent, RefSite::A2aAgent) => (
            Rule::UnknownA2aAgent,
            "mozaiks ignores a2a entries without a matching agent",
        ),
        (SymbolKind::Variable, RefSite::TaskModel) => (
            Rule::UnknownVariable,
            "the task model name stays unresolved",
        ),
        (SymbolKind::Tool, RefSite::ToolCalled) => {
            (Rule::ToolCalledTarget, "the condition can never fire")
        }
        _ => (Rule::UnknownAgent, "the reference resolves to nothing"),
    };
    let candidates: Vec<&Name> = symbols
        .definitions
        .iter()
        .filter(|d| d.kind == r.kind)
        .map(|d| &d.name)
        .collect();
    let best = did_you_mean(text, candidates.iter().map(|n| n.text.as_str()));
    let hint = if r.kind == SymbolKind::Agent
        && LEGACY_USER_ALIASES.contains(&text.to_ascii_lowercase().as_str())
    {
        " (`user` is the only name of the human in 0.2.0)".to_string()
    } else {
        crate::diagnostics::mean_hint(text, best)
    };
    let what = match r.site {
        RefSite::RuleTarget => "an agent, `user` or `terminate`",
        RefSite::RuleSource | RefSite::InitialAgent => "an agent or `user`",
        _ => match r.kind {
            SymbolKind::Agent => "an agent of agents.yaml",
            SymbolKind::Variable => "a declared context variable",
            SymbolKind::Tool => "a tool of tools.yaml",
            other => other.describe(),
        },
    };
    let mut d = Diagnostic::new(
        rule,
        r.name.file,
        r.name.range,
        format!("`{text}` is not {what}{hint}: {consequence}"),
    )
    .with_replacement(text, best);
    if r.kind == SymbolKind::Variable {
        d = d.with_fix(Fix::DeclareVariable {
            name: text.to_string(),
            ty: "string",
            description: "Names the task model the batch validates tasks with.".into(),
        });
    }
    if let Some(best) = best.and_then(|b| candidates.iter().find(|n| n.text == b)) {
        d = d.with_related(
            best.file,
            best.range,
            format!("`{}` is defined here", best.text),
        );
    }
    out.push(d);
}

fn reserved_agent_names(bundle: &Bundle, out: &mut Vec<Diagnostic>) {
    for agent in &bundle.agents {
        let lower = agent.name.text.to_ascii_lowercase();
        if lower == "user" || lower == "terminate" {
            out.push(Diagnostic::new(
                Rule::ReservedAgentName,
                agent.name.file,
                agent.name.range,
                format!(
                    "an agent named `{}` is shadowed by the reserved `{lower}`: rules and the initial agent mean the {} instead; rename the agent",
                    agent.name.text,
                    if lower == "user" { "human user" } else { "end of the run" }
                ),
            ));
        }
    }
}

fn missing_initial_agent(bundle: &Bundle, out: &mut Vec<Diagnostic>) {
    let Some(o) = &bundle.orchestrator else {
        return;
    };
    if o.initial_agent.is_none() && o.workflow_name.is_some() {
        let at = o
            .workflow_name
            .as_ref()
            .map(|n| n.range)
            .unwrap_or_default();
        out.push(Diagnostic::new(
            Rule::MissingInitialAgent,
            o.file,
            at,
            "orchestrator.yaml sets no `initial_agent`: mozaiks 0.2.0 has no first-agent fallback and every run fails at start; add `initial_agent: <AgentName>` (or `user`)",
        ));
    }
}

/// `tool_called` fires only for a tool the rule's source agent can call through
/// the LLM: bound to it, `bind_to_agent: true`, and the agent owns no auto tool.
fn tool_called_targets(bundle: &Bundle, symbols: &SymbolTable, out: &mut Vec<Diagnostic>) {
    for rule in &bundle.rules {
        let Some(tool_name) = &rule.tool_name else {
            continue;
        };
        if symbols.lookup(SymbolKind::Tool, &tool_name.text).is_none() {
            continue; // reported as unresolved
        }
        let source = &rule.source.text;
        let auto_agent = bundle
            .tools
            .iter()
            .any(|t| t.auto_tool_call && t.agents.iter().any(|a| &a.text == source));
        let callable = bundle.tools.iter().any(|t| {
            t.function
                .as_ref()
                .is_some_and(|f| f.text == tool_name.text)
                && t.bind_to_agent
                && t.agents.iter().any(|a| &a.text == source)
        });
        if !callable || auto_agent {
            let why = if auto_agent {
                format!("`{source}` owns an auto tool, so it gets no LLM-callable tools at all")
            } else {
                format!(
                    "`{}` is not bound to `{source}` with `bind_to_agent: true`",
                    tool_name.text
                )
            };
            out.push(Diagnostic::new(
                Rule::ToolCalledTarget,
                tool_name.file,
                tool_name.range,
                format!("{why}, so `{source}` can never call it and this tool_called condition can never fire"),
            ));
        }
    }
}

/// Two tools with the same function bound to one agent: the model sees one name twice.
fn duplicate_tools(bundle: &Bundle, out: &mut Vec<Diagnostic>) {
    for (i, tool) in bundle.tools.iter().enumerate() {
        let Some(function) = &tool.function else {
            continue;
        };
        let earlier = bundle.tools[..i].iter().find(|t| {
            t.function.as_ref().is_some_and(|f| f.text == function.text)
                && t.agents
                    .iter()
                    .any(|a| tool.agents.iter().any(|b| a.text == b.text))
        });
        if let Some(first) = earlier.and_then(|t| t.function.as_ref()) {
            out.push(
                Diagnostic::new(
                    Rule::DuplicateTool,
                    function.file,
                    function.range,
                    format!(
                        "tool `{}` is declared twice for the same agent; the model sees one tool name for two entries — remove or rename one",
                        function.text
                    ),
                )
                .with_related(first.file, first.range, "first declared here"),
            );
        }
    }
}
