//! The lowered, typed bundle: agents, rules, variables, tools, models, batches.
//! Every name and value keeps its file and byte range. Built from validated
//! (possibly partial) files: what is valid is kept, what is not was reported.

pub mod authority;
pub mod auto_tool_args;
pub mod domains;
pub(crate) mod file_cache;
mod lower;
pub mod mentions;
pub mod python;
pub mod python_imports;
mod shadowed;
pub mod symbols;
pub mod writes;

use std::path::PathBuf;

pub use lower::lower;
pub use symbols::{SymbolKind, SymbolTable};

use crate::base::{FileId, FileKind, TextRange};
use crate::syntax::{LineIndex, Node};

/// One file of the bundle as read.
#[derive(Debug, Clone)]
pub struct SourceFile {
    pub id: FileId,
    /// Path relative to the bundle folder, with `/` separators.
    pub relative: String,
    pub kind: Option<FileKind>,
    /// Shared with the file memos.
    pub text: std::sync::Arc<str>,
    pub line_index: LineIndex,
}

/// A name or text value with where it was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Name {
    pub text: String,
    pub file: FileId,
    pub range: TextRange,
}

impl Name {
    pub fn as_str(&self) -> &str {
        &self.text
    }
}

#[derive(Debug, Clone, Default)]
pub struct Bundle {
    /// The bundle folder's name (what workflow_name must match).
    pub folder_name: String,
    pub dir: PathBuf,
    pub files: Vec<SourceFile>,
    pub orchestrator: Option<Orchestrator>,
    pub agents: Vec<Agent>,
    pub rules: Vec<TransitionRule>,
    pub variables: Vec<Variable>,
    pub agent_views: Vec<AgentView>,
    pub tools: Vec<Tool>,
    pub lifecycle_tools: Vec<LifecycleTool>,
    pub registry: Vec<RegistryEntry>,
    pub models: Vec<ModelDef>,
    pub middleware: Vec<Middleware>,
    /// Present when ui_config.yaml exists.
    pub ui_config: Option<UiConfig>,
    pub a2a_agents: Vec<A2aAgent>,
    /// Explicit batches and conveyors, conveyors expanded as the reference does.
    pub task_batches: Vec<TaskBatch>,
    /// True when extended_orchestration/task_batches.yaml exists.
    pub has_task_batches_file: bool,
    /// Where each tool, lifecycle tool and middleware function lives.
    pub bindings: Vec<python::Binding>,
    /// The Python files those bindings name, parsed.
    pub python: Vec<python::PythonFile>,
    /// The modules those import from the bundle or `_shared`, parsed.
    pub imported_python: Vec<python_imports::ImportedModule>,
    /// What the names they import stand for.
    pub python_links: python_imports::Links,
    /// Declared variables and models that no YAML reference names but that
    /// some code, UI or data file of the bundle or of the workflows root's
    /// shared folders mentions (see [`mentions::scan`]). Set once, through a
    /// shared reference: the prompt checks read the bundle meanwhile.
    pub mentioned_elsewhere: std::sync::OnceLock<std::collections::BTreeSet<String>>,
    /// Name → position in `agents` / `variables` (first wins), built by [`Bundle::index`].
    agent_index: crate::base::hash::HashMap<String, usize>,
    variable_index: crate::base::hash::HashMap<String, usize>,
    registry_index: crate::base::hash::HashMap<String, usize>,
    model_index: crate::base::hash::HashMap<String, usize>,
    /// Where the names Python files build are kept (see
    /// `syntax::python_keys::BuiltMemo`): handed down by the caller's cache,
    /// so that the lazily computed domains and the mention scan share it.
    pub(crate) built: std::sync::Arc<crate::syntax::python_keys::BuiltMemo>,
    /// The value domains of the variables, computed on first use.
    domains: std::sync::OnceLock<domains::Domains>,
    /// (shadowed rule, the earlier rule that shadows it), computed on first
    /// use: the graph, its checks and the exhaustiveness proofs all ask.
    shadowed: std::sync::OnceLock<Vec<(usize, usize)>>,
}

impl Bundle {
    pub fn file(&self, id: FileId) -> Option<&SourceFile> {
        self.files.get(id.0 as usize)
    }

    /// The file at a path relative to the bundle folder (`tools/ops.py`).
    pub fn file_at(&self, relative: &str) -> Option<&SourceFile> {
        self.files.iter().find(|f| f.relative == relative)
    }

    /// Where a file of the bundle is on disk: the folder joined with its
    /// relative path, `..` resolved (`_shared` modules get a clean path).
    pub fn path_of(&self, file: &SourceFile) -> std::path::PathBuf {
        crate::base::fs::normalize(&self.dir.join(&file.relative))
    }

    pub fn file_of_kind(&self, kind: FileKind) -> Option<&SourceFile> {
        self.files.iter().find(|f| f.kind == Some(kind))
    }

    /// Whether code, UI or data files mention `name` (see `mentioned_elsewhere`).
    pub fn is_mentioned_elsewhere(&self, name: &str) -> bool {
        self.mentioned_elsewhere
            .get()
            .is_some_and(|names| names.contains(name))
    }

    /// Builds the name indexes once every file is lowered (lookups stay
    /// constant-time on bundles with thousands of agents).
    pub fn index(&mut self) {
        self.domains = Default::default();
        self.shadowed = Default::default();
        self.agent_index.clear();
        self.variable_index.clear();
        self.registry_index.clear();
        self.model_index.clear();
        for (i, m) in self.models.iter().enumerate() {
            self.model_index.entry(m.name.text.clone()).or_insert(i);
        }
        for (i, a) in self.agents.iter().enumerate() {
            self.agent_index.entry(a.name.text.clone()).or_insert(i);
        }
        for (i, v) in self.variables.iter().enumerate() {
            self.variable_index.entry(v.name.text.clone()).or_insert(i);
        }
        // The last registry entry for an agent wins, as in a YAML mapping.
        for (i, r) in self.registry.iter().enumerate() {
            self.registry_index.insert(r.agent.text.clone(), i);
        }
    }

    /// Rules that can never fire because an earlier rule of the same source
    /// has the same condition (or is its second `after_turn`), with that
    /// earlier rule (computed once).
    pub fn shadowed_rules(&self) -> &[(usize, usize)] {
        self.shadowed.get_or_init(|| shadowed::shadowed_rules(self))
    }

    /// The value domain of every declared variable (computed once).
    pub fn domains(&self) -> &domains::Domains {
        self.domains.get_or_init(|| domains::Domains::compute(self))
    }

    pub fn variable(&self, name: &str) -> Option<&Variable> {
        match self.variable_index.get(name) {
            Some(&i) => self.variables.get(i),
            None if self.variable_index.is_empty() => {
                self.variables.iter().find(|v| v.name.text == name)
            }
            None => None,
        }
    }

    /// The structured-output definition named `name` (the first one).
    pub fn model(&self, name: &str) -> Option<&ModelDef> {
        match self.model_index.get(name) {
            Some(&i) => self.models.get(i),
            None if self.model_index.is_empty() => self.models.iter().find(|m| m.name.text == name),
            None => None,
        }
    }

    /// The agent a rule or the orchestrator almost certainly meant by a
    /// name that is no agent (`ClasifierAgent`): the same near miss MZ201
    /// reports with its fix. The routing checks reason about the graph as
    /// meant, so one misspelt name is one finding, not also every path it
    /// breaks. `None` for an agent, `user`, `terminate` or no close name.
    pub fn meant_agent(&self, name: &str) -> Option<&str> {
        if self.agent(name).is_some()
            || name.eq_ignore_ascii_case("user")
            || name.eq_ignore_ascii_case("terminate")
        {
            return None;
        }
        crate::diagnostics::did_you_mean(name, self.agents.iter().map(|a| a.name.text.as_str()))
    }

    pub fn agent(&self, name: &str) -> Option<&Agent> {
        match self.agent_index.get(name) {
            Some(&i) => self.agents.get(i),
            None if self.agent_index.is_empty() => self.agents.iter().find(|a| a.name.text == name),
            None => None,
        }
    }

    /// The model an agent's registry entry names (`None` for no entry or null).
    pub fn registry_model(&self, agent: &str) -> Option<&Name> {
        let entry = match self.registry_index.get(agent) {
            Some(&i) => self.registry.get(i),
            None if self.registry_index.is_empty() => {
                self.registry.iter().rev().find(|r| r.agent.text == agent)
            }
            None => None,
        };
        entry.and_then(|r| r.model.as_ref())
    }
}

#[derive(Debug, Clone)]
pub struct Orchestrator {
    pub file: FileId,
    pub workflow_name: Option<Name>,
    pub startup_mode: Option<Name>,
    pub max_turns: i128,
    pub initial_agent: Option<Name>,
    pub initial_message: Option<Name>,
    pub failure_message_key: Option<Name>,
}

#[derive(Debug, Clone)]
pub struct Agent {
    pub name: Name,
    pub structured_outputs_required: Option<bool>,
    pub system_message: Option<Name>,
    pub prompt_sections: Vec<PromptSection>,
    pub prompt_sections_custom: Vec<PromptSection>,
    /// The whole entry.
    pub range: TextRange,
}

impl Agent {
    /// The sections mozaiks sends as the prompt (runtime-semantics §1.5 a):
    /// `prompt_sections`, else `prompt_sections_custom`; when both are empty
    /// the `system_message` is sent instead.
    pub fn sent_sections(&self) -> &[PromptSection] {
        if self.prompt_sections.is_empty() {
            &self.prompt_sections_custom
        } else {
            &self.prompt_sections
        }
    }
}

#[derive(Debug, Clone)]
pub struct PromptSection {
    pub id: Option<Name>,
    pub heading: Name,
    pub content: Name,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransitionType {
    AfterTurn,
    Condition,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConditionType {
    ContextEquals,
    ContextExpression,
    ToolCalled,
}

#[derive(Debug, Clone)]
pub struct TransitionRule {
    pub file: FileId,
    /// Position in transition_rules.
    pub index: usize,
    pub range: TextRange,
    pub source: Name,
    pub target: Name,
    pub transition_type: TransitionType,
    pub condition_type: Option<ConditionType>,
    pub condition_key: Option<Name>,
    /// The YAML value as written (`None` when the key is absent).
    pub condition_value: Option<Node>,
    // The keys below are absent from most rules: boxed, an absent one costs
    // 8 bytes instead of a `Name`'s 40 (a third of a large graph's rules).
    pub context_expression: Option<Box<Name>>,
    /// `${var}` references inside context_expression, with their exact ranges.
    pub expression_refs: Vec<Name>,
    pub tool_name: Option<Box<Name>>,
    pub transition_target: Option<Box<Name>>,
    pub termination_reason: Option<Box<Name>>,
}

#[derive(Debug, Clone)]
pub struct Variable {
    pub name: Name,
    pub declared_type: Option<Name>,
    pub authority_class: Option<Name>,
    pub writer_ids: Option<Vec<Name>>,
    pub persisted: Option<bool>,
    pub routing: Option<bool>,
    pub authorization: Option<bool>,
    pub model_visible: Option<bool>,
    pub source_type: Option<Name>,
    /// `source.env_var` of `config` variables.
    pub env_var: Option<Name>,
    /// `source.required`: a runtime or config value mozaiks refuses to
    /// start without.
    pub source_required: Option<bool>,
    pub default: Option<Node>,
    pub triggers: Vec<ContextTrigger>,
    /// The definition's mapping.
    pub range: TextRange,
}

#[derive(Debug, Clone)]
pub struct ContextTrigger {
    pub trigger_type: Name,
    /// The trigger matches with `equals` (infers the sentinel writer).
    pub has_equals: bool,
    /// `match` is written but names none of equals/contains/regex.
    pub empty_match: Option<TextRange>,
    /// `match.equals` / `match.contains` / `match.regex`.
    pub equals: Option<Name>,
    pub contains: Option<Name>,
    pub regex: Option<Name>,
    /// `ui_response` triggers: the dotted path in the tool's answer.
    pub response_key: Option<Name>,
    pub agent: Option<Name>,
    pub tool: Option<Name>,
    pub range: TextRange,
}

#[derive(Debug, Clone)]
pub struct AgentView {
    pub agent: Name,
    pub variables: Vec<Name>,
}

#[derive(Debug, Clone)]
pub struct Tool {
    pub file: FileId,
    pub range: TextRange,
    /// One or more owning agents.
    pub agents: Vec<Name>,
    /// True when `agent` was written as a list.
    pub agent_is_list: bool,
    pub python_file: Option<Name>,
    pub function: Option<Name>,
    pub tool_type: Option<Name>,
    pub auto_tool_call: bool,
    pub bind_to_agent: bool,
    pub outcome: Option<Outcome>,
    pub ui_component: Option<Name>,
    /// What the model is told the tool does.
    pub description: Option<Name>,
}

#[derive(Debug, Clone)]
pub struct Outcome {
    pub range: TextRange,
    pub context_key: Option<Name>,
    pub attempts_key: Option<Name>,
    pub values: Vec<Name>,
    pub error_value: Option<Name>,
    /// The key read from the tool's return mapping (`status` when absent).
    pub result_field: Option<Name>,
    pub max_attempts: i128,
    pub retry_on: Vec<Name>,
}

#[derive(Debug, Clone)]
pub struct LifecycleTool {
    pub trigger: Option<Name>,
    pub agent: Option<Name>,
    pub python_file: Option<Name>,
    pub function: Option<Name>,
    pub range: TextRange,
}

#[derive(Debug, Clone)]
pub struct RegistryEntry {
    pub agent: Name,
    pub model: Option<Name>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelKind {
    Model,
    Literal,
    Union,
}

#[derive(Debug, Clone)]
pub struct ModelDef {
    pub name: Name,
    pub kind: ModelKind,
    pub fields: Vec<ModelField>,
    /// `type: union` members.
    pub variants: Vec<Name>,
    /// `type: literal` values, as YAML produced them.
    pub values: Vec<Node>,
}

#[derive(Debug, Clone)]
pub struct ModelField {
    pub name: Name,
    pub field_type: Option<Name>,
    pub items: Option<Name>,
    pub variants: Vec<Name>,
    pub has_default: bool,
    /// The `default` value when it is a scalar or collection as written.
    pub default: Option<Node>,
    /// Inline `type: literal` values.
    pub values: Vec<Node>,
}

#[derive(Debug, Clone)]
pub struct Middleware {
    pub agent: Option<Name>,
    pub filename: Option<Name>,
    pub function: Option<Name>,
    pub range: TextRange,
}

#[derive(Debug, Clone)]
pub struct UiConfig {
    pub file: FileId,
    /// The `visual_agents` key, when written.
    pub key_range: Option<TextRange>,
    /// The list; `None` when null or absent (every agent message is hidden).
    pub visual_agents: Option<Vec<Name>>,
    /// `visual_agents: null` (or `~`) written out: mozaiks documents it as
    /// the deliberate "hide every agent message".
    pub explicit_null: bool,
}

#[derive(Debug, Clone)]
pub struct A2aAgent {
    pub name: Name,
    pub url: Option<Name>,
    pub enabled: bool,
}

#[derive(Debug, Clone)]
pub struct TaskBatch {
    pub file: FileId,
    /// True when this batch is an expanded conveyor.
    pub from_conveyor: bool,
    pub id: Name,
    pub trigger_agent: Option<Name>,
    pub source_kind: Option<Name>,
    /// Result keys; for conveyors derived as `<id>_results` / `<id>_status`,
    /// with the id's range.
    pub result_context_key: Option<Name>,
    pub result_status_key: Option<Name>,
    pub recovery: Option<Recovery>,
    pub allowed_execution_agents: Vec<Name>,
    /// `source.path` (conveyors: `DecompositionPlan.tasks`, with the id's range).
    pub source_path: Option<Name>,
    /// `source.task_model` (conveyors: `DecomposedTask`, with the id's range).
    pub task_model: Option<Name>,
    /// Task item fields the worker reads, as declared or defaulted.
    pub agent_field: Name,
    pub prompt_field: Name,
    pub dependency_field: Name,
    pub context_fields: Vec<Name>,
    pub execution: BatchExecution,
}

/// The scheduling settings of a batch, defaulted as the reference does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchExecution {
    pub concurrency: usize,
    /// `fail_batch`, `continue_with_available` or `collect_errors`.
    pub failure_policy: String,
    pub retry_limit: u32,
    /// Per attempt; `None` means 120 s.
    pub timeout_seconds: Option<u64>,
    pub require_owned_paths: bool,
}

#[derive(Debug, Clone)]
pub struct Recovery {
    pub trigger_agent: Option<Name>,
    pub request_key: Option<Name>,
    pub outcome_key: Option<Name>,
    pub status_key: Option<Name>,
    pub input_keys: Vec<Name>,
}
