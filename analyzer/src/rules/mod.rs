//! The rule registry: every diagnostic mzk can emit, with a stable code, a
//! kebab-case name, a default severity and a documentation page
//! (`docs/rules/<CODE>.md`, printed by `mzk explain`).
//!
//! Codes are stable: a retired rule keeps its number forever.

use crate::base::Severity;

mod selector;
pub use selector::Selector;

/// Metadata of one rule.
#[derive(Debug)]
pub struct RuleInfo {
    pub code: &'static str,
    pub name: &'static str,
    pub severity: Severity,
    /// The group it belongs to, which decides whether it runs by default.
    pub group: Group,
    /// What it reads to decide.
    pub scope: Scope,
    /// One line: what the rule checks.
    pub summary: &'static str,
    /// The full documentation page (Markdown).
    pub doc: &'static str,
}

/// A named set of rules, selectable like a code (`extend-select =
/// ["context-budget"]`). The default selection is the groups that are on by
/// default: high-confidence findings about what breaks or misleads at run
/// time, dead declarations, and prompt findings worth a change. The others
/// are opt-in, as clippy's pedantic group and ruff's non-default rules are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Group {
    /// What fails, is refused or silently misbehaves at run time.
    Correctness,
    /// Declarations nothing uses, and suppressions that suppress nothing.
    Hygiene,
    /// Prompt material that costs tokens on every call for nothing.
    Prompt,
    /// Accurate but debatable prompt findings (duplicated sections).
    Pedantic,
    /// Per-variable findings on what each agent's view costs.
    ContextBudget,
}

impl Group {
    pub const ALL: &'static [Group] = &[
        Group::Correctness,
        Group::Hygiene,
        Group::Prompt,
        Group::Pedantic,
        Group::ContextBudget,
    ];

    /// The name used in selectors and listings.
    pub fn name(self) -> &'static str {
        match self {
            Group::Correctness => "correctness",
            Group::Hygiene => "hygiene",
            Group::Prompt => "prompt",
            Group::Pedantic => "pedantic",
            Group::ContextBudget => "context-budget",
        }
    }

    /// Whether the group's rules run without being selected.
    pub fn default_enabled(self) -> bool {
        matches!(self, Group::Correctness | Group::Hygiene | Group::Prompt)
    }

    /// One line: what the group holds.
    pub fn summary(self) -> &'static str {
        match self {
            Group::Correctness => "what fails, is refused or silently misbehaves at run time",
            Group::Hygiene => "declarations nothing uses, suppressions that suppress nothing",
            Group::Prompt => "prompt material that costs tokens on every model call for nothing",
            Group::Pedantic => "accurate but debatable prompt findings (opt-in)",
            Group::ContextBudget => "what each variable in an agent's view costs (opt-in)",
        }
    }

    /// Finds a group by name (case-insensitive).
    pub fn lookup(name: &str) -> Option<Group> {
        Group::ALL
            .iter()
            .copied()
            .find(|g| g.name().eq_ignore_ascii_case(name.trim()))
    }
}

/// What a rule reads to decide: the file its finding is in alone (YAML
/// syntax, a file's own contract, expression and Python syntax), or several
/// files of the bundle. Findings of the latter are held back while any file
/// of the bundle cannot be read (see `analysis::hold_back`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    File,
    Bundle,
}

macro_rules! rules {
    ($( $variant:ident => ($code:literal, $name:literal, $severity:ident, $group:ident, $scope:ident, $summary:literal) ),* $(,)?) => {
        /// Every rule mzk knows.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Rule { $( $variant ),* }

        impl Rule {
            pub const ALL: &'static [Rule] = &[ $( Rule::$variant ),* ];

            pub fn info(self) -> &'static RuleInfo {
                match self {
                    $( Rule::$variant => {
                        static INFO: RuleInfo = RuleInfo {
                            code: $code,
                            name: $name,
                            severity: Severity::$severity,
                            group: Group::$group,
                            scope: Scope::$scope,
                            summary: $summary,
                            doc: include_str!(concat!("../../../docs/rules/", $code, ".md")),
                        };
                        &INFO
                    } )*
                }
            }
        }
    };
}

rules! {
    // MZ0xx: YAML syntax, as PyYAML `safe_load` reads it.
    YamlSyntax => ("MZ001", "yaml-syntax-error", Error, Correctness, File, "The file is not valid YAML"),
    DuplicateKey => ("MZ002", "duplicate-key", Warning, Correctness, File, "A mapping repeats a key; the last value silently wins"),
    AliasExpansion => ("MZ003", "alias-expansion-limit", Error, Correctness, File, "Aliases expand past the safety limit, or an alias refers to itself"),
    MultipleDocuments => ("MZ004", "multiple-documents", Error, Correctness, File, "The file holds more than one YAML document"),
    InvalidEncoding => ("MZ005", "invalid-encoding", Error, Correctness, File, "The file is not UTF-8 or contains characters YAML forbids"),
    TabCharacter => ("MZ006", "tab-character", Error, Correctness, File, "A tab outside a quoted or block scalar"),
    FileTooLarge => ("MZ007", "file-too-large", Error, Correctness, File, "The file is larger than the analyzer reads"),
    NestingTooDeep => ("MZ008", "nesting-too-deep", Error, Correctness, File, "Collections are nested deeper than the analyzer reads"),
    InvalidScalar => ("MZ009", "invalid-scalar", Error, Correctness, File, "A scalar cannot be constructed (impossible date, malformed number, unsupported tag)"),
    RootNotMapping => ("MZ010", "root-not-mapping", Error, Correctness, File, "The document root is not a mapping"),

    // MZ1xx: the contracts mozaiks 0.2.0 enforces when it loads a bundle.
    UnknownKey => ("MZ101", "unknown-key", Error, Correctness, File, "A key the file's contract does not define"),
    MissingKey => ("MZ102", "missing-required-key", Error, Correctness, File, "A required key is missing"),
    WrongType => ("MZ103", "wrong-type", Error, Correctness, File, "A value of the wrong type"),
    InvalidEnumValue => ("MZ104", "invalid-enum-value", Error, Correctness, File, "A value outside the allowed set"),
    OutOfRange => ("MZ105", "value-out-of-range", Error, Correctness, File, "A number outside its allowed range"),
    EmptyValue => ("MZ106", "empty-value", Error, Correctness, File, "A required text or list is empty or blank"),
    InvalidName => ("MZ107", "invalid-name", Error, Correctness, File, "A name that is reserved, blank or padded with whitespace"),
    DuplicateName => ("MZ108", "duplicate-name", Error, Correctness, File, "Two entries share a name that must be unique"),
    TransitionRuleShape => ("MZ109", "transition-rule-shape", Error, Correctness, File, "A transition rule's fields do not fit its transition_type/condition_type"),
    ToolUiContract => ("MZ110", "tool-ui-contract", Error, Correctness, File, "A tool's ui/ui_contract does not fit its tool_type, or its realization is wrong"),
    ToolOutcomeSpec => ("MZ111", "tool-outcome-spec", Error, Correctness, File, "A tool outcome block breaks its own contract"),
    StructuredOutputShape => ("MZ112", "structured-output-shape", Error, Correctness, File, "A structured-output field or definition misses what its type needs"),
    MissingPrompt => ("MZ113", "missing-prompt", Error, Correctness, File, "An agent has no prompt_sections, prompt_sections_custom or system_message"),
    IncompleteTrigger => ("MZ114", "incomplete-trigger", Error, Correctness, File, "A trigger misses the fields its type needs"),
    LifecycleAgent => ("MZ115", "lifecycle-agent-not-allowed", Error, Correctness, File, "A run-level lifecycle trigger names an agent"),
    TaskBatchRecovery => ("MZ116", "task-batch-recovery", Error, Correctness, File, "A task batch recovery block breaks its rules"),
    LaxCoercion => ("MZ117", "lax-coercion", Warning, Correctness, File, "A quoted number or boolean that mozaiks only accepts through lax coercion"),
    StringifiedValue => ("MZ118", "stringified-value", Warning, Correctness, File, "A text field given a non-string value that mozaiks silently converts with str()"),
    RegistryModel => ("MZ119", "registry-model-reference", Error, Correctness, File, "A structured_outputs registry entry does not name a `type: model` definition"),
    WorkflowNameMismatch => ("MZ120", "workflow-name-mismatch", Error, Correctness, File, "orchestrator workflow_name does not match the bundle folder"),
    UndeclaredVariable => ("MZ121", "undeclared-context-variable", Error, Correctness, Bundle, "A context variable is used but not declared in context_variables.yaml"),
    FailureMessageKey => ("MZ122", "failure-message-key", Error, Correctness, Bundle, "failure_message_key does not name a declared `type: string` variable"),
    OutcomeContract => ("MZ123", "outcome-contract", Error, Correctness, Bundle, "A tool outcome's variables or routes break the cross-file outcome contract"),

    // MZ2xx: references across files (beyond the reference validator).
    UnknownAgent => ("MZ201", "unknown-agent", Error, Correctness, Bundle, "A reference to an agent that agents.yaml does not define"),
    UnknownVariable => ("MZ202", "unknown-variable", Warning, Correctness, Bundle, "A `${var}` task_model names an undeclared context variable"),
    ReservedAgentName => ("MZ203", "reserved-agent-name", Warning, Correctness, Bundle, "An agent is named `user` or `terminate`, which the reserved meaning shadows"),
    ToolCalledTarget => ("MZ204", "tool-called-target", Warning, Correctness, Bundle, "A tool_called condition names a tool its source agent cannot call"),
    UnknownVisualAgent => ("MZ205", "unknown-visual-agent", Warning, Correctness, Bundle, "A ui_config visual agent matches no agent"),
    UnknownA2aAgent => ("MZ206", "unknown-a2a-agent", Warning, Correctness, Bundle, "An a2a.yaml agent has no agents.yaml entry and is ignored"),
    DuplicateTool => ("MZ207", "duplicate-tool", Warning, Correctness, Bundle, "Two tools with the same function are bound to one agent"),
    MissingInitialAgent => ("MZ208", "missing-initial-agent", Error, Correctness, Bundle, "orchestrator.yaml sets no initial_agent"),
    TransitionTarget => ("MZ209", "transition-target", Error, Correctness, Bundle, "A transition_target the graph compiler refuses, or one that does not fit the target agent"),
    HiddenAgentMessages => ("MZ210", "hidden-agent-messages", Warning, Correctness, Bundle, "ui_config.yaml hides every agent message (visual_agents null or missing)"),
    UnusedVariable => ("MZ211", "unused-variable", Warning, Hygiene, Bundle, "A context variable that nothing in the bundle or its shared code refers to"),

    // MZ3xx: the transition graph.
    UnreachableAgent => ("MZ301", "unreachable-agent", Warning, Correctness, Bundle, "An agent no chain of rules leads to from the entry"),
    NoTransitionMatched => ("MZ302", "no-transition-matched", Warning, Correctness, Bundle, "A reachable agent after whose turn no rule can match"),
    ShadowedRule => ("MZ303", "shadowed-rule", Warning, Correctness, Bundle, "A rule that can never fire because an earlier rule always wins"),
    RoutingTrap => ("MZ304", "routing-trap", Warning, Correctness, Bundle, "An agent from which no rule path reaches terminate or user"),
    PauseWithoutUserRule => ("MZ305", "pause-without-user-rule", Warning, Correctness, Bundle, "A rule pauses for the user but no rule routes the user's reply"),
    TerminateUnreachable => ("MZ306", "terminate-unreachable", Warning, Correctness, Bundle, "No chain of rules from the entry reaches terminate"),
    UncoveredAssignment => ("MZ307", "uncovered-assignment", Warning, Correctness, Bundle, "Values of the variables a source's rules read for which no rule matches and there is no fallback"),
    CoveredRule => ("MZ308", "covered-rule", Warning, Correctness, Bundle, "A condition that only holds where earlier rules of the same source already match"),
    ImpossibleCondition => ("MZ309", "impossible-condition", Warning, Correctness, Bundle, "A condition no value its variables can hold makes true"),

    // MZ4xx: context authority and routing conditions.
    ConditionValueType => ("MZ401", "condition-value-type", Warning, Correctness, Bundle, "A context_equals value that can never equal the variable's declared type"),
    ExpressionSyntax => ("MZ402", "expression-syntax", Error, Correctness, File, "A context_expression outside the grammar mozaiks 0.2.0 compiles"),
    RoutingVariableAuthority => ("MZ403", "routing-variable-authority", Error, Correctness, Bundle, "A variable read by a rule is not routing state with a deterministic writer"),
    AuthorityConflict => ("MZ404", "authority-conflict", Error, Correctness, Bundle, "A variable declaration the authority policy refuses at run start"),
    WriteRefused => ("MZ405", "write-refused", Warning, Correctness, Bundle, "A declared write that the variable's authority refuses"),
    AuthorityNamePattern => ("MZ406", "authority-name-pattern", Warning, Correctness, Bundle, "A variable name that silently infers an immutable or quality authority class"),
    MissingConditionValue => ("MZ407", "missing-condition-value", Warning, Correctness, Bundle, "A context_equals rule without condition_value compares with null"),
    DefaultType => ("MZ408", "default-type", Warning, Correctness, File, "A context variable default that its declared type does not admit"),
    EmptyTriggerMatch => ("MZ409", "empty-trigger-match", Error, Correctness, File, "A trigger `match` with none of equals, contains or regex"),
    UnknownVariableType => ("MZ410", "unknown-variable-type", Warning, Correctness, File, "A context variable `type` mozaiks does not know, so its values are never checked"),

    // MZ5xx: Python bindings, read and never imported.
    PythonFileNotFound => ("MZ501", "python-file-not-found", Error, Correctness, Bundle, "A tool, lifecycle or middleware file that does not exist"),
    PythonPathOutside => ("MZ502", "python-path-outside", Error, Correctness, Bundle, "A Python file path that is absolute or leaves the workflows root"),
    PythonFunctionNotFound => ("MZ503", "python-function-not-found", Error, Correctness, Bundle, "The named function is not defined at the module's top level"),
    PythonSyntax => ("MZ504", "python-syntax-error", Error, Correctness, File, "A bound Python file does not parse"),
    ToolSignature => ("MZ505", "tool-signature", Error, Correctness, Bundle, "A tool or middleware function cannot take the call mozaiks makes"),
    LifecycleSignature => ("MZ506", "lifecycle-signature", Warning, Correctness, Bundle, "A lifecycle function cannot take the call its trigger makes"),
    DeadLifecycleTrigger => ("MZ507", "dead-lifecycle-trigger", Warning, Correctness, Bundle, "A lifecycle trigger that mozaiks 0.2.0 never calls"),
    UnboundTool => ("MZ508", "unbound-tool", Warning, Correctness, Bundle, "An LLM tool of an auto-tool agent, which is never offered"),
    UndeclaredWrite => ("MZ509", "undeclared-write", Warning, Correctness, Bundle, "Python code writes a context variable that is not declared"),
    AutoToolArgument => ("MZ510", "auto-tool-argument", Warning, Correctness, Bundle, "An auto tool parameter without a default that no model field or runtime argument fills"),

    // MZ6xx: structured outputs as the runtime builds them.
    UnknownFieldType => ("MZ601", "unknown-field-type", Error, Correctness, File, "A structured-output field type mozaiks cannot build"),
    ModelCycle => ("MZ602", "model-cycle", Error, Correctness, File, "A structured-output definition depends on itself"),
    MissingRegistryModel => ("MZ603", "missing-registry-model", Error, Correctness, Bundle, "An agent requires structured outputs but has no registry model"),
    RegistryNotRequired => ("MZ604", "registry-not-required", Warning, Correctness, Bundle, "An agent has a registry model but does not require structured outputs"),
    AutoToolWithoutModel => ("MZ605", "auto-tool-without-model", Error, Correctness, Bundle, "An agent owns an auto tool but has no structured output model"),
    UnusedModel => ("MZ606", "unused-model", Warning, Hygiene, Bundle, "A structured-output definition nothing refers to"),

    // MZ7xx: task batches and conveyors.
    TaskModel => ("MZ701", "task-model", Warning, Correctness, Bundle, "A static task_model that is not a model definition"),
    WorkerField => ("MZ702", "worker-field", Warning, Correctness, Bundle, "A worker or dependency field that the task model does not have"),
    ConveyorPlan => ("MZ703", "conveyor-plan", Error, Correctness, Bundle, "A conveyor's decomposition agent cannot produce DecompositionPlan.tasks"),
    BatchSourcePath => ("MZ704", "batch-source-path", Warning, Correctness, Bundle, "A structured_output task source path that the trigger agent's model does not have"),

    // MZ8xx: what agents are told (their static prompts).
    DuplicatedPromptSection => ("MZ801", "duplicated-prompt-section", Warning, Pedantic, Bundle, "A prompt section repeated in another agent's prompt"),
    OutputFormatSection => ("MZ802", "output-format-section", Warning, Prompt, Bundle, "A prompt section describing an output format a registry model already enforces"),
    PromptOverBudget => ("MZ803", "prompt-over-budget", Warning, Prompt, Bundle, "An agent's static prompt is larger than the token budget"),
    UnusedViewVariable => ("MZ804", "unused-view-variable", Info, ContextBudget, Bundle, "A variable in an agent's view that nothing of that agent uses"),
    UnboundedExposure => ("MZ805", "unbounded-exposure", Info, ContextBudget, Bundle, "An object or array filled at run time is exposed to an agent in full, with no bound on its size"),
    PromptHiddenVariable => ("MZ806", "prompt-hidden-variable", Warning, Correctness, Bundle, "A prompt names a context variable that is not in the agent's view"),
    PromptUncallableTool => ("MZ807", "prompt-uncallable-tool", Warning, Correctness, Bundle, "A prompt tells the agent to call a tool it is never offered"),

    // MZ9xx: mzk's own suppression comments.
    UnusedSuppression => ("MZ901", "unused-suppression", Warning, Hygiene, Bundle, "A `# mzk: ignore[...]` comment that suppresses nothing"),
    InvalidSuppression => ("MZ902", "invalid-suppression", Warning, Correctness, File, "A `# mzk:` comment mzk cannot read: unknown code, misplaced ignore-file, bad syntax"),
}

impl Rule {
    /// Whether the rule judges a file by that file alone (its `Scope`).
    pub fn reads_only_its_file(self) -> bool {
        self.info().scope == Scope::File
    }

    /// Finds a rule by code (`MZ101`, case-insensitive) or by name (`unknown-key`).
    pub fn lookup(code_or_name: &str) -> Option<Rule> {
        Rule::ALL.iter().copied().find(|r| {
            let info = r.info();
            info.code.eq_ignore_ascii_case(code_or_name) || info.name == code_or_name
        })
    }

    pub fn code(self) -> &'static str {
        self.info().code
    }

    pub fn group(self) -> Group {
        self.info().group
    }

    /// Whether the rule runs when nothing selects or ignores it.
    pub fn default_enabled(self) -> bool {
        self.group().default_enabled()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::hash::HashSet;

    #[test]
    fn codes_and_names_are_unique_and_documented() {
        let mut codes = HashSet::default();
        let mut names = HashSet::default();
        for rule in Rule::ALL {
            let info = rule.info();
            assert!(codes.insert(info.code), "duplicate code {}", info.code);
            assert!(names.insert(info.name), "duplicate name {}", info.name);
            assert!(
                info.doc
                    .starts_with(&format!("# {} {}", info.code, info.name)),
                "{} doc title",
                info.code
            );
            for section in ["## What it checks", "## Why", "## Example", "## Fix"] {
                assert!(
                    info.doc.contains(section),
                    "{} doc lacks {section}",
                    info.code
                );
            }
            assert!(info
                .name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'));
        }
    }

    #[test]
    fn info_rules_are_opt_in() {
        // `mzk check` prints no info finding unless it is selected.
        for rule in Rule::ALL {
            if rule.info().severity == Severity::Info {
                assert!(
                    !rule.default_enabled(),
                    "{} is info yet on by default",
                    rule.code()
                );
            }
        }
        assert_eq!(Group::lookup("Context-Budget"), Some(Group::ContextBudget));
        assert!(Group::ALL.iter().any(|g| !g.default_enabled()));
    }

    #[test]
    fn lookup_by_code_or_name() {
        assert_eq!(Rule::lookup("mz101"), Some(Rule::UnknownKey));
        assert_eq!(Rule::lookup("unknown-key"), Some(Rule::UnknownKey));
        assert_eq!(Rule::lookup("MZ999"), None);
    }
}
