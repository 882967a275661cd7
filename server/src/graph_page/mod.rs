//! The graph page: the laid-out graph view as one self-contained HTML
//! document (SVG, style and script inline, nothing fetched), shown by
//! `mzk graph --format html` and by the editor's graph panel. The SVG is
//! complete without the script; the script adds pan and zoom, the focus
//! view (an agent with what leads to it and where it goes), the details of
//! a clicked node or rule, and in an editor a jump to its declaration.

pub mod overlays;

use std::fmt::Write as _;

use mzk_analyzer::base::Severity;
use mzk_analyzer::ide::graph_view::{shown_label, Curve, Finding, GraphView, Location, NodeKind};
use serde_json::{json, Value};

const STYLE: &str = include_str!("page.css");
const SCRIPT: &str = include_str!("page.js");

/// How the page is embedded, and what it shows over the graph.
#[derive(Debug, Default, Clone)]
pub struct PageOptions {
    /// A script nonce for a webview's content security policy; with it the
    /// page carries the policy itself (no network, no other script).
    pub nonce: Option<String>,
    /// Transition coverage of the last `mzk test`: how often each rule
    /// fired, by rule index (a rule edited since has none).
    pub coverage: Option<CoverageOverlay>,
    /// A run's path: the rules it took, in order.
    pub run: Option<RunOverlay>,
}

#[derive(Debug, Default, Clone)]
pub struct CoverageOverlay {
    pub scenarios: usize,
    /// `(rule index, hits)` of the rules whose coverage still applies.
    pub hits: Vec<(usize, usize)>,
}

#[derive(Debug, Default, Clone)]
pub struct RunOverlay {
    pub id: String,
    /// `status (reason)`.
    pub outcome: String,
    /// The rule index of each hop, in order.
    pub rules: Vec<usize>,
}

impl PageOptions {
    fn hits(&self, rule: Option<usize>) -> Option<usize> {
        let rule = rule?;
        let coverage = self.coverage.as_ref()?;
        coverage
            .hits
            .iter()
            .find(|(index, _)| *index == rule)
            .map(|(_, hits)| *hits)
    }

    /// The hops (from 1) at which the run took `rule`.
    fn hops(&self, rule: Option<usize>) -> Vec<usize> {
        match (rule, &self.run) {
            (Some(rule), Some(run)) => run
                .rules
                .iter()
                .enumerate()
                .filter(|(_, r)| **r == rule)
                .map(|(hop, _)| hop + 1)
                .collect(),
            _ => Vec::new(),
        }
    }
}

fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

fn location(at: &Option<Location>) -> Value {
    match at {
        Some(at) => json!({"path": at.path, "line": at.line, "column": at.column}),
        None => Value::Null,
    }
}

fn findings(findings: &[Finding]) -> Value {
    findings
        .iter()
        .map(|f| {
            json!({
                "code": f.code,
                "severity": f.severity.as_str(),
                "message": f.message,
                "at": location(&f.at),
            })
        })
        .collect()
}

/// A hover title: `head`, then one line per finding.
fn titled(mut head: String, findings: &[Finding]) -> String {
    for f in findings {
        let _ = write!(head, "\n{} {}: {}", f.code, f.severity.as_str(), f.message);
    }
    head
}

/// The worst severity among findings, as a CSS class.
fn worst(findings: &[Finding]) -> &'static str {
    if findings.iter().any(|f| f.severity == Severity::Error) {
        " has-error"
    } else if findings.iter().any(|f| f.severity == Severity::Warning) {
        " has-warning"
    } else {
        ""
    }
}

/// What the script reads: every node and edge with its meaning, place,
/// findings and overlays (the SVG carries only the drawing).
fn data(view: &GraphView, options: &PageOptions) -> Value {
    json!({
        "name": view.name,
        "errors": view.errors,
        "warnings": view.warnings,
        "coverage_scenarios": options.coverage.as_ref().map(|c| c.scenarios),
        "run": options.run.as_ref().map(|r| json!({"id": r.id, "outcome": r.outcome, "hops": r.rules.len()})),
        "nodes": view.nodes.iter().map(|n| json!({
            "label": n.label,
            "kind": n.kind.as_str(),
            "entry": n.entry,
            "task_batch": n.task_batch,
            "unreachable": n.unreachable,
            "owner": n.owner,
            "at": location(&n.at),
            "findings": findings(&n.findings),
        })).collect::<Vec<_>>(),
        "edges": view.edges.iter().map(|e| json!({
            "from": e.from,
            "to": e.to,
            "rule": e.rule_index,
            "batch": e.batch,
            "label": e.label,
            "fallback": e.fallback,
            "dead": e.dead,
            "at": location(&e.at),
            "findings": findings(&e.findings),
            "hits": options.hits(e.rule_index),
            "hops": options.hops(e.rule_index),
        })).collect::<Vec<_>>(),
    })
}

fn node_svg(out: &mut String, id: usize, view: &GraphView) {
    let n = &view.nodes[id];
    let (x, y) = (n.x - n.width / 2.0, n.y - n.height / 2.0);
    let radius = match n.kind {
        NodeKind::Agent | NodeKind::Unknown => 6.0,
        _ => n.height / 2.0,
    };
    let mut class = format!("node {}", n.kind.as_str());
    if n.entry {
        class.push_str(" entry");
    }
    if n.unreachable {
        class.push_str(" unreachable");
    }
    if n.task_batch {
        class.push_str(" task-batch");
    }
    class.push_str(worst(&n.findings));
    let title = titled(n.label.clone(), &n.findings);
    let _ = write!(
        out,
        "<g class=\"{class}\" data-node=\"{id}\" tabindex=\"0\"><title>{}</title><rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{:.1}\" height=\"{:.1}\" rx=\"{radius:.1}\"/><text x=\"{:.1}\" y=\"{:.1}\">{}</text>",
        escape(&title),
        n.width,
        n.height,
        n.x,
        n.y,
        escape(&n.label)
    );
    if !n.findings.is_empty() {
        let _ = write!(
            out,
            "<g class=\"badge\"><circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"8\"/><text x=\"{:.1}\" y=\"{:.1}\">!</text></g>",
            n.x + n.width / 2.0 - 2.0,
            y + 2.0,
            n.x + n.width / 2.0 - 2.0,
            y + 2.0
        );
    }
    out.push_str("</g>");
    // Beside the node, on the page: outside its group.
    if n.entry {
        let _ = write!(
            out,
            "<text class=\"entry-mark\" x=\"{:.1}\" y=\"{:.1}\">start ▸</text>",
            x - 6.0,
            n.y
        );
    }
}

/// SVG path data for curves drawn one after the other.
fn path_data(curves: &[Curve]) -> String {
    let mut d = String::new();
    for (k, c) in curves.iter().enumerate() {
        if k == 0 {
            let _ = write!(d, "M{:.1},{:.1}", c[0].0, c[0].1);
        }
        let _ = write!(
            d,
            " C{:.1},{:.1} {:.1},{:.1} {:.1},{:.1}",
            c[1].0, c[1].1, c[2].0, c[2].1, c[3].0, c[3].1
        );
    }
    d
}

fn edge_svg(out: &mut String, id: usize, view: &GraphView, options: &PageOptions) {
    let e = &view.edges[id];
    let mut class = String::from("edge");
    if options.hits(e.rule_index) == Some(0) {
        class.push_str(" never-fired");
    }
    if !options.hops(e.rule_index).is_empty() {
        class.push_str(" on-run");
    }
    if e.batch.is_some() {
        class.push_str(" batch");
    }
    if e.fallback {
        class.push_str(" fallback");
    }
    if e.dead {
        class.push_str(" dead");
    }
    class.push_str(worst(&e.findings));
    let shown = shown_label(&e.label);
    let what = match (e.rule_index, &e.batch) {
        (Some(rule), _) => format!("rule {rule}"),
        (None, Some(batch)) => format!("task batch {batch}"),
        (None, None) => String::new(),
    };
    let title = titled(
        format!(
            "{what}: {} → {}\n{}",
            view.nodes[e.from].label, view.nodes[e.to].label, e.label
        ),
        &e.findings,
    );
    let _ = write!(
        out,
        "<g class=\"{class}\" data-edge=\"{id}\" tabindex=\"0\"><title>{}</title><path class=\"hit\" d=\"{}\"/><path class=\"line\" d=\"{}\" marker-end=\"url(#arrow)\"/><g class=\"label\"><rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"18\" rx=\"4\"/><text x=\"{:.1}\" y=\"{:.1}\">{}</text></g></g>",
        escape(&title),
        path_data(&e.curves),
        path_data(&e.curves),
        e.label_x - e.label_width / 2.0,
        e.label_y - 9.0,
        e.label_width,
        e.label_x,
        e.label_y,
        escape(&shown)
    );
}

/// The page for a laid-out graph view.
pub fn page_html(view: &GraphView, options: &PageOptions) -> String {
    let mut svg = String::new();
    let _ = write!(
        svg,
        "<svg id=\"overview\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {:.0} {:.0}\" width=\"{:.0}\" height=\"{:.0}\" role=\"img\" aria-label=\"Transition graph of {}\">",
        view.width,
        view.height,
        view.width,
        view.height,
        escape(&view.name)
    );
    svg.push_str("<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerUnits=\"userSpaceOnUse\" markerWidth=\"10\" markerHeight=\"10\" orient=\"auto-start-reverse\"><path d=\"M0,0 L10,5 L0,10 z\" class=\"arrow-head\"/></marker></defs><g id=\"viewport\">");
    // Edges under nodes, labels over edges.
    for k in 0..view.edges.len() {
        edge_svg(&mut svg, k, view, options);
    }
    for i in 0..view.nodes.len() {
        node_svg(&mut svg, i, view);
    }
    svg.push_str("</g></svg>");
    // Inside a script element `</script` ends it and `<!--` changes how the
    // rest is read: `<`, `>` and `&` go as JSON escapes (they occur only in
    // strings), so no user text can end or bend the element.
    let data = data(view, options)
        .to_string()
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026");
    let (csp, nonce) = match &options.nonce {
        Some(nonce) => (
            format!("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src 'nonce-{nonce}';\">\n"),
            format!(" nonce=\"{nonce}\""),
        ),
        None => (String::new(), String::new()),
    };
    let mut overlays = String::new();
    if let Some(coverage) = &options.coverage {
        let fired = coverage.hits.iter().filter(|(_, h)| *h > 0).count();
        let _ = write!(
            overlays,
            "<span class=\"overlay coverage\">coverage: {fired} of {} rules fired in {} scenario{}</span>",
            view.edges.iter().filter(|e| e.rule_index.is_some()).count(),
            coverage.scenarios,
            if coverage.scenarios == 1 { "" } else { "s" }
        );
    }
    if let Some(run) = &options.run {
        let _ = write!(
            overlays,
            "<span class=\"overlay run\">run {}: {}, {} hop{}</span>",
            escape(&run.id),
            escape(&run.outcome),
            run.rules.len(),
            if run.rules.len() == 1 { "" } else { "s" }
        );
    }
    let counts = match (view.errors, view.warnings) {
        (0, 0) => "no findings".to_string(),
        (e, w) => format!(
            "{e} error{}, {w} warning{}",
            if e == 1 { "" } else { "s" },
            if w == 1 { "" } else { "s" }
        ),
    };
    let agents: String = {
        let mut names: Vec<&str> = view
            .nodes
            .iter()
            .filter(|n| matches!(n.kind, NodeKind::Agent | NodeKind::Unknown))
            .map(|n| n.label.as_str())
            .collect();
        names.sort_unstable();
        names
            .iter()
            .map(|n| format!("<option value=\"{0}\">{0}</option>", escape(n)))
            .collect()
    };
    format!(
        r#"<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
{csp}<meta name="viewport" content="width=device-width, initial-scale=1.0">
<title>{name} — transition graph</title>
<style>{STYLE}</style>
</head>
<body>
<header>
<h1>{name}</h1>
<span class="counts{count_class}">{counts}</span>{overlays}
<label>Focus <select id="focus"><option value="">whole graph</option>{agents}</select></label>
<button type="button" id="zoom-out" title="Zoom out">−</button>
<button type="button" id="zoom-in" title="Zoom in">+</button>
<button type="button" id="fit" title="Fit the graph to the panel">Fit</button>
<span class="legend"><span class="key fallback-key">after turn</span><span class="key batch-key">task batch</span><span class="key error-key">finding</span><span class="key unreachable-key">unreachable</span>{overlay_keys}</span>
</header>
<main>
<div id="canvas">{svg}<svg id="focus-view" xmlns="http://www.w3.org/2000/svg" hidden></svg></div>
<aside id="details" aria-live="polite"><p class="hint">Click an agent to focus on it, or a rule to see where it is written.</p></aside>
</main>
<script type="application/json" id="graph-data">{data}</script>
<script{nonce}>{SCRIPT}</script>
</body>
</html>
"#,
        name = escape(&view.name),
        overlay_keys = match (&options.coverage, &options.run) {
            (Some(_), Some(_)) => "<span class=\"key never-key\">never fired</span><span class=\"key run-key\">the run's path</span>",
            (Some(_), None) => "<span class=\"key never-key\">never fired</span>",
            (None, Some(_)) => "<span class=\"key run-key\">the run's path</span>",
            (None, None) => "",
        },
        count_class = if view.errors > 0 {
            " has-error"
        } else if view.warnings > 0 {
            " has-warning"
        } else {
            ""
        },
    )
}

#[cfg(test)]
mod tests {
    use mzk_analyzer::ide::graph_view::{GraphView, NodeKind, ViewNode};

    use super::{page_html, PageOptions};

    #[test]
    fn user_text_cannot_end_or_bend_the_script_elements() {
        let label = "</script><!--<script>alert(1)</script>&amp;";
        let view = GraphView {
            name: "<b>Bundle</b>".into(),
            nodes: vec![ViewNode {
                label: label.into(),
                kind: NodeKind::Unknown,
                entry: true,
                task_batch: false,
                unreachable: false,
                at: None,
                findings: Vec::new(),
                owner: None,
                x: 100.0,
                y: 60.0,
                width: 200.0,
                height: 38.0,
            }],
            edges: Vec::new(),
            errors: 1,
            warnings: 0,
            width: 300.0,
            height: 120.0,
        };
        let page = page_html(&view, &PageOptions::default());
        // The two script elements the page writes, and no other.
        assert_eq!(page.matches("<script").count(), 2, "{page}");
        assert_eq!(page.matches("</script>").count(), 2, "{page}");
        assert!(!page.contains("<!--"), "{page}");
        assert!(!page.contains("<b>"), "{page}");
        // The data still carries the label, as JSON escapes.
        assert!(page.contains("\\u003c/script\\u003e\\u003c!--"), "{page}");
    }
}
