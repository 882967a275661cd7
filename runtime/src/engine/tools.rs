//! Tool specs offered to the model and the tool, auto-tool and outcome calls
//! through the Python worker.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Instant;

use mzk_analyzer::model::python::{BindingOwner, BindingTarget};
use mzk_analyzer::model::{Bundle, Tool};
use serde_json::{json, Map, Value};

use super::{Engine, TurnFailure};
use crate::backend::ToolSpec;
use crate::context::{Bridge, Pending};
use crate::events::Event;
use crate::python::{CallKind, CallOutcome, CallRequest, WorkerError};

impl<'a> Engine<'a> {
    pub(super) fn python_file(&self, owner: BindingOwner) -> Option<PathBuf> {
        let binding = self.bundle.bindings.iter().find(|b| b.owner == owner)?;
        match &binding.target {
            BindingTarget::File(id) => self.bundle.file(*id).map(|f| self.bundle.path_of(f)),
            _ => None,
        }
    }

    /// The file and function a binding calls, when its file was found.
    pub(super) fn binding(
        &self,
        owner: BindingOwner,
        function: Option<&mzk_analyzer::model::Name>,
    ) -> Option<(PathBuf, String)> {
        let file = self.python_file(owner)?;
        Some((file, function.map(|f| f.text.clone()).unwrap_or_default()))
    }

    pub(super) fn next_call_id(&mut self) -> String {
        self.state.calls += 1;
        format!("call_{}", self.state.calls)
    }

    /// Calls a function and reports the call and its result as events.
    pub(super) async fn call_traced(
        &mut self,
        request: &CallRequest,
        kind: &str,
        ctx: &mut dyn crate::python::ContextAccess,
    ) -> Result<CallOutcome, WorkerError> {
        let call_id = self.report_call(request, kind);
        let started = Instant::now();
        let result = self.worker.call(request, ctx, self.opts.tool_timeout).await;
        let elapsed_ms = started.elapsed().as_secs_f64() * 1000.0;
        let (ok, value, error, traceback) = match &result {
            Ok(CallOutcome::Returned { value, .. }) => (true, Some(value.clone()), None, None),
            Ok(CallOutcome::Raised { error, traceback }) => {
                (false, None, Some(error.clone()), Some(traceback.clone()))
            }
            Err(e) => (false, None, Some(e.to_string()), None),
        };
        self.emit(Event::ToolResult {
            agent: request.agent.clone(),
            tool: request.function.clone(),
            call_id,
            ok,
            result: value,
            error,
            traceback: traceback.filter(|t| !t.is_empty()),
            elapsed_ms,
        });
        result
    }

    /// The `tool_call` event of a call about to happen; its call id.
    fn report_call(&mut self, request: &CallRequest, kind: &str) -> String {
        let call_id = self.next_call_id();
        self.emit(Event::ToolCall {
            agent: request.agent.clone(),
            tool: request.function.clone(),
            call_id: call_id.clone(),
            arguments: request.args.clone(),
            kind: kind.to_string(),
        });
        call_id
    }

    pub(super) fn tools_of(&self, agent: &str) -> Vec<(usize, &'a Tool)> {
        let bundle: &'a Bundle = self.bundle;
        bundle
            .tools
            .iter()
            .enumerate()
            .filter(|(_, t)| t.agents.iter().any(|a| a.text == agent))
            .collect()
    }

    /// A tool as the model sees it: its function's parameters (without
    /// `context_variables`) typed from their annotations.
    pub(super) fn tool_spec(&self, index: usize, tool: &Tool) -> ToolSpec {
        let name = tool
            .function
            .as_ref()
            .map(|f| f.text.clone())
            .unwrap_or_default();
        let function = self
            .bundle
            .bindings
            .iter()
            .find(|b| b.owner == BindingOwner::Tool(index))
            .and_then(|b| match b.target {
                BindingTarget::File(id) => Some(id),
                _ => None,
            })
            .and_then(|id| self.bundle.python.iter().find(|p| p.file == id))
            .and_then(|p| p.module.functions.iter().find(|f| f.name == name));
        let mut properties = Map::new();
        let mut required = Vec::new();
        for p in function.map(|f| f.params.as_slice()).unwrap_or_default() {
            use mzk_analyzer::syntax::python::ParamKind;
            if p.name == "context_variables"
                || matches!(p.kind, ParamKind::VarPositional | ParamKind::VarKeyword)
            {
                continue;
            }
            properties.insert(p.name.clone(), annotation_schema(p.annotation.as_deref()));
            if !p.has_default {
                required.push(Value::String(p.name.clone()));
            }
        }
        let description = tool
            .description
            .as_ref()
            .map(|d| d.text.clone())
            .or_else(|| function.and_then(|f| f.docstring.clone()))
            .unwrap_or_else(|| name.clone());
        ToolSpec {
            name,
            description,
            parameters: json!({"type": "object", "properties": properties, "required": required}),
        }
    }

    pub(super) fn is_auto_tool_agent(&self, agent: &str) -> bool {
        self.tools_of(agent).iter().any(|(_, t)| t.auto_tool_call)
    }

    /// Runs one tool through the worker, applying an outcome contract when
    /// the tool has one. A raised exception is a tool error; a dead worker
    /// fails the turn.
    pub(super) async fn run_tool(
        &mut self,
        request: &CallRequest,
        kind: &str,
        pending: &mut BTreeMap<String, Pending>,
    ) -> Result<Result<Value, String>, TurnFailure> {
        let channel = self.state.context.clone();
        let policy = self.policy.clone();
        let mut answers = std::mem::take(&mut self.state.user.tool_responses);
        let mut bridge = Bridge::new(&channel, &policy, pending, None);
        bridge.ui_answers = Some(&mut answers);
        let result = self.call_traced(request, kind, &mut bridge).await;
        let refused = std::mem::take(&mut bridge.refused);
        let shown = std::mem::take(&mut bridge.ui_shown);
        self.state.user.tool_responses = answers;
        for (key, writer, error) in refused {
            self.emit(Event::ContextRefused { key, writer, error });
        }
        for (tool, payload, awaiting_response, event_id, response) in shown {
            self.emit(Event::UiTool {
                agent: request.agent.clone(),
                tool,
                event_id,
                awaiting_response,
                payload,
                response,
            });
        }
        match result {
            Ok(CallOutcome::Returned { value, .. }) => Ok(Ok(value)),
            Ok(CallOutcome::Raised { error, .. }) => Ok(Err(error)),
            Err(e @ WorkerError::Timeout(_)) => Ok(Err(e.to_string())),
            Err(e) => Err(TurnFailure(e.to_string())),
        }
    }

    /// §5.4: the agent's auto tools, in declaration order, with the
    /// validated output's fields as keyword arguments.
    pub(super) async fn auto_tools(
        &mut self,
        agent: &str,
        data: &Value,
        pending: &mut BTreeMap<String, Pending>,
    ) -> Result<(), TurnFailure> {
        let tools: Vec<(usize, &'a Tool)> = self
            .tools_of(agent)
            .into_iter()
            .filter(|(_, t)| t.auto_tool_call)
            .collect();
        for (i, tool) in tools {
            let Some(file) = self.python_file(BindingOwner::Tool(i)) else {
                self.emit(Event::Notice {
                    message: format!(
                        "auto tool {}: its Python file was not found; skipped",
                        tool.function.as_ref().map_or("?", |f| f.text.as_str())
                    ),
                });
                continue;
            };
            let request = CallRequest {
                file,
                function: tool
                    .function
                    .as_ref()
                    .map(|f| f.text.clone())
                    .unwrap_or_default(),
                agent: agent.to_string(),
                kind: CallKind::Auto {
                    overlay: data.clone(),
                    extras: json!({
                        "chat_id": self.state.run_id,
                        "app_id": self.opts.app_id,
                        "workflow_name": self.state.workflow,
                        "turn_idempotency_key": format!("{}:{}:{agent}:{}", self.state.run_id, self.state.run_id, self.state.turn_count),
                        "agent_name": agent,
                        "agent": agent,
                    }),
                },
                args: data.clone(),
            };
            match &tool.outcome {
                Some(outcome) => self.outcome_call(&request, outcome, pending).await?,
                // A raised auto tool is already reported; the turn goes on (§5.4 step 5).
                None => {
                    let _ = self.run_tool(&request, "auto", pending).await?;
                }
            }
        }
        Ok(())
    }

    /// §4.6: the outcome wrapper around an auto tool.
    pub(super) async fn outcome_call(
        &mut self,
        request: &CallRequest,
        outcome: &mzk_analyzer::model::Outcome,
        pending: &mut BTreeMap<String, Pending>,
    ) -> Result<(), TurnFailure> {
        let (Some(key), Some(attempts_key), Some(error_value)) = (
            outcome.context_key.as_ref().map(|k| k.text.clone()),
            outcome.attempts_key.as_ref().map(|k| k.text.clone()),
            outcome.error_value.as_ref().map(|k| k.text.clone()),
        ) else {
            return self.run_tool(request, "auto", pending).await.map(|_| ());
        };
        let result_field = outcome
            .result_field
            .as_ref()
            .map_or("status", |f| f.text.as_str())
            .to_string();
        let max_attempts = outcome.max_attempts.max(1) as i64;
        let previous = pending_value(pending, &self.state.context, &key);
        let count = pending_value(pending, &self.state.context, &attempts_key);
        let writer = self.policy.tool_writer(&key).to_string();
        set_pending(pending, &key, json!(error_value), &writer);
        let count = match &count {
            Value::Null => Some(0),
            Value::Number(n) => n.as_i64().filter(|c| *c >= 0),
            _ => None,
        };
        let refusal = match count {
            None => {
                set_pending(pending, &attempts_key, json!(max_attempts), &writer);
                Some("invalid_attempt_state")
            }
            Some(c) if c >= max_attempts => Some("attempts_exhausted"),
            Some(c)
                if c > 0
                    && !outcome
                        .retry_on
                        .iter()
                        .any(|r| previous.as_str() == Some(r.text.as_str())) =>
            {
                Some("retry_not_permitted")
            }
            Some(_) => None,
        };
        let code = match refusal {
            Some(code) => {
                // mozaiks calls the wrapped tool all the same: its outcome
                // wrapper answers for it without running the body
                // (tool_outcomes.py `begin`), and the call is reported.
                let call_id = self.report_call(request, "auto");
                self.emit(Event::ToolResult {
                    agent: request.agent.clone(),
                    tool: request.function.clone(),
                    call_id,
                    ok: true,
                    result: Some(
                        json!({result_field.as_str(): error_value, "outcome_error": code}),
                    ),
                    error: None,
                    traceback: None,
                    elapsed_ms: 0.0,
                });
                Some(code)
            }
            None => {
                let c = count.unwrap_or(0) + 1;
                set_pending(pending, &attempts_key, json!(c), &writer);
                match self.run_tool(request, "auto", pending).await? {
                    Err(_) => Some("tool_execution_failed"),
                    Ok(result) => {
                        let value = result.get(&result_field).cloned().unwrap_or(Value::Null);
                        if outcome
                            .values
                            .iter()
                            .any(|v| value.as_str() == Some(v.text.as_str()))
                        {
                            let writer = self.policy.tool_writer(&key).to_string();
                            pending.insert(key.clone(), Pending::Set(value, writer));
                            None
                        } else {
                            Some("invalid_tool_outcome")
                        }
                    }
                }
            }
        };
        if let Some(code) = code {
            self.emit(Event::Notice {
                message: format!(
                    "outcome of {}: {key} = {error_value} ({code})",
                    request.function
                ),
            });
        }
        Ok(())
    }
}

/// A key's value as this turn sees it: pending writes over the channel.
pub(super) fn pending_value(
    pending: &BTreeMap<String, Pending>,
    ctx: &Map<String, Value>,
    key: &str,
) -> Value {
    match pending.get(key) {
        Some(Pending::Set(v, _)) => v.clone(),
        Some(Pending::Delete(_)) => Value::Null,
        None => ctx.get(key).cloned().unwrap_or(Value::Null),
    }
}

pub(super) fn set_pending(
    pending: &mut BTreeMap<String, Pending>,
    key: &str,
    value: Value,
    writer: &str,
) {
    pending.insert(key.to_string(), Pending::Set(value, writer.to_string()));
}

/// The JSON Schema of a Python annotation, as AG2 derives it (loosely: an
/// unknown or missing annotation accepts anything).
pub(super) fn annotation_schema(annotation: Option<&str>) -> Value {
    let Some(text) = annotation.map(str::trim) else {
        return json!({});
    };
    let nullable = text.contains("None") || text.starts_with("Optional[");
    let base = text
        .trim_start_matches("Optional[")
        .split('|')
        .map(str::trim)
        .find(|part| *part != "None")
        .unwrap_or("")
        .trim_end_matches(']');
    let head = base.split('[').next().unwrap_or("").trim();
    let schema = match head {
        "str" => json!({"type": "string"}),
        "int" => json!({"type": "integer"}),
        "float" => json!({"type": "number"}),
        "bool" => json!({"type": "boolean"}),
        "list" | "List" | "tuple" | "Sequence" => json!({"type": "array"}),
        "dict" | "Dict" | "Mapping" => json!({"type": "object"}),
        _ => json!({}),
    };
    match (nullable, schema.get("type").cloned()) {
        (true, Some(t)) => json!({"type": [t, "null"]}),
        _ => schema,
    }
}

/// §3.7 matching: trimmed, case-insensitive; equals, contains or regex.
pub(super) fn trigger_matches(t: &mzk_analyzer::model::ContextTrigger, text: &str) -> bool {
    let body = text.trim().to_lowercase();
    if let Some(e) = &t.equals {
        return body == e.text.trim().to_lowercase();
    }
    if let Some(c) = &t.contains {
        return body.contains(&c.text.trim().to_lowercase());
    }
    if let Some(r) = &t.regex {
        return regex::RegexBuilder::new(&r.text)
            .case_insensitive(true)
            .size_limit(1 << 20)
            .build()
            .is_ok_and(|re| re.is_match(text.trim()));
    }
    false
}
