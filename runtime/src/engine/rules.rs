//! The transition rules compiled at run start (§2.1, §2.2).

use mzk_analyzer::model::{Bundle, ConditionType, TransitionType};
use mzk_analyzer::syntax::expression;
use mzk_analyzer::syntax::expression::Expr;
use serde_json::Value;

use crate::error::Error;
use crate::value::yaml_to_json;

#[derive(Debug, Clone)]
pub(super) enum Target {
    Agent(String),
    User,
    Terminate(String),
}

#[derive(Debug, Clone)]
pub(super) enum Test {
    Always,
    Equals(String, Value),
    Expression(Expr),
    ToolCalled(String),
}

#[derive(Debug, Clone)]
pub(super) struct Rule {
    pub(super) index: usize,
    pub(super) source: String,
    pub(super) target: Target,
    pub(super) test: Test,
    pub(super) after_turn: bool,
}

pub(super) fn is_user(name: &str) -> bool {
    name.eq_ignore_ascii_case("user")
}

/// `null` (any case) in an optional text field counts as absent (§2.1).
pub(super) fn present(name: Option<&mzk_analyzer::model::Name>) -> Option<&str> {
    name.map(|n| n.text.trim())
        .filter(|t| !t.is_empty() && !t.eq_ignore_ascii_case("null"))
}

/// Compiles the graph at run start (§2.1, §2.2): conditions first in YAML
/// order, then the after_turn fallbacks.
pub(super) fn compile_rules(bundle: &Bundle) -> Result<Vec<Rule>, Error> {
    let mut rules = Vec::new();
    for r in &bundle.rules {
        let target_text = r.target.text.trim();
        let target = if target_text.eq_ignore_ascii_case("terminate") {
            let reason = present(r.termination_reason.as_deref()).unwrap_or("workflow_complete");
            Target::Terminate(reason.to_string())
        } else if is_user(target_text) {
            Target::User
        } else if bundle.agent(target_text).is_some() {
            Target::Agent(target_text.to_string())
        } else {
            return Err(Error::Graph(format!(
                "transition rule {} targets unknown agent '{target_text}'",
                r.index
            )));
        };
        let test = match (r.transition_type, r.condition_type) {
            (TransitionType::AfterTurn, _) => Test::Always,
            (_, Some(ConditionType::ContextEquals)) => Test::Equals(
                present(r.condition_key.as_ref()).unwrap_or("").to_string(),
                r.condition_value.as_ref().map_or(Value::Null, yaml_to_json),
            ),
            (_, Some(ConditionType::ContextExpression)) => {
                let src = present(r.context_expression.as_deref()).unwrap_or("");
                let (expr, _) = expression::compile(src).map_err(|e| {
                    Error::Graph(format!(
                        "transition rule {}: context_expression does not compile: {}",
                        r.index, e.message
                    ))
                })?;
                Test::Expression(expr)
            }
            (_, Some(ConditionType::ToolCalled)) => {
                Test::ToolCalled(present(r.tool_name.as_deref()).unwrap_or("").to_string())
            }
            (_, None) => {
                return Err(Error::Graph(format!(
                    "transition rule {} has no condition_type",
                    r.index
                )))
            }
        };
        rules.push(Rule {
            index: r.index,
            source: r.source.text.trim().to_string(),
            target,
            after_turn: r.transition_type == TransitionType::AfterTurn,
            test,
        });
    }
    // Stable sort: priority = index for conditions, len + index for fallbacks.
    rules.sort_by_key(|r| (r.after_turn, r.index));
    Ok(rules)
}

pub(super) enum Next {
    Agent(String),
    User,
    Terminate(String),
    NoMatch,
}
