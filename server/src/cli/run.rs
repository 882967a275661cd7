//! `mzk run` and `mzk runs`: execute a checked bundle locally and browse the
//! persisted history. The runtime crate does the work; this module picks
//! the backend, prints events and stores them.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use mzk_analyzer::base::Severity;
use mzk_analyzer::Analysis;
use mzk_runtime::backend::{BackendKind, ModelBackend};
use mzk_runtime::choice::{ChoiceError, EngineKind, ModelChoice};
use mzk_runtime::history::{self, History, RecordingSink};
use mzk_runtime::mozaiks::{MozaiksEngine, ENGINE_UNAVAILABLE};
use mzk_runtime::python::Worker;
use mzk_runtime::scenario::{self, Scenario};
use mzk_runtime::{Engine, Error, Event, RunOptions};

use crate::cli::out::{out, outln};
use crate::cli::paint::Paint;
use mzk_runtime::RunStatus;

#[derive(clap::Args, Debug)]
pub struct RunArgs {
    /// The bundle folder (holding orchestrator.yaml).
    bundle: PathBuf,
    /// A scenario file: scripted model responses, user replies, initial
    /// context and message, and optionally the expected outcome.
    #[arg(long)]
    scenario: Option<PathBuf>,
    /// Read mozaiks' smoke files of the bundle (smoke_context<SUFFIX>.json,
    /// smoke_prompt<SUFFIX>.txt, smoke_responses<SUFFIX>.json); `--smoke` alone
    /// means no suffix, `--smoke=_ui` the `_ui` files.
    #[arg(long, num_args = 0..=1, default_missing_value = "", require_equals = true)]
    smoke: Option<String>,
    /// The model: `synthetic` (offline stand-in, the default without a
    /// scenario), `scenario` (the default with one) or `openai` (an
    /// OpenAI-compatible endpoint).
    #[arg(long, value_parser = backend_parser())]
    backend: Option<BackendKind>,
    /// The runtime: `mzk` (mzk's own engine, the default) or `mozaiks` (the
    /// real mozaiks 0.2.0 installed in --python's environment, offline, its
    /// model served by mzk on 127.0.0.1).
    #[arg(long, value_parser = engine_parser(), default_value = "mzk")]
    engine: EngineKind,
    /// openai: the endpoint up to /v1 (default: MZK_OPENAI_BASE_URL,
    /// OPENAI_BASE_URL, else https://api.openai.com/v1). The key is read from
    /// MZK_OPENAI_API_KEY or OPENAI_API_KEY.
    #[arg(long)]
    endpoint: Option<String>,
    /// openai: the model name (default: MZK_MODEL or OPENAI_MODEL).
    #[arg(long)]
    model: Option<String>,
    /// openai: seconds one request may take.
    #[arg(long, default_value_t = 120.0)]
    model_timeout: f64,
    /// A JSON object that seeds the initial context.
    #[arg(long, value_name = "FILE.json")]
    context: Option<PathBuf>,
    /// The launch message (sent after orchestrator.initial_message).
    #[arg(long)]
    message: Option<String>,
    /// Start from this agent instead of orchestrator.initial_agent.
    #[arg(long)]
    agent: Option<String>,
    /// Override orchestrator.max_turns.
    #[arg(long)]
    max_turns: Option<u32>,
    /// Seconds a tool, lifecycle or middleware call may take.
    #[arg(long, default_value_t = 60.0)]
    tool_timeout: f64,
    /// The Python interpreter for tools (default: MZK_PYTHON, the bundle's
    /// .venv or venv, else python3).
    #[arg(long)]
    python: Option<PathBuf>,
    /// One JSON object per event on stdout instead of the human form.
    #[arg(long)]
    json: bool,
    /// The history database (default: .mzk/runs.db beside the bundle).
    #[arg(long)]
    db: Option<PathBuf>,
    /// Continue the run with this id: a paused run takes --reply; an
    /// interrupted one (Ctrl-C, a killed process) re-runs its interrupted turn.
    #[arg(long)]
    resume: Option<String>,
    /// The user's reply to a paused run.
    #[arg(long, requires = "resume")]
    reply: Option<String>,
    /// Answer every pause with TEXT (default: a synthetic user's answer)
    /// instead of stopping, so an offline run goes on to its end; a
    /// scenario's own replies come first.
    #[arg(long, value_name = "TEXT", num_args = 0..=1, default_missing_value = SYNTHETIC_USER_REPLY, require_equals = true)]
    auto_reply: Option<String>,
}

/// What `--auto-reply` answers a pause with when no text is given.
const SYNTHETIC_USER_REPLY: &str = "(synthetic user) Here is everything you asked for.";

/// `--backend`: the names `mzk_runtime::choice` knows.
fn backend_parser() -> impl clap::builder::TypedValueParser<Value = BackendKind> {
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(BackendKind::names())
        .try_map(|name| BackendKind::parse(&name))
}

/// `--engine`: the names `mzk_runtime::choice` knows.
pub(crate) fn engine_parser() -> impl clap::builder::TypedValueParser<Value = EngineKind> {
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(EngineKind::ALL.map(EngineKind::name))
        .try_map(|name| EngineKind::parse(&name))
}

#[derive(clap::Args, Debug)]
pub struct RunsArgs {
    #[command(subcommand)]
    command: RunsCommand,
}

#[derive(clap::Subcommand, Debug)]
enum RunsCommand {
    /// The most recent runs, newest first.
    List {
        /// A bundle folder (its .mzk/runs.db) or a database file.
        #[arg(default_value = ".")]
        path: PathBuf,
        #[arg(long, default_value_t = 20)]
        limit: usize,
        #[arg(long)]
        json: bool,
    },
    /// One run's events.
    Show {
        id: String,
        /// A bundle folder (its .mzk/runs.db) or a database file.
        #[arg(default_value = ".")]
        path: PathBuf,
        #[arg(long)]
        json: bool,
    },
}

/// The packages tool calls could not import, gathered from their errors
/// (`ModuleNotFoundError: No module named 'httpx'`, `ImportError: cannot
/// import name 'X' from 'pkg'`), for the run's closing advice.
type MissingModules = Arc<std::sync::Mutex<std::collections::BTreeSet<String>>>;

fn missing_module(error: &str) -> Option<String> {
    let quoted_after = |marker: &str| {
        let rest = &error[error.find(marker)? + marker.len()..];
        let name = &rest[..rest.find('\'')?];
        name.split('.').next().map(str::to_string)
    };
    quoted_after("No module named '").or_else(|| {
        error
            .contains("ImportError")
            .then(|| quoted_after("from '"))
            .flatten()
    })
}

/// The next step when mozaiks refuses to start a run for a value a host
/// supplies (its words, as both engines give them): what the value is and
/// how to give it to a local run.
fn refused_start_hint(error: &str, bundle: &Path) -> Option<String> {
    let quoted = |marker: &str| {
        let rest = &error[error.find(marker)? + marker.len()..];
        Some(rest[..rest.find('\'')?].to_string())
    };
    if let Some(name) = quoted("Required runtime context '") {
        return Some(format!(
            "`{name}` is a required runtime value (context_variables.yaml: `source: {{type: runtime, required: true}}`), which the host app passes when it starts the workflow; give it to a local run in a JSON file: `mzk run {} --context ctx.json` with {{\"{name}\": …}}",
            bundle.display()
        ));
    }
    quoted("Required config variable '").map(|var| {
        format!(
            "the environment variable `{var}` feeds a required config variable; set it (`{var}=… mzk run {}`)",
            bundle.display()
        )
    })
}

/// Prints an event as it comes: its JSON line, or its human line (on a
/// terminal, turn headers bold and the closing status by what it means).
fn print_event(json: bool, missing: MissingModules) -> impl FnMut(&Event) + Send {
    let paint = Paint::for_stdout();
    move |event| {
        if let Event::ToolResult {
            error: Some(error), ..
        } = event
        {
            if let (Some(module), Ok(mut set)) = (missing_module(error), missing.lock()) {
                set.insert(module);
            }
        }
        if json {
            let line = serde_json::to_string(event).unwrap_or_default();
            crate::cli::out::write_now(format_args!("{line}\n"));
        } else if let Some(line) = event.human() {
            let line = match event {
                Event::TurnStarted { .. } => paint.strong(&line),
                Event::RunFinished { .. } => paint.outcome(&line),
                _ => line,
            };
            crate::cli::out::write_now(format_args!("{line}\n"));
        }
    }
}

/// The history database of a bundle folder, or the file given.
pub fn database_path(path: &Path) -> PathBuf {
    if path.is_dir() {
        history::default_path(path)
    } else {
        path.to_path_buf()
    }
}

/// The run history `mzk runs` reads: the database named, the bundle
/// folder's, or — from a folder above the bundles — the one history under
/// it; several are a question for the user, answered with the bundle.
fn history_for_runs(path: &Path) -> Result<PathBuf, String> {
    let direct = database_path(path);
    if direct.is_file() || !path.is_dir() {
        return match direct.is_file() {
            true => Ok(direct),
            false => Err(format!("no run history at {}", direct.display())),
        };
    }
    // Histories are kept in bundles (`BUNDLE/.mzk/runs.db`): the bundles
    // under the folder, as `mzk check` finds them, that have one.
    let mut found: Vec<PathBuf> = mzk_analyzer::discover_bundles(&mzk_analyzer::RealFs, path)
        .iter()
        .map(|b| history::default_path(b))
        .filter(|db| db.is_file())
        .collect();
    found.sort();
    match found.len() {
        1 => Ok(found.remove(0)),
        0 => Err(format!(
            "no run history at {} or in the folders below it (`mzk run BUNDLE` starts one)",
            direct.display()
        )),
        _ => Err(format!(
            "several run histories under {}: {}; name the bundle (or its runs.db) as PATH",
            path.display(),
            found
                .iter()
                .map(|p| p.strip_prefix(path).unwrap_or(p).display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

/// `5 s ago`, `3 min ago`, `2 h ago`, `4 days ago`.
fn ago(seconds: f64) -> String {
    let s = seconds.max(0.0) as u64;
    match s {
        0..=59 => format!("{s} s ago"),
        60..=3599 => format!("{} min ago", s / 60),
        3600..=86_399 => format!("{} h ago", s / 3600),
        86_400..=172_799 => "1 day ago".to_string(),
        _ => format!("{} days ago", s / 86_400),
    }
}

/// `850 ms`, `12.3 s`, `4 min 5 s`.
fn duration(seconds: f64) -> String {
    match seconds {
        s if s < 1.0 => format!("{} ms", (s * 1000.0).round() as u64),
        s if s < 59.95 => format!("{s:.1} s"),
        s => format!("{} min {} s", s as u64 / 60, s as u64 % 60),
    }
}

/// `mzk runs list` as a table, newest first.
fn runs_table(runs: &[history::RunSummary]) -> String {
    use super::table::{render, Align};
    let now = history::parse_time(&history::now()).unwrap_or(0.0);
    let rows: Vec<(Vec<String>, Option<String>)> = runs
        .iter()
        .map(|r| {
            let started = history::parse_time(&r.started_at);
            let updated = history::parse_time(&r.updated_at);
            let cells = vec![
                r.id.clone(),
                r.status.clone(),
                r.reason.clone(),
                r.turns.to_string(),
                r.workflow.clone(),
                r.backend.clone(),
                started.map_or_else(|| r.started_at.clone(), |t| ago(now - t)),
                match (started, updated) {
                    (Some(a), Some(b)) => duration(b - a),
                    _ => String::new(),
                },
            ];
            // The error's first line: the rest is in `runs show`.
            (
                cells,
                r.error
                    .as_ref()
                    .and_then(|e| e.lines().next())
                    .map(str::to_string),
            )
        })
        .collect();
    let header = [
        "ID", "STATUS", "REASON", "TURNS", "WORKFLOW", "MODEL", "STARTED", "DURATION",
    ]
    .map(|h| (h, Align::Left));
    render(&header, &rows)
}

/// Refuses a bundle with errors, printing them.
pub(crate) fn checked_bundle(path: &Path) -> Result<Arc<Analysis>, ExitCode> {
    let analysis = super::analyse_one(path, true)?;
    let cwd = std::env::current_dir().unwrap_or_default();
    let errors: Vec<_> = analysis
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .collect();
    if !errors.is_empty() {
        let located: Vec<_> = errors
            .iter()
            .map(|d| super::report::Located::new(&analysis, d, &cwd))
            .collect();
        for line in super::report::concise_lines(&located) {
            eprintln!("{line}");
        }
        eprintln!(
            "mzk: {} has {} error{}; mozaiks would refuse it, so it is not run (fix them, `mzk check` explains each)",
            path.display(),
            errors.len(),
            if errors.len() == 1 { "" } else { "s" }
        );
        return Err(ExitCode::from(2));
    }
    Ok(analysis)
}

fn load_scenario(args: &RunArgs, bundle_dir: &Path) -> Result<Option<Scenario>, String> {
    match (&args.scenario, &args.smoke) {
        (Some(_), Some(_)) => Err("give --scenario or --smoke, not both".into()),
        (Some(path), None) => scenario::load(path).map(Some).map_err(|e| e.to_string()),
        (None, Some(suffix)) => scenario::from_smoke_files(bundle_dir, suffix)
            .map(Some)
            .map_err(|e| e.to_string()),
        (None, None) => Ok(None),
    }
}

pub fn run(args: RunArgs) -> ExitCode {
    let analysis = match checked_bundle(&args.bundle) {
        Ok(a) => a,
        Err(code) => return code,
    };
    let bundle = &analysis.bundle;
    // Checked before anything runs: no hook, no history for a typo.
    if let Some(agent) = &args.agent {
        if !agent.eq_ignore_ascii_case("user") && bundle.agent(agent).is_none() {
            let names: Vec<&str> = bundle.agents.iter().map(|a| a.name.text.as_str()).collect();
            let hint = mzk_analyzer::diagnostics::did_you_mean(agent, names.iter().copied())
                .map(|n| format!(" (did you mean `{n}`?)"))
                .unwrap_or_default();
            eprintln!(
                "mzk: --agent {agent}: {} has no such agent{hint}; its agents are {} (or `user`, whose rules pick the first agent)",
                args.bundle.display(),
                names.join(", ")
            );
            return ExitCode::from(2);
        }
    }
    let scenario = match load_scenario(&args, &bundle.dir) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("mzk: {e}");
            return ExitCode::from(2);
        }
    };
    let mut seed_context = scenario
        .as_ref()
        .map(|s| s.context.clone())
        .unwrap_or_default();
    if let Some(path) = &args.context {
        let parsed = std::fs::read_to_string(path)
            .map_err(|e| e.to_string())
            .and_then(|t| mzk_runtime::value::parse_json(&t).map_err(|e| e.to_string()));
        match parsed {
            Ok(serde_json::Value::Object(map)) => seed_context.extend(map),
            Ok(_) => {
                eprintln!("mzk: {}: expected one JSON object", path.display());
                return ExitCode::from(2);
            }
            Err(e) => {
                eprintln!("mzk: {}: {e}", path.display());
                return ExitCode::from(2);
            }
        }
    }
    // `--smoke` replays the smoke files' prompt, not a model: the
    // synthetic model answers unless another is asked for.
    let asked = match args.smoke {
        Some(_) => Some(args.backend.unwrap_or(BackendKind::Synthetic)),
        None => args.backend,
    };
    let choice = ModelChoice {
        asked,
        scenario: scenario.as_ref(),
        configured: None,
        endpoint: args.endpoint.clone(),
        model: args.model.clone(),
        timeout: Duration::from_secs_f64(args.model_timeout.clamp(0.001, 86_400.0)),
    };
    let backend: Box<dyn ModelBackend> = match choice.backend(bundle) {
        Ok(backend) => backend,
        Err(ChoiceError::NoScenario) => {
            eprintln!("mzk: --backend scenario needs --scenario FILE");
            return ExitCode::from(2);
        }
        Err(ChoiceError::OpenAi(e)) => {
            eprintln!("mzk: {e}");
            return ExitCode::from(2);
        }
    };
    let db_path = args
        .db
        .clone()
        .unwrap_or_else(|| database_path(&bundle.dir));
    let history = match History::open(&db_path) {
        Ok(h) => h,
        Err(e) => {
            eprintln!("mzk: {e}");
            return ExitCode::from(2);
        }
    };
    if args.engine == EngineKind::Mozaiks && args.agent.is_some() {
        eprintln!(
            "mzk: --agent is for mzk's engine: mozaiks starts every run at orchestrator.initial_agent"
        );
        return ExitCode::from(2);
    }
    if args.engine == EngineKind::Mozaiks && args.resume.is_some() {
        eprintln!(
            "mzk: --engine mozaiks runs cannot be resumed: a paused mozaiks run lives in its own process, which ends with the run; give the user's replies up front (a scenario's `user:` replies, or --auto-reply)"
        );
        return ExitCode::from(2);
    }
    let resuming = args.resume.clone();
    let run_id = resuming.clone().unwrap_or_else(history::new_run_id);
    let mut options = RunOptions::new(
        run_id.clone(),
        args.python
            .clone()
            .unwrap_or_else(|| Worker::default_python(&bundle.dir)),
    );
    options.max_turns = args
        .max_turns
        .or(scenario.as_ref().and_then(|s| s.max_turns));
    options.tool_timeout = Duration::from_secs_f64(args.tool_timeout.clamp(0.001, 86_400.0));
    options.message = args
        .message
        .clone()
        .or(scenario.as_ref().and_then(|s| s.message.clone()));
    options.context = seed_context;
    options.initial_agent = args.agent.clone();
    if let Some(s) = &scenario {
        options.user = s.user.clone();
    }
    if let Some(text) = &args.auto_reply {
        options.user.default.get_or_insert_with(|| text.clone());
    }
    let saved = match &resuming {
        Some(id) => match history.load_state(id) {
            Ok(Some(state)) if state.engine == EngineKind::Mozaiks.name() => {
                eprintln!("mzk: run {id} ran on the mozaiks engine, whose paused runs end with their process; start a new run (a scenario's `user:` replies or --auto-reply answer pauses as they come)");
                return ExitCode::from(2);
            }
            Ok(Some(state)) if state.status == RunStatus::Paused && args.reply.is_some() => {
                Some(state)
            }
            Ok(Some(state)) if state.status == RunStatus::Paused => {
                eprintln!("mzk: run {id} is paused: give the user's answer with --reply TEXT");
                return ExitCode::from(2);
            }
            Ok(Some(state)) if state.status == RunStatus::Interrupted && args.reply.is_none() => {
                Some(state)
            }
            Ok(Some(state)) => {
                eprintln!(
                    "mzk: run {id} is {}; a paused run takes --reply, an interrupted one resumes without it",
                    state.status
                );
                return ExitCode::from(2);
            }
            Ok(None) => {
                eprintln!("mzk: no run {id} in {}", db_path.display());
                return ExitCode::from(2);
            }
            Err(e) => {
                eprintln!("mzk: {e}");
                return ExitCode::from(2);
            }
        },
        None => None,
    };
    let bundle_label = bundle.dir.display().to_string();
    let workflow = mzk_runtime::engine::workflow_name(bundle);
    let started = if saved.is_some() {
        history.claim(&run_id)
    } else {
        // The engine shows beside the model in `mzk runs`.
        let model = match args.engine {
            EngineKind::Mzk => backend.name().to_string(),
            EngineKind::Mozaiks => format!("{}@mozaiks", backend.name()),
        };
        history.create_run(&run_id, &workflow, &bundle_label, &model)
    };
    if let Err(e) = started {
        eprintln!("mzk: {e}");
        return ExitCode::from(2);
    }
    let missing = MissingModules::default();
    let python = options.python.clone();
    let mut sink = RecordingSink::new(history, &run_id, print_event(args.json, missing.clone()));
    let runtime = match super::current_thread_runtime() {
        Ok(rt) => rt,
        Err(code) => return code,
    };
    let expectation = scenario.as_ref().and_then(|s| s.expect.clone());
    let final_state = match args.engine {
        EngineKind::Mzk => runtime.block_on(async {
            let mut engine = Engine::new(bundle, backend, &mut sink, options);
            let interrupted = {
                let work = async {
                    match (saved, args.reply.as_deref()) {
                        (Some(state), Some(reply)) => {
                            engine.restore(state);
                            engine
                                .resume(reply)
                                .await
                                .map(|_| ())
                                .map_err(|e| e.to_string())
                        }
                        (Some(state), None) => {
                            engine.restore(state);
                            engine
                                .recover()
                                .await
                                .map(|_| ())
                                .map_err(|e| e.to_string())
                        }
                        (None, _) => {
                            engine.start().await;
                            Ok(())
                        }
                    }
                };
                tokio::select! {
                    result = work => result.err(),
                    _ = tokio::signal::ctrl_c() => Some(String::from("interrupted")),
                }
            };
            if interrupted.as_deref() == Some("interrupted") {
                engine.interrupt();
            } else if let Some(e) = interrupted {
                eprintln!("mzk: {e}");
            }
            engine.shutdown().await;
            engine.state.clone()
        }),
        EngineKind::Mozaiks => runtime.block_on(async {
            let mut engine = MozaiksEngine::new(bundle, backend, &mut sink, options);
            // Dropping the run's future kills the driver's process group
            // (and removes its folder); an orphaned driver leaves by itself.
            let interrupted = tokio::select! {
                _ = engine.start() => false,
                _ = tokio::signal::ctrl_c() => true,
            };
            if interrupted {
                engine.interrupt();
            }
            engine.state.clone()
        }),
    };
    let stored = match sink.storage_error() {
        Some(e) => {
            eprintln!("mzk: warning: {e}");
            false
        }
        None => true,
    };
    let missing: Vec<String> = missing
        .lock()
        .map(|set| set.iter().cloned().collect())
        .unwrap_or_default();
    if !missing.is_empty() {
        eprintln!(
            "mzk: the tools could not import {} with {}: they run in the Python you give them — pass --python PATH or set MZK_PYTHON to an environment that has the bundle's dependencies (for mozaiks' own modules, `pip install mozaiks==0.2.0`)",
            missing
                .iter()
                .map(|m| format!("`{m}`"))
                .collect::<Vec<_>>()
                .join(", "),
            python.display()
        );
    }
    if let Some(hint) = final_state
        .error
        .as_deref()
        .and_then(|e| refused_start_hint(e, &args.bundle))
    {
        eprintln!("mzk: {hint}");
    }
    if final_state.status == RunStatus::Paused {
        eprintln!(
            "mzk: run {run_id} is waiting for the user; continue it with: mzk run {} --resume {run_id} --reply \"…\"",
            args.bundle.display()
        );
    } else if !args.json && stored {
        // The history `mzk runs show` reads by default, else the one named.
        let history = match &args.db {
            Some(db) => db.display().to_string(),
            None => args.bundle.display().to_string(),
        };
        eprintln!("mzk: saved as run {run_id} — `mzk runs show {run_id} {history}` replays it");
    }
    if final_state.reason == ENGINE_UNAVAILABLE {
        // The human form's last line already said why.
        if let (true, Some(error)) = (args.json, &final_state.error) {
            eprintln!("mzk: {error}");
        }
        return ExitCode::from(2);
    }
    if let Some(expect) = expectation {
        match expect.first_divergence(&final_state.observed()) {
            None => {
                eprintln!("mzk: scenario passed");
                return ExitCode::SUCCESS;
            }
            Some(divergence) => {
                eprintln!("mzk: scenario failed: {divergence}");
                return ExitCode::from(1);
            }
        }
    }
    match final_state.status {
        RunStatus::Completed | RunStatus::Paused => ExitCode::SUCCESS,
        _ => ExitCode::from(1),
    }
}

pub fn runs(args: RunsArgs) -> ExitCode {
    let (path, json) = match &args.command {
        RunsCommand::List { path, json, .. } | RunsCommand::Show { path, json, .. } => {
            (path, *json)
        }
    };
    let db_path = match history_for_runs(path) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("mzk: {e}");
            return ExitCode::from(2);
        }
    };
    let history = match History::open(&db_path) {
        Ok(h) => h,
        Err(e) => {
            eprintln!("mzk: {e}");
            return ExitCode::from(2);
        }
    };
    let result = match &args.command {
        RunsCommand::List { limit, .. } => history.list(*limit).map(|runs| {
            if json {
                outln!(
                    "{}",
                    serde_json::to_string_pretty(&runs).unwrap_or_default()
                );
            } else if runs.is_empty() {
                outln!("no runs in {}", db_path.display());
            } else {
                out!("{}", runs_table(&runs));
            }
        }),
        RunsCommand::Show { id, .. } => match history.find(id) {
            Ok(None) => Err(Error::UnknownRun {
                run_id: id.clone(),
                history: db_path.clone(),
            }),
            Ok(Some(summary)) => history.events(&summary.id).map(|events| {
                if json {
                    let out = serde_json::json!({"run": summary, "events": events});
                    outln!("{}", serde_json::to_string_pretty(&out).unwrap_or_default());
                } else {
                    outln!(
                        "run {} ({}, {} model): {} {}",
                        summary.id,
                        summary.workflow,
                        summary.backend,
                        summary.status,
                        summary.reason
                    );
                    for e in events {
                        let line = serde_json::from_value::<Event>(e.event.clone())
                            .ok()
                            .and_then(|ev| ev.human());
                        if let Some(line) = line {
                            outln!("{}  {line}", e.at);
                        }
                    }
                }
            }),
            Err(e) => Err(e),
        },
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mzk: {e}");
            ExitCode::from(2)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{missing_module, refused_start_hint};

    #[test]
    fn a_refused_start_says_how_to_give_the_value() {
        let bundle = std::path::Path::new("wf/DesignDocs");
        let runtime = refused_start_hint(
            "Required runtime context 'run_build_binding' is missing for 'DesignDocs'",
            bundle,
        )
        .unwrap();
        assert!(
            runtime.starts_with("`run_build_binding` is a required runtime value")
                && runtime.contains(
                    "`mzk run wf/DesignDocs --context ctx.json` with {\"run_build_binding\": …}"
                ),
            "{runtime}"
        );
        let config =
            refused_start_hint("Required config variable 'DESK_MODE' is not set", bundle).unwrap();
        assert!(
            config.contains("`DESK_MODE=… mzk run wf/DesignDocs`"),
            "{config}"
        );
        assert_eq!(
            refused_start_hint("AG2 turn failed for A: boom", bundle),
            None
        );
    }

    #[test]
    fn the_package_a_tool_could_not_import_is_read_from_its_error() {
        let read = |e: &str| missing_module(e);
        assert_eq!(
            read("ModuleNotFoundError: No module named 'mozaiksai.core.workflow'").as_deref(),
            Some("mozaiksai")
        );
        assert_eq!(
            read("ImportError: cannot import name 'BaseModel' from 'pydantic' (unknown location)")
                .as_deref(),
            Some("pydantic")
        );
        assert_eq!(read("ValueError: bad input from 'here'"), None);
        assert_eq!(read("No module named 'unterminated"), None);
    }
}
