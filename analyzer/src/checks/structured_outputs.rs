//! MZ6xx: structured outputs as mozaiks 0.2.0 builds them at run start: the
//! field-type grammar, references between definitions, cycles, and the
//! registry against agents.yaml (bundle-format §12, runtime-semantics §5.1).

use crate::base::hash::{HashMap, HashSet};
use crate::diagnostics::{suggestion, Diagnostic};
use crate::model::symbols::{RefSite, Resolution, SymbolKind, SymbolTable, PRIMITIVE_FIELD_TYPES};
use crate::model::{Bundle, ModelDef, ModelKind, Name};
use crate::rules::Rule;

pub fn check(bundle: &Bundle, symbols: &SymbolTable, out: &mut Vec<Diagnostic>) {
    field_types(bundle, out);
    cycles(bundle, out);
    registry_requirements(bundle, out);
    unused_models(bundle, symbols, out);
}

/// Field types authors reach for that mozaiks does not support, with the fix.
const UNSUPPORTED: &[(&str, &str)] = &[
    ("boolean", "use `bool`"),
    ("number", "use `float` (or `int`)"),
    ("object", "use `dict` or a model name"),
    ("array", "use `List`, `list` with `items`, or `list[Name]`"),
    ("any", "use `dict` for an open mapping"),
    ("optional_int", "use a `union` with variants [int, null]"),
    ("Optional[int]", "use a `union` with variants [int, null]"),
    ("datetime", "use `str`"),
];

fn defined<'b>(bundle: &'b Bundle, name: &str) -> Option<&'b ModelDef> {
    bundle.model(name)
}

/// Checks one type name used as `type`, `items`, a variant or `list[...]`'s
/// inner name; `whole` is the full `type` text for messages.
fn check_name(bundle: &Bundle, name: &Name, allow_containers: bool, out: &mut Vec<Diagnostic>) {
    let text = name.text.as_str();
    let known = PRIMITIVE_FIELD_TYPES.contains(&text)
        && (allow_containers
            || !matches!(
                text,
                "optional_list" | "optional_dict" | "literal" | "union"
            ));
    if known || defined(bundle, text).is_some() {
        return;
    }
    let fix = if let Some((_, fix)) = UNSUPPORTED.iter().find(|(t, _)| *t == text) {
        format!("; {fix}")
    } else if text.contains('[') {
        "; only one level of `list[Name]` is supported (no nesting, no `dict[...]`): name the inner type as a model".to_string()
    } else {
        let candidates = PRIMITIVE_FIELD_TYPES
            .iter()
            .copied()
            .chain(bundle.models.iter().map(|m| m.name.text.as_str()));
        let hint = suggestion(text, candidates);
        if hint.is_empty() {
            "; define it under `models` or use a primitive (str, int, float, bool, dict, List …)"
                .to_string()
        } else {
            hint
        }
    };
    out.push(Diagnostic::new(
        Rule::UnknownFieldType,
        name.file,
        name.range,
        format!(
            "`{text}` is not a field type mozaiks can build{fix}: the model stays unresolved, so agents that require structured outputs fail at run start"
        ),
    ));
}

fn field_types(bundle: &Bundle, out: &mut Vec<Diagnostic>) {
    for model in &bundle.models {
        for variant in &model.variants {
            if !matches!(variant.text.to_ascii_lowercase().as_str(), "null" | "none") {
                check_name(bundle, variant, false, out);
            }
        }
        for field in &model.fields {
            let Some(ty) = &field.field_type else {
                continue;
            };
            match ty.text.as_str() {
                "list" | "optional_list" => {
                    if let Some(items) = &field.items {
                        check_name(bundle, items, false, out);
                    }
                }
                "union" => {
                    for variant in &field.variants {
                        if !matches!(variant.text.to_ascii_lowercase().as_str(), "null" | "none") {
                            check_name(bundle, variant, false, out);
                        }
                    }
                }
                text => match text.strip_prefix("list[").and_then(|r| r.strip_suffix(']')) {
                    Some(inner) => {
                        let inner = Name {
                            text: inner.trim().to_string(),
                            ..ty.clone()
                        };
                        check_name(bundle, &inner, false, out);
                    }
                    None => check_name(bundle, ty, true, out),
                },
            }
        }
    }
}

/// The definitions a definition needs before it can be built.
fn dependencies(bundle: &Bundle, model: &ModelDef) -> Vec<(String, Name)> {
    let mut deps = Vec::new();
    let mut push = |name: &Name| {
        let text = name
            .text
            .strip_prefix("list[")
            .and_then(|r| r.strip_suffix(']'))
            .unwrap_or(&name.text)
            .trim()
            .to_string();
        if defined(bundle, &text).is_some() {
            deps.push((text, name.clone()));
        }
    };
    for variant in &model.variants {
        push(variant);
    }
    for field in &model.fields {
        if let Some(ty) = &field.field_type {
            push(ty);
        }
        if let Some(items) = &field.items {
            push(items);
        }
        for variant in &field.variants {
            push(variant);
        }
    }
    deps
}

/// A model that needs itself (directly or through others) never builds:
/// "Unresolved model dependencies" (models) or "Circular type alias reference".
fn cycles(bundle: &Bundle, out: &mut Vec<Diagnostic>) {
    let graph: HashMap<&str, Vec<String>> = bundle
        .models
        .iter()
        .map(|m| {
            (
                m.name.text.as_str(),
                dependencies(bundle, m)
                    .into_iter()
                    .map(|(n, _)| n)
                    .collect(),
            )
        })
        .collect();
    // Only models on a cycle need the search for their path back: the
    // strongly connected components with more than one model, or a self-loop.
    let mut digraph = petgraph::graph::DiGraph::<&str, ()>::new();
    let nodes: HashMap<&str, petgraph::graph::NodeIndex> = graph
        .keys()
        .map(|name| (*name, digraph.add_node(name)))
        .collect();
    for (from, deps) in &graph {
        for dep in deps {
            if let Some(&to) = nodes.get(dep.as_str()) {
                digraph.add_edge(nodes[from], to, ());
            }
        }
    }
    let mut cyclic: HashSet<&str> = HashSet::default();
    for component in petgraph::algo::tarjan_scc(&digraph) {
        let looped = component.len() > 1
            || component
                .first()
                .is_some_and(|&n| digraph.contains_edge(n, n));
        if looped {
            cyclic.extend(component.iter().map(|&n| digraph[n]));
        }
    }
    for model in &bundle.models {
        if !cyclic.contains(model.name.text.as_str()) {
            continue;
        }
        let Some(cycle) = path_back(&graph, &model.name.text) else {
            continue;
        };
        out.push(Diagnostic::new(
            Rule::ModelCycle,
            model.name.file,
            model.name.range,
            format!(
                "`{}` depends on itself ({}); mozaiks cannot build it (\"Unresolved model dependencies\"): break the cycle, e.g. with a `dict` field",
                model.name.text,
                cycle.join(" -> ")
            ),
        ));
    }
}

/// The shortest dependency path from `start` back to itself, if any.
fn path_back<'g>(graph: &'g HashMap<&str, Vec<String>>, start: &'g str) -> Option<Vec<&'g str>> {
    let mut parent: HashMap<&str, &str> = HashMap::default();
    let mut queue = std::collections::VecDeque::from([start]);
    while let Some(node) = queue.pop_front() {
        for dep in graph.get(node).into_iter().flatten() {
            if dep == start {
                let mut path = vec![start];
                let mut at = node;
                while at != start {
                    path.push(at);
                    at = parent[at];
                }
                path.push(start);
                let last = path.len() - 1;
                path[1..last].reverse();
                return Some(path);
            }
            if !parent.contains_key(dep.as_str()) {
                parent.insert(dep.as_str(), node);
                queue.push_back(dep.as_str());
            }
        }
    }
    None
}

fn registry_requirements(bundle: &Bundle, out: &mut Vec<Diagnostic>) {
    for agent in &bundle.agents {
        let model = bundle.registry_model(&agent.name.text);
        match (agent.structured_outputs_required, model) {
            (Some(true), None) => out.push(Diagnostic::new(
                Rule::MissingRegistryModel,
                agent.name.file,
                agent.name.range,
                format!(
                    "agent `{}` sets `structured_outputs_required: true` but structured_outputs.yaml has no registry model for it; agent creation fails at run start — add `{}: <Model>` to the registry or set it to false",
                    agent.name.text, agent.name.text
                ),
            )),
            (Some(false), Some(model)) => out.push(
                Diagnostic::new(
                    Rule::RegistryNotRequired,
                    agent.name.file,
                    agent.name.range,
                    format!(
                        "agent `{}` has the registry model `{}` but `structured_outputs_required: false`: its replies are still validated against `{}` (a mismatch fails the run) while the model is not asked for that shape; set it to true",
                        agent.name.text, model.text, model.text
                    ),
                )
                .with_related(model.file, model.range, "registry entry"),
            ),
            _ => {}
        }
        let auto_tool = bundle
            .tools
            .iter()
            .find(|t| t.auto_tool_call && t.agents.iter().any(|a| a.text == agent.name.text));
        if let (Some(tool), None) = (auto_tool, model) {
            let mut d = Diagnostic::new(
                Rule::AutoToolWithoutModel,
                agent.name.file,
                agent.name.range,
                format!(
                    "agent `{}` owns an auto tool but has no structured output model: agent creation fails at run start (\"has auto_tool_call but no structured output model\"); add a registry entry",
                    agent.name.text
                ),
            );
            if let Some(f) = &tool.function {
                d = d.with_related(f.file, f.range, "auto tool");
            }
            out.push(d);
        }
    }
}

/// The models mozaiks 0.2.0 resolves by exact id, per workflow: the
/// structured-output contracts of its compiler assignment kinds
/// (`core/workflow/assignment_kinds.py`, `_ASSIGNMENT_CONTRACT_DESCRIPTORS`).
/// A plan that needs one fails with `OUTPUT_CONTRACT_UNRESOLVED` when the
/// workflow does not define it, so these are used though nothing in the
/// bundle names them. An exact table, not a naming convention.
const RESOLVED_BY_MOZAIKS: &[(&str, &str)] = &[
    ("AppGenerator", "ModuleBackendImplementationOutput"),
    ("AppGenerator", "IntegrationAdapterImplementationOutput"),
    ("AppGenerator", "AppRouteExtensionImplementationOutput"),
    ("AppGenerator", "CustomPageImplementationOutput"),
    ("AgentGenerator", "WorkflowParticipantImplementationOutput"),
    ("AgentGenerator", "WorkflowStructuredModelsOutput"),
    ("AgentGenerator", "WorkflowToolImplementationOutput"),
    ("AgentGenerator", "WorkflowUiImplementationOutput"),
    ("AppGenerator", "ModuleHelperImplementationOutput"),
    ("AppGenerator", "ModuleAdminPageImplementationOutput"),
];

/// The bundle's workflow name: orchestrator.yaml's, else its folder's.
fn workflow_name(bundle: &Bundle) -> String {
    bundle
        .orchestrator
        .as_ref()
        .and_then(|o| o.workflow_name.as_ref())
        .map(|n| n.text.clone())
        .or_else(|| {
            bundle
                .dir
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
        })
        .unwrap_or_default()
}

/// The model definitions no YAML reference uses (a self-reference does not
/// count), leaving out those mozaiks itself uses: conveyors read their
/// decomposition agent's output through `DecompositionPlan` and
/// `DecomposedTask`, and the assignment contracts are resolved by id.
pub fn unreferenced_models(bundle: &Bundle, symbols: &SymbolTable) -> Vec<String> {
    let mut names: Vec<String> = unreferenced_model_defs(bundle, symbols)
        .into_iter()
        .filter_map(|i| symbols.definitions.get(i))
        .map(|def| def.name.text.clone())
        .collect();
    names.sort();
    names.dedup();
    names
}

/// The indices (in `symbols.definitions`) of the unreferenced models.
fn unreferenced_model_defs(bundle: &Bundle, symbols: &SymbolTable) -> Vec<usize> {
    // Conveyors read their decomposition agent's output through these names.
    let implied: &[&str] = if bundle.task_batches.iter().any(|b| b.from_conveyor) {
        &["DecompositionPlan", "DecomposedTask"]
    } else {
        &[]
    };
    let workflow = workflow_name(bundle);
    // Where each type name is written: the model whose definition holds it.
    let mut enclosing: HashMap<(crate::base::FileId, u32), &str> = HashMap::default();
    for m in &bundle.models {
        let sites = m
            .fields
            .iter()
            .flat_map(|f| f.field_type.iter().chain(&f.items).chain(&f.variants))
            .chain(&m.variants);
        for site in sites {
            enclosing.insert((site.file, site.range.start), m.name.text.as_str());
        }
    }
    let mut used = vec![false; symbols.definitions.len()];
    for r in &symbols.references {
        let Resolution::Definition(id) = r.resolution else {
            continue;
        };
        let Some(def) = symbols.definitions.get(id.0 as usize) else {
            continue;
        };
        // A self-reference does not make a model used.
        let inside_itself = r.site == RefSite::FieldType
            && enclosing.get(&(r.name.file, r.name.range.start)) == Some(&def.name.text.as_str());
        if !inside_itself {
            used[id.0 as usize] = true;
        }
    }
    symbols
        .definitions
        .iter()
        .enumerate()
        .filter(|(i, def)| def.kind == SymbolKind::Model && !used[*i])
        .filter(|(_, def)| !implied.contains(&def.name.text.as_str()))
        .filter(|(_, def)| {
            !RESOLVED_BY_MOZAIKS.contains(&(workflow.as_str(), def.name.text.as_str()))
        })
        .map(|(i, _)| i)
        .collect()
}

/// A model nothing uses: no YAML reference, mozaiks does not resolve it by
/// id, and no code file of the bundle or the shared folders names or builds
/// it (`models["X"]`, `_validated_plan("X", …)`, a parameter annotation).
fn unused_models(bundle: &Bundle, symbols: &SymbolTable, out: &mut Vec<Diagnostic>) {
    for i in unreferenced_model_defs(bundle, symbols) {
        let Some(def) = symbols.definitions.get(i) else {
            continue;
        };
        if bundle.is_mentioned_elsewhere(&def.name.text) {
            continue;
        }
        let kind = bundle
            .model(&def.name.text)
            .filter(|m| m.name == def.name)
            .or_else(|| bundle.models.iter().find(|m| m.name == def.name))
            .map_or(ModelKind::Model, |m| m.kind);
        out.push(Diagnostic::new(
            Rule::UnusedModel,
            def.name.file,
            def.name.range,
            format!(
                "{} `{}` is never used: no registry entry, field, union or task batch refers to it, mozaiks does not resolve it by name, and no code file names or builds it; mozaiks still compiles it when the workflow loads — remove it, or reference it where it is meant to be used",
                match kind {
                    ModelKind::Model => "model",
                    ModelKind::Literal => "literal",
                    ModelKind::Union => "union",
                },
                def.name.text
            ),
        ));
    }
}
