//! Context authority as mozaiks 0.2.0 infers it (bundle-format §9): each
//! variable's authority class, flags and allowed writers.

use super::{Bundle, ConditionType, Variable};

/// Writers the engine treats as deterministic.
pub const DETERMINISTIC_WRITERS: &[&str] = &[
    "runtime_system",
    "transition_router",
    "ui_response_trigger",
    "task_batch",
    "structured_output",
    "lifecycle_tool",
    "deterministic_tool",
    "sentinel_text_trigger",
];

const IMMUTABLE_NAMES: &[&str] = &[
    "app_id",
    "user_id",
    "chat_id",
    "workflow_name",
    "tenant_id",
    "workspace_id",
    "workspace_path",
    "repo_path",
    "repository_path",
    "permissions",
    "permission_claims",
    "entitlement_state",
    "entitlements",
    "build_registry_id",
    "run_build_binding",
    "workflow_run_id",
    "build_terminal_receipt",
];
const IMMUTABLE_SUFFIXES: &[&str] = &["_app_id", "_user_id", "_tenant_id", "_workspace_id"];
const IMMUTABLE_SUBSTRINGS: &[&str] = &["credential", "secret", "token", "password", "api_key"];
const QUALITY_SUBSTRINGS: &[&str] = &[
    "quality",
    "validation_status",
    "acceptance_status",
    "tests_passed",
    "gate",
];
const ROUTING_NAMES: &[&str] = &[
    "build_mode",
    "revision_scope",
    "task_run_mode",
    "sequence_status",
    "routing_mode",
];
const ROUTING_SUFFIXES: &[&str] = &["_route_ready", "_complete", "_decision", "_selected"];
const ROUTER_WRITTEN: &[&str] = &[
    "build_mode",
    "coding_participation",
    "revision_scope",
    "sequence_status",
];

/// The seven authority classes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthorityClass {
    ImmutableRuntime,
    ClosedRouting,
    ClosedQuality,
    MutableState,
    ModelVisible,
    ToolOnly,
    Derived,
}

impl AuthorityClass {
    pub fn parse(text: &str) -> Option<AuthorityClass> {
        Some(match text {
            "immutable_runtime_authority" => AuthorityClass::ImmutableRuntime,
            "closed_writer_routing_state" => AuthorityClass::ClosedRouting,
            "closed_writer_quality_state" => AuthorityClass::ClosedQuality,
            "mutable_workflow_state" => AuthorityClass::MutableState,
            "model_visible_information" => AuthorityClass::ModelVisible,
            "tool_only_information" => AuthorityClass::ToolOnly,
            "derived_information" => AuthorityClass::Derived,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            AuthorityClass::ImmutableRuntime => "immutable_runtime_authority",
            AuthorityClass::ClosedRouting => "closed_writer_routing_state",
            AuthorityClass::ClosedQuality => "closed_writer_quality_state",
            AuthorityClass::MutableState => "mutable_workflow_state",
            AuthorityClass::ModelVisible => "model_visible_information",
            AuthorityClass::ToolOnly => "tool_only_information",
            AuthorityClass::Derived => "derived_information",
        }
    }

    pub fn is_closed(self) -> bool {
        matches!(
            self,
            AuthorityClass::ClosedRouting | AuthorityClass::ClosedQuality
        )
    }
}

/// How the engine sees one variable.
#[derive(Debug, Clone, PartialEq)]
pub struct Authority {
    pub class: AuthorityClass,
    /// True when the class was declared rather than inferred.
    pub declared_class: bool,
    pub routing: bool,
    pub persisted: bool,
    pub authorization: bool,
    /// The writers allowed after the class filter; empty means "any writer
    /// except agent_text and persisted_replay" (unless the class is immutable).
    pub writers: Vec<String>,
    /// Why the class was inferred, for hover and messages.
    pub reason: String,
}

impl Authority {
    pub fn has_deterministic_writer(&self) -> bool {
        match self.class {
            AuthorityClass::ImmutableRuntime => false,
            // Closed classes keep only deterministic writers: empty means none.
            c if c.is_closed() && self.writers.is_empty() => false,
            _ if self.writers.is_empty() => true,
            _ => self
                .writers
                .iter()
                .any(|w| DETERMINISTIC_WRITERS.contains(&w.as_str())),
        }
    }

    /// Would the engine accept a write by `writer`? (`can_write`, §9.4, for
    /// declared names.)
    pub fn can_write(&self, writer: &str, build_context: bool) -> bool {
        if writer == "runtime_system" {
            return true;
        }
        if writer == "persisted_replay"
            || build_context
            || self.class == AuthorityClass::ImmutableRuntime
        {
            return false;
        }
        if writer == "agent_text" {
            return self.class == AuthorityClass::Derived
                && self.writers.iter().any(|w| w == "agent_text")
                && !self.routing
                && !self.authorization;
        }
        if self.class.is_closed() {
            return self.writers.iter().any(|w| w == writer)
                && DETERMINISTIC_WRITERS.contains(&writer);
        }
        if !self.writers.is_empty() {
            return self.writers.iter().any(|w| w == writer);
        }
        true
    }
}

/// One of the runtime identity names (`app_id`, `chat_id`, …).
pub fn is_identity_name(lower: &str) -> bool {
    IMMUTABLE_NAMES.contains(&lower)
}

pub fn immutable_name_pattern(name: &str) -> Option<String> {
    let lower = name.to_lowercase();
    if IMMUTABLE_NAMES.contains(&lower.as_str()) {
        return Some(format!("`{name}` is a runtime identity name"));
    }
    if let Some(s) = IMMUTABLE_SUFFIXES.iter().find(|s| lower.ends_with(*s)) {
        return Some(format!("`{name}` ends with `{s}`"));
    }
    IMMUTABLE_SUBSTRINGS
        .iter()
        .find(|s| lower.contains(*s))
        .map(|s| format!("`{name}` contains `{s}`"))
}

pub fn quality_name_pattern(name: &str) -> Option<String> {
    let lower = name.to_lowercase();
    QUALITY_SUBSTRINGS
        .iter()
        .find(|s| lower.contains(*s))
        .map(|s| format!("`{name}` contains `{s}`"))
}

/// Variables read by a transition rule (condition_key and `${}` references).
pub fn routing_reads(bundle: &Bundle) -> Vec<&str> {
    let mut reads = Vec::new();
    for rule in &bundle.rules {
        match rule.condition_type {
            Some(ConditionType::ContextEquals) => {
                reads.extend(rule.condition_key.iter().map(|k| k.text.as_str()))
            }
            Some(ConditionType::ContextExpression) => {
                reads.extend(rule.expression_refs.iter().map(|r| r.text.as_str()))
            }
            _ => {}
        }
    }
    reads
}

/// Task batch result/status keys and recovery outcome/status keys.
pub fn batch_keys(bundle: &Bundle) -> Vec<&str> {
    let mut keys = Vec::new();
    for batch in &bundle.task_batches {
        keys.extend(
            [&batch.result_context_key, &batch.result_status_key]
                .into_iter()
                .flatten()
                .map(|k| k.text.as_str()),
        );
        if let Some(r) = &batch.recovery {
            keys.extend(
                [&r.outcome_key, &r.status_key]
                    .into_iter()
                    .flatten()
                    .map(|k| k.text.as_str()),
            );
        }
    }
    keys
}

/// What inference needs from the whole bundle, computed once for all variables.
pub struct Facts<'b> {
    reads: crate::base::hash::HashSet<&'b str>,
    batch_keys: crate::base::hash::HashSet<&'b str>,
}

impl<'b> Facts<'b> {
    /// Is the variable read by a transition rule?
    pub fn is_read(&self, name: &str) -> bool {
        self.reads.contains(name)
    }

    /// Is it a task batch result/status or recovery outcome/status key?
    pub fn is_batch_key(&self, name: &str) -> bool {
        self.batch_keys.contains(name)
    }

    pub fn of(bundle: &'b Bundle) -> Facts<'b> {
        Facts {
            reads: routing_reads(bundle).into_iter().collect(),
            batch_keys: batch_keys(bundle).into_iter().collect(),
        }
    }
}

/// Infers a variable's authority, first match wins (§9.2), then flags and
/// writers (§9.3).
pub fn infer(bundle: &Bundle, variable: &Variable) -> Authority {
    infer_with(&Facts::of(bundle), variable)
}

/// As [`infer`], with the bundle-wide facts computed once.
pub fn infer_with(facts: &Facts<'_>, variable: &Variable) -> Authority {
    let name = variable.name.text.as_str();
    let source = variable.source_type.as_ref().map(|s| s.text.as_str());
    let read_by_rule = facts.reads.contains(name);
    let batch_key = facts.batch_keys.contains(name);
    let agent_text_triggers: Vec<_> = variable
        .triggers
        .iter()
        .filter(|t| t.trigger_type.text == "agent_text")
        .collect();
    let has_trigger = |kind: &str| {
        variable
            .triggers
            .iter()
            .any(|t| t.trigger_type.text == kind)
    };
    let equals_trigger = agent_text_triggers.iter().any(|t| t.has_equals);
    let declared = variable
        .authority_class
        .as_ref()
        .and_then(|c| AuthorityClass::parse(&c.text));
    let immutable_pattern = immutable_name_pattern(name);
    let lower = name.to_lowercase();
    let (class, reason) = if let Some(class) = declared {
        (class, "declared".to_string())
    } else if source == Some("runtime") {
        (
            AuthorityClass::ImmutableRuntime,
            "`source.type: runtime`".to_string(),
        )
    } else if let Some(why) = immutable_pattern.clone() {
        (AuthorityClass::ImmutableRuntime, why)
    } else if let Some(why) = quality_name_pattern(name) {
        (AuthorityClass::ClosedQuality, why)
    } else if read_by_rule {
        (
            AuthorityClass::ClosedRouting,
            "read by a transition rule".to_string(),
        )
    } else if ROUTING_NAMES.contains(&lower.as_str())
        || ROUTING_SUFFIXES.iter().any(|s| lower.ends_with(s))
    {
        (
            AuthorityClass::ClosedRouting,
            format!("the name `{name}` marks routing state"),
        )
    } else if batch_key {
        (
            AuthorityClass::ClosedRouting,
            "a task batch result or status key".to_string(),
        )
    } else if !agent_text_triggers.is_empty() {
        (
            AuthorityClass::Derived,
            "has an agent_text trigger".to_string(),
        )
    } else if matches!(
        source,
        Some("config" | "data_reference" | "data_entity" | "file" | "build_context" | "external")
    ) {
        (
            AuthorityClass::ToolOnly,
            format!("`source.type: {}`", source.unwrap_or_default()),
        )
    } else {
        (
            AuthorityClass::MutableState,
            "a state or computed variable".to_string(),
        )
    };
    let routing = variable
        .routing
        .unwrap_or(read_by_rule || class == AuthorityClass::ClosedRouting);
    let authorization = variable
        .authorization
        .unwrap_or(immutable_pattern.is_some());
    let persisted = variable.persisted.unwrap_or(!matches!(
        class,
        AuthorityClass::ImmutableRuntime | AuthorityClass::ToolOnly
    ));
    let mut writers: Vec<String> = match &variable.writer_ids {
        Some(declared) if !declared.is_empty() => declared.iter().map(|w| w.text.clone()).collect(),
        _ if class == AuthorityClass::Derived => {
            let mut w = vec!["agent_text".to_string()];
            if equals_trigger {
                w.push("sentinel_text_trigger".into());
            }
            w
        }
        _ => {
            let mut w: Vec<&str> = Vec::new();
            if class.is_closed() {
                w.extend(["deterministic_tool", "lifecycle_tool", "structured_output"]);
            }
            if equals_trigger {
                w.push("sentinel_text_trigger");
            }
            if has_trigger("ui_response") {
                w.push("ui_response_trigger");
            }
            if has_trigger("user_text") {
                w.push("user_text_trigger");
            }
            if batch_key {
                w.push("task_batch");
            }
            if ROUTER_WRITTEN.contains(&lower.as_str()) {
                w.push("transition_router");
            }
            if source == Some("state") && !class.is_closed() {
                w.extend([
                    "caller_input",
                    "transition_router",
                    "context_bridge",
                    "tool_writeback",
                    "live_user_context",
                ]);
            }
            let mut out: Vec<String> = Vec::new();
            for x in w {
                if !out.iter().any(|o| o == x) {
                    out.push(x.to_string());
                }
            }
            out
        }
    };
    match class {
        AuthorityClass::ImmutableRuntime => writers.clear(),
        c if c.is_closed() => writers.retain(|w| DETERMINISTIC_WRITERS.contains(&w.as_str())),
        _ => {}
    }
    Authority {
        class,
        declared_class: declared.is_some(),
        routing,
        persisted,
        authorization,
        writers,
        reason,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{analyze_bundle, MemoryFs};

    /// The inferences bundle-format §9.3 reports as checked on 0.2.0.
    #[test]
    fn inference_matches_the_reference() {
        let mut fs = MemoryFs::new();
        fs.insert(
            "/w/B/orchestrator.yaml",
            "schema_version: mozaiks.orchestrator.v1\nworkflow_name: B\nworkflow_startup_mode: AgentDriven\ninitial_agent: A\n",
        );
        fs.insert(
            "/w/B/agents.yaml",
            "agents:\n  - {name: A, system_message: a, structured_outputs_required: false}\n",
        );
        fs.insert(
            "/w/B/transition_graph.yaml",
            "transition_rules:\n  - {source_agent: A, target_agent: terminate, transition_type: condition, condition_type: context_expression, context_expression: '${done} and ${step} == 1'}\n",
        );
        fs.insert(
            "/w/B/context_variables.yaml",
            "definitions:\n  done: {type: boolean, source: {type: state, default: false}}\n  step:\n    type: integer\n    source:\n      type: state\n      triggers: [{type: agent_text, agent: A, match: {equals: NEXT}}]\n  note: {type: string, source: {type: state}}\n  max_tokens: {type: integer, source: {type: state}}\n  region: {type: string, source: {type: config, env_var: REGION}}\n",
        );
        let analysis = analyze_bundle(&fs, std::path::Path::new("/w/B"));
        let bundle = &analysis.bundle;
        let auth = |name: &str| infer(bundle, bundle.variable(name).unwrap());

        // A plain state boolean read by a rule: closed routing, deterministic writers.
        let done = auth("done");
        assert_eq!(done.class, AuthorityClass::ClosedRouting);
        assert!(done.routing);
        assert_eq!(
            done.writers,
            ["deterministic_tool", "lifecycle_tool", "structured_output"]
        );
        assert!(done.has_deterministic_writer());
        // An `equals` agent_text trigger adds the sentinel writer.
        assert!(auth("step")
            .writers
            .iter()
            .any(|w| w == "sentinel_text_trigger"));
        // A non-routing state variable gets the five ordinary writers, so tools
        // (attributed to context_bridge) can write it.
        let note = auth("note");
        assert_eq!(note.class, AuthorityClass::MutableState);
        assert!(note.can_write("context_bridge", false));
        assert!(!note.can_write("agent_text", false));
        // `max_tokens` contains `token`: immutable, nobody writes it.
        let tokens = auth("max_tokens");
        assert_eq!(tokens.class, AuthorityClass::ImmutableRuntime);
        assert!(!tokens.can_write("deterministic_tool", false));
        assert!(tokens.can_write("runtime_system", false));
        // A config source is tool-only information and not persisted.
        let region = auth("region");
        assert_eq!(region.class, AuthorityClass::ToolOnly);
        assert!(!region.persisted);
        assert!(analysis
            .diagnostics
            .iter()
            .all(|d| d.rule != crate::rules::Rule::RoutingVariableAuthority));
    }
}
