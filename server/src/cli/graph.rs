//! `mzk graph`: the transition graph as Mermaid, Graphviz DOT or JSON.

use std::path::PathBuf;
use std::process::ExitCode;

use mzk_analyzer::base::Severity;
use mzk_analyzer::graph::{edge_label, routing_variables, Node, TransitionGraph};
use mzk_analyzer::model::domains::{show, Domain};
use mzk_analyzer::syntax::ColumnUnit;
use petgraph::visit::EdgeRef;
use serde_json::json;

use crate::cli::out::out;
use crate::graph_page::{overlays, page_html, PageOptions};
use mzk_analyzer::ide::graph_view::{dot, graph_view, graph_view_without_layout, mermaid};

#[derive(clap::Args, Debug)]
pub struct GraphArgs {
    /// The bundle folder (holding orchestrator.yaml).
    bundle: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value = "mermaid")]
    format: GraphFormat,
    /// With `--format html`: mark each rule with how often it fired in the
    /// last `mzk test` (.mzk/coverage.json), the never-fired ones apart.
    #[arg(long)]
    coverage: bool,
    /// With `--format html`: draw the path of this run (its id, or the start
    /// of it, as `mzk runs` lists them).
    #[arg(long, value_name = "ID")]
    run: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum GraphFormat {
    /// A Mermaid flowchart (render with mermaid-cli, GitHub or any Mermaid viewer).
    Mermaid,
    /// Graphviz DOT (render with `dot -Tsvg`).
    Dot,
    /// Nodes, edges with rule index and range, and the routing findings.
    Json,
    /// A self-contained page (no network): the graph laid out with its
    /// findings, pan and zoom, a focus view per agent, and each rule's place.
    Html,
}

pub fn run(args: GraphArgs) -> ExitCode {
    if (args.coverage || args.run.is_some()) && args.format != GraphFormat::Html {
        eprintln!("mzk graph: --coverage and --run draw on the graph page; add `--format html`");
        return ExitCode::from(2);
    }
    let analysis = match super::analyse_one(&args.bundle, false) {
        Ok(analysis) => analysis,
        Err(code) => return code,
    };
    let bundle = &analysis.bundle;
    let graph = TransitionGraph::build(bundle);
    let kind = |n: &Node| match n {
        Node::Agent(_) => "agent",
        Node::User => "user",
        Node::Terminate => "terminate",
        Node::Unknown(_) => "unknown",
    };
    let name = args
        .bundle
        .canonicalize()
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| args.bundle.display().to_string());
    let text = match args.format {
        GraphFormat::Mermaid => mermaid(&graph_view_without_layout(&analysis, &name)),
        GraphFormat::Dot => dot(&graph_view_without_layout(&analysis, &name)),
        GraphFormat::Html => {
            let coverage = if args.coverage {
                match overlays::coverage(&analysis) {
                    Some(coverage) => Some(coverage),
                    None => {
                        eprintln!(
                            "mzk graph: {} has no saved coverage (.mzk/coverage.json); `mzk test {}` records it",
                            args.bundle.display(),
                            args.bundle.display()
                        );
                        return ExitCode::from(2);
                    }
                }
            } else {
                None
            };
            let run = match args.run.as_deref().map(|id| overlays::run(&bundle.dir, id)) {
                Some(Ok(run)) => Some(run),
                Some(Err(why)) => {
                    eprintln!("mzk graph: {why}");
                    return ExitCode::from(2);
                }
                None => None,
            };
            let view = graph_view(&analysis, &name);
            page_html(
                &view,
                &PageOptions {
                    coverage,
                    run,
                    ..PageOptions::default()
                },
            )
        }
        GraphFormat::Json => {
            let position = |file: mzk_analyzer::base::FileId, offset: u32| {
                bundle.file(file).map_or(json!(null), |f| {
                    let p = f.line_index.position(&f.text, offset, ColumnUnit::Char);
                    json!({"line": p.line + 1, "column": p.col + 1})
                })
            };
            let nodes: Vec<_> = graph
                .graph
                .node_indices()
                .map(|n| {
                    json!({
                        "id": n.index(),
                        "label": graph.graph[n].label(),
                        "kind": kind(&graph.graph[n]),
                        "entry": graph.entry == Some(n),
                        "task_batch_agent": graph.outside.contains(&n),
                    })
                })
                .collect();
            let edges: Vec<_> = graph
                .graph
                .edge_references()
                .map(|e| {
                    let rule = &bundle.rules[*e.weight()];
                    json!({
                        "from": e.source().index(),
                        "to": e.target().index(),
                        "rule_index": rule.index,
                        "label": edge_label(bundle, rule),
                        "path": bundle.file(rule.file).map(|f| f.relative.clone()),
                        "range": {"start": position(rule.file, rule.range.start), "end": position(rule.file, rule.range.end)},
                    })
                })
                .collect();
            let findings: Vec<_> = analysis
                .diagnostics
                .iter()
                .filter(|d| d.rule.code().starts_with("MZ3"))
                .map(|d| {
                    json!({
                        "code": d.rule.code(),
                        "name": d.rule.info().name,
                        "message": d.message,
                        "path": bundle.file(d.file).map(|f| f.relative.clone()),
                        "range": {"start": position(d.file, d.range.start), "end": position(d.file, d.range.end)},
                    })
                })
                .collect();
            let variables: Vec<_> = routing_variables(bundle)
                .into_iter()
                .map(|name| {
                    let domain = match bundle.domains().of(&name) {
                        Some(Domain::Known(k)) => json!({
                            "kind": if k.exact { "known" } else { "bound" },
                            "values": k.values.iter().map(show).collect::<Vec<_>>(),
                            "may_be_null": k.may_be_null,
                            "sources": k.sources,
                        }),
                        Some(Domain::Integers(d)) => json!({
                            "kind": "integers",
                            "may_be_null": d.may_be_null,
                            "sources": d.sources,
                        }),
                        Some(Domain::Unknown(why)) => json!({"kind": "unknown", "because": why}),
                        None => json!({"kind": "undeclared"}),
                    };
                    let declared = bundle
                        .variable(&name)
                        .and_then(|v| v.declared_type.as_ref())
                        .map(|t| t.text.clone());
                    json!({"name": name, "type": declared, "domain": domain})
                })
                .collect();
            format!(
                "{}\n",
                serde_json::to_string_pretty(
                    &json!({"nodes": nodes, "edges": edges, "variables": variables, "findings": findings})
                )
                .unwrap_or_default()
            )
        }
    };
    out!("{text}");
    // The graph is drawn as written; a bundle mozaiks refuses must not
    // pass a script or CI step that only renders it.
    let errors = analysis
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .count();
    if errors == 0 {
        return ExitCode::SUCCESS;
    }
    eprintln!(
        "mzk graph: {} has {errors} error{}: mozaiks would refuse it, so the graph above may not be what runs; `mzk check {}` shows them",
        args.bundle.display(),
        if errors == 1 { "" } else { "s" },
        args.bundle.display()
    );
    ExitCode::from(1)
}
