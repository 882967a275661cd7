//! The reference's tool outcome contract (bundle-format §11.2): an outcome
//! tool's owner, its protected variables and its routes.

use crate::diagnostics::{did_you_mean, one_of, Diagnostic};
use crate::model::{Bundle, ConditionType, Name, TransitionRule, TransitionType};
use crate::rules::Rule;
use crate::syntax::{NodeKind, Value};

/// The owner of an outcome tool, when the tool names exactly one agent.
fn owner_of(tool: &crate::model::Tool) -> Option<&Name> {
    tool.agents
        .first()
        .filter(|_| !tool.agent_is_list && tool.agents.len() == 1)
}

/// Whether `rule` is one of `owner`'s: its source is the owner, or a near
/// miss of it (reported by MZ201) — one misspelt name, one finding.
fn from_owner(bundle: &Bundle, owner: &Name, rule: &TransitionRule) -> bool {
    rule.source.text == owner.text || bundle.meant_agent(&rule.source.text) == Some(&owner.text)
}

/// The string value of a rule's `context_equals` on `key`, if it is one.
fn equals_on<'r>(rule: &'r TransitionRule, key: &str) -> Option<&'r str> {
    let on_key = rule.condition_type == Some(ConditionType::ContextEquals)
        && rule.condition_key.as_ref().map(|k| k.text.as_str()) == Some(key);
    match rule.condition_value.as_ref().map(|n| &n.kind) {
        Some(NodeKind::Scalar(s)) if on_key => s.value.as_str(),
        _ => None,
    }
}

/// The owner's rules that test its outcome key with a value that is no
/// outcome, each with the outcome it almost certainly meant: a near miss
/// of an outcome no rule of the owner routes, and not meant by an earlier
/// typo. One decision for MZ123 (which reports the typo and offers the
/// value as its fix) and MZ302 (which counts the rule as routing it).
fn outcome_typos<'b>(
    bundle: &'b Bundle,
    owner: &Name,
    outcome: &'b crate::model::Outcome,
) -> Vec<(usize, Option<&'b str>)> {
    let Some(key) = &outcome.context_key else {
        return Vec::new();
    };
    let values: Vec<&str> = outcome.values.iter().map(|v| v.text.as_str()).collect();
    let rules: Vec<&TransitionRule> = bundle
        .rules
        .iter()
        .filter(|r| from_owner(bundle, owner, r))
        .collect();
    let mut taken: Vec<&str> = rules
        .iter()
        .filter_map(|r| equals_on(r, &key.text))
        .filter(|v| values.contains(v))
        .collect();
    let mut typos = Vec::new();
    for rule in rules {
        let Some(written) = equals_on(rule, &key.text).filter(|v| !values.contains(v)) else {
            continue;
        };
        let open: Vec<&str> = values
            .iter()
            .copied()
            .filter(|v| !taken.contains(v))
            .collect();
        let meant = did_you_mean(written, open.iter().copied());
        taken.extend(meant);
        typos.push((rule.index, meant));
    }
    typos
}

/// The outcome a misspelt `condition_value` of an outcome owner's rule
/// almost certainly meant (see [`outcome_typos`]); `None` for any other
/// rule, a correct value, or no single unrouted outcome close to it.
pub(crate) fn meant_outcome<'b>(bundle: &'b Bundle, rule: &TransitionRule) -> Option<&'b str> {
    bundle.tools.iter().find_map(|tool| {
        let outcome = tool.outcome.as_ref()?;
        let owner = owner_of(tool)?;
        if !from_owner(bundle, owner, rule) {
            return None;
        }
        outcome_typos(bundle, owner, outcome)
            .into_iter()
            .find(|(index, _)| *index == rule.index)
            .and_then(|(_, meant)| meant)
    })
}

pub fn check(bundle: &Bundle, out: &mut Vec<Diagnostic>) {
    let task_agents = task_batch_agents(bundle);
    let mut owned_keys: Vec<&str> = Vec::new();
    for tool in &bundle.tools {
        let Some(outcome) = &tool.outcome else {
            continue;
        };
        let Some(owner) = owner_of(tool) else {
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
    // Misspelt values and the outcomes they meant: the typo is the one root
    // cause, so "no rule routes" is not said again for what it meant.
    let typos = outcome_typos(bundle, owner, outcome);
    let meant: Vec<&str> = typos.iter().filter_map(|(_, m)| *m).collect();
    let all_routed = values.iter().all(|v| {
        bundle
            .rules
            .iter()
            .filter(|r| from_owner(bundle, owner, r))
            .any(|r| equals_on(r, &context_key.text) == Some(v))
    });
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
    for rule in bundle.rules.iter().filter(|r| from_owner(bundle, owner, r)) {
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
        if let (Some(&(_, best)), Some(written), Some(node)) = (
            typos.iter().find(|(index, _)| *index == rule.index),
            value,
            rule.condition_value.as_ref(),
        ) {
            let consequence = match best {
                Some(best) => format!(
                    "so this rule never fires and outcome `{best}` is never routed (did you mean `{best}`?)"
                ),
                // Each outcome has its rule already: this one only adds a
                // duplicate route once "corrected".
                None if all_routed => {
                    "so this rule never fires; every outcome already has its rule, so remove this one".to_string()
                }
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
