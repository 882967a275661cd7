//! The reference's cross-file context contract (bundle-format §8.4): the
//! workflow name matches its folder, failure_message_key names a string
//! variable, and every variable a rule, agent view or task batch uses is declared.

use crate::diagnostics::{did_you_mean, mean_hint, Diagnostic, Fix};
use crate::model::{Bundle, ConditionType, Name};
use crate::rules::Rule;
use crate::syntax::Value;

pub fn check(bundle: &Bundle, out: &mut Vec<Diagnostic>) {
    workflow_name(bundle, out);
    failure_message_key(bundle, out);
    declared_references(bundle, out);
}

fn workflow_name(bundle: &Bundle, out: &mut Vec<Diagnostic>) {
    let Some(name) = bundle
        .orchestrator
        .as_ref()
        .and_then(|o| o.workflow_name.as_ref())
    else {
        return;
    };
    if !name.text.eq_ignore_ascii_case(&bundle.folder_name)
        && name.text.to_lowercase() != bundle.folder_name.to_lowercase()
    {
        out.push(Diagnostic::new(
            Rule::WorkflowNameMismatch,
            name.file,
            name.range,
            format!(
                "workflow_name `{}` does not match the bundle folder `{}`; mozaiks finds a workflow by its folder, so rename one to match the other",
                name.text, bundle.folder_name
            ),
        ));
    }
}

fn failure_message_key(bundle: &Bundle, out: &mut Vec<Diagnostic>) {
    let Some(key) = bundle
        .orchestrator
        .as_ref()
        .and_then(|o| o.failure_message_key.as_ref())
    else {
        return;
    };
    match bundle.variable(&key.text) {
        None => {
            let best = closest_variable(bundle, &key.text);
            out.push(Diagnostic::new(
            Rule::FailureMessageKey,
            key.file,
            key.range,
            format!(
                "failure_message_key `{}` is not declared in context_variables.yaml{}; declare it with `type: string`",
                key.text,
                mean_hint(&key.text, best)
            ),
        ).with_replacement(&key.text, best));
        }
        Some(var) => {
            let ty = var.declared_type.as_ref().map(|t| t.text.as_str());
            if ty != Some("string") {
                let mut d = Diagnostic::new(
                    Rule::FailureMessageKey,
                    key.file,
                    key.range,
                    format!(
                        "failure_message_key `{}` must name a variable declared with `type: string` exactly (found {}); set its type to `string`",
                        key.text,
                        ty.map_or("no type".to_string(), |t| format!("`type: {t}`"))
                    ),
                );
                let at = var.declared_type.as_ref().unwrap_or(&var.name);
                d = d.with_related(at.file, at.range, "declared here");
                out.push(d);
            }
        }
    }
}

/// The declared variable a misspelt name most likely meant.
fn closest_variable<'b>(bundle: &'b Bundle, name: &str) -> Option<&'b str> {
    did_you_mean(name, bundle.variables.iter().map(|v| v.name.as_str()))
}

/// Reports a use of an undeclared variable, offering the closest declared
/// name and a declaration typed `ty` (what the use implies).
fn undeclared(
    bundle: &Bundle,
    name: &Name,
    what: &str,
    ty: &'static str,
    out: &mut Vec<Diagnostic>,
) {
    if bundle.variable(&name.text).is_some() {
        return;
    }
    let best = closest_variable(bundle, &name.text);
    let description = format!("Stub declared by mzk: {what} it; say what it holds.");
    out.push(Diagnostic::new(
        Rule::UndeclaredVariable,
        name.file,
        name.range,
        format!(
            "{what} `{}`, which context_variables.yaml does not declare{}; declare it under `definitions` or fix the name",
            name.text,
            mean_hint(&name.text, best)
        ),
    ).with_replacement(&name.text, best)
    .with_fix(Fix::DeclareVariable {
        name: name.text.clone(),
        ty,
        description,
    }));
}

fn declared_references(bundle: &Bundle, out: &mut Vec<Diagnostic>) {
    for view in &bundle.agent_views {
        for variable in &view.variables {
            undeclared(
                bundle,
                variable,
                &format!("the view of agent `{}` lists", view.agent.text),
                "any",
                out,
            );
        }
    }
    for rule in &bundle.rules {
        let what = format!("rule `{} -> {}` reads", rule.source.text, rule.target.text);
        match rule.condition_type {
            Some(ConditionType::ContextEquals) => {
                if let Some(key) = &rule.condition_key {
                    // The compared value says what the variable holds.
                    let ty = match rule.condition_value.as_ref().and_then(|v| v.as_scalar()) {
                        Some(s) => match s.value {
                            Value::Bool(_) => "boolean",
                            Value::Int(_) | Value::BigInt(_) => "integer",
                            Value::Float(_) => "number",
                            Value::Str(_) => "string",
                            _ => "any",
                        },
                        None => "any",
                    };
                    undeclared(bundle, key, &what, ty, out);
                }
            }
            Some(ConditionType::ContextExpression) => {
                for reference in &rule.expression_refs {
                    undeclared(bundle, reference, &what, "any", out);
                }
            }
            _ => {}
        }
    }
    for batch in &bundle.task_batches {
        let writes = format!("task batch `{}` writes", batch.id.text);
        let reads = format!("task batch `{}` reads", batch.id.text);
        if let Some(key) = &batch.result_context_key {
            undeclared(bundle, key, &writes, "object", out);
        }
        if let Some(key) = &batch.result_status_key {
            undeclared(bundle, key, &writes, "string", out);
        }
        if let Some(recovery) = &batch.recovery {
            for key in [&recovery.outcome_key, &recovery.status_key]
                .into_iter()
                .flatten()
            {
                undeclared(bundle, key, &writes, "string", out);
            }
            for key in recovery.request_key.iter().chain(&recovery.input_keys) {
                undeclared(bundle, key, &reads, "any", out);
            }
        }
    }
}
