//! The graph view as Mermaid and Graphviz DOT text, with the page's
//! meaning: the exits apart (✓ complete, ✗ failed), each agent's "↩ user"
//! stop, after-turn fallbacks dashed, a conveyor's fan-out dotted, a name
//! that is no agent in red, an agent never reached greyed. Every filled
//! shape sets its text colour too, so no viewer's theme draws text in the
//! colour it sits on.

use std::fmt::Write as _;

use super::{GraphView, NodeKind, ViewNode};

/// (fill, stroke, text) of a node, by what it stands for.
fn colours(node: &ViewNode) -> (&'static str, &'static str, &'static str) {
    match node.kind {
        NodeKind::Unknown | NodeKind::Failed => ("#ffebe9", "#cf222e", "#1f2328"),
        NodeKind::Complete => ("#dafbe1", "#1a7f37", "#1f2328"),
        NodeKind::User | NodeKind::AskUser => ("#fbefff", "#8250df", "#1f2328"),
        NodeKind::Agent if node.unreachable => ("#f6f8fa", "#8c959f", "#59636e"),
        NodeKind::Agent => ("#f6f8fa", "#59636e", "#1f2328"),
    }
}

/// Text for a Mermaid label: one line (a block-scalar expression spans
/// several), quotes as entities.
fn quoted_mermaid(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace('"', "#quot;")
}

/// A Mermaid flowchart.
pub fn mermaid(view: &GraphView) -> String {
    let mut out = String::from("flowchart TD\n");
    for (i, node) in view.nodes.iter().enumerate() {
        let label = quoted_mermaid(&node.label);
        let shape = match node.kind {
            NodeKind::Agent | NodeKind::Unknown => format!("n{i}[\"{label}\"]"),
            _ => format!("n{i}([\"{label}\"])"),
        };
        let _ = writeln!(out, "    {shape}");
    }
    for e in &view.edges {
        let arrow = if e.batch.is_some() || e.fallback {
            "-.->"
        } else {
            "-->"
        };
        let _ = writeln!(
            out,
            "    n{} {arrow}|\"{}\"| n{}",
            e.from,
            quoted_mermaid(&e.label),
            e.to
        );
    }
    if let Some(entry) = view.nodes.iter().position(|n| n.entry) {
        let _ = writeln!(out, "    start((start)) --> n{entry}");
    }
    for (i, node) in view.nodes.iter().enumerate() {
        let (fill, stroke, text) = colours(node);
        let dashed = match node.kind {
            NodeKind::Unknown | NodeKind::AskUser => ",stroke-dasharray:4 3",
            NodeKind::Agent if node.unreachable || node.task_batch => ",stroke-dasharray:4 3",
            _ => "",
        };
        let _ = writeln!(
            out,
            "    style n{i} fill:{fill},stroke:{stroke},color:{text}{dashed}"
        );
    }
    out
}

fn quoted_dot(text: &str) -> String {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    format!("\"{}\"", line.replace('\\', "\\\\").replace('"', "\\\""))
}

/// A Graphviz digraph (`dot -Tsvg`).
pub fn dot(view: &GraphView) -> String {
    let mut out = String::from(
        "digraph workflow {\n    rankdir=TB;\n    node [fontname=\"sans-serif\"];\n    edge [fontname=\"sans-serif\", fontsize=11];\n",
    );
    for (i, node) in view.nodes.iter().enumerate() {
        let (fill, stroke, text) = colours(node);
        let shape = match node.kind {
            NodeKind::Agent | NodeKind::Unknown => "box",
            _ => "ellipse",
        };
        let mut style = vec!["filled"];
        if matches!(node.kind, NodeKind::Agent | NodeKind::Unknown) {
            style.push("rounded");
        }
        if matches!(node.kind, NodeKind::Unknown | NodeKind::AskUser)
            || node.unreachable
            || node.task_batch
        {
            style.push("dashed");
        }
        let width = if node.entry { ", penwidth=2.5" } else { "" };
        let _ = writeln!(
            out,
            "    n{i} [label={}, shape={shape}, style=\"{}\", fillcolor=\"{fill}\", color=\"{stroke}\", fontcolor=\"{text}\"{width}];",
            quoted_dot(&node.label),
            style.join(",")
        );
    }
    for e in &view.edges {
        let style = if e.batch.is_some() {
            ", style=dotted"
        } else if e.fallback {
            ", style=dashed"
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "    n{} -> n{} [label={}{style}];",
            e.from,
            e.to,
            quoted_dot(&e.label)
        );
    }
    if let Some(entry) = view.nodes.iter().position(|n| n.entry) {
        let _ = writeln!(
            out,
            "    start [label=\"start\", shape=circle, width=0.4];\n    start -> n{entry};"
        );
    }
    out.push_str("}\n");
    out
}
