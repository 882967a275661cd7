//! The graph view on the SupportDesk example and on inline fixtures: what
//! is drawn with which meaning, the findings on it, and a layout in which
//! no two nodes overlap and every label sits on its own edge.

use std::path::Path;

use super::*;
use crate::ide::fixture::fixture;
use crate::ide::tests::support_desk_fs;
use crate::{analyze_bundle, MemoryFs};

fn support_desk() -> GraphView {
    let fs: MemoryFs = support_desk_fs();
    let analysis = analyze_bundle(&fs, Path::new("/w/SupportDesk"));
    graph_view(&analysis, "SupportDesk")
}

fn node<'v>(view: &'v GraphView, label: &str) -> &'v ViewNode {
    view.nodes
        .iter()
        .find(|n| n.label == label)
        .unwrap_or_else(|| panic!("no node `{label}`"))
}

fn overlap(a: &ViewNode, b: &ViewNode) -> bool {
    (a.x - b.x).abs() * 2.0 < a.width + b.width && (a.y - b.y).abs() * 2.0 < a.height + b.height
}

fn distance_to_edge(edge: &ViewEdge, x: f64, y: f64) -> f64 {
    (0..=400)
        .map(|k| {
            let (px, py) = point_along(&edge.curves, k as f64 / 400.0);
            ((px - x).powi(2) + (py - y).powi(2)).sqrt()
        })
        .fold(f64::MAX, f64::min)
}

#[test]
fn support_desk_is_drawn_with_its_meaning() {
    let view = support_desk();
    assert_eq!(view.errors + view.warnings, 0);
    assert!(node(&view, "IntakeAgent").entry);
    // One edge per rule, each pointing at its place in the YAML, then the
    // research conveyor's fan-out to its two execution agents.
    assert_eq!(view.edges.len(), 11);
    for (k, edge) in view.edges[..9].iter().enumerate() {
        assert_eq!(edge.rule_index, Some(k));
        let at = edge.at.as_ref().unwrap();
        assert_eq!(at.path, "transition_graph.yaml");
    }
    let planner = view
        .nodes
        .iter()
        .position(|n| n.label == "ResearchPlannerAgent")
        .unwrap();
    for (edge, worker) in view.edges[9..].iter().zip(["KnowledgeAgent", "LogAgent"]) {
        assert_eq!(edge.batch.as_deref(), Some("research"));
        assert_eq!(edge.from, planner);
        assert_eq!(view.nodes[edge.to].label, worker);
        assert!(view.nodes[edge.to].task_batch);
    }
    // `terminate` split by meaning; the user reached from an agent is a
    // stop of that agent.
    let complete = view
        .nodes
        .iter()
        .position(|n| n.kind == NodeKind::Complete)
        .expect("a ✓ complete exit");
    let reply = view
        .nodes
        .iter()
        .position(|n| n.label == "ReplyAgent")
        .unwrap();
    assert!(view
        .edges
        .iter()
        .any(|e| e.from == reply && e.to == complete && e.fallback));
    // Values as the YAML spells them.
    assert!(
        view.edges
            .iter()
            .any(|e| e.label == "ticket_captured == true"),
        "{:?}",
        view.edges.iter().map(|e| &e.label).collect::<Vec<_>>()
    );
}

#[test]
fn no_two_nodes_overlap_and_every_label_sits_on_its_edge() {
    let view = support_desk();
    for (i, a) in view.nodes.iter().enumerate() {
        for b in &view.nodes[i + 1..] {
            assert!(!overlap(a, b), "`{}` overlaps `{}`", a.label, b.label);
        }
        assert!(a.x - a.width / 2.0 >= 0.0 && a.x + a.width / 2.0 <= view.width);
        assert!(a.y - a.height / 2.0 >= 0.0 && a.y + a.height / 2.0 <= view.height);
    }
    for edge in &view.edges {
        let d = distance_to_edge(edge, edge.label_x, edge.label_y);
        assert!(d < 1.5, "label `{}` is {d:.1} px off its edge", edge.label);
    }
}

#[test]
fn a_misspelt_target_is_a_red_node_and_the_findings_sit_where_they_are() {
    let f = fixture(
        r#"
        //- /orchestrator.yaml
        workflow_name: Fixture
        max_turns: 10
        initial_agent: IntakeAgent
        //- /agents.yaml
        agents:
          - name: IntakeAgent
            structured_outputs_required: false
            system_message: Take the request.
          - name: LonelyAgent
            structured_outputs_required: false
            system_message: Nobody routes here.
        //- /transition_graph.yaml
        transition_rules:
          - source_agent: IntakeAgent
            target_agent: Ze$0bra
            transition_type: after_turn
          - source_agent: IntakeAgent
            target_agent: user
            transition_type: condition
            condition_type: context_expression
            context_expression: "${ask} == True"
        //- /context_variables.yaml
        definitions:
          ask:
            type: boolean
            source: {type: state, default: false}
        "#,
    );
    let view = graph_view(&f.analysis, "Fixture");
    let zebra = node(&view, "Zebra");
    assert_eq!(zebra.kind, NodeKind::Unknown);
    assert!(
        zebra.findings.iter().any(|d| d.code == "MZ201"),
        "{zebra:?}"
    );
    let edge = &view.edges[0];
    assert!(edge.findings.iter().any(|d| d.code == "MZ201"));
    assert!(node(&view, "LonelyAgent").unreachable);
    // The ask-the-user stop belongs to IntakeAgent and sits under it.
    let stop = view
        .nodes
        .iter()
        .find(|n| n.kind == NodeKind::AskUser)
        .unwrap();
    let intake = node(&view, "IntakeAgent");
    assert_eq!(view.nodes[stop.owner.unwrap()].label, "IntakeAgent");
    assert!(stop.y > intake.y && (stop.x - intake.x).abs() < intake.width);
    assert!(view.errors >= 1);
}

#[test]
fn long_labels_are_cut() {
    assert_eq!(shown_label("short"), "short");
    let long = "x".repeat(60);
    let shown = shown_label(&long);
    assert_eq!(shown.chars().count(), 42);
    assert!(shown.ends_with('…'));
}
