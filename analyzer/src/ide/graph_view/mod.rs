//! The transition graph as a person reads it (`mzk graph --format html`,
//! the editor's graph panel): what is drawn, with its meaning and the
//! analyser's findings attached, and laid out (`layout`); the server
//! renders it as a page.
//!
//! What the raw graph draws as one hairball is split by meaning: `user`
//! as a source is one node, but each agent's "ask the user" is its own
//! small stop beside it; `terminate` is two exits, ✓ complete and ✗ failed
//! (`termination_reason: workflow_failed`). Names are drawn as written: a
//! misspelt agent is its own red node.

mod layout;
mod text;

pub use layout::{point_along, shown_label};
pub use text::{dot, mermaid};

use crate::analysis::Analysis;
use crate::base::hash::{HashMap, HashSet};
use crate::base::{FileId, Severity, TextRange};
use crate::graph::edge_label;
use crate::model::{Bundle, TransitionType};
use crate::syntax::ColumnUnit;

/// What a drawn node stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NodeKind {
    Agent,
    /// A rule's source or target that names no agent (MZ201).
    Unknown,
    /// The human, as the source of the rules that read their reply.
    User,
    /// An agent's rules that hand the turn to the user: the run pauses.
    AskUser,
    /// `terminate` without `termination_reason: workflow_failed`.
    Complete,
    /// `terminate` with `termination_reason: workflow_failed`.
    Failed,
}

impl NodeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            NodeKind::Agent => "agent",
            NodeKind::Unknown => "unknown",
            NodeKind::User => "user",
            NodeKind::AskUser => "ask-user",
            NodeKind::Complete => "complete",
            NodeKind::Failed => "failed",
        }
    }
}

/// A place in the bundle, 1-based as editors and terminals show it.
#[derive(Debug, Clone, PartialEq)]
pub struct Location {
    pub path: String,
    pub line: u32,
    pub column: u32,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    pub code: &'static str,
    pub severity: Severity,
    pub message: String,
    pub at: Option<Location>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ViewNode {
    pub label: String,
    pub kind: NodeKind,
    /// Where a run starts.
    pub entry: bool,
    /// A task batch's execution agent: runs outside the graph, when the
    /// batch's trigger hands it a task.
    pub task_batch: bool,
    /// Reported never reached from the entry (MZ301).
    pub unreachable: bool,
    /// Its declaration (an agent's name in agents.yaml).
    pub at: Option<Location>,
    pub findings: Vec<Finding>,
    /// For an `AskUser` stop: the node it belongs to.
    pub owner: Option<usize>,
    /// Centre and size, in the page's units (CSS pixels at zoom 1).
    pub x: f64,
    pub y: f64,
    pub width: f64,
    pub height: f64,
}

/// A cubic Bézier curve: start, two control points, end.
pub type Curve = [(f64, f64); 4];

#[derive(Debug, Clone, PartialEq)]
pub struct ViewEdge {
    pub from: usize,
    pub to: usize,
    /// Position in transition_rules; `None` for a task batch's fan-out.
    pub rule_index: Option<usize>,
    /// The task batch (conveyor) whose worker this edge reaches: the
    /// trigger agent hands its tasks to the execution agents.
    pub batch: Option<String>,
    pub label: String,
    /// An after_turn rule: taken when no condition of its source matched.
    pub fallback: bool,
    /// Can never fire (a rule shadowed by an earlier one).
    pub dead: bool,
    pub at: Option<Location>,
    pub findings: Vec<Finding>,
    /// The drawn line, one curve after the other, and where its label
    /// sits (centre).
    pub curves: Vec<Curve>,
    pub label_x: f64,
    pub label_y: f64,
    pub label_width: f64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct GraphView {
    /// The bundle's folder name.
    pub name: String,
    pub nodes: Vec<ViewNode>,
    pub edges: Vec<ViewEdge>,
    /// Findings of the bundle not drawn on a node or an edge, counted in
    /// the page's header with the others.
    pub errors: usize,
    pub warnings: usize,
    pub width: f64,
    pub height: f64,
}

impl ViewEdge {
    /// An edge not yet routed.
    fn new(from: usize, to: usize, label: String, at: Option<Location>) -> ViewEdge {
        ViewEdge {
            from,
            to,
            rule_index: None,
            batch: None,
            label,
            fallback: false,
            dead: false,
            at,
            findings: Vec::new(),
            curves: Vec::new(),
            label_x: 0.0,
            label_y: 0.0,
            label_width: 0.0,
        }
    }
}

fn location(bundle: &Bundle, file: FileId, offset: u32) -> Option<Location> {
    let f = bundle.file(file)?;
    let p = f.line_index.position(&f.text, offset, ColumnUnit::Char);
    Some(Location {
        path: f.relative.clone(),
        line: p.line + 1,
        column: p.col + 1,
    })
}

fn inside(outer: TextRange, inner: TextRange) -> bool {
    outer.start <= inner.start && inner.end <= outer.end
}

/// The graph of an analysed bundle, with its findings, laid out (the page).
pub fn graph_view(analysis: &Analysis, name: &str) -> GraphView {
    let mut view = graph_view_without_layout(analysis, name);
    layout::lay_out(&mut view);
    view
}

/// The nodes drawn so far, found by what they stand for in constant time
/// (a generated bundle has thousands of agents and rules).
struct Drawn {
    nodes: Vec<ViewNode>,
    /// By kind and label; an "ask the user" stop by its agent's index.
    index: HashMap<(NodeKind, String), usize>,
    stops: HashMap<usize, usize>,
}

impl Drawn {
    fn find(&self, kind: NodeKind, label: &str) -> Option<usize> {
        self.index.get(&(kind, label.to_string())).copied()
    }

    fn push(&mut self, kind: NodeKind, label: &str, at: Option<Location>) -> usize {
        self.nodes.push(ViewNode {
            label: label.to_string(),
            kind,
            entry: false,
            task_batch: false,
            unreachable: false,
            at,
            findings: Vec::new(),
            owner: None,
            x: 0.0,
            y: 0.0,
            width: 0.0,
            height: 0.0,
        });
        self.nodes.len() - 1
    }

    /// The node of `kind` and `label`, added when new.
    fn node(&mut self, kind: NodeKind, label: &str, at: Option<Location>) -> usize {
        if let Some(i) = self.find(kind, label) {
            return i;
        }
        let i = self.push(kind, label, at);
        self.index.insert((kind, label.to_string()), i);
        i
    }

    /// A rule's source or target (not `terminate`): the user, an agent, or
    /// a name that is no agent.
    fn named(&mut self, text: &str) -> usize {
        if text.eq_ignore_ascii_case("user") {
            return self.node(NodeKind::User, "user", None);
        }
        match self.find(NodeKind::Agent, text) {
            Some(i) => i,
            None => self.node(NodeKind::Unknown, text, None),
        }
    }

    /// The "ask the user" stop of node `owner`.
    fn stop(&mut self, owner: usize) -> usize {
        if let Some(&i) = self.stops.get(&owner) {
            return i;
        }
        let i = self.push(NodeKind::AskUser, "↩ user", None);
        self.nodes[i].owner = Some(owner);
        self.stops.insert(owner, i);
        i
    }
}

/// The graph with its meaning and findings, every position 0 (the texts).
pub fn graph_view_without_layout(analysis: &Analysis, name: &str) -> GraphView {
    let bundle = &analysis.bundle;
    let mut drawn = Drawn {
        nodes: Vec::new(),
        index: HashMap::default(),
        stops: HashMap::default(),
    };
    for agent in &bundle.agents {
        drawn.node(
            NodeKind::Agent,
            &agent.name.text,
            location(bundle, agent.name.file, agent.name.range.start),
        );
    }
    if let Some(initial) = bundle
        .orchestrator
        .as_ref()
        .and_then(|o| o.initial_agent.as_ref())
    {
        let entry = drawn.named(&initial.text);
        drawn.nodes[entry].entry = true;
    }
    let dead: HashSet<usize> = bundle
        .shadowed_rules()
        .iter()
        .map(|&(dead, _)| dead)
        .collect();
    let mut edges: Vec<ViewEdge> = Vec::new();
    for (i, rule) in bundle.rules.iter().enumerate() {
        let from = drawn.named(&rule.source.text);
        let target = rule.target.text.as_str();
        let to = if target.eq_ignore_ascii_case("terminate") {
            let failed = rule
                .termination_reason
                .as_ref()
                .is_some_and(|r| r.text == "workflow_failed");
            if failed {
                drawn.node(NodeKind::Failed, "✗ failed", None)
            } else {
                drawn.node(NodeKind::Complete, "✓ complete", None)
            }
        } else if target.eq_ignore_ascii_case("user") && drawn.nodes[from].kind != NodeKind::User {
            drawn.stop(from)
        } else {
            drawn.named(target)
        };
        edges.push(ViewEdge {
            rule_index: Some(rule.index),
            fallback: rule.transition_type == TransitionType::AfterTurn,
            dead: dead.contains(&i),
            ..ViewEdge::new(
                from,
                to,
                edge_label(bundle, rule),
                location(bundle, rule.file, rule.range.start),
            )
        });
    }
    // The conveyor fan-out: no rule, but the trigger's turn runs them.
    // Execution agents run outside the graph (their trigger runs in it).
    for batch in &bundle.task_batches {
        let trigger = batch
            .trigger_agent
            .as_ref()
            .and_then(|t| drawn.find(NodeKind::Agent, &t.text));
        for worker in &batch.allowed_execution_agents {
            let Some(to) = drawn.find(NodeKind::Agent, &worker.text) else {
                continue;
            };
            drawn.nodes[to].task_batch = true;
            if let Some(trigger) = trigger {
                edges.push(ViewEdge {
                    batch: Some(batch.id.text.clone()),
                    ..ViewEdge::new(
                        trigger,
                        to,
                        format!("batch {}", batch.id.text),
                        location(bundle, batch.id.file, batch.id.range.start),
                    )
                });
            }
        }
    }
    let mut nodes = drawn.nodes;
    let (errors, warnings) = attach_findings(analysis, &mut nodes, &mut edges);
    GraphView {
        name: name.to_string(),
        nodes,
        edges,
        errors,
        warnings,
        width: 0.0,
        height: 0.0,
    }
}

/// Each finding on the rule or agent declaration it lies in (one on the
/// initial agent on the entry); a misspelt name's finding also on its
/// unknown node. Returns the bundle's error and
/// warning counts (the opt-in info findings are not drawn).
fn attach_findings(
    analysis: &Analysis,
    nodes: &mut [ViewNode],
    edges: &mut [ViewEdge],
) -> (usize, usize) {
    let bundle = &analysis.bundle;
    let (mut errors, mut warnings) = (0, 0);
    for d in &analysis.diagnostics {
        match d.severity {
            Severity::Error => errors += 1,
            Severity::Warning => warnings += 1,
            Severity::Info => continue,
        }
        let finding = Finding {
            code: d.rule.code(),
            severity: d.severity,
            message: d.message.clone(),
            at: location(bundle, d.file, d.range.start),
        };
        if d.rule.code() == "MZ301" {
            if let Some(agent) = bundle
                .agents
                .iter()
                .find(|a| a.name.file == d.file && inside(a.range, d.range))
            {
                if let Some(n) = nodes
                    .iter_mut()
                    .find(|n| n.kind == NodeKind::Agent && n.label == agent.name.text)
                {
                    n.unreachable = true;
                }
            }
        }
        if let Some((i, rule)) = bundle
            .rules
            .iter()
            .enumerate()
            .find(|(_, r)| r.file == d.file && inside(r.range, d.range))
        {
            edges[i].findings.push(finding.clone());
            for name in [&rule.source, &rule.target] {
                if inside(name.range, d.range) {
                    if let Some(n) = nodes
                        .iter_mut()
                        .find(|n| n.kind == NodeKind::Unknown && n.label == name.text)
                    {
                        n.findings.push(finding.clone());
                    }
                }
            }
            continue;
        }
        // On the initial agent (MZ306 "no chain reaches terminate"): the entry's.
        let initial = bundle
            .orchestrator
            .as_ref()
            .and_then(|o| o.initial_agent.as_ref())
            .filter(|i| i.file == d.file && inside(i.range, d.range));
        if initial.is_some() {
            if let Some(n) = nodes.iter_mut().find(|n| n.entry) {
                n.findings.push(finding);
            }
            continue;
        }
        if let Some(agent) = bundle
            .agents
            .iter()
            .find(|a| a.name.file == d.file && inside(a.range, d.range))
        {
            if let Some(n) = nodes
                .iter_mut()
                .find(|n| n.kind == NodeKind::Agent && n.label == agent.name.text)
            {
                n.findings.push(finding);
            }
        }
    }
    (errors, warnings)
}

#[cfg(test)]
mod tests;
