//! The reference's tool outcome contract (bundle-format §11.2): an outcome
//! tool's owner, its protected variables and its routes.

use crate::diagnostics::{did_you_mean, one_of, Diagnostic};
use crate::model::{Bundle, ConditionType, Name, TransitionRule, TransitionType};
use crate::rules::Rule;
use crate::syntax::{NodeKind, Value};

pub fn check(bundle: &Bundle, out: &mut Vec<Diagnostic>) {
    let task_agents = task_batch_agents(bundle);
    let mut owned_keys: Vec<&str> = Vec::new();
    for tool in &bundle.tools {
        let Some(outcome) = &tool.outcome else {
            continue;
        };
        let Some(owner) = tool
            .agents
            .first()
            .filter(|_| !tool.agent_is_list && tool.agents.len() == 1)
        else {
            continue; // reported by the per-file outcome rule
        };
        let report = |out: &mut Vec<Diagnostic>, at: &Name, message: String| {
            out.push(Diagnostic::new(
                Rule::OutcomeContract,
                at.file,
                at.range,
                message,
            ));
        };
        if task_agents.contains(&owner.text) {
            report(out, owner, format!(
                "`{}` owns an outcome tool but is also a task-batch agent (the initial agent, a batch trigger or a worker, since task_batches.yaml exists); give the outcome to a separate network agent",
                owner.text
            ));
        }
        if bundle.registry_model(&owner.text).is_none() {
            report(out, owner, format!(
                "outcome owner `{}` needs a structured output model: add `{}: <Model>` to the structured_outputs.yaml registry",
                owner.text, owner.text
            ));
        }
        let auto_tools = bundle
            .tools
            .iter()
            .filter(|t| t.auto_tool_call && t.agents.iter().any(|a| a.text == owner.text))
            .count();
        if auto_tools != 1 {
            report(out, owner, format!(
                "the outcome tool must be `{}`'s only `auto_tool_call: true` tool (found {auto_tools}); make the others LLM-called or move them to another agent",
                owner.text
            ));
        }
        let error_value = outcome.error_value.as_ref().map(|e| e.text.as_str());
        for (key, expected_type, authority) in [
            (
                &outcome.context_key,
                "string",
                "closed_writer_routing_state",
            ),
            (
                &outcome.attempts_key,
                "integer",
                "closed_writer_quality_state",
            ),
        ] {
            let Some(key) = key else { continue };
            if owned_keys.contains(&key.text.as_str()) {
                report(out, key, format!("outcome variable `{}` is already used by another outcome tool; each outcome needs its own variables", key.text));
            }
            owned_keys.push(&key.text);
            let default_text = if expected_type == "string" {
                format!("'{}'", error_value.unwrap_or("<error_value>"))
            } else {
                "0".to_string()
            };
            let requirement = format!(
                "`{}` must be declared as `type: {expected_type}`, `authority_class: {authority}`, `writer_ids: [deterministic_tool]`, `persisted: true`, and `source: {{type: state, default: {default_text}}}` with no triggers",
                key.text
            );
            let Some(var) = bundle.variable(&key.text) else {
                report(
                    out,
                    key,
                    format!(
                        "outcome variable `{}` is not declared; {requirement}",
                        key.text
                    ),
                );
                continue;
            };
            // Each wrong field, with where its value is written when it is.
            let mut problems: Vec<(&str, Option<crate::base::TextRange>)> = Vec::new();
            if var.declared_type.as_ref().map(|t| t.text.as_str()) != Some(expected_type) {
                problems.push(("type", var.declared_type.as_ref().map(|t| t.range)));
            }
            if var.authority_class.as_ref().map(|t| t.text.as_str()) != Some(authority) {
                problems.push((
                    "authority_class",
                    var.authority_class.as_ref().map(|t| t.range),
                ));
            }
            let writers: Option<Vec<&str>> = var
                .writer_ids
                .as_ref()
                .map(|w| w.iter().map(|n| n.text.as_str()).collect());
            if writers.as_deref() != Some(&["deterministic_tool"][..]) {
                let written = var
                    .writer_ids
                    .as_ref()
                    .and_then(|w| Some(w.first()?.range.cover(w.last()?.range)));
                problems.push(("writer_ids", written));
            }
            if var.persisted != Some(true) {
                problems.push(("persisted", None));
            }
            if var.source_type.as_ref().map(|t| t.text.as_str()) != Some("state") {
                problems.push(("source.type", var.source_type.as_ref().map(|t| t.range)));
            }
            if !var.triggers.is_empty() {
                problems.push(("source.triggers", None));
            }
            let default_ok = match var
                .default
                .as_ref()
                .and_then(|n| n.as_scalar())
                .map(|s| &s.value)
            {
                Some(Value::Str(s)) if expected_type == "string" => Some(s.as_str()) == error_value,
                Some(Value::Int(i)) if i.get() == 0 && expected_type == "integer" => true,
                _ => false,
            };
            if !default_ok {
                problems.push(("source.default", var.default.as_ref().map(|d| d.range)));
            }
            if !problems.is_empty() {
                // One wrong field is pointed at; several, at the variable.
                let range = match problems[..] {
                    [(_, Some(range))] => range,
                    _ => var.name.range,
                };
                let fields: Vec<&str> = problems.iter().map(|(field, _)| *field).collect();
                out.push(
                    Diagnostic::new(
                        Rule::OutcomeContract,
                        var.name.file,
                        range,
                        format!(
                            "outcome variable `{}` has the wrong {}: {requirement}",
                            key.text,
                            fields.join(", ")
                        ),
                    )
                    .with_related(
                        key.file,
                        key.range,
                        "used as an outcome variable here",
                    ),
                );
            }
        }
        routes(bundle, owner, outcome, out);
    }
}

fn is_failure_destination(rule: &TransitionRule) -> bool {
    rule.target.text == "user"
        || (rule.target.text == "terminate"
            && rule.termination_reason.as_ref().map(|r| r.text.as_str()) == Some("workflow_failed"))
}

fn routes(
    bundle: &Bundle,
    owner: &Name,
    outcome: &crate::model::Outcome,
    out: &mut Vec<Diagnostic>,
) {
    let Some(context_key) = &outcome.context_key else {
        return;
    };
    let values: Vec<&str> = outcome.values.iter().map(|v| v.text.as_str()).collect();
    let error_value = outcome.error_value.as_ref().map(|e| e.text.as_str());
    let mut seen: Vec<&str> = Vec::new();
    // Outcomes a misspelt condition_value almost certainly meant: the typo
    // is the one root cause, so "no rule routes" is not said again.
    let mut meant: Vec<&str> = Vec::new();
    let mut fallbacks = 0;
    let rule_at = |rule: &TransitionRule, message: String| {
        Diagnostic::new(
            Rule::OutcomeContract,
            rule.file,
            rule.source.range.cover(rule.target.range),
            message,
        )
        .with_related(owner.file, owner.range, "outcome tool owner")
    };
    // A rule whose source is a near miss of the owner (reported by MZ201)
    // is counted as the owner's: one misspelt name, one finding.
    let from_owner = |r: &&TransitionRule| {
        r.source.text == owner.text || bundle.meant_agent(&r.source.text) == Some(&owner.text)
    };
    for rule in bundle.rules.iter().filter(from_owner) {
        if rule.transition_type == TransitionType::AfterTurn {
            fallbacks += 1;
            if !is_failure_destination(rule) {
                out.push(rule_at(rule, format!(
                    "the fallback of outcome owner `{}` must go to `user`, or to `terminate` with `termination_reason: workflow_failed`",
                    owner.text
                )));
            }
            if fallbacks == 2 {
                out.push(rule_at(rule, format!("outcome owner `{}` may have at most one after_turn fallback; remove this one", owner.text)));
            }
            continue;
        }
        let value = match rule.condition_value.as_ref().map(|n| &n.kind) {
            Some(NodeKind::Scalar(s)) => s.value.as_str(),
            _ => None,
        };
        let on_context_key = rule.condition_type == Some(ConditionType::ContextEquals)
            && rule.condition_key.as_ref().map(|k| k.text.as_str())
                == Some(context_key.text.as_str());
        if let (true, Some(written), Some(node)) =
            (on_context_key, value, rule.condition_value.as_ref())
        {
            if !values.contains(&written) {
                let best =
                    did_you_mean(written, values.iter().copied()).filter(|b| !meant.contains(b));
                meant.extend(best);
                let consequence = match best {
                    Some(best) => format!(
                        "so this rule never fires and outcome `{best}` is never routed (did you mean `{best}`?)"
                    ),
                    None => "so this rule never fires; use one of them".to_string(),
                };
                out.push(
                    Diagnostic::new(
                        Rule::OutcomeContract,
                        rule.file,
                        node.range,
                        format!(
                            "`{written}` is not an outcome of `{}`: `{}` only ever holds {}, {consequence}",
                            owner.text,
                            context_key.text,
                            one_of(&values)
                        ),
                    )
                    .with_related(owner.file, owner.range, "outcome tool owner")
                    .with_replacement(written, best),
                );
                continue;
            }
        }
        let valid = on_context_key && value.is_some_and(|v| values.contains(&v));
        let Some(value) = value.filter(|_| valid) else {
            out.push(rule_at(rule, format!(
                "rules from outcome owner `{}` must be `context_equals` on `{}` with a string condition_value from its outcomes ({}), or one after_turn fallback",
                owner.text, context_key.text, values.join(", ")
            )));
            continue;
        };
        if seen.contains(&value) {
            out.push(rule_at(
                rule,
                format!(
                    "outcome `{value}` of `{}` is routed twice (ambiguous route); remove one rule",
                    owner.text
                ),
            ));
        }
        seen.push(value);
        if Some(value) == error_value && !is_failure_destination(rule) {
            out.push(rule_at(rule, format!(
                "the error outcome `{value}` must route to `user`, or to `terminate` with `termination_reason: workflow_failed`"
            )));
        }
    }
    for value in &outcome.values {
        if !seen.contains(&value.text.as_str()) && !meant.contains(&value.text.as_str()) {
            out.push(
                Diagnostic::new(
                    Rule::OutcomeContract,
                    value.file,
                    value.range,
                    format!(
                        "no rule routes outcome `{}` of `{}`: add a `context_equals` rule on `{}` with `condition_value: {}`",
                        value.text, owner.text, context_key.text, value.text
                    ),
                ),
            );
        }
    }
}

/// Agents the reference treats as task-batch agents (only when
/// task_batches.yaml exists): the initial agent, triggers and workers.
fn task_batch_agents(bundle: &Bundle) -> Vec<String> {
    if !bundle.has_task_batches_file {
        return Vec::new();
    }
    let mut agents = vec![bundle
        .orchestrator
        .as_ref()
        .and_then(|o| o.initial_agent.as_ref())
        .map_or(String::new(), |a| a.text.clone())];
    for batch in &bundle.task_batches {
        agents.extend(batch.trigger_agent.iter().map(|a| a.text.clone()));
        if let Some(recovery) = &batch.recovery {
            agents.extend(recovery.trigger_agent.iter().map(|a| a.text.clone()));
        }
        agents.extend(
            batch
                .allowed_execution_agents
                .iter()
                .map(|a| a.text.clone()),
        );
    }
    agents
}
