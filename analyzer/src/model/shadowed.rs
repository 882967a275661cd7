//! Rules that can never fire: an earlier rule of the same source always
//! wins over them.

use super::{Bundle, ConditionType, TransitionRule, TransitionType};
use crate::base::hash::HashMap;
use crate::syntax::NodeKind;

/// What a condition tests, so that two rules testing the same thing compare equal.
fn condition_key(rule: &TransitionRule) -> Option<String> {
    let key = rule
        .condition_key
        .as_ref()
        .map(|k| k.text.as_str())
        .unwrap_or("");
    match rule.condition_type? {
        ConditionType::ContextEquals => Some(format!(
            "equals {key} {}",
            rule.condition_value
                .as_ref()
                .map_or("n".to_string(), |v| match &v.kind {
                    NodeKind::Scalar(s) => s.value.hash_key(),
                    _ => v.python_str(),
                })
        )),
        ConditionType::ContextExpression => Some(format!(
            "expression {}",
            rule.context_expression
                .as_ref()
                .map(|e| e.text.split_whitespace().collect::<Vec<_>>().join(" "))
                .unwrap_or_default()
        )),
        ConditionType::ToolCalled => Some(format!(
            "tool {}",
            rule.tool_name.as_ref().map_or("", |t| t.text.as_str())
        )),
    }
}

/// Rules that can never fire, each with the earlier rule that always wins:
/// per source, a second after_turn, or a condition equal to an earlier one.
/// See [`Bundle::shadowed_rules`], which keeps the result.
pub(super) fn shadowed_rules(bundle: &Bundle) -> Vec<(usize, usize)> {
    let mut fallback: HashMap<&str, usize> = HashMap::default();
    let mut conditions: HashMap<(&str, String), usize> = HashMap::default();
    let mut shadowed = Vec::new();
    for (i, rule) in bundle.rules.iter().enumerate() {
        let source = rule.source.text.as_str();
        match rule.transition_type {
            TransitionType::AfterTurn => match fallback.get(source) {
                Some(&first) => shadowed.push((i, first)),
                None => {
                    fallback.insert(source, i);
                }
            },
            TransitionType::Condition => {
                let Some(key) = condition_key(rule) else {
                    continue;
                };
                match conditions.get(&(source, key.clone())) {
                    Some(&first) => shadowed.push((i, first)),
                    None => {
                        conditions.insert((source, key), i);
                    }
                }
            }
        }
    }
    shadowed
}
