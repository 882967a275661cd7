//! MZ5xx: Python bindings — the file each tool, lifecycle tool and prompt
//! middleware names resolves, the function exists at module level, and its
//! signature can take the call mozaiks 0.2.0 makes (bundle-format §17).

use crate::base::TextRange;
use crate::diagnostics::{Diagnostic, Fix};
use crate::model::python::{
    auto_tool_key, Binding, BindingOwner, BindingTarget, AUTO_TOOL_METADATA,
};
use crate::model::{Bundle, Name};
use crate::rules::Rule;
use crate::syntax::python::{Function, Module, ParamKind};

pub fn check(bundle: &Bundle, out: &mut Vec<Diagnostic>) {
    for file in &bundle.python {
        if file.module.too_large {
            out.push(Diagnostic::new(
                Rule::FileTooLarge,
                file.file,
                TextRange::empty(0),
                format!(
                    "this Python file is larger than {} MiB, more than the analyzer reads, so the functions bound from it are not checked",
                    crate::base::limits::MAX_FILE_BYTES >> 20
                ),
            ));
        }
        if let Some(error) = &file.module.syntax_error {
            out.push(Diagnostic::new(
                Rule::PythonSyntax,
                file.file,
                error.range,
                format!("Python syntax error ({}): mozaiks cannot import this module, so it logs the import error and skips every function bound from it; fix the syntax", error.problem),
            ));
        }
    }
    for binding in &bundle.bindings {
        binding_target(bundle, binding, out);
    }
    auto_agents_with_bound_tools(bundle, out);
    undeclared_writes(bundle, out);
}

fn module<'b>(
    bundle: &'b Bundle,
    target: &BindingTarget,
) -> Option<(crate::base::FileId, &'b Module)> {
    let BindingTarget::File(id) = target else {
        return None;
    };
    bundle
        .python
        .iter()
        .find(|p| p.file == *id)
        .map(|p| (p.file, &p.module))
}

fn what(owner: BindingOwner) -> &'static str {
    match owner {
        BindingOwner::Tool(_) => "tool",
        BindingOwner::Lifecycle(_) => "lifecycle tool",
        BindingOwner::Middleware(_) => "prompt middleware",
    }
}

fn binding_target(bundle: &Bundle, binding: &Binding, out: &mut Vec<Diagnostic>) {
    let Some(path) = &binding.path else { return };
    match &binding.target {
        BindingTarget::ImportPath => {}
        BindingTarget::NotFound(tried) => {
            out.push(Diagnostic::new(
                Rule::PythonFileNotFound,
                path.file,
                path.range,
                format!(
                "`{}` does not exist (tried {}); mozaiks logs a warning and silently drops this {}",
                path.text,
                tried.iter().map(|t| format!("`{t}`")).collect::<Vec<_>>().join(" and "),
                what(binding.owner)
            ),
            ))
        }
        BindingTarget::Outside(why) => out.push(Diagnostic::new(
            Rule::PythonPathOutside,
            path.file,
            path.range,
            format!("{why}; keep Python files inside the bundle or the workflows root"),
        )),
        BindingTarget::File(_) => {
            let Some((file, module)) = module(bundle, &binding.target) else {
                return;
            };
            let Some(function_name) = &binding.function else {
                return;
            };
            match module.function(&function_name.text) {
                Some(function) => {
                    signature(bundle, binding.owner, function_name, file, function, out)
                }
                None if module
                    .imported
                    .iter()
                    .chain(&module.assigned)
                    .any(|(n, _)| n == &function_name.text) => {}
                // The syntax error, or the size, explains it.
                None if module.syntax_error.is_some() || module.too_large => {}
                None => {
                    let defined: Vec<&str> =
                        module.defined.iter().map(|(n, _)| n.as_str()).collect();
                    let best = crate::diagnostics::did_you_mean(&function_name.text, defined);
                    let mut d = Diagnostic::new(
                        Rule::PythonFunctionNotFound,
                        function_name.file,
                        function_name.range,
                        format!(
                            "`{}` has no top-level function `{}`{}; mozaiks silently drops this {}",
                            path.text,
                            function_name.text,
                            crate::diagnostics::mean_hint(&function_name.text, best),
                            what(binding.owner)
                        ),
                    )
                    .with_replacement(&function_name.text, best)
                    .with_related(file, TextRange::empty(0), "the module");
                    if let Some((_, at)) =
                        best.and_then(|b| module.defined.iter().find(|(n, _)| n == b))
                    {
                        d = d.with_related(file, *at, "the function of that name");
                    }
                    out.push(d);
                }
            }
        }
    }
}

const RUN_LEVEL_ARGUMENTS: &[&str] = &[
    "app_id",
    "execution_id",
    "chat_id",
    "user_id",
    "workflow_name",
];

fn is_positional(param: &crate::syntax::python::Param) -> bool {
    matches!(
        param.kind,
        ParamKind::PositionalOnly | ParamKind::PositionalOrKeyword
    )
}

fn required(function: &Function) -> impl Iterator<Item = &crate::syntax::python::Param> {
    function.params.iter().filter(|p| {
        !p.has_default && !matches!(p.kind, ParamKind::VarPositional | ParamKind::VarKeyword)
    })
}

fn signature(
    bundle: &Bundle,
    owner: BindingOwner,
    yaml_name: &Name,
    file: crate::base::FileId,
    function: &Function,
    out: &mut Vec<Diagnostic>,
) {
    let mut report = |rule: Rule, message: String| {
        out.push(
            Diagnostic::new(rule, yaml_name.file, yaml_name.range, message).with_related(
                file,
                function.name_range,
                format!("`{}` is defined here", function.name),
            ),
        );
    };
    match owner {
        BindingOwner::Tool(i) => {
            let tool = &bundle.tools[i];
            if tool.outcome.is_some() && function.param("context_variables").is_none() {
                report(
                    Rule::ToolSignature,
                    format!(
                        "outcome tool `{}` must declare a `context_variables` parameter: the outcome wrapper refuses functions without it, so the tool never runs and its owner's turn fails",
                        function.name
                    ),
                );
            }
            if !tool.auto_tool_call {
                return;
            }
            let Some(agent) = tool.agents.first() else {
                return;
            };
            let model = bundle
                .registry_model(&agent.text)
                .and_then(|m| bundle.model(&m.text));
            let Some(model) = model else { return }; // MZ605
            let fields: Vec<String> = model
                .fields
                .iter()
                .map(|f| auto_tool_key(&f.name.text))
                .collect();
            for param in required(function) {
                if param.name == "context_variables" {
                    continue;
                }
                let filled = param.kind != ParamKind::PositionalOnly
                    && (fields.contains(&auto_tool_key(&param.name))
                        || AUTO_TOOL_METADATA.contains(&param.name.as_str()));
                if !filled {
                    report(
                        Rule::AutoToolArgument,
                        format!(
                            "auto tool `{}` has the parameter `{}` without a default that nothing fills: it is called with the fields of `{}` and {} only{}; every call fails with tool_execution_failed — give it a default or add the field",
                            function.name,
                            param.name,
                            model.name.text,
                            AUTO_TOOL_METADATA.join(", "),
                            if param.kind == ParamKind::PositionalOnly { " (and only by keyword, which a positional-only parameter cannot take)" } else { "" }
                        ),
                    );
                }
            }
        }
        BindingOwner::Middleware(_) => {
            let positional = function.params.iter().filter(|p| is_positional(p)).count();
            let var_positional = function
                .params
                .iter()
                .any(|p| p.kind == ParamKind::VarPositional);
            let extra_required: Vec<&str> = function
                .params
                .iter()
                .filter(|p| is_positional(p))
                .skip(2)
                .chain(
                    function
                        .params
                        .iter()
                        .filter(|p| p.kind == ParamKind::KeywordOnly),
                )
                .filter(|p| !p.has_default)
                .map(|p| p.name.as_str())
                .collect();
            if (positional < 2 && !var_positional) || !extra_required.is_empty() {
                report(
                    Rule::ToolSignature,
                    format!(
                        "prompt middleware `{}` is called as fn(capture, history): it needs two positional parameters{}; the call fails and is ignored before every model call",
                        function.name,
                        if extra_required.is_empty() { String::new() } else { format!(" and defaults for `{}`", extra_required.join("`, `")) }
                    ),
                );
            }
        }
        BindingOwner::Lifecycle(i) => {
            let tool = &bundle.lifecycle_tools[i];
            let trigger = tool.trigger.as_ref().map_or("", |t| t.text.as_str());
            let kwargs = function.has_var_keyword();
            let (passed, must_accept): (&[&str], &[&str]) = match trigger {
                "before_chat" => (&["context_variables"], &[]),
                "on_start" | "on_complete" => (RUN_LEVEL_ARGUMENTS, RUN_LEVEL_ARGUMENTS),
                // The transport's on_fail call is unfiltered and adds message/details.
                "on_fail" => (
                    &[
                        "context_variables",
                        "app_id",
                        "execution_id",
                        "chat_id",
                        "user_id",
                        "workflow_name",
                        "error",
                        "message",
                        "details",
                    ],
                    &[
                        "app_id",
                        "execution_id",
                        "chat_id",
                        "user_id",
                        "workflow_name",
                        "message",
                        "details",
                    ],
                ),
                "before_agent" | "after_agent" | "after_chat" => {
                    let at = tool.trigger.as_ref().unwrap_or(yaml_name);
                    out.push(Diagnostic::new(
                        Rule::DeadLifecycleTrigger,
                        at.file,
                        at.range,
                        format!("lifecycle trigger `{trigger}` is parsed but never called by mozaiks 0.2.0: `{}` never runs; use before_chat, on_start, on_complete or on_fail", function.name),
                    ));
                    return;
                }
                _ => return,
            };
            let unaccepted: Vec<&str> = if kwargs {
                Vec::new()
            } else {
                must_accept
                    .iter()
                    .copied()
                    .filter(|a| function.param(a).is_none())
                    .collect()
            };
            let unfilled: Vec<&str> = required(function)
                .filter(|p| {
                    p.kind == ParamKind::PositionalOnly || !passed.contains(&p.name.as_str())
                })
                .map(|p| p.name.as_str())
                .collect();
            if !unaccepted.is_empty() || !unfilled.is_empty() {
                let mut problems = Vec::new();
                if !unaccepted.is_empty() {
                    problems.push(format!(
                        "it cannot take `{}` (add them or `**kwargs`)",
                        unaccepted.join("`, `")
                    ));
                }
                if !unfilled.is_empty() {
                    problems.push(format!(
                        "nothing passes `{}` (give defaults)",
                        unfilled.join("`, `")
                    ));
                }
                report(
                    Rule::LifecycleSignature,
                    format!(
                        "`{trigger}` calls `{}` with {}: {}; the call fails and mozaiks only logs it",
                        function.name,
                        if passed.is_empty() { "no arguments".to_string() } else { format!("`{}`", passed.join("`, `")) },
                        problems.join(", and ")
                    ),
                );
            }
        }
    }
}

/// An agent that owns an auto tool gets no LLM-callable tools at all.
fn auto_agents_with_bound_tools(bundle: &Bundle, out: &mut Vec<Diagnostic>) {
    for (index, tool) in bundle.tools.iter().enumerate() {
        if tool.auto_tool_call || !tool.bind_to_agent {
            continue;
        }
        let Some(function) = &tool.function else {
            continue;
        };
        for agent in &tool.agents {
            let auto = bundle
                .tools
                .iter()
                .find(|t| t.auto_tool_call && t.agents.iter().any(|a| a.text == agent.text));
            let Some((auto, auto_fn)) = auto.and_then(|t| Some((t, t.function.as_ref()?))) else {
                continue;
            };
            let advice = unbound_tool_advice(bundle, index, auto, &agent.text);
            out.push(
                Diagnostic::new(
                    Rule::UnboundTool,
                    function.file,
                    function.range,
                    format!(
                        "`{}` is never offered to `{}`: an agent that owns an auto tool gets no LLM-callable tools; {advice}",
                        function.text, agent.text
                    ),
                )
                .with_related(auto_fn.file, auto_fn.range, format!("`{}` makes `{}` an auto-tool agent", auto_fn.text, agent.text)),
            );
        }
    }
}

/// What to do about an LLM tool bound to an auto-tool agent, offering only
/// what leaves the bundle loadable and the tool callable: another agent
/// that owns no auto tool; making it an auto tool only when the agent's
/// auto tool is not an outcome tool (which must be its only auto tool) and
/// its output model fills every required parameter.
fn unbound_tool_advice(
    bundle: &Bundle,
    index: usize,
    auto: &crate::model::Tool,
    agent: &str,
) -> String {
    let mut options = Vec::new();
    let free: Vec<&str> = bundle
        .agents
        .iter()
        .map(|a| a.name.text.as_str())
        .filter(|name| {
            *name != agent
                && !bundle
                    .tools
                    .iter()
                    .any(|t| t.auto_tool_call && t.agents.iter().any(|a| a.text == *name))
        })
        .collect();
    if let Some(first) = free.first() {
        options.push(format!(
            "bind it to an agent that owns no auto tool (such as `{first}`)"
        ));
    }
    let auto_name = auto.function.as_ref().map_or("?", |f| f.text.as_str());
    let blocked = match (&auto.outcome, unfilled_parameter(bundle, index, agent)) {
        (Some(_), _) => Some(format!(
            "its auto tool `{auto_name}` is an outcome tool, which must be its only auto tool"
        )),
        (None, Some(why)) => Some(why),
        (None, None) => {
            options.push(format!(
                "make it an auto tool, called after each turn of `{agent}` with its output's fields"
            ));
            None
        }
    };
    match (options.is_empty(), blocked) {
        (true, Some(why)) => format!(
            "every other agent owns an auto tool too, and it cannot become an auto tool of `{agent}` ({why}): remove this binding, or add an agent without an auto tool to call it"
        ),
        _ => options.join(", or "),
    }
}

/// Why the tool's function could not run as an auto tool of `agent`: a
/// required parameter its registry model does not fill, as the auto-tool
/// handler passes them (runtime-semantics §5.4); `None` when every one is.
fn unfilled_parameter(bundle: &Bundle, index: usize, agent: &str) -> Option<String> {
    let Some(function) = bundle
        .bindings
        .iter()
        .find_map(|b| match (b.owner, &b.target) {
            (BindingOwner::Tool(i), BindingTarget::File(file)) if i == index => {
                let name = b.function.as_ref()?;
                bundle
                    .python
                    .iter()
                    .find(|p| p.file == *file)?
                    .module
                    .function(&name.text)
            }
            _ => None,
        })
    else {
        return Some("mzk cannot read its function to tell what it needs".to_string());
    };
    let Some(model) = bundle
        .registry_model(agent)
        .and_then(|m| bundle.model(&m.text))
    else {
        return Some(format!(
            "`{agent}` has no registry model to fill its parameters"
        ));
    };
    function
        .params
        .iter()
        .find(|p| {
            !(p.has_default
                || matches!(p.kind, ParamKind::VarPositional | ParamKind::VarKeyword)
                || AUTO_TOOL_METADATA.contains(&p.name.as_str())
                || p.name == "context_variables"
                || model
                    .fields
                    .iter()
                    .any(|f| auto_tool_key(&f.name.text) == auto_tool_key(&p.name)))
        })
        .map(|p| {
            format!(
                "`{agent}`'s output does not fill the parameter `{}`",
                p.name
            )
        })
}

/// `context_variables.set("key", …)` on a key that is not declared fails at
/// run time (`context_authority.unknown_key`).
fn undeclared_writes(bundle: &Bundle, out: &mut Vec<Diagnostic>) {
    const RUNTIME_KEYS: &[&str] = &["app_id", "chat_id", "user_id", "workflow_name"];
    for file in &bundle.python {
        for (key, range) in &file.module.context_writes {
            if key.is_empty()
                || bundle.variable(key).is_some()
                || RUNTIME_KEYS.contains(&key.as_str())
            {
                continue;
            }
            out.push(Diagnostic::new(
                Rule::UndeclaredWrite,
                file.file,
                *range,
                format!(
                    "this writes the context variable `{key}`, which context_variables.yaml does not declare; the write is refused at run time (context_authority.unknown_key) — declare it"
                ),
            ).with_fix(Fix::DeclareVariable {
                name: key.clone(),
                ty: "any",
                description: format!(
                    "Stub declared by mzk: {} writes it; say what it holds.",
                    bundle.file(file.file).map_or("a tool file", |f| f.relative.as_str())
                ),
            }));
        }
    }
}
