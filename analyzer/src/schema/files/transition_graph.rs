//! `transition_graph.yaml`.

use super::{
    field, FileSchema, CONDITION_TYPES, REQ, TERMINATION_REASONS, TEXT_OPT, TEXT_REQ,
    TRANSITION_TYPES,
};
use crate::base::FileKind;
use crate::rules::Rule;
use crate::schema::kinds::{Default, Kind};
use crate::schema::normalized::{Norm, Obj};
use crate::schema::{Object, Refers, RuleContext};

pub(super) static TRANSITION_GRAPH_FILE: FileSchema = FileSchema {
    kind: FileKind::TransitionGraph,
    doc: "Routing: which agent speaks after which, and on what condition.",
    root: &TRANSITION_GRAPH,
};

pub(super) static TRANSITION_GRAPH: Object = Object {
    name: "transition_graph.yaml",
    doc: "The transition rules.",
    fields: &[field("transition_rules", Kind::ObjectList(&TRANSITION_RULE), Default::EmptyList,
        "The rules. Condition rules are tried before after_turn fallbacks, each group in order; the first true rule wins.")],
    legacy: &[("handoff_rules", "0.2.0 reads `transition_rules` (the handoffs.yaml format was replaced): rename the key and convert each rule")],
    rules: &[],
};

pub(super) static TRANSITION_RULE: Object = Object {
    name: "transition rule",
    doc: "One routing rule from a source agent to a target.",
    fields: &[
        field("source_agent", TEXT_REQ, REQ, "The agent (or `user`) whose turn this rule follows.").refers(Refers::Agent { user: true, terminate: false }),
        field("target_agent", TEXT_REQ, REQ, "The next agent, `user` (pause for the user) or `terminate` (end the run).").refers(Refers::Agent { user: true, terminate: true }),
        field("transition_type", Kind::Enum { values: TRANSITION_TYPES, nullable: false }, REQ,
            "`condition` (fires when its condition is true) or `after_turn` (the fallback after the source speaks)."),
        field("condition_type", Kind::LowerEnum { values: CONDITION_TYPES }, Default::Null,
            "For condition rules: `context_equals`, `context_expression` or `tool_called`."),
        field("condition_key", TEXT_OPT, Default::Null, "context_equals: the context variable compared.").refers(Refers::Variable),
        field("condition_value", Kind::Any, Default::Null, "context_equals: the value compared with Python `==` (omitted means null)."),
        field("context_expression", TEXT_OPT, Default::Null,
            "context_expression: an expression over `${var}` references with and/or/not, comparisons, in, len() and literals."),
        field("tool_name", TEXT_OPT, Default::Null, "tool_called: the tool function whose call fires the rule.").refers(Refers::Function),
        field("transition_target", TEXT_OPT, Default::Null,
            "`AgentTarget`, `TerminateTarget` (target terminate) or `RevertToUserTarget` (target user)."),
        field("termination_reason", Kind::Enum { values: TERMINATION_REASONS, nullable: true }, Default::Null,
            "For target `terminate`: `workflow_complete` or `workflow_failed`."),
    ],
    legacy: &[
        ("condition", "free-text `condition` was removed in 0.2.0: use `condition_type: context_expression` with `context_expression: …`, or `context_equals` with condition_key/condition_value"),
        ("handoff_type", "the key is now `transition_type` (`after_work` became `after_turn`)"),
        ("condition_scope", "condition_scope was dropped in 0.2.0; remove it"),
    ],
    rules: &[transition_rule_shape],
};

pub(super) fn transition_rule_shape(obj: &Obj, cx: &mut RuleContext<'_>) {
    let rule_name = format!(
        "rule `{} -> {}`",
        obj.str("source_agent").unwrap_or("?"),
        obj.str("target_agent").unwrap_or("?")
    );
    if obj.has("termination_reason") && obj.str("target_agent").is_some_and(|t| t != "terminate") {
        cx.report(
            Rule::TransitionRuleShape,
            obj.key_range("termination_reason"),
            format!(
                "{rule_name} sets `termination_reason`, which requires `target_agent: terminate` (spelled exactly, lowercase); remove it or change the target"
            ),
        );
    }
    let condition_value_set = obj.get("condition_value").is_some_and(|i| match &i.value {
        Norm::Any(node) => !node.is_null(),
        Norm::Null => false,
        _ => true,
    });
    let present = |name: &str| -> bool {
        if name == "condition_value" {
            condition_value_set
        } else {
            obj.has(name)
        }
    };
    let forbid = |cx: &mut RuleContext<'_>, names: &[&str], why: &str| {
        for name in names {
            if present(name) {
                cx.report(
                    Rule::TransitionRuleShape,
                    obj.key_range(name),
                    format!("{rule_name}: {why} must not declare `{name}`; remove it"),
                );
            }
        }
    };
    match obj.str("transition_type") {
        Some("after_turn") => forbid(
            cx,
            &[
                "condition_type",
                "condition_key",
                "condition_value",
                "context_expression",
                "tool_name",
            ],
            "an `after_turn` rule fires unconditionally, so it",
        ),
        Some("condition") => {
            let require = |cx: &mut RuleContext<'_>, name: &str, for_what: &str| {
                if !obj.has(name) {
                    cx.report(
                        Rule::TransitionRuleShape,
                        obj.key_range("condition_type"),
                        format!("{rule_name}: {for_what} requires `{name}`; add it"),
                    );
                }
            };
            match obj.str("condition_type") {
                None => {
                    cx.report(
                        Rule::TransitionRuleShape,
                        obj.key_range("transition_type"),
                        format!("{rule_name}: `transition_type: condition` requires `condition_type` (context_equals, context_expression or tool_called)"),
                    );
                }
                Some("context_equals") => {
                    require(cx, "condition_key", "`condition_type: context_equals`");
                    forbid(
                        cx,
                        &["tool_name", "context_expression"],
                        "`condition_type: context_equals`",
                    );
                }
                Some("context_expression") => {
                    require(
                        cx,
                        "context_expression",
                        "`condition_type: context_expression`",
                    );
                    forbid(
                        cx,
                        &["condition_key", "condition_value", "tool_name"],
                        "`condition_type: context_expression`",
                    );
                }
                Some("tool_called") => {
                    require(cx, "tool_name", "`condition_type: tool_called`");
                    forbid(
                        cx,
                        &["condition_key", "condition_value", "context_expression"],
                        "`condition_type: tool_called`",
                    );
                }
                _ => {}
            }
        }
        _ => {}
    }
}
