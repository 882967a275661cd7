//! MZ3xx: routing, proved from the transition graph with mozaiks 0.2.0's
//! evaluation order (condition rules before after_turn fallbacks, first match,
//! source-scoped; user replies consult only rules whose source is `user`).

use petgraph::graph::NodeIndex;

use crate::diagnostics::{Diagnostic, Fix};
use crate::graph::{Node, TransitionGraph};
use crate::model::domains::BATCH_STATUSES;
use crate::model::{Bundle, ConditionType, TransitionRule, TransitionType};
use crate::rules::Rule;
use crate::syntax::Value;

pub fn check(bundle: &Bundle, out: &mut Vec<Diagnostic>) {
    shadowed(bundle, out);
    impossible_values(bundle, out);
    let graph = TransitionGraph::build_as_meant(bundle);
    let Some(entry) = graph.entry else { return }; // MZ208 / MZ201
    let entry_name = graph.graph[entry].label().to_string();
    let parents = graph.paths_from(entry);
    let exits = graph.can_reach(&[
        graph.index(&Node::Terminate).expect("terminate node"),
        graph.index(&Node::User).expect("user node"),
    ]);
    {
        // MZ307-MZ309 over value domains; the sources the single-variable
        // proof below judges keep its finding (MZ302).
        let reachable: crate::base::hash::HashSet<String> = parents
            .keys()
            .map(|n| graph.graph[*n].label().to_string())
            .collect();
        let skip: crate::base::hash::HashSet<String> = reachable
            .iter()
            .filter(|label| {
                graph
                    .index(&Node::Agent((*label).clone()))
                    .is_some_and(|n| {
                        let rules = graph.rules_from(bundle, n);
                        single_variable_proof(bundle, &rules)
                    })
            })
            .cloned()
            .collect();
        super::exhaustive::check(bundle, &reachable, &skip, out);
    }
    let with_path = |d: Diagnostic, node: NodeIndex| -> Diagnostic {
        graph.witness(&parents, node).into_iter().fold(d, |d, i| {
            let r = &bundle.rules[i];
            d.with_related(
                r.file,
                r.source.range.cover(r.target.range),
                format!("{} -> {}", r.source.text, r.target.text),
            )
        })
    };
    for agent in &bundle.agents {
        let Some(node) = graph.index(&Node::Agent(agent.name.text.clone())) else {
            continue;
        };
        if graph.outside.contains(&node) {
            continue; // runs as a task-batch agent, outside the graph
        }
        if !parents.contains_key(&node) {
            // A second entry, reached through an initial-agent override (a
            // smoke lane, a resume point): it has its own way out, its own
            // registry model and its own tools. Nothing about it looks left over.
            let second_entry = exits.contains(&node)
                && bundle.registry_model(&agent.name.text).is_some()
                && bundle
                    .tools
                    .iter()
                    .any(|t| t.agents.iter().any(|a| a.text == agent.name.text));
            if second_entry {
                continue;
            }
            out.push(Diagnostic::new(
                Rule::UnreachableAgent,
                agent.name.file,
                agent.name.range,
                format!(
                    "agent `{}` is never reached from the entry `{entry_name}`: no chain of rules leads to it (it can only run through an initial-agent override); add a rule that targets it or remove it",
                    agent.name.text
                ),
            ));
            continue;
        }
        let rules = graph.rules_from(bundle, node);
        if rules.is_empty() {
            out.push(with_path(
                Diagnostic::new(
                    Rule::NoTransitionMatched,
                    agent.name.file,
                    agent.name.range,
                    format!(
                        "agent `{}` has no outgoing rule: after its first turn the run fails with no_transition_matched; add a rule (an after_turn fallback at least)",
                        agent.name.text
                    ),
                )
                .with_fix(Fix::AddFallback {
                    source: agent.name.text.clone(),
                }),
                node,
            ));
            continue;
        }
        if let Some(d) = uncovered(bundle, &agent.name.text, &rules) {
            out.push(with_path(d, node));
        }
        if !exits.contains(&node) {
            out.push(with_path(
                Diagnostic::new(
                    Rule::RoutingTrap,
                    agent.name.file,
                    agent.name.range,
                    format!(
                        "no rule path leads from `{}` to `terminate` or `user`: once reached, the run loops until max_turns and fails; add an exit rule",
                        agent.name.text
                    ),
                ),
                node,
            ));
        }
    }
    if let Some(user) = graph.index(&Node::User) {
        let user_rules = graph.rules_from(bundle, user);
        if parents.contains_key(&user) && user_rules.is_empty() {
            if let Some(pause) = bundle
                .rules
                .iter()
                .find(|r| r.target.text.eq_ignore_ascii_case("user"))
            {
                out.push(Diagnostic::new(
                    Rule::PauseWithoutUserRule,
                    pause.file,
                    pause.target.range,
                    "this rule pauses for the user, but no rule has `source_agent: user`: the user's reply matches nothing and the run fails with no_transition_matched; add a rule from `user`",
                ));
            }
        }
    }
    if let Some(terminate) = graph.index(&Node::Terminate) {
        if !parents.contains_key(&terminate) {
            if let Some(initial) = bundle
                .orchestrator
                .as_ref()
                .and_then(|o| o.initial_agent.as_ref())
            {
                out.push(Diagnostic::new(
                    Rule::TerminateUnreachable,
                    initial.file,
                    initial.range,
                    format!(
                        "no chain of rules from the entry `{entry_name}` reaches `terminate`: no run can complete; it can only pause or fail (no_transition_matched, max_turns)"
                    ),
                ));
            }
        }
    }
}

/// Rules that can never fire: a second after_turn of a source (the first
/// always matches), or a condition identical to an earlier one.
fn shadowed(bundle: &Bundle, out: &mut Vec<Diagnostic>) {
    use crate::model::TransitionType as T;
    for &(dead, first) in bundle.shadowed_rules() {
        let (rule, earlier) = (&bundle.rules[dead], &bundle.rules[first]);
        let why = if rule.transition_type == T::AfterTurn {
            "an earlier after_turn fallback from the same source always matches first"
        } else {
            "an earlier rule from the same source tests the same condition and wins"
        };
        out.push(
            Diagnostic::new(
                Rule::ShadowedRule,
                rule.file,
                rule.source.range.cover(rule.target.range),
                format!(
                    "rule `{} -> {}` can never fire: {why}; remove it or change its condition",
                    rule.source.text, rule.target.text
                ),
            )
            .with_related(
                earlier.file,
                earlier.source.range.cover(earlier.target.range),
                "this rule matches first",
            ),
        );
    }
}

/// The values a variable can hold, when they are a known finite set: the
/// outcome values of an outcome key, true/false for a boolean, and for a task
/// batch status key the statuses the batch writes plus the declared default.
fn domain(bundle: &Bundle, key: &str) -> Option<Vec<Value>> {
    for tool in &bundle.tools {
        if let Some(outcome) = &tool.outcome {
            if outcome.context_key.as_ref().is_some_and(|k| k.text == key) {
                return Some(
                    outcome
                        .values
                        .iter()
                        .map(|v| Value::Str(v.text.clone()))
                        .collect(),
                );
            }
        }
    }
    if is_batch_status(bundle, key) {
        let mut values: Vec<Value> = BATCH_STATUSES
            .iter()
            .map(|s| Value::Str((*s).to_string()))
            .collect();
        let default = bundle
            .variable(key)
            .and_then(|v| v.default.as_ref())
            .and_then(|d| d.as_scalar());
        if let Some(d) = default {
            if !values.contains(&d.value) {
                values.push(d.value.clone());
            }
        }
        return Some(values);
    }
    let ty = bundle
        .variable(key)?
        .declared_type
        .as_ref()?
        .text
        .to_ascii_lowercase();
    matches!(ty.as_str(), "boolean" | "bool").then(|| vec![Value::Bool(true), Value::Bool(false)])
}

fn is_batch_status(bundle: &Bundle, key: &str) -> bool {
    bundle
        .task_batches
        .iter()
        .any(|b| b.result_status_key.as_ref().is_some_and(|k| k.text == key))
}

/// A `context_equals` on a task batch status key with a value the batch never
/// writes (and that is not the default) can never fire. Outcome keys and
/// booleans have their own checks (MZ123, MZ401).
fn impossible_values(bundle: &Bundle, out: &mut Vec<Diagnostic>) {
    for rule in &bundle.rules {
        let (Some(ConditionType::ContextEquals), Some(key), Some(value)) = (
            rule.condition_type,
            &rule.condition_key,
            &rule.condition_value,
        ) else {
            continue;
        };
        if !is_batch_status(bundle, &key.text) {
            continue;
        }
        let Some(values) = domain(bundle, &key.text) else {
            continue;
        };
        let Some(scalar) = value.as_scalar() else {
            continue;
        };
        if scalar.value == Value::Null
            || values
                .iter()
                .any(|v| v.hash_key() == scalar.value.hash_key())
        {
            continue;
        }
        out.push(Diagnostic::new(
            Rule::ShadowedRule,
            rule.file,
            value.range,
            format!(
                "rule `{} -> {}` can never fire: `{}` is a task batch status key, which only ever holds {} (or its default); route on one of those",
                rule.source.text,
                rule.target.text,
                key.text,
                values.iter().map(|v| format!("`{}`", v.python_str())).collect::<Vec<_>>().join(", ")
            ),
        ));
    }
}

/// Whether [`uncovered`] judges these rules (one variable of a known domain).
fn single_variable_proof(bundle: &Bundle, rules: &[&TransitionRule]) -> bool {
    let Some(key) = rules.first().and_then(|r| r.condition_key.as_ref()) else {
        return false;
    };
    rules.iter().all(|r| {
        r.condition_type == Some(ConditionType::ContextEquals)
            && r.condition_key.as_ref().is_some_and(|k| k.text == key.text)
    }) && domain(bundle, &key.text).is_some()
}

/// A source without an after_turn fallback whose conditions all test one
/// variable of a finite domain: the values no condition covers end the run
/// with no_transition_matched.
fn uncovered(bundle: &Bundle, source: &str, rules: &[&TransitionRule]) -> Option<Diagnostic> {
    if rules
        .iter()
        .any(|r| r.transition_type == TransitionType::AfterTurn)
    {
        return None;
    }
    let key = rules.first()?.condition_key.as_ref()?;
    let same_key = rules.iter().all(|r| {
        r.condition_type == Some(ConditionType::ContextEquals)
            && r.condition_key.as_ref().is_some_and(|k| k.text == key.text)
    });
    if !same_key {
        return None;
    }
    let values = domain(bundle, &key.text)?;
    // An outcome owner's misspelt value (`redy`) is reported at the value
    // with the outcome it meant (MZ123), and counted here as that outcome,
    // so the typo is one finding; any other value counts as written.
    let covered: Vec<String> = rules
        .iter()
        .filter_map(|r| {
            let written = r.condition_value.as_ref()?.as_scalar()?;
            Some(match super::outcome_contract::meant_outcome(bundle, r) {
                Some(meant) => Value::Str(meant.into()).hash_key(),
                None => written.value.hash_key(),
            })
        })
        .collect();
    let missing: Vec<String> = values
        .iter()
        .filter(|v| !covered.contains(&v.hash_key()))
        .map(|v| match v {
            Value::Bool(b) => b.to_string(),
            other => other.python_str(),
        })
        .collect();
    if missing.is_empty() {
        return None;
    }
    let last = rules.last()?;
    Some(Diagnostic::new(
        Rule::NoTransitionMatched,
        last.file,
        last.source.range.cover(last.target.range),
        format!(
            "when `{}` is {} after `{source}`'s turn, no rule from `{source}` matches and the run fails with no_transition_matched; add a rule for {} or an after_turn fallback",
            key.text,
            missing.iter().map(|m| format!("`{m}`")).collect::<Vec<_>>().join(" or "),
            if missing.len() == 1 { "it" } else { "them" }
        ),
    ).with_fix(Fix::AddFallback { source: source.to_string() }))
}
