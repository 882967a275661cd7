//! Runs started from the editor (`mzk.runWorkflow`, `mzk.runFromAgent`):
//! the runtime executes the bundle in a task, events stream to the client as
//! `mzk/runEvent` notifications and `$/progress`, a pause asks the user with
//! the `mzk/askUser` request (or says how to answer with `mzk.reply`), and
//! `mzk.cancelRun` interrupts. Runs use the same history database as the
//! CLI. Nothing runs unless the user asks: there is no run on open or save.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use mzk_analyzer::base::hash::HashMap;
use mzk_analyzer::base::Severity;
use mzk_analyzer::Analysis;
use mzk_runtime::backend::{BackendKind, ModelBackend};
use mzk_runtime::choice::{ChoiceError, ModelChoice};
use mzk_runtime::events::turns_phrase;
use mzk_runtime::history::{self, History, RecordingSink};
use mzk_runtime::python::Worker;
use mzk_runtime::scenario::{self, Scenario};
use mzk_runtime::RunStatus;
use mzk_runtime::{Engine, Event, RunOptions, RunState};
use serde_json::{json, Value};
use tokio::sync::{mpsc, watch, Mutex};
use tower_lsp_server::ls_types::notification::{Notification, Progress};
use tower_lsp_server::ls_types::request::{Request, WorkDoneProgressCreate};
use tower_lsp_server::ls_types::*;
use tower_lsp_server::{jsonrpc, Client};

/// `mzk/runEvent`: `{runId, event}` for every event of a run.
pub enum RunEvent {}

impl Notification for RunEvent {
    type Params = Value;
    const METHOD: &'static str = "mzk/runEvent";
}

/// `mzk/askUser`: `{runId, agent, prompt}` → `{text}` (null: no answer now).
pub enum AskUser {}

impl Request for AskUser {
    type Params = Value;
    type Result = Value;
    const METHOD: &'static str = "mzk/askUser";
}

/// How runs are configured (`initializationOptions.run`).
#[derive(Debug, Clone, Default)]
pub struct RunSettings {
    /// `synthetic` (default), `scenario` or `openai`.
    pub backend: Option<String>,
    pub endpoint: Option<String>,
    pub model: Option<String>,
    /// The client shows `$/progress`.
    pub progress: bool,
}

impl RunSettings {
    pub fn from_initialization(options: Option<&Value>, progress: bool) -> RunSettings {
        let run = options.and_then(|o| o.get("run"));
        let text = |key: &str| {
            run.and_then(|r| r.get(key))
                .and_then(Value::as_str)
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
        };
        RunSettings {
            backend: text("backend"),
            endpoint: text("endpoint"),
            model: text("model"),
            progress,
        }
    }
}

/// A run this server knows: where it lives and how to cancel it.
struct Known {
    bundle: PathBuf,
    scenario: Option<PathBuf>,
    cancel: Option<watch::Sender<bool>>,
}

#[derive(Default)]
pub struct Runs {
    pub settings: Mutex<RunSettings>,
    known: Mutex<HashMap<String, Known>>,
}

fn failed(message: impl std::fmt::Display) -> jsonrpc::Error {
    jsonrpc::Error {
        code: jsonrpc::ErrorCode::InvalidParams,
        message: message.to_string().into(),
        data: None,
    }
}

/// The options object a run command may end with: `{scenario, message}`.
fn run_options_argument(arguments: &[Value]) -> (Option<PathBuf>, Option<String>) {
    let options = arguments.iter().find(|a| a.is_object());
    let scenario = options
        .and_then(|o| o["scenario"].as_str())
        .filter(|s| !s.is_empty())
        .map(PathBuf::from);
    let message = options
        .and_then(|o| o["message"].as_str())
        .map(str::to_string);
    (scenario, message)
}

impl Runs {
    fn backend(
        &self,
        settings: &RunSettings,
        analysis: &Analysis,
        scenario: Option<&Scenario>,
    ) -> Result<Box<dyn ModelBackend>, String> {
        let configured = settings
            .backend
            .as_deref()
            .map(BackendKind::parse)
            .transpose()?;
        // A scenario picked for the run beats the configured default.
        let choice = ModelChoice {
            asked: None,
            scenario,
            configured,
            endpoint: settings.endpoint.clone(),
            model: settings.model.clone(),
            timeout: Duration::from_secs(120),
        };
        choice.backend(&analysis.bundle).map_err(|e| match e {
            ChoiceError::NoScenario => "the run backend is `scenario`: pass a scenario file, e.g. arguments [bundle, {\"scenario\": \"<bundle>/scenarios/x.yaml\"}], or set the backend to `synthetic`".to_string(),
            ChoiceError::OpenAi(e) => e,
        })
    }

    /// What a run needs: its scenario (when one is given), the model and
    /// the bundle's history database.
    async fn prepare(
        &self,
        analysis: &Analysis,
        scenario_path: Option<&std::path::Path>,
    ) -> jsonrpc::Result<(
        Option<Scenario>,
        Box<dyn ModelBackend>,
        History,
        RunSettings,
    )> {
        let scenario = match scenario_path {
            Some(p) => Some(scenario::load(p).map_err(failed)?),
            None => None,
        };
        let settings = self.settings.lock().await.clone();
        let backend = self
            .backend(&settings, analysis, scenario.as_ref())
            .map_err(failed)?;
        let history =
            History::open(&history::default_path(&analysis.bundle.dir)).map_err(failed)?;
        Ok((scenario, backend, history, settings))
    }

    /// `mzk.runWorkflow [bundle, options?]`, `mzk.runFromAgent [bundle, agent, options?]`.
    pub async fn start(
        self: &Arc<Self>,
        client: Client,
        analysis: Arc<Analysis>,
        agent: Option<String>,
        arguments: &[Value],
    ) -> jsonrpc::Result<Value> {
        let errors = analysis
            .diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .count();
        if errors > 0 {
            return Err(failed(format!(
                "{} has {errors} error{}; mozaiks would refuse it, so it is not run (see the Problems list)",
                analysis.bundle.dir.display(),
                if errors == 1 { "" } else { "s" }
            )));
        }
        if let Some(a) = &agent {
            if analysis.bundle.agent(a).is_none() {
                return Err(failed(format!(
                    "no agent `{a}` in {}",
                    analysis.bundle.dir.display()
                )));
            }
        }
        let (scenario_path, message) = run_options_argument(arguments);
        let (scenario, backend, history, settings) =
            self.prepare(&analysis, scenario_path.as_deref()).await?;
        let dir = analysis.bundle.dir.clone();
        let run_id = history::new_run_id();
        let workflow = mzk_runtime::engine::workflow_name(&analysis.bundle);
        history
            .create_run(&run_id, &workflow, &dir.to_string_lossy(), backend.name())
            .map_err(failed)?;
        let mut options = RunOptions::new(run_id.clone(), Worker::default_python(&dir));
        options.initial_agent = agent;
        if let Some(s) = &scenario {
            options.context = s.context.clone();
            options.user = s.user.clone();
            options.max_turns = s.max_turns;
            options.message = s.message.clone();
        }
        if message.is_some() {
            options.message = message;
        }
        let (cancel, cancelled) = watch::channel(false);
        self.known.lock().await.insert(
            run_id.clone(),
            Known {
                bundle: dir,
                scenario: scenario_path,
                cancel: Some(cancel),
            },
        );
        let runs = self.clone();
        tokio::spawn(runs.drive(
            client,
            analysis,
            backend,
            history,
            options,
            None,
            cancelled,
            settings.progress,
        ));
        Ok(json!({"runId": run_id}))
    }

    /// `mzk.reply [runId, text]`: continues a paused run from its saved state.
    pub async fn reply(
        self: &Arc<Self>,
        client: Client,
        analysis_of: impl std::future::Future<Output = jsonrpc::Result<Arc<Analysis>>>,
        run_id: &str,
        text: &str,
    ) -> jsonrpc::Result<Value> {
        let scenario_path = {
            let known = self.known.lock().await;
            let k = known.get(run_id).ok_or_else(|| {
                failed(format!("no run `{run_id}` was started in this editor session; continue it with `mzk run BUNDLE --resume {run_id} --reply TEXT`"))
            })?;
            if k.cancel.is_some() {
                return Err(failed(format!(
                    "run {run_id} is still running; it asks when it needs a reply"
                )));
            }
            k.scenario.clone()
        };
        let analysis = analysis_of.await?;
        let dir = analysis.bundle.dir.clone();
        let (_, backend, history, settings) =
            self.prepare(&analysis, scenario_path.as_deref()).await?;
        let state = match history.load_state(run_id).map_err(failed)? {
            Some(s) if s.status == RunStatus::Paused => s,
            Some(s) => return Err(failed(format!("run {run_id} is {}, not paused", s.status))),
            None => return Err(failed(format!("no run {run_id} in {}", dir.display()))),
        };
        history.claim(run_id).map_err(failed)?;
        let options = RunOptions::new(run_id.to_string(), Worker::default_python(&dir));
        let (cancel, cancelled) = watch::channel(false);
        if let Some(k) = self.known.lock().await.get_mut(run_id) {
            k.cancel = Some(cancel);
        }
        let runs = self.clone();
        tokio::spawn(runs.drive(
            client,
            analysis,
            backend,
            history,
            options,
            Some((state, text.to_string())),
            cancelled,
            settings.progress,
        ));
        Ok(json!({"runId": run_id}))
    }

    /// The bundle folder of a run started in this session.
    pub async fn bundle_of(&self, run_id: &str) -> Option<PathBuf> {
        self.known
            .lock()
            .await
            .get(run_id)
            .map(|k| k.bundle.clone())
    }

    /// `mzk.cancelRun [runId]`.
    pub async fn cancel(&self, run_id: &str) -> jsonrpc::Result<Value> {
        let known = self.known.lock().await;
        match known.get(run_id).and_then(|k| k.cancel.as_ref()) {
            Some(cancel) => {
                let _ = cancel.send(true);
                Ok(json!({"cancelled": run_id}))
            }
            None => Err(failed(format!("run `{run_id}` is not running"))),
        }
    }

    /// Runs (or resumes) until the run ends, or pauses without an answer.
    #[allow(clippy::too_many_arguments)]
    async fn drive(
        self: Arc<Self>,
        client: Client,
        analysis: Arc<Analysis>,
        backend: Box<dyn ModelBackend>,
        history: History,
        options: RunOptions,
        resume: Option<(RunState, String)>,
        mut cancelled: watch::Receiver<bool>,
        progress: bool,
    ) {
        let run_id = options.run_id.clone();
        let (events, incoming) = mpsc::unbounded_channel::<Event>();
        let forwarder = tokio::spawn(forward(client.clone(), run_id.clone(), progress, incoming));
        let mut sink = RecordingSink::new(history, &run_id, move |event: &Event| {
            let _ = events.send(event.clone());
        });
        let state = {
            let mut engine = Engine::new(&analysis.bundle, backend, &mut sink, options);
            let mut reply = match resume {
                Some((state, reply)) => {
                    engine.restore(state);
                    Some(reply)
                }
                None => None,
            };
            loop {
                let step = async {
                    match reply.take() {
                        Some(text) => {
                            let _ = engine.resume(&text).await;
                        }
                        None => {
                            engine.start().await;
                        }
                    }
                };
                let interrupted = tokio::select! {
                    _ = step => false,
                    _ = cancelled.wait_for(|c| *c) => true,
                };
                if interrupted {
                    engine.interrupt();
                    break;
                }
                if engine.state.status != RunStatus::Paused {
                    break;
                }
                // A pause: ask the user, or tell them how to answer.
                let question = json!({
                    "runId": run_id,
                    "agent": engine.state.paused_after,
                    "prompt": format!(
                        "{} asks: {}",
                        engine.state.paused_after.clone().unwrap_or_default(),
                        engine.state.last_message
                    ),
                });
                let answer = tokio::select! {
                    a = client.send_request::<AskUser>(question) => a.ok(),
                    _ = cancelled.wait_for(|c| *c) => {
                        engine.interrupt();
                        break;
                    }
                };
                match answer.as_ref().and_then(|a| a["text"].as_str()) {
                    Some(text) => reply = Some(text.to_string()),
                    None => {
                        client
                            .show_message(
                                MessageType::INFO,
                                format!("mzk: run {run_id} waits for your reply: run the command `mzk.reply` with the run id and your text (arguments [\"{run_id}\", \"…\"])"),
                            )
                            .await;
                        break;
                    }
                }
            }
            engine.shutdown().await;
            engine.state.clone()
        };
        let storage_error = sink.storage_error().map(ToString::to_string);
        drop(sink);
        let _ = forwarder.await;
        if let Some(e) = storage_error {
            client
                .show_message(MessageType::WARNING, format!("mzk: run {run_id}: {e}"))
                .await;
        }
        if let Some(k) = self.known.lock().await.get_mut(&run_id) {
            k.cancel = None;
        }
        let kind = match state.status {
            RunStatus::Completed | RunStatus::Paused => MessageType::INFO,
            _ => MessageType::ERROR,
        };
        let mut summary = format!(
            "mzk: run {run_id} of {}: {} ({}) after {}",
            state.workflow,
            state.status,
            state.reason,
            turns_phrase(
                Some(state.agents.len() as u32),
                Some(state.user_replies),
                state.turn_count
            )
        );
        if let Some(e) = state.error.as_ref().filter(|e| **e != state.reason) {
            summary.push_str(&format!(": {e}"));
        }
        client.show_message(kind, summary).await;
    }
}

/// Streams events to the client: `mzk/runEvent` for each, and a progress
/// report with its human line.
async fn forward(
    client: Client,
    run_id: String,
    progress: bool,
    mut incoming: mpsc::UnboundedReceiver<Event>,
) {
    let token = NumberOrString::String(format!("mzk-run-{run_id}"));
    let progress = progress
        && client
            .send_request::<WorkDoneProgressCreate>(WorkDoneProgressCreateParams {
                token: token.clone(),
            })
            .await
            .is_ok();
    let report = |value: WorkDoneProgress| ProgressParams {
        token: token.clone(),
        value: ProgressParamsValue::WorkDone(value),
    };
    if progress {
        client
            .send_notification::<Progress>(report(WorkDoneProgress::Begin(WorkDoneProgressBegin {
                title: format!("mzk run {run_id}"),
                cancellable: Some(false),
                message: None,
                percentage: None,
            })))
            .await;
    }
    while let Some(event) = incoming.recv().await {
        let line = event.human();
        client
            .send_notification::<RunEvent>(json!({"runId": run_id, "event": event}))
            .await;
        if let (true, Some(line)) = (progress, line) {
            client
                .send_notification::<Progress>(report(WorkDoneProgress::Report(
                    WorkDoneProgressReport {
                        cancellable: Some(false),
                        message: Some(line.trim().to_string()),
                        percentage: None,
                    },
                )))
                .await;
        }
    }
    if progress {
        client
            .send_notification::<Progress>(report(WorkDoneProgress::End(WorkDoneProgressEnd {
                message: None,
            })))
            .await;
    }
}
