//! Call hierarchy over the transition graph: an agent "calls" the agents its
//! rules hand the turn to. Incoming calls of a node are the rules that route
//! to it, grouped by source; outgoing calls are the rules that leave it,
//! grouped by target. `user` and `terminate` (and names no agent defines) are
//! nodes of their own, located at a rule that names them since they have no
//! definition.

use petgraph::visit::EdgeRef;
use petgraph::Direction;

use super::{char_offset, FileRange};
use crate::analysis::Analysis;
use crate::base::FileId;
use crate::graph::{Node, TransitionGraph};
use crate::model::symbols::SymbolKind;
use crate::model::{Name, TransitionRule};

/// One node of the hierarchy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallItem {
    pub node: Node,
    /// The whole definition (an agent's entry) or the rule that names it.
    pub range: FileRange,
    /// The name itself.
    pub name: FileRange,
}

/// A neighbour of the node asked about, with the `target_agent` values of
/// the rules that connect them, in source order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    pub item: CallItem,
    pub ranges: Vec<FileRange>,
}

/// The node named under the cursor: an agent wherever it is named (agents.yaml,
/// a rule, `initial_agent`, …), or `user`/`terminate` in a rule.
pub fn prepare_call_hierarchy(analysis: &Analysis, file: FileId, offset: u32) -> Option<CallItem> {
    let offset = char_offset(analysis, file, offset);
    if let Some(id) = analysis.symbols.at(file, offset) {
        let def = analysis.symbols.definition(id);
        return match def.kind {
            SymbolKind::Agent => item(analysis, &Node::Agent(def.name.text.clone())),
            _ => None,
        };
    }
    let inside = |n: &Name| n.file == file && n.range.start <= offset && offset <= n.range.end;
    analysis.bundle.rules.iter().find_map(|rule| {
        if inside(&rule.target) {
            Some(named_at(analysis, rule, &rule.target, false))
        } else if inside(&rule.source) {
            Some(named_at(analysis, rule, &rule.source, true))
        } else {
            None
        }
    })
}

/// The item of `node`: the first rule that names it. The protocol reads a
/// call's ranges in the file of the item they belong to (incoming: the
/// caller; outgoing: the item asked about), and every rule is in
/// transition_graph.yaml, so every node with rules lives there too; an agent
/// no rule names is at its definition (it has no calls).
pub fn item(analysis: &Analysis, node: &Node) -> Option<CallItem> {
    let in_rules = analysis.bundle.rules.iter().find_map(|rule| {
        if node_of(analysis, &rule.source, true) == *node {
            Some(rule_item(node.clone(), rule, &rule.source))
        } else if node_of(analysis, &rule.target, false) == *node {
            Some(rule_item(node.clone(), rule, &rule.target))
        } else {
            None
        }
    });
    if in_rules.is_some() {
        return in_rules;
    }
    let Node::Agent(name) = node else {
        return None;
    };
    let agent = analysis.bundle.agent(name)?;
    Some(CallItem {
        node: node.clone(),
        range: FileRange {
            file: agent.name.file,
            range: agent.range,
        },
        name: at(&agent.name),
    })
}

/// The rules that hand the turn to `node`, grouped by their source.
pub fn incoming_calls(analysis: &Analysis, node: &Node) -> Vec<Call> {
    calls(analysis, node, Direction::Incoming)
}

/// The rules that leave `node`, grouped by their target.
pub fn outgoing_calls(analysis: &Analysis, node: &Node) -> Vec<Call> {
    calls(analysis, node, Direction::Outgoing)
}

fn calls(analysis: &Analysis, node: &Node, direction: Direction) -> Vec<Call> {
    let graph = TransitionGraph::build(&analysis.bundle);
    let Some(n) = graph.index(node) else {
        return Vec::new();
    };
    let mut edges: Vec<_> = graph
        .graph
        .edges_directed(n, direction)
        .map(|e| {
            let other = match direction {
                Direction::Incoming => e.source(),
                Direction::Outgoing => e.target(),
            };
            (other, *e.weight())
        })
        .collect();
    edges.sort_by_key(|&(_, rule)| rule);
    let mut out: Vec<(petgraph::graph::NodeIndex, Call)> = Vec::new();
    for (other, index) in edges {
        let Some(rule) = analysis.bundle.rules.get(index) else {
            continue;
        };
        let range = at(&rule.target);
        if let Some((_, call)) = out.iter_mut().find(|(o, _)| *o == other) {
            call.ranges.push(range);
            continue;
        }
        let other_node = graph.graph[other].clone();
        let item = match &other_node {
            Node::Agent(name) if analysis.bundle.agent(name).is_some() => {
                item(analysis, &other_node)
            }
            // No definition: the rule at hand names it.
            _ => Some(match direction {
                Direction::Incoming => rule_item(other_node, rule, &rule.source),
                Direction::Outgoing => rule_item(other_node, rule, &rule.target),
            }),
        };
        if let Some(item) = item {
            out.push((
                other,
                Call {
                    item,
                    ranges: vec![range],
                },
            ));
        }
    }
    out.into_iter().map(|(_, call)| call).collect()
}

/// The node a rule's source or target stands for, as the graph reads it
/// (`user` and `terminate` in any case; `terminate` is no source).
fn node_of(analysis: &Analysis, name: &Name, source: bool) -> Node {
    let text = name.text.as_str();
    if text.eq_ignore_ascii_case("user") {
        Node::User
    } else if text.eq_ignore_ascii_case("terminate") && !source {
        Node::Terminate
    } else if analysis.bundle.agent(text).is_some() {
        Node::Agent(text.to_string())
    } else {
        Node::Unknown(text.to_string())
    }
}

/// The item for a rule's source or target, located at its definition when
/// it is an agent, else at the rule.
fn named_at(analysis: &Analysis, rule: &TransitionRule, name: &Name, source: bool) -> CallItem {
    let node = node_of(analysis, name, source);
    match node {
        Node::Agent(_) => item(analysis, &node).unwrap_or_else(|| rule_item(node, rule, name)),
        _ => rule_item(node, rule, name),
    }
}

fn rule_item(node: Node, rule: &TransitionRule, name: &Name) -> CallItem {
    CallItem {
        node,
        range: FileRange {
            file: rule.file,
            range: rule.range,
        },
        name: at(name),
    }
}

fn at(name: &Name) -> FileRange {
    FileRange {
        file: name.file,
        range: name.range,
    }
}
