//! `workspace/executeCommand`: the graph, the prompt and the runs.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use mzk_analyzer::ide::graph_view::{graph_view, graph_view_without_layout, mermaid};
use mzk_analyzer::{analyze, Analysis, AnalysisCache, RealFs};
use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::*;

use crate::graph_page::{overlays, page_html, PageOptions};
use crate::lsp::guard::{guarded, invalid_params};
use mzk_analyzer::base::fs::normalize;

use crate::lsp::{
    Backend, CANCEL_RUN, COMMANDS, REPLY, RUN_FROM_AGENT, RUN_WORKFLOW, SHOW_GRAPH, SHOW_PROMPT,
};

impl Backend {
    /// The analysis of the bundle a command names in its first argument:
    /// the latest one, else a fresh one from disk.
    pub(crate) async fn analysis_for_command(
        &self,
        command: &str,
        dir: Option<PathBuf>,
    ) -> Result<Arc<Analysis>> {
        let Some(dir) = dir else {
            return Err(invalid_params(&format!(
                "{command} takes the bundle folder as its first argument"
            )));
        };
        if let Some(analysis) = self.state.lock().await.host.analysis(&dir) {
            return Ok(analysis);
        }
        if !dir.join("orchestrator.yaml").is_file() {
            return Err(invalid_params(&format!(
                "{}: not a bundle (no orchestrator.yaml)",
                dir.display()
            )));
        }
        // Not analysed by the server (a bundle outside the workspace): the
        // model as its checks see it, for this command alone — neither kept
        // nor published, so nothing goes stale or shows twice.
        let analyse = move || analyze(&RealFs, &dir, None, &mut AnalysisCache::new());
        let Some(slot) = self.analyses.slot().await else {
            return Err(tower_lsp_server::jsonrpc::Error::internal_error());
        };
        match self.analyses.run(slot, analyse).await {
            Ok(a) => Ok(Arc::new(a)),
            Err(_) => Err(tower_lsp_server::jsonrpc::Error::internal_error()),
        }
    }
}

/// `mzk.showGraph` answers the bundle's transition graph as Mermaid text
/// or as the graph page,
/// `mzk.showPrompt` an agent's static prompt with its sizes as Markdown;
/// the run commands start, answer and cancel runs (see `runs.rs`).
pub(crate) async fn execute_command(
    backend: &Backend,
    params: ExecuteCommandParams,
) -> Result<Option<serde_json::Value>> {
    let dir = params
        .arguments
        .first()
        .and_then(|a| a.as_str())
        .map(|a| normalize(Path::new(a)));
    match params.command.as_str() {
        SHOW_GRAPH => {
            // `[dir]`: Mermaid text, for any client; `[dir, {"format":
            // "html", "nonce": N}]`: the graph page, for a webview whose
            // content security policy allows scripts with nonce N.
            let page = match params
                .arguments
                .get(1)
                .filter(|o| o.get("format").and_then(|f| f.as_str()) == Some("html"))
            {
                None => None,
                Some(o) => match o.get("nonce").and_then(|n| n.as_str()) {
                    // A page without the policy, or with one that blocks its
                    // own script, is refused rather than sent.
                    Some(n) if !n.is_empty() && n.chars().all(|c| c.is_ascii_alphanumeric()) => {
                        Some(PageOptions {
                            nonce: Some(n.to_string()),
                            ..PageOptions::default()
                        })
                    }
                    Some(_) => {
                        return Err(invalid_params(
                            "mzk.showGraph: the nonce must be letters and digits",
                        ))
                    }
                    None => Some(PageOptions::default()),
                },
            };
            let name = dir
                .as_deref()
                .and_then(Path::file_name)
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let analysis = backend.analysis_for_command(SHOW_GRAPH, dir).await?;
            let text = match page {
                Some(options) => guarded("showGraph", || {
                    // The last `mzk test`'s coverage, when there is one.
                    let options = PageOptions {
                        coverage: overlays::coverage(&analysis),
                        ..options
                    };
                    page_html(&graph_view(&analysis, &name), &options)
                })?,
                None => mermaid(&graph_view_without_layout(&analysis, &name)),
            };
            Ok(Some(serde_json::Value::String(text)))
        }
        SHOW_PROMPT => {
            let analysis = backend.analysis_for_command(SHOW_PROMPT, dir).await?;
            let agent = params
                .arguments
                .get(1)
                .and_then(|a| a.as_str())
                .unwrap_or("");
            let Some(found) = analysis.bundle.agent(agent) else {
                return Err(invalid_params(&format!(
                    "mzk.showPrompt takes the bundle folder and an agent of it; `{agent}` is not one"
                )));
            };
            let prompt = mzk_analyzer::prompt::compose_one(&analysis.bundle, found);
            let text = guarded("showPrompt", || {
                format!(
                    "# {agent}\n\n{}",
                    prompt.summary_markdown(true, &analysis.memos.tokens)
                )
            })?;
            Ok(Some(serde_json::Value::String(text)))
        }
        RUN_WORKFLOW | RUN_FROM_AGENT => {
            let analysis = backend.analysis_for_command(&params.command, dir).await?;
            let agent = if params.command == RUN_FROM_AGENT {
                match params.arguments.get(1).and_then(|a| a.as_str()) {
                    Some(agent) => Some(agent.to_string()),
                    None => {
                        return Err(invalid_params(
                            "mzk.runFromAgent takes the bundle folder and an agent of it",
                        ))
                    }
                }
            } else {
                None
            };
            backend
                .runs
                .start(backend.client.clone(), analysis, agent, &params.arguments)
                .await
                .map(Some)
        }
        REPLY => {
            let (Some(run_id), Some(text)) = (
                params.arguments.first().and_then(|a| a.as_str()),
                params.arguments.get(1).and_then(|a| a.as_str()),
            ) else {
                return Err(invalid_params(
                    "mzk.reply takes the run id and the reply text",
                ));
            };
            let bundle = backend.runs.bundle_of(run_id).await;
            backend
                .runs
                .reply(
                    backend.client.clone(),
                    backend.analysis_for_command(REPLY, bundle),
                    run_id,
                    text,
                )
                .await
                .map(Some)
        }
        CANCEL_RUN => {
            let Some(run_id) = params.arguments.first().and_then(|a| a.as_str()) else {
                return Err(invalid_params("mzk.cancelRun takes the run id"));
            };
            backend.runs.cancel(run_id).await.map(Some)
        }
        other => Err(invalid_params(&format!(
            "unknown command `{other}` (mzk offers {})",
            COMMANDS.join(", ")
        ))),
    }
}
