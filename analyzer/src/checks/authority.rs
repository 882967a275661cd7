//! MZ4xx: context authority and routing conditions, as the graph compiler
//! and the authority policy of mozaiks 0.2.0 judge them at run start
//! (bundle-format §7.3, §9; runtime-semantics §2.1, §2.3).

use crate::base::TextRange;
use crate::diagnostics::Diagnostic;
use crate::model::authority::{self, AuthorityClass};
use crate::model::{Bundle, ConditionType, Name, SourceFile, Variable};
use crate::rules::Rule;
use crate::syntax::{expression, NodeKind, Value};

pub fn check(bundle: &Bundle, out: &mut Vec<Diagnostic>) {
    let facts = authority::Facts::of(bundle);
    expressions(bundle, out);
    condition_values(bundle, out);
    routing_reads(bundle, &facts, out);
    policy_conflicts(bundle, &facts, out);
    refused_writes(bundle, &facts, out);
    surprising_names(bundle, &facts, out);
    defaults(bundle, out);
    unknown_types(bundle, out);
    empty_matches(bundle, out);
}

/// The `type` values mozaiks' value guard knows (bundle-format §6); any other
/// string is accepted and never checked.
const VARIABLE_TYPES: &[&str] = &[
    "string", "str", "boolean", "bool", "integer", "int", "number", "float", "object", "dict",
    "map", "array", "list", "any",
];

/// A type outside the value guard's table: accepted at load, so a typo such
/// as `boolen` silently turns off every check and coercion of the variable.
fn unknown_types(bundle: &Bundle, out: &mut Vec<Diagnostic>) {
    for var in &bundle.variables {
        let Some(ty) = &var.declared_type else {
            continue;
        };
        let text = ty.text.trim();
        if text.is_empty() || VARIABLE_TYPES.contains(&text.to_ascii_lowercase().as_str()) {
            continue;
        }
        let best = crate::diagnostics::did_you_mean(text, VARIABLE_TYPES.iter().copied());
        out.push(
            Diagnostic::new(
                Rule::UnknownVariableType,
                ty.file,
                ty.range,
                format!(
                    "`{text}` is not a type mozaiks knows{}: it accepts the declaration but never checks or coerces the values of `{}` (a `yes` stays a string, a default of the wrong kind is kept); use string, boolean, integer, number, object, array or any",
                    crate::diagnostics::mean_hint(text, best),
                    var.name.text
                ),
            )
            .with_replacement(text, best),
        );
    }
}

/// A default the declared type does not admit: the end-of-run persistence
/// filter refuses it and the orchestration ends with internal_error (§8.4).
fn defaults(bundle: &Bundle, out: &mut Vec<Diagnostic>) {
    for var in &bundle.variables {
        let (Some(shape), Some(default)) = (declared_shape(var), &var.default) else {
            continue;
        };
        let fits = match (&default.kind, shape) {
            (NodeKind::Scalar(s), _) if s.value == Value::Null => true,
            (NodeKind::Scalar(s), Shape::Text) => s.value.as_str().is_some(),
            // Booleans and integers are coerced at load ("yes", "1", int()).
            (NodeKind::Scalar(s), Shape::Bool) => {
                matches!(s.value, Value::Bool(_))
                    || matches!(&s.value, Value::Str(t) if matches!(t.to_ascii_lowercase().as_str(), "yes" | "no" | "on" | "off" | "true" | "false" | "1" | "0"))
                    || matches!(s.value, Value::Int(i) if matches!(i.get(), 0 | 1))
            }
            (NodeKind::Scalar(s), Shape::Int) => {
                matches!(s.value, Value::Int(_) | Value::BigInt(_))
                    || matches!(&s.value, Value::Str(t) if t.trim().parse::<i64>().is_ok())
            }
            (NodeKind::Scalar(s), Shape::Number) => {
                matches!(s.value, Value::Int(_) | Value::Float(_) | Value::BigInt(_))
            }
            (NodeKind::Map(_), Shape::Mapping) | (NodeKind::Seq(_), Shape::List) => true,
            (NodeKind::Invalid, _) => true,
            _ => false,
        };
        if !fits {
            let ty = var.declared_type.as_ref().map_or("", |t| t.text.as_str());
            out.push(
                Diagnostic::new(
                    Rule::DefaultType,
                    var.name.file,
                    default.range,
                    format!(
                        "the default of `{}` is {} `{}` but its type is `{ty}`; the end-of-run persistence refuses a value of the wrong type (context_authority.invalid_value) — fix the default or the type",
                        var.name.text,
                        default.type_name(),
                        default.python_str()
                    ),
                )
                .with_related(var.name.file, var.declared_type.as_ref().map_or(var.name.range, |t| t.range), "declared type"),
            );
        }
    }
}

/// `match: {}` passes the load contract but fails the run's context load.
fn empty_matches(bundle: &Bundle, out: &mut Vec<Diagnostic>) {
    for var in &bundle.variables {
        for trigger in &var.triggers {
            if let Some(range) = trigger.empty_match {
                out.push(Diagnostic::new(
                    Rule::EmptyTriggerMatch,
                    var.name.file,
                    range,
                    format!(
                        "this trigger of `{}` matches nothing: `match` needs `equals`, `contains` or `regex`, and the context load fails at run start without one",
                        var.name.text
                    ),
                ));
            }
        }
    }
}

/// Where the expression's text starts in the file, when the YAML scalar
/// holds it verbatim (plain, or quoted without escapes); else `None`.
fn expression_base(file: &SourceFile, name: &Name) -> Option<u32> {
    let raw = file
        .text
        .get(name.range.start as usize..name.range.end as usize)?;
    if raw == name.text {
        return Some(name.range.start);
    }
    let quoted = raw.len() >= 2
        && ((raw.starts_with('\'') && raw.ends_with('\''))
            || (raw.starts_with('"') && raw.ends_with('"')));
    (quoted && raw[1..raw.len() - 1] == name.text).then_some(name.range.start + 1)
}

fn expressions(bundle: &Bundle, out: &mut Vec<Diagnostic>) {
    for rule in &bundle.rules {
        if rule.condition_type != Some(ConditionType::ContextExpression) {
            continue;
        }
        let Some(expr) = &rule.context_expression else {
            continue;
        };
        let Err(error) = expression::parse(&expr.text) else {
            continue;
        };
        let range = bundle
            .file(expr.file)
            .and_then(|f| expression_base(f, expr))
            .map_or(expr.range, |base| {
                let end = error.end.max(error.start + 1).min(expr.text.len());
                TextRange::new(
                    base + error.start.min(expr.text.len()) as u32,
                    base + end as u32,
                )
            });
        out.push(Diagnostic::new(
            Rule::ExpressionSyntax,
            expr.file,
            range,
            format!(
                "{}; mozaiks compiles context_expression at run start and this rule fails the whole graph (allowed: `${{var}}`, and/or/not, comparisons, in, len(), literals)",
                error.message
            ),
        ));
    }
}

/// What a declared type can hold, for Python equality with a YAML value.
#[derive(Clone, Copy, PartialEq)]
enum Shape {
    Text,
    Bool,
    Int,
    Number,
    Mapping,
    List,
}

fn declared_shape(var: &Variable) -> Option<Shape> {
    Some(
        match var
            .declared_type
            .as_ref()?
            .text
            .to_ascii_lowercase()
            .as_str()
        {
            "string" | "str" => Shape::Text,
            "boolean" | "bool" => Shape::Bool,
            "integer" | "int" => Shape::Int,
            "number" | "float" => Shape::Number,
            "object" | "dict" | "map" => Shape::Mapping,
            "array" | "list" => Shape::List,
            _ => return None,
        },
    )
}

/// Can a value of `shape` ever `==` this YAML value (Python semantics:
/// `True == 1`, `1 == 1.0`)? Null always can: the variable may be unset.
fn can_equal(shape: Shape, node: &crate::syntax::Node) -> bool {
    match &node.kind {
        NodeKind::Scalar(s) => match (&s.value, shape) {
            (Value::Null, _) => true,
            (Value::Str(_), Shape::Text) => true,
            (Value::Bool(_), Shape::Bool | Shape::Int | Shape::Number) => true,
            (Value::Int(i), Shape::Bool) => matches!(i.get(), 0 | 1),
            (Value::Int(_) | Value::BigInt(_), Shape::Int | Shape::Number) => true,
            (Value::Float(f), Shape::Bool) => *f == 0.0 || *f == 1.0,
            (Value::Float(f), Shape::Int) => f.fract() == 0.0,
            (Value::Float(_), Shape::Number) => true,
            _ => false,
        },
        NodeKind::Map(_) => shape == Shape::Mapping,
        NodeKind::Seq(_) => shape == Shape::List,
        NodeKind::Invalid => true,
    }
}

fn condition_values(bundle: &Bundle, out: &mut Vec<Diagnostic>) {
    for rule in &bundle.rules {
        if rule.condition_type != Some(ConditionType::ContextEquals) {
            continue;
        }
        let Some(key) = &rule.condition_key else {
            continue;
        };
        let Some(value) = &rule.condition_value else {
            out.push(Diagnostic::new(
                Rule::MissingConditionValue,
                key.file,
                key.range,
                format!(
                    "this context_equals rule has no `condition_value`, so it compares `{}` with null (it fires while the variable is unset); write the value to compare with, or `condition_value: null` if that is the intent",
                    key.text
                ),
            ));
            continue;
        };
        let Some(var) = bundle.variable(&key.text) else {
            continue;
        };
        let Some(shape) = declared_shape(var) else {
            continue;
        };
        if can_equal(shape, value) {
            continue;
        }
        let ty = var.declared_type.as_ref().map_or("", |t| t.text.as_str());
        let written = value.python_str();
        let hint = match (&value.kind, shape) {
            (NodeKind::Scalar(s), Shape::Bool) if s.value.as_str().is_some() => {
                format!(" (write `{}` without quotes)", written.to_lowercase())
            }
            (NodeKind::Scalar(s), Shape::Int | Shape::Number) if s.value.as_str().is_some() => {
                format!(" (write `{written}` without quotes)")
            }
            (NodeKind::Scalar(_), Shape::Text) => format!(" (quote it: '{written}')"),
            _ => String::new(),
        };
        out.push(
            Diagnostic::new(
                Rule::ConditionValueType,
                rule.file,
                value.range,
                format!(
                    "condition_value is {} `{written}` but `{}` is declared `type: {ty}`; under Python equality they are never equal, so this rule never fires{hint}",
                    value.type_name(),
                    key.text
                ),
            )
            .with_related(var.name.file, var.name.range, "declared here"),
        );
    }
}

/// Every variable a rule reads must be routing state with a deterministic
/// writer, or the graph fails to compile (bundle-format §9.5).
fn routing_reads(bundle: &Bundle, facts: &authority::Facts<'_>, out: &mut Vec<Diagnostic>) {
    for rule in &bundle.rules {
        let reads: Vec<&Name> = match rule.condition_type {
            Some(ConditionType::ContextEquals) => rule.condition_key.iter().collect(),
            Some(ConditionType::ContextExpression) => rule.expression_refs.iter().collect(),
            _ => continue,
        };
        for read in reads {
            let Some(var) = bundle.variable(&read.text) else {
                continue;
            }; // MZ121
            let auth = authority::infer_with(facts, var);
            let message = if !auth.routing {
                Some(format!(
                    "`{}` is read by a transition rule but declares `routing: false`: the graph fails to compile at run start (\"non-routing context variable used as routing condition\"); remove `routing: false`",
                    read.text
                ))
            } else if !auth.has_deterministic_writer() {
                let writers = if auth.writers.is_empty() {
                    "none".to_string()
                } else {
                    auth.writers.join(", ")
                };
                Some(format!(
                    "nothing deterministic may write `{}` (class {}, writers: {writers}), so the graph fails to compile at run start (\"has no authorized deterministic writer\"); add a deterministic writer such as `deterministic_tool` to writer_ids",
                    read.text,
                    auth.class.as_str()
                ))
            } else {
                None
            };
            if let Some(message) = message {
                out.push(
                    Diagnostic::new(
                        Rule::RoutingVariableAuthority,
                        read.file,
                        read.range,
                        message,
                    )
                    .with_related(
                        var.name.file,
                        var.name.range,
                        "declared here",
                    ),
                );
            }
        }
    }
}

/// Declarations the authority policy refuses when a run starts (§9.2, §9.5).
fn policy_conflicts(bundle: &Bundle, facts: &authority::Facts<'_>, out: &mut Vec<Diagnostic>) {
    for var in &bundle.variables {
        let auth = authority::infer_with(facts, var);
        let source = var.source_type.as_ref().map(|s| s.text.as_str());
        let declared_class = var.authority_class.as_ref();
        let mut problems: Vec<(TextRange, String)> = Vec::new();
        let class_at = declared_class.map_or(var.name.range, |c| c.range);
        if auth.class == AuthorityClass::ImmutableRuntime
            && var.writer_ids.as_ref().is_some_and(|w| !w.is_empty())
        {
            problems.push((
                var.writer_ids.as_ref().and_then(|w| w.first()).map_or(var.name.range, |w| w.range),
                format!("`{}` is immutable runtime authority ({}) and cannot list writers; remove writer_ids", var.name.text, auth.reason),
            ));
        }
        if var.persisted == Some(true)
            && (matches!(
                auth.class,
                AuthorityClass::ImmutableRuntime | AuthorityClass::ToolOnly
            ) || auth.authorization)
        {
            problems.push((
                var.name.range,
                format!(
                    "`{}` sets `persisted: true` but its authority ({}{}) cannot be replayed; the policy build fails at run start (\"persisted context variable is not replayable\") — remove `persisted: true`",
                    var.name.text,
                    auth.class.as_str(),
                    if auth.authorization { ", authorization" } else { "" }
                ),
            ));
        }
        if source == Some("runtime")
            && declared_class.is_some_and(|c| c.text != "immutable_runtime_authority")
        {
            problems.push((
                class_at,
                format!("`{}` has `source.type: runtime`, which is always immutable runtime authority; remove the authority_class", var.name.text),
            ));
        }
        if source == Some("build_context") {
            let name = &var.name.text;
            let mut bad = Vec::new();
            if declared_class.is_some_and(|c| c.text != "tool_only_information") {
                bad.push("a class other than tool_only_information");
            }
            if var.model_visible == Some(true)
                || var.persisted == Some(true)
                || var.routing == Some(true)
                || var.authorization == Some(true)
            {
                bad.push("model_visible/persisted/routing/authorization set to true");
            }
            if var
                .writer_ids
                .as_ref()
                .is_some_and(|w| w.iter().any(|w| w.text != "runtime_system"))
            {
                bad.push("writers other than runtime_system");
            }
            if !var.triggers.is_empty() {
                bad.push("triggers");
            }
            if authority::immutable_name_pattern(name).is_some() {
                bad.push("an immutable-pattern name");
            }
            if facts.is_read(name) || facts.is_batch_key(name) {
                bad.push("use in routing or as a task batch key");
            }
            if !bad.is_empty() {
                problems.push((
                    var.name.range,
                    format!(
                        "`{name}` is a build_context variable (tool-only, written only by the runtime) but has {}; the policy build fails at run start",
                        bad.join(", ")
                    ),
                ));
            }
        }
        let file = var.name.file;
        for (range, message) in problems {
            out.push(Diagnostic::new(
                Rule::AuthorityConflict,
                file,
                range,
                message,
            ));
        }
    }
}

/// Writes the declarations imply but the variable's authority refuses.
fn refused_writes(bundle: &Bundle, facts: &authority::Facts<'_>, out: &mut Vec<Diagnostic>) {
    for batch in &bundle.task_batches {
        let keys = [&batch.result_context_key, &batch.result_status_key];
        for key in keys.into_iter().flatten() {
            let Some(var) = bundle.variable(&key.text) else {
                continue;
            }; // MZ121
            let auth = authority::infer_with(facts, var);
            let build_context = var
                .source_type
                .as_ref()
                .is_some_and(|s| s.text == "build_context");
            if !auth.can_write("task_batch", build_context) {
                out.push(
                    Diagnostic::new(
                        Rule::WriteRefused,
                        key.file,
                        key.range,
                        format!(
                            "task batch `{}` writes `{}` as writer `task_batch`, which its authority refuses ({}, writers: {}); the batch result is lost — add `task_batch` to its writer_ids",
                            batch.id.text,
                            key.text,
                            auth.class.as_str(),
                            if auth.writers.is_empty() { "none".to_string() } else { auth.writers.join(", ") }
                        ),
                    )
                    .with_related(var.name.file, var.name.range, "declared here"),
                );
            }
        }
    }
    for var in &bundle.variables {
        let auth = authority::infer_with(facts, var);
        if !auth.class.is_closed() {
            continue;
        }
        for writer in var.writer_ids.iter().flatten() {
            if !authority::DETERMINISTIC_WRITERS.contains(&writer.text.as_str()) {
                out.push(Diagnostic::new(
                    Rule::WriteRefused,
                    writer.file,
                    writer.range,
                    format!(
                        "`{}` is {}, which keeps only deterministic writers: `{}` is silently dropped and its writes are refused; remove it or use a deterministic writer",
                        var.name.text,
                        auth.class.as_str(),
                        writer.text
                    ),
                ));
            }
        }
    }
}

/// Names that silently infer a class the author probably did not mean
/// (catalogue row 33): `max_tokens` becomes immutable, `navigate_gate` quality state.
fn surprising_names(bundle: &Bundle, facts: &authority::Facts<'_>, out: &mut Vec<Diagnostic>) {
    for var in &bundle.variables {
        if var.authority_class.is_some() {
            continue;
        }
        let source = var.source_type.as_ref().map(|s| s.text.as_str());
        if !matches!(source, Some("state" | "computed")) {
            continue;
        }
        let auth = authority::infer_with(facts, var);
        let lower = var.name.text.to_lowercase();
        // Identity names (`app_id`, `chat_id`) and names that say "quality" are
        // immutable or quality state on purpose; a substring hit such as
        // `max_tokens` or `aggregate_score` (`gate`) is the surprise.
        let surprising = match auth.class {
            AuthorityClass::ImmutableRuntime => {
                !authority::is_identity_name(&lower)
                    && authority::immutable_name_pattern(&lower).is_some()
            }
            AuthorityClass::ClosedQuality => {
                lower.contains("gate")
                    && !lower.split('_').any(|word| word == "gate")
                    && !lower.contains("quality")
            }
            _ => false,
        };
        if !surprising {
            continue;
        }
        let consequence = match auth.class {
            AuthorityClass::ImmutableRuntime => "no tool or trigger can ever write it",
            _ => "only deterministic writers may set it, and it becomes quality state",
        };
        out.push(Diagnostic::new(
            Rule::AuthorityNamePattern,
            var.name.file,
            var.name.range,
            format!(
                "{}, so mozaiks infers `{}` for this {} variable: {consequence}; rename it or declare `authority_class` explicitly",
                auth.reason,
                auth.class.as_str(),
                source.unwrap_or_default()
            ),
        ));
    }
}
