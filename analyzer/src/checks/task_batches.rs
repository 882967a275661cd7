//! MZ7xx: task batches and conveyors against the models they read
//! (bundle-format §15, runtime-semantics §6).

use crate::diagnostics::Diagnostic;
use crate::model::symbols::task_model_variable;
use crate::model::{Bundle, ModelDef, ModelField, ModelKind, Name, TaskBatch};
use crate::rules::Rule;

pub fn check(bundle: &Bundle, out: &mut Vec<Diagnostic>) {
    for batch in &bundle.task_batches {
        if batch.from_conveyor {
            conveyor_plan(bundle, batch, out);
        } else {
            task_model(bundle, batch, out);
            source_path(bundle, batch, out);
        }
    }
}

fn model<'b>(bundle: &'b Bundle, name: &str) -> Option<&'b ModelDef> {
    bundle.model(name)
}

fn field<'m>(model: &'m ModelDef, name: &str) -> Option<&'m ModelField> {
    model.fields.iter().find(|f| f.name.text == name)
}

/// The model a field holds (`Model`), or its list items (`list` + items, `list[Model]`).
fn field_model<'b>(bundle: &'b Bundle, field: &ModelField, list: bool) -> Option<&'b ModelDef> {
    let ty = field.field_type.as_ref()?.text.as_str();
    let name = if list {
        match ty {
            "list" | "optional_list" => field.items.as_ref()?.text.as_str(),
            _ => ty.strip_prefix("list[")?.strip_suffix(']')?.trim(),
        }
    } else {
        ty
    };
    model(bundle, name).filter(|m| m.kind == ModelKind::Model)
}

fn is_list(field: &ModelField) -> bool {
    field.field_type.as_ref().is_some_and(|t| {
        matches!(t.text.as_str(), "list" | "optional_list" | "List") || t.text.starts_with("list[")
    })
}

fn task_model(bundle: &Bundle, batch: &TaskBatch, out: &mut Vec<Diagnostic>) {
    let Some(name) = &batch.task_model else {
        return;
    };
    if task_model_variable(name).is_some() {
        return; // resolved from context at run time (MZ202 checks the variable)
    }
    let Some(task) = model(bundle, &name.text).filter(|m| m.kind == ModelKind::Model) else {
        out.push(Diagnostic::new(
            Rule::TaskModel,
            name.file,
            name.range,
            format!(
                "task_model `{}` is not a `type: model` definition in structured_outputs.yaml; mozaiks treats it as advisory, but mzk cannot check the task fields — define it or fix the name",
                name.text
            ),
        ));
        return;
    };
    // A missing dependency field only means "no dependencies" unless written;
    // a context field that is a declared variable reaches the worker anyway
    // (its context starts as a copy of the run's).
    let written_dependency = batch.dependency_field.range != batch.id.range;
    let mut fields: Vec<&Name> = vec![&batch.agent_field, &batch.prompt_field];
    fields.extend(written_dependency.then_some(&batch.dependency_field));
    fields.extend(
        batch
            .context_fields
            .iter()
            .filter(|f| bundle.variable(&f.text).is_none()),
    );
    for wanted in fields {
        if field(task, &wanted.text).is_none() {
            let default = wanted.range == batch.id.range;
            out.push(
                Diagnostic::new(
                    Rule::WorkerField,
                    wanted.file,
                    wanted.range,
                    format!(
                        "tasks of batch `{}` are read through the field `{}`{}, but task model `{}` has no such field; declare it on the model or point the worker/execution setting at an existing field",
                        batch.id.text,
                        wanted.text,
                        if default { " (the default)" } else { "" },
                        task.name.text
                    ),
                )
                .with_related(task.name.file, task.name.range, "task model"),
            );
        }
    }
}

/// A `structured_output` source path must start at a field of the trigger
/// agent's registry model, or the batch silently finds no tasks.
fn source_path(bundle: &Bundle, batch: &TaskBatch, out: &mut Vec<Diagnostic>) {
    let (Some(kind), Some(path), Some(trigger)) =
        (&batch.source_kind, &batch.source_path, &batch.trigger_agent)
    else {
        return;
    };
    if kind.text != "structured_output" || bundle.agent(&trigger.text).is_none() {
        return;
    }
    let first = path
        .text
        .split('.')
        .find(|s| !s.trim().is_empty())
        .unwrap_or("")
        .trim();
    let registry = bundle
        .registry_model(&trigger.text)
        .and_then(|m| model(bundle, &m.text));
    let message = match registry {
        None => format!(
            "batch `{}` reads its tasks from the structured output of `{}`, which has no registry model; the batch finds no tasks — give the agent a model with `{first}`",
            batch.id.text, trigger.text
        ),
        Some(m) if field(m, first).is_none() => format!(
            "batch `{}` reads `{}` from `{}`'s output, but its model `{}` has no field `{first}`; the batch silently finds no tasks",
            batch.id.text, path.text, trigger.text, m.name.text
        ),
        Some(_) => return,
    };
    out.push(Diagnostic::new(
        Rule::BatchSourcePath,
        path.file,
        path.range,
        message,
    ));
}

/// A conveyor reads `DecompositionPlan.tasks` from its decomposition agent's
/// output; each task needs `execution_agent` and `task_prompt` (bundle-format §15.2).
fn conveyor_plan(bundle: &Bundle, batch: &TaskBatch, out: &mut Vec<Diagnostic>) {
    let Some(agent) = &batch.trigger_agent else {
        return;
    };
    if bundle.agent(&agent.text).is_none() {
        return; // MZ201
    }
    let fail = |out: &mut Vec<Diagnostic>, why: String| {
        out.push(Diagnostic::new(
            Rule::ConveyorPlan,
            agent.file,
            agent.range,
            format!(
                "conveyor `{}` reads `DecompositionPlan.tasks` from `{}`'s structured output, but {why}; the conveyor silently runs no tasks",
                batch.id.text, agent.text
            ),
        ));
    };
    let Some(output) = bundle
        .registry_model(&agent.text)
        .and_then(|m| model(bundle, &m.text))
    else {
        return fail(out, format!("`{}` has no registry model", agent.text));
    };
    let Some(plan_field) = field(output, "DecompositionPlan") else {
        return fail(
            out,
            format!(
                "its model `{}` has no field named `DecompositionPlan`",
                output.name.text
            ),
        );
    };
    let Some(plan) = field_model(bundle, plan_field, false) else {
        return fail(
            out,
            format!("`{}.DecompositionPlan` is not a model", output.name.text),
        );
    };
    let Some(tasks) = field(plan, "tasks").filter(|f| is_list(f)) else {
        return fail(
            out,
            format!("model `{}` has no list field `tasks`", plan.name.text),
        );
    };
    if let Some(task) = field_model(bundle, tasks, true) {
        let missing: Vec<&str> = ["execution_agent", "task_prompt"]
            .into_iter()
            .filter(|f| field(task, f).is_none())
            .collect();
        if !missing.is_empty() {
            fail(
                out,
                format!(
                    "its task model `{}` has no `{}` (every task would fail)",
                    task.name.text,
                    missing.join("`, `")
                ),
            );
        }
    }
}
