//! MZ307–MZ309: routing proved over value domains. For each source, its
//! `context_equals` and `context_expression` rules are evaluated in mozaiks'
//! order (conditions in YAML order, first match wins) over every assignment
//! of the finite domains of the variables they read (`model::domains`).
//! A variable that may hold any integer takes part when the source's
//! conditions only compare it with integer constants: the integer line is
//! cut where one of those comparisons changes its answer, and one integer
//! stands for each stretch.
//! A source is skipped when any variable it reads has no known domain, when
//! the product is too large, or when an expression could raise or does
//! something this evaluator does not model: nothing is claimed then.

use crate::base::hash::HashSet;
use crate::diagnostics::{did_you_mean, one_of, Diagnostic, Fix};
use crate::model::domains::{show, Domain};
use crate::model::{Bundle, ConditionType, TransitionRule, TransitionType};
use crate::rules::Rule;
use crate::syntax::expression::{compile, Expr};
use crate::syntax::{NodeKind, Value};

/// Most assignments enumerated for one source.
const MAX_ASSIGNMENTS: usize = 4096;
/// Uncovered assignments quoted in a message.
const MAX_WITNESSES: usize = 3;

/// A compiled condition.
enum Cond {
    Equals(String, Value),
    Expression(Expr),
}

/// `reachable`: the sources a run can reach (agent names, `user`).
/// `skip_uncovered`: sources the single-variable proof (MZ302) already judges.
pub fn check(
    bundle: &Bundle,
    reachable: &HashSet<String>,
    skip_uncovered: &HashSet<String>,
    out: &mut Vec<Diagnostic>,
) {
    let shadowed: HashSet<usize> = bundle
        .shadowed_rules()
        .iter()
        .map(|&(dead, _)| dead)
        .collect();
    // Rules by source, in YAML order; `user` in any case is one source.
    let mut order: Vec<String> = Vec::new();
    let mut by_source: crate::base::hash::HashMap<String, Vec<&TransitionRule>> =
        crate::base::hash::HashMap::default();
    for r in &bundle.rules {
        let label = if r.source.text.eq_ignore_ascii_case("user") {
            "user".to_string()
        } else {
            r.source.text.clone()
        };
        by_source
            .entry(label.clone())
            .or_insert_with(|| {
                order.push(label);
                Vec::new()
            })
            .push(r);
    }
    for label in &order {
        let rules = &by_source[label];
        check_source(
            bundle,
            label,
            rules,
            &shadowed,
            reachable.contains(label) && !skip_uncovered.contains(label),
            out,
        );
    }
}

fn check_source(
    bundle: &Bundle,
    source: &str,
    rules: &[&TransitionRule],
    shadowed: &HashSet<usize>,
    judge_uncovered: bool,
    out: &mut Vec<Diagnostic>,
) {
    let has_fallback = rules
        .iter()
        .any(|r| r.transition_type == TransitionType::AfterTurn);
    let has_tool_rule = rules
        .iter()
        .any(|r| r.condition_type == Some(ConditionType::ToolCalled));
    let mut conds: Vec<(&TransitionRule, Cond)> = Vec::new();
    for r in rules {
        if r.transition_type != TransitionType::Condition {
            continue;
        }
        let cond = match r.condition_type {
            Some(ConditionType::ContextEquals) => {
                let Some(key) = &r.condition_key else { return };
                let value = match &r.condition_value {
                    None => Value::Null,
                    Some(node) => match &node.kind {
                        NodeKind::Scalar(s) if plain(&s.value) => s.value.clone(),
                        _ => return,
                    },
                };
                Cond::Equals(key.text.clone(), value)
            }
            Some(ConditionType::ContextExpression) => {
                let Some(text) = &r.context_expression else {
                    return;
                };
                let Ok((expr, _)) = compile(&text.text) else {
                    return;
                };
                Cond::Expression(expr)
            }
            Some(ConditionType::ToolCalled) => continue,
            None => return,
        };
        conds.push((r, cond));
    }
    if conds.is_empty() {
        return;
    }
    // The variables read, each with its domain (null included when it may
    // read null).
    let mut vars: Vec<String> = Vec::new();
    for (_, c) in &conds {
        match c {
            Cond::Equals(k, _) => push_unique(&mut vars, k),
            Cond::Expression(e) => e.refs(&mut vars),
        }
    }
    let domains = bundle.domains();
    let mut full: Vec<Vec<Value>> = Vec::new();
    let mut nullable: Vec<bool> = Vec::new();
    let mut initial_only: Vec<Option<String>> = Vec::new();
    // For an integer variable, the stretch each of its values stands for.
    let mut spans: Vec<Option<Vec<Span>>> = Vec::new();
    let mut exact = true;
    for v in &vars {
        match domains.of(v) {
            Some(Domain::Known(known)) => {
                let all = known.with_initial();
                nullable.push(all.len() > known.values.len());
                initial_only.push(known.initial_only.as_ref().map(Value::hash_key));
                exact &= known.exact && known.fresh_for.iter().any(|a| a == source);
                full.push(all);
                spans.push(None);
            }
            Some(Domain::Integers(d)) => {
                let Some(starts) = integer_cuts(&conds, v) else {
                    return;
                };
                let parts = partition(starts);
                let mut all: Vec<Value> = parts
                    .iter()
                    .map(|p| Value::Int(p.representative().into()))
                    .collect();
                if d.may_be_null {
                    all.push(Value::Null);
                }
                // Null is never a witness: it may only be the value before
                // the first write.
                nullable.push(d.may_be_null);
                initial_only.push(None);
                exact &= d.fresh_for.iter().any(|a| a == source);
                full.push(all);
                spans.push(Some(parts));
            }
            _ => return,
        }
    }
    let size = full
        .iter()
        .try_fold(1usize, |n, d| n.checked_mul(d.len().max(1)))
        .unwrap_or(usize::MAX);
    if size == 0 || size > MAX_ASSIGNMENTS {
        return;
    }
    // rows[i] = for each assignment, whether rule i's condition holds.
    let mut assignments: Vec<Vec<usize>> = Vec::with_capacity(size);
    let mut idx = vec![0usize; vars.len()];
    loop {
        assignments.push(idx.clone());
        let mut k = 0;
        loop {
            if k == idx.len() {
                break;
            }
            idx[k] += 1;
            if idx[k] < full[k].len() {
                break;
            }
            idx[k] = 0;
            k += 1;
        }
        if k == idx.len() {
            break;
        }
    }
    let mut truth: Vec<Vec<bool>> = Vec::with_capacity(conds.len());
    for (_, c) in &conds {
        let mut row = Vec::with_capacity(assignments.len());
        for a in &assignments {
            let lookup = |name: &str| -> Value {
                vars.iter()
                    .position(|v| v == name)
                    .map_or(Value::Null, |i| full[i][a[i]].clone())
            };
            let holds = match c {
                Cond::Equals(k, v) => lookup(k).hash_key() == v.hash_key(),
                Cond::Expression(e) => match eval(e, &lookup).map(|p| truthy(&p)) {
                    Some(b) => b,
                    None => return, // could raise, or not modelled
                },
            };
            row.push(holds);
        }
        truth.push(row);
    }
    // A value a variable holds only until its first write (unset, or a
    // default no writer writes) is not a witness of its own: the writer that
    // routing waits for has usually run by then.
    let written_only = |a: &[usize]| {
        a.iter().enumerate().all(|(i, &vi)| {
            !(nullable[i] && vi == full[i].len() - 1)
                && initial_only[i].as_ref() != Some(&full[i][vi].hash_key())
        })
    };
    let describe = |a: &[usize], used: &[usize]| -> String {
        used.iter()
            .map(|&i| match spans[i].as_ref().and_then(|p| p.get(a[i])) {
                Some(span) => span.describe(&vars[i]),
                None => format!("`{}` is `{}`", vars[i], show(&full[i][a[i]])),
            })
            .collect::<Vec<_>>()
            .join(" and ")
    };
    let mut reported: HashSet<usize> = HashSet::default();
    // MZ309: never true.
    for (ri, (rule, cond)) in conds.iter().enumerate() {
        if truth[ri].iter().any(|t| *t) {
            continue;
        }
        reported.insert(ri);
        if shadowed.contains(&rule.index) {
            continue;
        }
        let mut d = match cond {
            Cond::Equals(key, value) => {
                // Outcome, batch status and boolean keys have their own checks.
                if single_key_domain(bundle, key) {
                    continue;
                }
                let i = vars.iter().position(|v| v == key).unwrap_or(0);
                // An integer variable compared with null: the message below
                // lists values, not stretches; claim nothing.
                if spans[i].is_some() {
                    continue;
                }
                let shown: Vec<String> = full[i].iter().map(show).collect();
                let strings: Vec<&str> = full[i]
                    .iter()
                    .filter_map(|v| match v {
                        Value::Str(s) => Some(s.as_str()),
                        _ => None,
                    })
                    .collect();
                let best = match value {
                    Value::Str(s) => did_you_mean(s, strings.iter().copied()),
                    _ => None,
                };
                let hint = best.map_or(String::new(), |b| format!(" (did you mean `{b}`?)"));
                let mut d = Diagnostic::new(
                    Rule::ImpossibleCondition,
                    rule.file,
                    rule.condition_value
                        .as_ref()
                        .map_or(rule.range, |v| v.range),
                    format!(
                        "rule `{} -> {}` can never fire: `{key}` only ever holds {}{}, never `{}`{hint}",
                        rule.source.text,
                        rule.target.text,
                        one_of(&shown),
                        sources_hint(bundle, key),
                        show(value),
                    ),
                );
                if let (Some(best), Value::Str(s)) = (best, value) {
                    d = d.with_fix(Fix::ReplaceWord {
                        original: s.clone(),
                        replacement: best.to_string(),
                    });
                }
                d
            }
            Cond::Expression(_) => {
                let read: Vec<String> = vars
                    .iter()
                    .enumerate()
                    .filter(|(_, v)| rule.expression_refs.iter().any(|r| &r.text == *v))
                    .map(|(i, v)| match spans[i] {
                        Some(_) if nullable[i] => format!("`{v}` ∈ {{any integer, null}}"),
                        Some(_) => format!("`{v}` ∈ {{any integer}}"),
                        None => format!(
                            "`{v}` ∈ {{{}}}",
                            full[i].iter().map(show).collect::<Vec<_>>().join(", ")
                        ),
                    })
                    .collect();
                Diagnostic::new(
                    Rule::ImpossibleCondition,
                    rule.file,
                    rule.context_expression
                        .as_ref()
                        .map_or(rule.range, |e| e.range),
                    format!(
                        "rule `{} -> {}` can never fire: its expression is false for every value its variables can hold ({})",
                        rule.source.text,
                        rule.target.text,
                        read.join(", ")
                    ),
                )
            }
        };
        d = d.with_related(
            rule.file,
            rule.source.range.cover(rule.target.range),
            "this rule",
        );
        out.push(d);
    }
    // MZ308: true only where an earlier rule already matched.
    for (ri, (rule, _)) in conds.iter().enumerate() {
        if reported.contains(&ri) || shadowed.contains(&rule.index) {
            continue;
        }
        let covered = (0..assignments.len())
            .filter(|&a| truth[ri][a])
            .all(|a| (0..ri).any(|e| truth[e][a]));
        if !covered {
            continue;
        }
        let winners: Vec<usize> = (0..ri)
            .filter(|&e| (0..assignments.len()).any(|a| truth[ri][a] && truth[e][a]))
            .collect();
        let mut d = Diagnostic::new(
            Rule::CoveredRule,
            rule.file,
            rule.source.range.cover(rule.target.range),
            format!(
                "rule `{} -> {}` can never fire: whenever its condition holds, an earlier rule from `{}` matches first ({}); remove it or narrow the earlier {}",
                rule.source.text,
                rule.target.text,
                rule.source.text,
                winners
                    .iter()
                    .map(|&e| format!("`{} -> {}`", conds[e].0.source.text, conds[e].0.target.text))
                    .collect::<Vec<_>>()
                    .join(", "),
                if winners.len() == 1 { "rule" } else { "rules" }
            ),
        );
        for &e in &winners {
            let w = conds[e].0;
            d = d.with_related(
                w.file,
                w.source.range.cover(w.target.range),
                "this rule matches first",
            );
        }
        out.push(d);
    }
    // MZ307: an assignment no rule matches, with no fallback.
    // Only exact domains name a witness (a bound may hold values no writer
    // ever produces), and only for variables the source's own turn always
    // writes: a value written earlier on the path may be tied to how the
    // run got here.
    if !judge_uncovered || has_fallback || has_tool_rule || !exact {
        return;
    }
    let uncovered: Vec<usize> = (0..assignments.len())
        .filter(|&a| written_only(&assignments[a]) && !truth.iter().any(|row| row[a]))
        .collect();
    if uncovered.is_empty() {
        return;
    }
    // A witness leaves out the variables whose every written value is
    // uncovered too ("when `verdict` is `reject`"), dropped one at a time
    // while the whole product over the dropped ones stays uncovered.
    let stride: Vec<usize> = full
        .iter()
        .scan(1usize, |s, d| {
            let here = *s;
            *s *= d.len();
            Some(here)
        })
        .collect();
    let written = |i: usize, vi: usize| {
        !(nullable[i] && vi == full[i].len() - 1)
            && initial_only[i].as_ref() != Some(&full[i][vi].hash_key())
    };
    let uncovered_over = |a: &[usize], free: &[usize]| -> bool {
        let mut cur = a.to_vec();
        let mut odo = vec![0usize; free.len()];
        loop {
            for (k, &i) in free.iter().enumerate() {
                cur[i] = odo[k];
            }
            let all_written = free.iter().all(|&i| written(i, cur[i]));
            let at: usize = cur.iter().zip(&stride).map(|(v, s)| v * s).sum();
            if all_written && truth.iter().any(|row| row[at]) {
                return false;
            }
            let mut k = 0;
            while k < free.len() {
                odo[k] += 1;
                if odo[k] < full[free[k]].len() {
                    break;
                }
                odo[k] = 0;
                k += 1;
            }
            if k == free.len() {
                return true;
            }
        }
    };
    let reduce = |a: &[usize]| -> Vec<usize> {
        let mut free: Vec<usize> = Vec::new();
        for i in 0..vars.len() {
            free.push(i);
            if free.len() == vars.len() || !uncovered_over(a, &free) {
                free.pop();
            }
        }
        (0..vars.len()).filter(|i| !free.contains(i)).collect()
    };
    let mut shown: Vec<(Vec<usize>, usize)> = Vec::new();
    let mut more = 0usize;
    for &a in &uncovered {
        let asg = &assignments[a];
        if shown
            .iter()
            .any(|(used, b)| used.iter().all(|&i| assignments[*b][i] == asg[i]))
        {
            continue;
        }
        if shown.len() == MAX_WITNESSES {
            more += 1;
            continue;
        }
        shown.push((reduce(asg), a));
    }
    let witnesses: Vec<String> = shown
        .iter()
        .map(|(used, a)| describe(&assignments[*a], used))
        .collect();
    let last = conds.last().map(|(r, _)| *r).unwrap_or(rules[0]);
    out.push(
        Diagnostic::new(
            Rule::UncoveredAssignment,
            last.file,
            last.source.range.cover(last.target.range),
            format!(
                "when {}{} after `{source}`'s turn, no rule of `{source}` matches: the run fails with no_transition_matched; add a rule for {} or an after_turn fallback",
                witnesses.join(", or "),
                if more > 0 {
                    format!(" (and {more} more)")
                } else {
                    String::new()
                },
                if uncovered.len() == 1 { "it" } else { "them" }
            ),
        )
        .with_fix(Fix::AddFallback {
            source: source.to_string(),
        }),
    );
}

/// The keys whose impossible values other rules report (MZ123 outcome keys,
/// MZ303 task batch statuses, MZ401 booleans).
fn single_key_domain(bundle: &Bundle, key: &str) -> bool {
    let outcome = bundle.tools.iter().any(|t| {
        t.outcome
            .as_ref()
            .and_then(|o| o.context_key.as_ref())
            .is_some_and(|k| k.text == key)
    });
    let batch = bundle
        .task_batches
        .iter()
        .any(|b| b.result_status_key.as_ref().is_some_and(|k| k.text == key));
    let boolean = bundle
        .variable(key)
        .and_then(|v| v.declared_type.as_ref())
        .is_some_and(|t| matches!(t.text.to_ascii_lowercase().as_str(), "boolean" | "bool"));
    outcome || batch || boolean
}

fn sources_hint(bundle: &Bundle, key: &str) -> String {
    match bundle.domains().known(key) {
        Some(k) if !k.sources.is_empty() => format!(" ({})", k.sources.join("; ")),
        _ => String::new(),
    }
}

fn plain(v: &Value) -> bool {
    matches!(
        v,
        Value::Null | Value::Bool(_) | Value::Int(_) | Value::Float(_) | Value::Str(_)
    )
}

fn push_unique(vars: &mut Vec<String>, name: &str) {
    if !vars.iter().any(|v| v == name) {
        vars.push(name.to_string());
    }
}

mod eval;
mod intervals;
use eval::*;
use intervals::*;
#[cfg(test)]
mod tests;
