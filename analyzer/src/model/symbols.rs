//! The symbol table: every definition in a bundle and every site that refers
//! to one, with file and byte range. Definition, references and rename in the
//! language server, and the reference checks, read this table.

use super::{Bundle, ModelKind, Name};
use crate::base::FileId;

/// What a symbol is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SymbolKind {
    Agent,
    Variable,
    /// A tools.yaml tool; its name is the Python function name the LLM sees.
    Tool,
    LifecycleTool,
    Middleware,
    /// A structured-output definition (model, literal or union).
    Model,
    /// A field of a structured-output model (named `Model.field`).
    ModelField,
    /// A task batch or conveyor id.
    Batch,
    UiComponent,
    WriterId,
    /// A module-level function of a bound Python file.
    PythonFunction,
}

impl SymbolKind {
    pub fn describe(self) -> &'static str {
        match self {
            SymbolKind::Agent => "agent",
            SymbolKind::Variable => "context variable",
            SymbolKind::Tool => "tool",
            SymbolKind::LifecycleTool => "lifecycle tool",
            SymbolKind::Middleware => "prompt middleware",
            SymbolKind::Model => "structured-output definition",
            SymbolKind::ModelField => "model field",
            SymbolKind::Batch => "task batch",
            SymbolKind::UiComponent => "UI component",
            SymbolKind::WriterId => "writer id",
            SymbolKind::PythonFunction => "Python function",
        }
    }
}

/// One definition.
#[derive(Debug, Clone)]
pub struct Definition {
    pub kind: SymbolKind,
    pub name: Name,
}

/// Index of a definition in [`SymbolTable::definitions`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DefId(pub u32);

/// What a reference resolves to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resolution {
    Definition(DefId),
    /// A name with a built-in meaning: `user`, `terminate`, middleware `all`,
    /// a primitive field type, a declarable writer id.
    Reserved(&'static str),
    Unresolved,
}

/// Where a reference is written, which decides how it resolves and how a
/// broken one is reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RefSite {
    RuleSource,
    RuleTarget,
    ConditionKey,
    ExpressionVariable,
    ToolCalled,
    ToolAgent,
    RegistryAgent,
    RegistryModel,
    FieldType,
    AgentViewAgent,
    AgentViewVariable,
    MiddlewareAgent,
    LifecycleAgent,
    VisualAgent,
    InitialAgent,
    FailureMessageKey,
    BatchTriggerAgent,
    BatchExecutionAgent,
    RecoveryTriggerAgent,
    TaskModel,
    BatchResultKey,
    RecoveryKey,
    OutcomeKey,
    TriggerAgent,
    A2aAgent,
    WriterId,
    /// A tool, lifecycle or middleware `function`, naming its Python definition.
    BoundFunction,
}

#[derive(Debug, Clone)]
pub struct Reference {
    pub kind: SymbolKind,
    pub site: RefSite,
    /// The name as written (for `${x}`, the identifier) and where.
    pub name: Name,
    pub resolution: Resolution,
}

#[derive(Debug, Clone, Default)]
pub struct SymbolTable {
    pub definitions: Vec<Definition>,
    pub references: Vec<Reference>,
    /// (kind, name) → the first definition, for constant-time lookup.
    index: crate::base::hash::HashMap<(SymbolKind, String), DefId>,
    /// Definition → the references that resolve to it.
    referrers: crate::base::hash::HashMap<DefId, Vec<u32>>,
}

impl SymbolTable {
    pub fn definition(&self, id: DefId) -> &Definition {
        &self.definitions[id.0 as usize]
    }

    /// The first definition of `kind` named `name`.
    pub fn lookup(&self, kind: SymbolKind, name: &str) -> Option<DefId> {
        self.index.get(&(kind, name.to_string())).copied()
    }

    /// Every reference that resolves to `id`.
    pub fn references_to(&self, id: DefId) -> impl Iterator<Item = &Reference> {
        self.referrers
            .get(&id)
            .into_iter()
            .flatten()
            .map(|&i| &self.references[i as usize])
    }

    /// The definition or reference under a byte offset of a file: what the
    /// cursor is on, resolved to the definition it names.
    pub fn at(&self, file: FileId, offset: u32) -> Option<DefId> {
        let inside = |n: &Name| n.file == file && n.range.start <= offset && offset <= n.range.end;
        if let Some(i) = self.definitions.iter().position(|d| inside(&d.name)) {
            return Some(DefId(i as u32));
        }
        self.references
            .iter()
            .filter(|r| inside(&r.name))
            .find_map(|r| match r.resolution {
                Resolution::Definition(id) => Some(id),
                _ => None,
            })
    }
}

/// Field type names with a built-in meaning (bundle-format §12.1).
pub const PRIMITIVE_FIELD_TYPES: &[&str] = &[
    "str",
    "string",
    "int",
    "integer",
    "bool",
    "float",
    "optional_str",
    "Optional[str]",
    "dict",
    "Dict",
    "List",
    "list",
    "optional_list",
    "optional_dict",
    "literal",
    "union",
];

struct Builder {
    table: SymbolTable,
}

impl Builder {
    fn define(&mut self, kind: SymbolKind, name: &Name) {
        let id = DefId(self.table.definitions.len() as u32);
        self.table
            .index
            .entry((kind, name.text.clone()))
            .or_insert(id);
        self.table.definitions.push(Definition {
            kind,
            name: name.clone(),
        });
    }

    fn refer(&mut self, kind: SymbolKind, site: RefSite, name: &Name) {
        let resolution = self.resolve(kind, site, &name.text);
        self.table.references.push(Reference {
            kind,
            site,
            name: name.clone(),
            resolution,
        });
    }

    fn resolve(&self, kind: SymbolKind, site: RefSite, text: &str) -> Resolution {
        let reserved = match (kind, site) {
            // `user` is the only user alias in 0.2.0, any case; `terminate` is a
            // target only. A declared agent of that name loses to the reserved meaning.
            (SymbolKind::Agent, RefSite::RuleSource | RefSite::InitialAgent)
                if text.eq_ignore_ascii_case("user") =>
            {
                Some("user")
            }
            (SymbolKind::Agent, RefSite::RuleTarget) if text.eq_ignore_ascii_case("user") => {
                Some("user")
            }
            (SymbolKind::Agent, RefSite::RuleTarget) if text.eq_ignore_ascii_case("terminate") => {
                Some("terminate")
            }
            (SymbolKind::Agent, RefSite::MiddlewareAgent) if text == "all" => Some("all"),
            (SymbolKind::Agent, RefSite::VisualAgent) if text.eq_ignore_ascii_case("user") => {
                Some("user")
            }
            (SymbolKind::Model, RefSite::FieldType) => {
                PRIMITIVE_FIELD_TYPES.iter().copied().find(|p| *p == text)
            }
            (SymbolKind::WriterId, _) => crate::schema::files::WRITER_IDS
                .iter()
                .copied()
                .find(|w| *w == text),
            _ => None,
        };
        if let Some(r) = reserved {
            return Resolution::Reserved(r);
        }
        if site == RefSite::VisualAgent {
            // ui_config matches agents after lower-casing and removing spaces and `agent`.
            let key = visual_key(text);
            return self
                .table
                .definitions
                .iter()
                .position(|d| d.kind == SymbolKind::Agent && visual_key(&d.name.text) == key)
                .map_or(Resolution::Unresolved, |i| {
                    Resolution::Definition(DefId(i as u32))
                });
        }
        match self.table.lookup(kind, text) {
            Some(id) => Resolution::Definition(id),
            None => Resolution::Unresolved,
        }
    }
}

/// How ui_config.yaml compares a visual agent entry with an agent name.
pub fn visual_key(name: &str) -> String {
    name.to_lowercase().replace(' ', "").replace("agent", "")
}

/// Builds the symbol table of a bundle.
pub fn build(bundle: &Bundle) -> SymbolTable {
    let mut b = Builder {
        table: SymbolTable::default(),
    };
    // Definitions first, so every reference can resolve.
    for agent in &bundle.agents {
        b.define(SymbolKind::Agent, &agent.name);
    }
    for variable in &bundle.variables {
        b.define(SymbolKind::Variable, &variable.name);
    }
    for tool in &bundle.tools {
        if let Some(function) = &tool.function {
            b.define(SymbolKind::Tool, function);
        }
        if let Some(component) = &tool.ui_component {
            b.define(SymbolKind::UiComponent, component);
        }
    }
    for tool in &bundle.lifecycle_tools {
        if let Some(function) = &tool.function {
            b.define(SymbolKind::LifecycleTool, function);
        }
    }
    for entry in &bundle.middleware {
        if let Some(function) = &entry.function {
            b.define(SymbolKind::Middleware, function);
        }
    }
    for model in &bundle.models {
        b.define(SymbolKind::Model, &model.name);
        for field in &model.fields {
            let qualified = Name {
                text: format!("{}.{}", model.name.text, field.name.text),
                ..field.name.clone()
            };
            b.define(SymbolKind::ModelField, &qualified);
        }
    }
    for batch in &bundle.task_batches {
        b.define(SymbolKind::Batch, &batch.id);
    }
    for file in &bundle.python {
        for (name, range) in &file.module.defined {
            b.define(
                SymbolKind::PythonFunction,
                &Name {
                    text: name.clone(),
                    file: file.file,
                    range: *range,
                },
            );
        }
    }

    // Counted first: a large bundle has hundreds of thousands of
    // references, held for the whole analysis, and a vector grown by
    // doubling would hold the old and the new copy at once (the peak of a
    // 5,000-agent check) and keep up to half its room unused.
    let mut count = bundle.bindings.len();
    each_reference(bundle, |_, _, _| count += 1);
    b.table.references.reserve_exact(count);
    each_reference(bundle, |kind, site, name| b.refer(kind, site, name));
    // A bound `function` resolves to the definition in the file it resolved to.
    for binding in &bundle.bindings {
        let (super::python::BindingTarget::File(file), Some(function)) =
            (&binding.target, &binding.function)
        else {
            continue;
        };
        let found = b.table.definitions.iter().rposition(|d| {
            d.kind == SymbolKind::PythonFunction
                && d.name.file == *file
                && d.name.text == function.text
        });
        b.table.references.push(Reference {
            kind: SymbolKind::PythonFunction,
            site: RefSite::BoundFunction,
            name: function.clone(),
            resolution: found.map_or(Resolution::Unresolved, |i| {
                Resolution::Definition(DefId(i as u32))
            }),
        });
    }
    for (i, r) in b.table.references.iter().enumerate() {
        if let Resolution::Definition(id) = r.resolution {
            b.table.referrers.entry(id).or_default().push(i as u32);
        }
    }
    b.table
}

/// Calls `f` on every name the bundle's files use to refer to a symbol,
/// in the order of the symbol table's references (bound Python functions,
/// resolved by file, come after these).
fn each_reference(bundle: &Bundle, mut f: impl FnMut(SymbolKind, RefSite, &Name)) {
    use RefSite as S;
    use SymbolKind as K;
    if let Some(o) = &bundle.orchestrator {
        if let Some(a) = &o.initial_agent {
            f(K::Agent, S::InitialAgent, a);
        }
        if let Some(v) = &o.failure_message_key {
            f(K::Variable, S::FailureMessageKey, v);
        }
    }
    for rule in &bundle.rules {
        f(K::Agent, S::RuleSource, &rule.source);
        f(K::Agent, S::RuleTarget, &rule.target);
        if let Some(key) = &rule.condition_key {
            f(K::Variable, S::ConditionKey, key);
        }
        for r in &rule.expression_refs {
            f(K::Variable, S::ExpressionVariable, r);
        }
        if let Some(tool) = &rule.tool_name {
            f(K::Tool, S::ToolCalled, tool);
        }
    }
    for variable in &bundle.variables {
        for trigger in &variable.triggers {
            if let Some(agent) = &trigger.agent {
                f(K::Agent, S::TriggerAgent, agent);
            }
        }
        for writer in variable.writer_ids.iter().flatten() {
            f(K::WriterId, S::WriterId, writer);
        }
    }
    for view in &bundle.agent_views {
        f(K::Agent, S::AgentViewAgent, &view.agent);
        for v in &view.variables {
            f(K::Variable, S::AgentViewVariable, v);
        }
    }
    for tool in &bundle.tools {
        for agent in &tool.agents {
            f(K::Agent, S::ToolAgent, agent);
        }
        if let Some(outcome) = &tool.outcome {
            for key in [&outcome.context_key, &outcome.attempts_key]
                .into_iter()
                .flatten()
            {
                f(K::Variable, S::OutcomeKey, key);
            }
        }
    }
    for tool in &bundle.lifecycle_tools {
        if let Some(agent) = &tool.agent {
            f(K::Agent, S::LifecycleAgent, agent);
        }
    }
    for entry in &bundle.middleware {
        if let Some(agent) = &entry.agent {
            f(K::Agent, S::MiddlewareAgent, agent);
        }
    }
    for entry in &bundle.registry {
        f(K::Agent, S::RegistryAgent, &entry.agent);
        if let Some(model) = &entry.model {
            f(K::Model, S::RegistryModel, model);
        }
    }
    for model in &bundle.models {
        if model.kind == ModelKind::Union {
            for variant in &model.variants {
                if !matches!(variant.text.to_ascii_lowercase().as_str(), "null" | "none") {
                    f(K::Model, S::FieldType, variant);
                }
            }
        }
        for field in &model.fields {
            for name in field_type_names(field) {
                f(K::Model, S::FieldType, &name);
            }
        }
    }
    if let Some(agents) = bundle
        .ui_config
        .as_ref()
        .and_then(|u| u.visual_agents.as_ref())
    {
        for agent in agents {
            f(K::Agent, S::VisualAgent, agent);
        }
    }
    for agent in &bundle.a2a_agents {
        f(K::Agent, S::A2aAgent, &agent.name);
    }
    for batch in &bundle.task_batches {
        if let Some(agent) = &batch.trigger_agent {
            f(K::Agent, S::BatchTriggerAgent, agent);
        }
        for agent in &batch.allowed_execution_agents {
            f(K::Agent, S::BatchExecutionAgent, agent);
        }
        if !batch.from_conveyor {
            if let Some(model) = &batch.task_model {
                match task_model_variable(model) {
                    Some(variable) => f(K::Variable, S::TaskModel, &variable),
                    None => f(K::Model, S::TaskModel, model),
                }
            }
        }
        for key in [&batch.result_context_key, &batch.result_status_key]
            .into_iter()
            .flatten()
        {
            f(K::Variable, S::BatchResultKey, key);
        }
        if let Some(recovery) = &batch.recovery {
            if let Some(agent) = &recovery.trigger_agent {
                f(K::Agent, S::RecoveryTriggerAgent, agent);
            }
            let keys = [
                &recovery.request_key,
                &recovery.outcome_key,
                &recovery.status_key,
            ];
            for key in keys.into_iter().flatten().chain(&recovery.input_keys) {
                f(K::Variable, S::RecoveryKey, key);
            }
        }
    }
}

/// `${name}` as a task_model: the variable it names, with the name's range.
pub fn task_model_variable(model: &Name) -> Option<Name> {
    let inner = model.text.strip_prefix("${")?.strip_suffix('}')?;
    let lead = inner.len() - inner.trim_start().len();
    Some(Name {
        text: inner.trim().to_string(),
        file: model.file,
        range: crate::base::TextRange::new(
            model.range.start + 2 + lead as u32,
            model.range.start + 2 + lead as u32 + inner.trim().len() as u32,
        ),
    })
}

/// The type names a structured-output field refers to: its `type` (or the
/// name inside `list[...]`), `items`, and `variants`, each with an exact range
/// when it is written plainly.
pub fn field_type_names(field: &super::ModelField) -> Vec<Name> {
    let mut names = Vec::new();
    if let Some(ty) = &field.field_type {
        match ty
            .text
            .strip_prefix("list[")
            .and_then(|r| r.strip_suffix(']'))
        {
            Some(inner) => names.push(Name {
                text: inner.trim().to_string(),
                file: ty.file,
                range: ty.range,
            }),
            None => names.push(ty.clone()),
        }
    }
    names.extend(field.items.iter().cloned());
    names.extend(
        field
            .variants
            .iter()
            .filter(|v| !matches!(v.text.to_ascii_lowercase().as_str(), "null" | "none"))
            .cloned(),
    );
    names
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{analyze_bundle, MemoryFs};

    #[test]
    fn definitions_and_references_resolve_across_files() {
        let mut fs = MemoryFs::new();
        let rules = "transition_rules:\n  - {source_agent: user, target_agent: Intake, transition_type: after_turn}\n  - {source_agent: Intake, target_agent: terminate, transition_type: condition, condition_type: context_equals, condition_key: done, condition_value: true}\n  - {source_agent: Intake, target_agent: user, transition_type: after_turn}\n";
        fs.insert("/w/S/orchestrator.yaml", "schema_version: mozaiks.orchestrator.v1\nworkflow_name: S\nworkflow_startup_mode: UserDriven\ninitial_agent: Intake\n");
        fs.insert(
            "/w/S/agents.yaml",
            "agents:\n  - {name: Intake, system_message: hi, structured_outputs_required: false}\n",
        );
        fs.insert("/w/S/transition_graph.yaml", rules);
        fs.insert("/w/S/context_variables.yaml", "definitions:\n  done: {type: boolean, source: {type: state, default: false}}\nagents:\n  Intake: {variables: [done]}\n");
        fs.insert(
            "/w/S/tools.yaml",
            "tools:\n  - {agent: Intake, file: t.py, function: finish, tool_type: Agent_Tool}\n",
        );
        fs.insert(
            "/w/S/tools/t.py",
            "def finish(context_variables=None):\n    context_variables.set('done', True)\n",
        );
        let analysis = analyze_bundle(&fs, std::path::Path::new("/w/S"));
        let symbols = &analysis.symbols;
        let intake = symbols.lookup(SymbolKind::Agent, "Intake").unwrap();
        // initial_agent, a rule target, two rule sources, the view key and the tool agent.
        let sites: Vec<RefSite> = symbols.references_to(intake).map(|r| r.site).collect();
        assert_eq!(sites.len(), 6, "{sites:?}");
        // The cursor on `Intake` in transition_graph.yaml names the agents.yaml definition.
        let graph = analysis.bundle.file_at("transition_graph.yaml").unwrap();
        let offset = rules.find("target_agent: Intake").unwrap() as u32 + 15;
        assert_eq!(symbols.at(graph.id, offset), Some(intake));
        // `user` and `terminate` are reserved, not unresolved.
        assert!(symbols
            .references
            .iter()
            .filter(|r| r.kind == SymbolKind::Agent)
            .all(|r| r.resolution != Resolution::Unresolved));
        // The tool's function resolves into the Python file.
        let def = symbols
            .lookup(SymbolKind::PythonFunction, "finish")
            .unwrap();
        assert_eq!(symbols.references_to(def).count(), 1);
        let py = analysis
            .bundle
            .file(symbols.definition(def).name.file)
            .unwrap();
        assert_eq!(py.relative, "tools/t.py");
        let done = symbols.lookup(SymbolKind::Variable, "done").unwrap();
        assert_eq!(symbols.references_to(done).count(), 2);
        assert!(
            analysis.diagnostics.is_empty(),
            "{:?}",
            analysis.diagnostics
        );
    }
}
