//! The transition graph with mozaiks 0.2.0's routing semantics
//! (runtime-semantics §2): agents plus the reserved `user` and `terminate`
//! nodes, one edge per rule, the entry point, and the alternate entries
//! (task-batch workers and triggers) that are reached outside the graph.

use std::collections::VecDeque;

use petgraph::graph::{DiGraph, NodeIndex};
use petgraph::visit::EdgeRef;
use petgraph::Direction;

use crate::base::hash::{HashMap, HashSet};
use crate::model::{Bundle, TransitionRule};

/// A node of the transition graph.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Node {
    Agent(String),
    User,
    Terminate,
    /// A rule target or source that names no agent (reported by MZ201).
    Unknown(String),
}

impl Node {
    pub fn label(&self) -> &str {
        match self {
            Node::Agent(name) | Node::Unknown(name) => name,
            Node::User => "user",
            Node::Terminate => "terminate",
        }
    }
}

pub struct TransitionGraph {
    pub graph: DiGraph<Node, usize>,
    nodes: HashMap<Node, NodeIndex>,
    /// Where a run starts: the initial agent, or `user` (its rules choose).
    pub entry: Option<NodeIndex>,
    /// Agents that run outside the graph (task-batch workers, triggers,
    /// recovery triggers): not "unreachable", and not expected to route.
    pub outside: HashSet<NodeIndex>,
    /// Rules that can never fire (a second after_turn of a source, a repeated
    /// condition): drawn, but no path goes through them.
    pub dead: HashSet<usize>,
}

/// How names become nodes: as written (what `mzk graph` draws, a
/// misspelt agent its own unknown node) or as meant (what the routing
/// checks reason about: a near miss of an agent is that agent, since
/// MZ201 already reports it with its fix).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Names {
    AsWritten,
    AsMeant,
}

fn agent_or_unknown(bundle: &Bundle, name: &str, names: Names) -> Node {
    if bundle.agent(name).is_some() {
        return Node::Agent(name.to_string());
    }
    match bundle.meant_agent(name).filter(|_| names == Names::AsMeant) {
        Some(meant) => Node::Agent(meant.to_string()),
        None => Node::Unknown(name.to_string()),
    }
}

/// How a rule's target names a node: `user` and `terminate` in any case.
fn target_node(bundle: &Bundle, name: &str, names: Names) -> Node {
    if name.eq_ignore_ascii_case("terminate") {
        Node::Terminate
    } else {
        source_node(bundle, name, names)
    }
}

fn source_node(bundle: &Bundle, name: &str, names: Names) -> Node {
    if name.eq_ignore_ascii_case("user") {
        Node::User
    } else {
        agent_or_unknown(bundle, name, names)
    }
}

impl TransitionGraph {
    /// The graph as written: every name that is no agent its own node.
    pub fn build(bundle: &Bundle) -> TransitionGraph {
        Self::build_with(bundle, Names::AsWritten)
    }

    /// The graph as meant, for the routing checks: a rule naming a near
    /// miss of an agent routes to (or from) that agent.
    pub fn build_as_meant(bundle: &Bundle) -> TransitionGraph {
        Self::build_with(bundle, Names::AsMeant)
    }

    fn build_with(bundle: &Bundle, names: Names) -> TransitionGraph {
        let mut g = TransitionGraph {
            graph: DiGraph::new(),
            nodes: HashMap::default(),
            entry: None,
            outside: HashSet::default(),
            dead: dead_rules(bundle),
        };
        g.node(Node::User);
        g.node(Node::Terminate);
        for agent in &bundle.agents {
            g.node(Node::Agent(agent.name.text.clone()));
        }
        for (i, rule) in bundle.rules.iter().enumerate() {
            let from = g.node(source_node(bundle, &rule.source.text, names));
            let to = g.node(target_node(bundle, &rule.target.text, names));
            g.graph.add_edge(from, to, i);
        }
        if let Some(initial) = bundle
            .orchestrator
            .as_ref()
            .and_then(|o| o.initial_agent.as_ref())
        {
            let node = source_node(bundle, &initial.text, names);
            g.entry = g.nodes.get(&node).copied();
        }
        // An explicit batch without allowed_execution_agents takes its workers from
        // each task item: any agent no rule touches may be one of them.
        let open_workers = bundle
            .task_batches
            .iter()
            .any(|b| !b.from_conveyor && b.allowed_execution_agents.is_empty());
        if open_workers {
            let touched: HashSet<&str> = bundle
                .rules
                .iter()
                .flat_map(|r| [r.source.text.as_str(), r.target.text.as_str()])
                .collect();
            for agent in &bundle.agents {
                if !touched.contains(agent.name.text.as_str()) {
                    if let Some(&n) = g.nodes.get(&Node::Agent(agent.name.text.clone())) {
                        g.outside.insert(n);
                    }
                }
            }
        }
        for batch in &bundle.task_batches {
            let recovery = batch
                .recovery
                .as_ref()
                .and_then(|r| r.trigger_agent.as_ref());
            for agent in batch
                .allowed_execution_agents
                .iter()
                .chain(batch.trigger_agent.iter())
                .chain(recovery)
            {
                if let Some(&n) = g.nodes.get(&Node::Agent(agent.text.clone())) {
                    g.outside.insert(n);
                }
            }
        }
        g
    }

    fn node(&mut self, node: Node) -> NodeIndex {
        if let Some(&n) = self.nodes.get(&node) {
            return n;
        }
        let n = self.graph.add_node(node.clone());
        self.nodes.insert(node, n);
        n
    }

    pub fn index(&self, node: &Node) -> Option<NodeIndex> {
        self.nodes.get(node).copied()
    }

    /// Shortest paths from `start` (rule indices of the last edge into each node).
    pub fn paths_from(&self, start: NodeIndex) -> HashMap<NodeIndex, Option<(NodeIndex, usize)>> {
        let mut parent: HashMap<NodeIndex, Option<(NodeIndex, usize)>> = HashMap::default();
        parent.insert(start, None);
        let mut queue = VecDeque::from([start]);
        while let Some(n) = queue.pop_front() {
            // Terminate ends the run; nothing continues from it.
            if self.graph[n] == Node::Terminate {
                continue;
            }
            for edge in self.graph.edges_directed(n, Direction::Outgoing) {
                if self.dead.contains(edge.weight()) {
                    continue;
                }
                if let std::collections::hash_map::Entry::Vacant(e) = parent.entry(edge.target()) {
                    e.insert(Some((n, *edge.weight())));
                    queue.push_back(edge.target());
                }
            }
        }
        parent
    }

    /// The rules along the shortest path from the entry to `node`.
    pub fn witness(
        &self,
        parents: &HashMap<NodeIndex, Option<(NodeIndex, usize)>>,
        node: NodeIndex,
    ) -> Vec<usize> {
        let mut rules = Vec::new();
        let mut at = node;
        while let Some(Some((previous, rule))) = parents.get(&at) {
            rules.push(*rule);
            at = *previous;
            if rules.len() > parents.len() {
                break;
            }
        }
        rules.reverse();
        rules
    }

    /// Nodes from which one of `goals` can be reached (walking edges backwards).
    pub fn can_reach(&self, goals: &[NodeIndex]) -> HashSet<NodeIndex> {
        let mut seen: HashSet<NodeIndex> = goals.iter().copied().collect();
        let mut queue: VecDeque<NodeIndex> = goals.iter().copied().collect();
        while let Some(n) = queue.pop_front() {
            for edge in self.graph.edges_directed(n, Direction::Incoming) {
                if !self.dead.contains(edge.weight()) && seen.insert(edge.source()) {
                    queue.push_back(edge.source());
                }
            }
        }
        seen
    }

    /// The rules whose source is `node`, in YAML order.
    pub fn rules_from<'b>(&self, bundle: &'b Bundle, node: NodeIndex) -> Vec<&'b TransitionRule> {
        let mut rules: Vec<&TransitionRule> = self
            .graph
            .edges_directed(node, Direction::Outgoing)
            .map(|e| &bundle.rules[*e.weight()])
            .collect();
        rules.sort_by_key(|r| r.index);
        rules
    }
}

fn dead_rules(bundle: &Bundle) -> HashSet<usize> {
    bundle
        .shadowed_rules()
        .iter()
        .map(|&(dead, _)| dead)
        .collect()
}

/// A short description of a rule's condition, for edge labels, run hops
/// and coverage: values as the YAML spells them (`true`, not Python's
/// `True`).
pub fn edge_label(bundle: &Bundle, rule: &TransitionRule) -> String {
    use crate::model::{ConditionType, TransitionType};
    match (rule.transition_type, rule.condition_type) {
        (TransitionType::AfterTurn, _) => "after turn".to_string(),
        (_, Some(ConditionType::ContextEquals)) => format!(
            "{} == {}",
            rule.condition_key.as_ref().map_or("?", |k| k.text.as_str()),
            rule.condition_value
                .as_ref()
                .map_or("null".to_string(), |v| as_written(bundle, v))
        ),
        (_, Some(ConditionType::ContextExpression)) => rule
            .context_expression
            .as_ref()
            .map_or(String::new(), |e| e.text.clone()),
        (_, Some(ConditionType::ToolCalled)) => format!(
            "called {}",
            rule.tool_name.as_ref().map_or("?", |t| t.text.as_str())
        ),
        (_, None) => "condition".to_string(),
    }
}

/// A value of transition_graph.yaml as written there (one line at most);
/// Python's spelling when the text is not at hand.
fn as_written(bundle: &Bundle, value: &crate::syntax::Node) -> String {
    let written = bundle
        .file_of_kind(crate::base::FileKind::TransitionGraph)
        .and_then(|f| {
            f.text
                .get(value.range.start as usize..value.range.end as usize)
        })
        .map(str::trim)
        .filter(|t| !t.is_empty() && !t.contains('\n'));
    match written {
        Some(text) => text.to_string(),
        None => value.python_str(),
    }
}

/// The context variables routing reads: the keys of `context_equals` rules
/// and the `${…}` references of `context_expression` rules, each once, in
/// rule order.
pub fn routing_variables(bundle: &Bundle) -> Vec<String> {
    use crate::model::ConditionType;
    let mut out: Vec<String> = Vec::new();
    for rule in &bundle.rules {
        match rule.condition_type {
            Some(ConditionType::ContextEquals) => {
                if let Some(key) = &rule.condition_key {
                    if !out.contains(&key.text) {
                        out.push(key.text.clone());
                    }
                }
            }
            Some(ConditionType::ContextExpression) => {
                if let Some(Ok((expr, _))) = rule
                    .context_expression
                    .as_ref()
                    .map(|e| crate::syntax::expression::compile(&e.text))
                {
                    expr.refs(&mut out);
                }
            }
            _ => {}
        }
    }
    out
}
