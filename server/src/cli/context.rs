//! `mzk context`: what each agent of a bundle is told, and how big it is —
//! the static prompt as mozaiks 0.2.0 composes it (`analyzer::prompt`), its
//! size in characters and in tokens of OpenAI's o200k_base encoding
//! (`analyzer::tokens`), the variables
//! the agent sees and writes, its tools, and the prompt middleware that
//! rewrites the prompt at run time (dynamic, not sized).

use std::path::PathBuf;
use std::process::ExitCode;

use mzk_analyzer::prompt::{compose, AgentPrompt};
use mzk_analyzer::syntax::ColumnUnit;
use mzk_analyzer::{tokens, Analysis};
use serde_json::{json, Value};

use crate::cli::out::{out, outln};

#[derive(clap::Args, Debug)]
pub struct ContextArgs {
    /// The bundle folder (holding orchestrator.yaml).
    bundle: PathBuf,
    /// Only this agent, with its whole prompt.
    #[arg(long)]
    agent: Option<String>,
    /// Every agent's whole prompt too (by default the table and each
    /// agent's breakdown).
    #[arg(long)]
    prompts: bool,
    /// `full`: each prompt with its breakdown; `json`: the same as data.
    #[arg(long, value_enum, default_value = "full")]
    output_format: ContextFormat,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ContextFormat {
    Full,
    Json,
}

pub fn run(args: ContextArgs) -> ExitCode {
    let analysis = match super::analyse_one(&args.bundle, false) {
        Ok(analysis) => analysis,
        Err(code) => return code,
    };
    let mut prompts = compose(&analysis.bundle);
    if let Some(agent) = &args.agent {
        prompts.retain(|p| &p.agent == agent);
        if prompts.is_empty() {
            let names: Vec<String> = analysis
                .bundle
                .agents
                .iter()
                .map(|a| a.name.text.clone())
                .collect();
            eprintln!(
                "mzk: no agent `{agent}` in {} (agents: {})",
                analysis.bundle.dir.display(),
                names.join(", ")
            );
            return ExitCode::from(2);
        }
    }
    // The token budget of the configuration that governs the bundle (MZ803's).
    let budget = mzk_analyzer::ConfigSource::default()
        .configure(&mzk_analyzer::RealFs, &analysis.bundle.dir)
        .map(|c| c.prompt_limits.max_prompt_tokens)
        .unwrap_or(mzk_analyzer::prompt::PromptLimits::default().max_prompt_tokens);
    let report = match report(&analysis, &prompts, budget) {
        Ok(report) => report,
        Err(e) => {
            eprintln!("mzk: {e}");
            return ExitCode::from(2);
        }
    };
    match args.output_format {
        ContextFormat::Json => outln!(
            "{}",
            serde_json::to_string_pretty(&report).unwrap_or_default()
        ),
        ContextFormat::Full => out!("{}", full(&report, args.prompts || args.agent.is_some())),
    }
    ExitCode::SUCCESS
}

/// The report as data (the `json` format; `full` renders it).
pub fn report(
    analysis: &Analysis,
    prompts: &[AgentPrompt],
    budget: usize,
) -> Result<Value, String> {
    let bundle = &analysis.bundle;
    let place = |file, range: mzk_analyzer::base::TextRange| {
        bundle.file(file).map_or(json!(null), |f| {
            let p = f
                .line_index
                .position(&f.text, range.start, ColumnUnit::Char);
            json!({"path": f.relative, "line": p.line + 1})
        })
    };
    let mut agents: Vec<Value> = Vec::with_capacity(prompts.len());
    for p in prompts {
        let mut parts = Vec::with_capacity(p.parts.len());
        for part in &p.parts {
            parts.push(json!({
                "label": part.label,
                "at": place(part.file, part.range),
                "chars": part.text.chars().count(),
                "tokens": tokens::count(&part.text),
            }));
        }
        agents.push(json!({
            "agent": p.agent,
            "at": place(p.file, p.range),
            "chars": p.text.chars().count(),
            "tokens": tokens::count(&p.text),
            "parts": parts,
            "dynamic": p.middleware,
            "visible": p.visible,
            "writable": p.writable,
            "tools": p.tools,
            "text": p.text,
        }));
    }
    let total = |key: &str| {
        agents
            .iter()
            .map(|a| a[key].as_u64().unwrap_or(0))
            .sum::<u64>()
    };
    Ok(json!({
        "bundle": bundle.folder_name,
        "encoding": tokens::ENCODING,
        "budget": budget,
        "agents": agents,
        "total": {"chars": total("chars"), "tokens": total("tokens")},
    }))
}

/// The agents sorted by size, each with its share of the token budget
/// (flagged when over), and how many variables it sees and writes and how
/// many tools it has.
fn table(report: &Value) -> String {
    use super::table::{render, Align};
    let budget = report["budget"].as_u64().unwrap_or(0).max(1);
    let count = |v: &Value| v.as_array().map_or(0, Vec::len).to_string();
    let mut agents: Vec<&Value> = report["agents"].as_array().into_iter().flatten().collect();
    agents.sort_by_key(|a| std::cmp::Reverse(a["tokens"].as_u64().unwrap_or(0)));
    let rows: Vec<(Vec<String>, Option<String>)> = agents
        .iter()
        .map(|a| {
            let tokens = a["tokens"].as_u64().unwrap_or(0);
            let share = tokens * 100 / budget;
            let cells = vec![
                a["agent"].as_str().unwrap_or("").to_string(),
                tokens.to_string(),
                if tokens > budget {
                    format!("{share}%  OVER")
                } else {
                    format!("{share}%")
                },
                count(&a["visible"]),
                count(&a["writable"]),
                count(&a["tools"]),
            ];
            (cells, None)
        })
        .collect();
    let mut out = render(
        &[
            ("AGENT", Align::Left),
            ("TOKENS", Align::Right),
            ("OF BUDGET", Align::Right),
            ("SEES", Align::Right),
            ("WRITES", Align::Right),
            ("TOOLS", Align::Right),
        ],
        &rows,
    );
    let over = rows.iter().filter(|(r, _)| r[2].ends_with("OVER")).count();
    out.push_str(&format!(
        "budget: {budget} tokens per static prompt (`[context] max-prompt-tokens`, MZ803){}\n\n",
        match over {
            0 => String::new(),
            1 => "; 1 agent is over it".to_string(),
            n => format!("; {n} agents are over it"),
        }
    ));
    out
}

fn full(report: &Value, with_prompts: bool) -> String {
    use std::fmt::Write as _;
    let mut out = table(report);
    let number = |v: &Value| v.as_u64().unwrap_or(0);
    let list = |v: &Value| -> String {
        let items: Vec<&str> = v
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        if items.is_empty() {
            "none".into()
        } else {
            items.join(", ")
        }
    };
    for agent in report["agents"].as_array().into_iter().flatten() {
        let _ = writeln!(
            out,
            "== {} ({}:{}) — {} chars, {} tokens",
            agent["agent"].as_str().unwrap_or(""),
            agent["at"]["path"].as_str().unwrap_or(""),
            number(&agent["at"]["line"]),
            number(&agent["chars"]),
            number(&agent["tokens"])
        );
        for part in agent["parts"].as_array().into_iter().flatten() {
            let _ = writeln!(
                out,
                "   {:>7} tokens {:>8} chars  {} ({}:{})",
                number(&part["tokens"]),
                number(&part["chars"]),
                part["label"].as_str().unwrap_or(""),
                part["at"]["path"].as_str().unwrap_or(""),
                number(&part["at"]["line"])
            );
        }
        let _ = writeln!(
            out,
            "   dynamic (prompt middleware, not sized): {}",
            list(&agent["dynamic"])
        );
        let _ = writeln!(out, "   sees: {}", list(&agent["visible"]));
        let _ = writeln!(out, "   writes: {}", list(&agent["writable"]));
        let _ = writeln!(out, "   tools: {}", list(&agent["tools"]));
        if with_prompts {
            let _ = writeln!(out, "   --- prompt");
            for line in agent["text"].as_str().unwrap_or("").lines() {
                let _ = writeln!(out, "   | {line}");
            }
        }
        out.push('\n');
    }
    let _ = writeln!(
        out,
        "{}: {} agents, {} chars, {} tokens ({})",
        report["bundle"].as_str().unwrap_or(""),
        report["agents"].as_array().map_or(0, Vec::len),
        number(&report["total"]["chars"]),
        number(&report["total"]["tokens"]),
        report["encoding"].as_str().unwrap_or("")
    );
    if !with_prompts {
        out.push_str("(`--prompts` shows every whole prompt, `--agent NAME` one)\n");
    }
    out
}
