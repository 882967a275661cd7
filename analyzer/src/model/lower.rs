//! Validated file objects → the typed `Bundle`.

use super::{
    A2aAgent, Agent, AgentView, BatchExecution, Bundle, ConditionType, ContextTrigger,
    LifecycleTool, Middleware, ModelDef, ModelField, ModelKind, Name, Orchestrator, Outcome,
    PromptSection, Recovery, RegistryEntry, TaskBatch, Tool, TransitionRule, TransitionType,
    UiConfig, Variable,
};
use crate::base::{FileId, FileKind, TextRange};
use crate::schema::{Item, Norm, Obj};
use crate::syntax::Node;

struct Lower<'a> {
    file: FileId,
    text: &'a str,
}

impl Lower<'_> {
    fn name(&self, item: &Item) -> Option<Name> {
        item.as_str().map(|s| Name {
            text: s.to_string(),
            file: self.file,
            range: item.range,
        })
    }

    fn field(&self, obj: &Obj, key: &str) -> Option<Name> {
        obj.get(key).and_then(|i| self.name(i))
    }

    /// A text field of an optional object, or its default pointing at `at`.
    fn with_default(&self, obj: Option<&Obj>, key: &str, default: &str, at: TextRange) -> Name {
        obj.and_then(|o| self.field(o, key))
            .unwrap_or_else(|| Name {
                text: default.to_string(),
                file: self.file,
                range: at,
            })
    }

    fn names(&self, items: &[Item]) -> Vec<Name> {
        items.iter().filter_map(|i| self.name(i)).collect()
    }

    fn key_name(&self, key: &Item) -> Option<Name> {
        self.name(key)
    }

    fn objs<'o>(&self, obj: &'o Obj, key: &str) -> impl Iterator<Item = &'o Obj> {
        obj.list(key).iter().filter_map(Item::as_obj)
    }

    fn any(&self, obj: &Obj, key: &str) -> Option<Node> {
        match obj.get(key).map(|i| &i.value) {
            Some(Norm::Any(node)) => Some(node.clone()),
            _ => None,
        }
    }

    /// `${name}` references in the raw source text of a context_expression value.
    fn expression_refs(&self, item: &Item) -> Vec<Name> {
        let start = item.range.start as usize;
        let end = (item.range.end as usize).min(self.text.len());
        let Some(raw) = self.text.get(start..end) else {
            return Vec::new();
        };
        let mut refs = Vec::new();
        let mut from = 0;
        while let Some(open) = raw[from..].find("${") {
            let open = from + open;
            let Some(close) = raw[open + 2..].find('}') else {
                break;
            };
            let inner_start = open + 2;
            let inner_end = inner_start + close;
            let inner = &raw[inner_start..inner_end];
            let trimmed = inner.trim();
            if !trimmed.is_empty() {
                let lead = inner.len() - inner.trim_start().len();
                let s = (start + inner_start + lead) as u32;
                refs.push(Name {
                    text: trimmed.to_string(),
                    file: self.file,
                    range: TextRange::new(s, s + trimmed.len() as u32),
                });
            }
            from = inner_end + 1;
        }
        refs
    }
}

/// A nullable bool as written (`None` when absent or null).
/// How a batch runs: `execution` of an explicit batch (with its `result`
/// block), or the conveyor's own keys.
fn execution_of(obj: Option<&Obj>, explicit: bool, result: Option<&Obj>) -> BatchExecution {
    let text = |key: &str| obj.and_then(|o| o.str(key)).map(str::to_string);
    let owned = if explicit { result } else { obj };
    BatchExecution {
        concurrency: obj
            .and_then(|o| o.int("concurrency"))
            .unwrap_or(4)
            .clamp(1, 32) as usize,
        failure_policy: text("failure_policy").unwrap_or_else(|| "fail_batch".into()),
        retry_limit: obj
            .and_then(|o| o.int("retry_limit"))
            .unwrap_or(0)
            .clamp(0, 5) as u32,
        timeout_seconds: obj
            .and_then(|o| o.int("timeout_seconds"))
            .map(|t| t.max(1) as u64),
        require_owned_paths: owned
            .and_then(|o| opt_bool(o, "require_owned_paths"))
            .unwrap_or(explicit),
    }
}

/// The YAML values of a list of scalars, as written.
fn any_list(obj: &Obj, key: &str) -> Vec<Node> {
    obj.list(key)
        .iter()
        .filter_map(|i| match &i.value {
            Norm::Any(node) => Some(node.clone()),
            _ => None,
        })
        .collect()
}

fn opt_bool(obj: &Obj, key: &str) -> Option<bool> {
    match obj.get(key).map(|i| &i.value) {
        Some(Norm::Bool(b)) => Some(*b),
        _ => None,
    }
}

/// Adds one validated file to the bundle.
pub fn lower(bundle: &mut Bundle, kind: FileKind, file: FileId, root: &Obj) {
    let text = std::sync::Arc::clone(&bundle.files[file.0 as usize].text);
    let l = Lower { file, text: &text };
    match kind {
        FileKind::Orchestrator => {
            bundle.orchestrator = Some(Orchestrator {
                file,
                workflow_name: l.field(root, "workflow_name"),
                startup_mode: l.field(root, "workflow_startup_mode"),
                max_turns: root.int("max_turns").unwrap_or(50),
                initial_agent: l.field(root, "initial_agent"),
                initial_message: l.field(root, "initial_message"),
                failure_message_key: l.field(root, "failure_message_key"),
            });
        }
        FileKind::Agents => {
            for agent in l.objs(root, "agents") {
                let Some(name) = l.field(agent, "name") else {
                    continue;
                };
                let sections = |key: &str| {
                    l.objs(agent, key)
                        .filter_map(|s| {
                            Some(PromptSection {
                                id: l.field(s, "id"),
                                heading: l.field(s, "heading")?,
                                content: l.field(s, "content")?,
                            })
                        })
                        .collect()
                };
                bundle.agents.push(Agent {
                    name,
                    structured_outputs_required: agent
                        .get("structured_outputs_required")
                        .and(agent.bool("structured_outputs_required")),
                    system_message: l.field(agent, "system_message"),
                    prompt_sections: sections("prompt_sections"),
                    prompt_sections_custom: sections("prompt_sections_custom"),
                    range: agent.range,
                });
            }
        }
        FileKind::TransitionGraph => {
            let rules = root.list("transition_rules");
            bundle.rules.reserve_exact(rules.len());
            for (index, item) in rules.iter().enumerate() {
                let Some(rule) = item.as_obj() else { continue };
                let (Some(source), Some(target)) =
                    (l.field(rule, "source_agent"), l.field(rule, "target_agent"))
                else {
                    continue;
                };
                let transition_type = match rule.str("transition_type") {
                    Some("after_turn") => TransitionType::AfterTurn,
                    Some("condition") => TransitionType::Condition,
                    _ => continue,
                };
                let condition_type = match rule.str("condition_type") {
                    Some("context_equals") => Some(ConditionType::ContextEquals),
                    Some("context_expression") => Some(ConditionType::ContextExpression),
                    Some("tool_called") => Some(ConditionType::ToolCalled),
                    _ => None,
                };
                let expression = rule.get("context_expression");
                bundle.rules.push(TransitionRule {
                    file,
                    index,
                    range: item.range,
                    source,
                    target,
                    transition_type,
                    condition_type,
                    condition_key: l.field(rule, "condition_key"),
                    condition_value: match rule.get("condition_value").map(|i| &i.value) {
                        Some(Norm::Any(node)) => Some(node.clone()),
                        _ => None,
                    },
                    context_expression: expression.and_then(|i| l.name(i)).map(Box::new),
                    expression_refs: expression.map(|i| l.expression_refs(i)).unwrap_or_default(),
                    tool_name: l.field(rule, "tool_name").map(Box::new),
                    transition_target: l.field(rule, "transition_target").map(Box::new),
                    termination_reason: l.field(rule, "termination_reason").map(Box::new),
                });
            }
        }
        FileKind::ContextVariables => {
            for (key, value) in root.map("definitions") {
                let (Some(name), Some(def)) = (l.key_name(key), value.as_obj()) else {
                    continue;
                };
                let source = def.obj("source");
                bundle.variables.push(Variable {
                    name,
                    declared_type: l.field(def, "type"),
                    authority_class: l.field(def, "authority_class"),
                    writer_ids: def.get("writer_ids").map(|i| l.names(i.as_list())),
                    persisted: opt_bool(def, "persisted"),
                    routing: opt_bool(def, "routing"),
                    authorization: opt_bool(def, "authorization"),
                    model_visible: opt_bool(def, "model_visible"),
                    source_type: source.and_then(|s| l.field(s, "type")),
                    env_var: source.and_then(|s| l.field(s, "env_var")),
                    source_required: source.and_then(|s| opt_bool(s, "required")),
                    default: source.and_then(|s| l.any(s, "default")),
                    triggers: source
                        .map(|s| {
                            l.objs(s, "triggers")
                                .filter_map(|t| {
                                    Some(ContextTrigger {
                                        trigger_type: l.field(t, "type")?,
                                        has_equals: t.obj("match").is_some_and(|m| m.has("equals")),
                                        empty_match: t
                                            .obj("match")
                                            .filter(|m| {
                                                !["equals", "contains", "regex"]
                                                    .iter()
                                                    .any(|k| m.has(k))
                                            })
                                            .map(|_| t.key_range("match")),
                                        equals: t.obj("match").and_then(|m| l.field(m, "equals")),
                                        contains: t
                                            .obj("match")
                                            .and_then(|m| l.field(m, "contains")),
                                        regex: t.obj("match").and_then(|m| l.field(m, "regex")),
                                        response_key: l.field(t, "response_key"),
                                        agent: l.field(t, "agent"),
                                        tool: l.field(t, "tool"),
                                        range: t.range,
                                    })
                                })
                                .collect()
                        })
                        .unwrap_or_default(),
                    range: def.range,
                });
            }
            for (key, value) in root.map("agents") {
                let (Some(agent), Some(view)) = (l.key_name(key), value.as_obj()) else {
                    continue;
                };
                bundle.agent_views.push(AgentView {
                    agent,
                    variables: l.names(view.list("variables")),
                });
            }
        }
        FileKind::StructuredOutputs => {
            for (key, value) in root.map("registry") {
                let Some(agent) = l.key_name(key) else {
                    continue;
                };
                bundle.registry.push(RegistryEntry {
                    agent,
                    model: l.name(value),
                });
            }
            for (key, value) in root.map("models") {
                let (Some(name), Some(def)) = (l.key_name(key), value.as_obj()) else {
                    continue;
                };
                let kind = match def.str("type") {
                    Some("literal") => ModelKind::Literal,
                    Some("union") => ModelKind::Union,
                    _ => ModelKind::Model,
                };
                // Each definition kind has its own shape: `fields` (model),
                // `values` (literal), `variants` (union).
                let own = |key| {
                    matches!(kind, ModelKind::Model) && key == "fields"
                        || matches!(kind, ModelKind::Literal) && key == "values"
                        || matches!(kind, ModelKind::Union) && key == "variants"
                };
                let fields = (if own("fields") {
                    def.map("fields")
                } else {
                    &[]
                })
                .iter()
                .filter_map(|(k, v)| {
                    let f = v.as_obj()?;
                    Some(ModelField {
                        name: l.key_name(k)?,
                        field_type: l.field(f, "type"),
                        items: l.field(f, "items"),
                        variants: l.names(f.list("variants")),
                        has_default: f.get("default").is_some(),
                        default: l.any(f, "default"),
                        values: any_list(f, "values"),
                    })
                })
                .collect();
                bundle.models.push(ModelDef {
                    name,
                    kind,
                    fields,
                    variants: if own("variants") {
                        l.names(def.list("variants"))
                    } else {
                        Vec::new()
                    },
                    values: if own("values") {
                        any_list(def, "values")
                    } else {
                        Vec::new()
                    },
                });
            }
        }
        FileKind::Middleware => {
            for entry in l.objs(root, "prompt_middleware") {
                bundle.middleware.push(Middleware {
                    agent: l.field(entry, "agent"),
                    filename: l.field(entry, "filename"),
                    function: l.field(entry, "function"),
                    range: entry.range,
                });
            }
        }
        FileKind::A2a => {
            for entry in l.objs(root, "agents") {
                let Some(name) = l.field(entry, "name") else {
                    continue;
                };
                bundle.a2a_agents.push(A2aAgent {
                    name,
                    url: l.field(entry, "url"),
                    enabled: entry.bool("enabled").unwrap_or(true),
                });
            }
        }
        FileKind::Tools => {
            for tool in l.objs(root, "tools") {
                let agent_item = tool.get("agent");
                let (agents, agent_is_list) = match agent_item.map(|i| &i.value) {
                    Some(Norm::List(items)) => (l.names(items), true),
                    Some(_) => (
                        agent_item.and_then(|i| l.name(i)).into_iter().collect(),
                        false,
                    ),
                    None => (Vec::new(), false),
                };
                bundle.tools.push(Tool {
                    file,
                    range: tool.range,
                    agents,
                    agent_is_list,
                    python_file: l.field(tool, "file"),
                    function: l.field(tool, "function"),
                    tool_type: l.field(tool, "tool_type"),
                    auto_tool_call: tool.bool("auto_tool_call").unwrap_or(false),
                    bind_to_agent: tool.bool("bind_to_agent").unwrap_or(true),
                    ui_component: tool.obj("ui").and_then(|u| l.field(u, "component")),
                    description: l.field(tool, "description"),
                    outcome: tool.obj("outcome").map(|o| Outcome {
                        range: o.range,
                        context_key: l.field(o, "context_key"),
                        attempts_key: l.field(o, "attempts_key"),
                        values: l.names(o.list("values")),
                        error_value: l.field(o, "error_value"),
                        result_field: l.field(o, "result_field"),
                        max_attempts: o.int("max_attempts").unwrap_or(1),
                        retry_on: l.names(o.list("retry_on")),
                    }),
                });
            }
            for tool in l.objs(root, "lifecycle_tools") {
                bundle.lifecycle_tools.push(LifecycleTool {
                    trigger: l.field(tool, "trigger"),
                    agent: l.field(tool, "agent"),
                    python_file: l.field(tool, "file"),
                    function: l.field(tool, "function"),
                    range: tool.range,
                });
            }
        }
        FileKind::UiConfig => {
            bundle.ui_config = Some(UiConfig {
                file,
                key_range: root.field("visual_agents").map(|f| f.key_range),
                explicit_null: root.get("visual_agents").is_some_and(|i| {
                    let written = l.text.get(i.range.start as usize..i.range.end as usize);
                    matches!(written.map(str::trim), Some("null" | "Null" | "NULL" | "~"))
                }),
                visual_agents: match root.get("visual_agents").map(|i| &i.value) {
                    Some(Norm::List(items)) => Some(l.names(items)),
                    _ => None,
                },
            });
        }
        FileKind::TaskBatches => {
            bundle.has_task_batches_file = true;
            for batch in l.objs(root, "batches") {
                let Some(id) = l.field(batch, "id") else {
                    continue;
                };
                let at = id.range;
                let result = batch.obj("result");
                let recovery = batch.obj("recovery").map(|r| Recovery {
                    trigger_agent: l.field(r, "trigger_agent"),
                    request_key: l.field(r, "request_key"),
                    outcome_key: l.field(r, "outcome_key"),
                    status_key: l.field(r, "status_key"),
                    input_keys: l.names(r.list("input_keys")),
                });
                bundle.task_batches.push(TaskBatch {
                    file,
                    from_conveyor: false,
                    id,
                    trigger_agent: l.field(batch, "trigger_agent"),
                    source_kind: batch.obj("source").and_then(|s| l.field(s, "kind")),
                    result_context_key: result.and_then(|r| l.field(r, "context_key")),
                    result_status_key: result.and_then(|r| l.field(r, "status_key")),
                    recovery,
                    allowed_execution_agents: l.names(batch.list("allowed_execution_agents")),
                    source_path: batch.obj("source").and_then(|s| l.field(s, "path")),
                    task_model: batch.obj("source").and_then(|s| l.field(s, "task_model")),
                    agent_field: l.with_default(
                        batch.obj("worker"),
                        "agent_field",
                        "initial_agent",
                        at,
                    ),
                    prompt_field: l.with_default(
                        batch.obj("worker"),
                        "prompt_field",
                        "initial_message",
                        at,
                    ),
                    dependency_field: l.with_default(
                        batch.obj("execution"),
                        "dependency_field",
                        "depends_on",
                        at,
                    ),
                    context_fields: batch
                        .obj("worker")
                        .map(|w| l.names(w.list("context_fields")))
                        .unwrap_or_default(),
                    execution: execution_of(batch.obj("execution"), true, result),
                });
            }
            for conveyor in l.objs(root, "conveyors") {
                let Some(id) = l.field(conveyor, "id") else {
                    continue;
                };
                let derived = |suffix: &str| Name {
                    text: format!("{}_{suffix}", id.text),
                    file,
                    range: id.range,
                };
                // What a conveyor expands to, pointing at its id.
                let derived_as = |text: &str| Name {
                    text: text.to_string(),
                    file,
                    range: id.range,
                };
                bundle.task_batches.push(TaskBatch {
                    file,
                    from_conveyor: true,
                    trigger_agent: l.field(conveyor, "decomposition_agent"),
                    source_kind: None,
                    result_context_key: Some(derived("results")),
                    result_status_key: Some(derived("status")),
                    recovery: None,
                    allowed_execution_agents: l.names(conveyor.list("execution_agents")),
                    source_path: Some(derived_as("DecompositionPlan.tasks")),
                    task_model: Some(derived_as("DecomposedTask")),
                    agent_field: derived_as("execution_agent"),
                    prompt_field: derived_as("task_prompt"),
                    dependency_field: derived_as("depends_on"),
                    context_fields: Vec::new(),
                    execution: execution_of(Some(conveyor), false, None),
                    id,
                });
            }
        }
    }
}
