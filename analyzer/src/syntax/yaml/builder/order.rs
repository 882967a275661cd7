//! The order in which PyYAML's constructor meets a document's nodes, so
//! that of several values it cannot construct, mzk's first is the one
//! mozaiks reports.
//!
//! PyYAML constructs breadth first: a collection's constructor is a
//! generator that yields an empty value and is resumed only after the
//! collections before it, so the scalars of the root come before those of
//! its children. A mapping first merges its `<<` sources (PyYAML's
//! `flatten_mapping`), then constructs each key and value; a node met
//! twice through an alias is constructed once. Only files with two or more
//! such errors need this, so the builder re-reads the text here instead of
//! keeping a second tree for every file.

use super::scalars::CORE;
use crate::base::hash::{HashMap, HashSet};
use crate::syntax::yaml::parser::{EventKind, Parser};

/// PyYAML's constructors that yield first and fill in later.
const COLLECTION_TAGS: [&str; 5] = ["seq", "omap", "pairs", "map", "set"];
/// Work beyond this (merges of merges of aliases) is not worth ordering.
const BUDGET: usize = 1_000_000;
/// Merge sources merging merge sources: PyYAML recurses, so do we, this deep.
const MAX_MERGE_DEPTH: usize = 64;

/// What PyYAML does when it raises at a node: constructs it, resumes its
/// generator (a collection tag on the wrong kind of node: `!!seq` on a
/// mapping or a scalar), merges it into a mapping, or hashes it as a key.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub(super) enum Step {
    Construct,
    Resume,
    Merge,
    Key,
}

/// Whether a core tag's constructor is a generator (`seq`, `map`, …).
fn is_collection_tag(suffix: &str) -> bool {
    COLLECTION_TAGS.contains(&suffix)
}

/// The step at which PyYAML raises for a node whose tag it cannot
/// construct it with: a collection tag's generator yields first and raises
/// when resumed (`!!seq` on a mapping or a scalar), any other tag at once.
pub(super) fn failing_step(tag: &str) -> Step {
    match tag.strip_prefix(CORE) {
        Some(suffix) if is_collection_tag(suffix) => Step::Resume,
        _ => Step::Construct,
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Scalar,
    Seq,
    Map,
}

/// A reference to a node where it is written: an alias's own offset.
#[derive(Clone, Copy)]
struct Ref {
    node: usize,
    at: u32,
}

struct Composed {
    kind: Kind,
    start: u32,
    /// The resolved tag's core suffix (`seq`, `str`), `""` for another tag,
    /// `None` when untagged (the kind's default).
    tag: Option<String>,
    /// A plain `<<` or `!!merge` key.
    merge_key: bool,
    /// The scalar's text when CPython shares it (empty or one Latin-1
    /// character): merged keys are told apart by object identity.
    shared_text: Option<String>,
    items: Vec<Ref>,
    pairs: Vec<(Ref, Ref)>,
    flattened: bool,
}

impl Composed {
    /// Whether PyYAML's constructor for this node is a generator (its
    /// errors come when the queue reaches it) rather than immediate.
    fn deferred(&self) -> bool {
        match &self.tag {
            None => self.kind != Kind::Scalar,
            Some(tag) => is_collection_tag(tag),
        }
    }

    fn constructs_as_mapping(&self) -> bool {
        self.kind == Kind::Map && matches!(self.tag.as_deref(), None | Some("map" | "set"))
    }

    fn constructs_as_sequence(&self) -> bool {
        self.kind == Kind::Seq && matches!(self.tag.as_deref(), None | Some("seq"))
    }

    fn constructs_as_pairs(&self) -> bool {
        self.kind == Kind::Seq && matches!(self.tag.as_deref(), Some("omap" | "pairs"))
    }
}

/// The first place PyYAML meets each node start (byte offsets in `text`)
/// where an error can be raised, as a rank; `None` when the text does not
/// compose (the builder reports that) or ordering would cost too much. A
/// node never met is never constructed: a merge source itself, or a merged
/// pair PyYAML skips. Past an error the walk goes on as if it were fixed.
pub(super) fn construction_ranks(text: &str) -> Option<HashMap<(u32, Step), usize>> {
    let (nodes, root) = compose(text)?;
    let mut walk = Walk {
        nodes,
        constructed: Vec::new(),
        queue: std::collections::VecDeque::new(),
        ranks: HashMap::default(),
        work: 0,
    };
    walk.constructed = vec![false; walk.nodes.len()];
    walk.construct(root)?;
    while let Some(node) = walk.queue.pop_front() {
        walk.process(node)?;
    }
    Some(walk.ranks)
}

fn compose(text: &str) -> Option<(Vec<Composed>, usize)> {
    let mut parser = Parser::new(text);
    let mut nodes: Vec<Composed> = Vec::new();
    let mut anchors: HashMap<String, usize> = HashMap::default();
    // Open collections, with the key waiting for its value in mappings.
    let mut open: Vec<(usize, Option<Ref>)> = Vec::new();
    let mut root = None;
    while let Some(event) = parser.next_event().ok()? {
        let at = event.start.pos;
        let kind = match event.kind {
            EventKind::SequenceStart { .. } => Kind::Seq,
            EventKind::MappingStart { .. } => Kind::Map,
            _ => Kind::Scalar,
        };
        let (node, opens) = match event.kind {
            EventKind::Alias(name) => (*anchors.get(&name)?, false),
            EventKind::Scalar {
                anchor,
                tag,
                implicit,
                value,
                ..
            } => {
                let untagged = tag.is_none() || tag.as_deref() == Some("!");
                let merge_key = (untagged && implicit && value == "<<")
                    || tag.as_deref() == Some("tag:yaml.org,2002:merge");
                let mut chars = value.chars();
                let shared = match (chars.next(), chars.next()) {
                    (None, _) => true,
                    (Some(c), None) => (c as u32) < 0x100,
                    _ => false,
                };
                let id = push(&mut nodes, Kind::Scalar, at, tag.filter(|_| !untagged));
                nodes[id].merge_key = merge_key;
                nodes[id].shared_text = shared.then_some(value);
                if let Some(anchor) = anchor {
                    anchors.insert(anchor, id);
                }
                (id, false)
            }
            EventKind::SequenceStart { anchor, tag, .. }
            | EventKind::MappingStart { anchor, tag, .. } => {
                let untagged = tag.is_none() || tag.as_deref() == Some("!");
                let id = push(&mut nodes, kind, at, tag.filter(|_| !untagged));
                if let Some(anchor) = anchor {
                    anchors.insert(anchor, id);
                }
                (id, true)
            }
            EventKind::SequenceEnd | EventKind::MappingEnd => {
                let (done, _) = open.pop()?;
                if open.is_empty() {
                    root = Some(done);
                }
                continue;
            }
            EventKind::DocumentStart
            | EventKind::DocumentEnd
            | EventKind::StreamStart
            | EventKind::StreamEnd => continue,
        };
        let reference = Ref { node, at };
        match open.last_mut() {
            None => root = Some(node),
            Some((parent, pending)) => match nodes[*parent].kind {
                Kind::Map => match pending.take() {
                    Some(key) => nodes[*parent].pairs.push((key, reference)),
                    None => *pending = Some(reference),
                },
                _ => nodes[*parent].items.push(reference),
            },
        }
        if opens {
            open.push((node, None));
        }
    }
    Some((nodes, root?))
}

fn push(nodes: &mut Vec<Composed>, kind: Kind, start: u32, tag: Option<String>) -> usize {
    let tag = tag.map(|t| t.strip_prefix(CORE).unwrap_or("").to_string());
    nodes.push(Composed {
        kind,
        start,
        tag,
        merge_key: false,
        shared_text: None,
        items: Vec::new(),
        pairs: Vec::new(),
        flattened: false,
    });
    nodes.len() - 1
}

struct Walk {
    nodes: Vec<Composed>,
    constructed: Vec<bool>,
    queue: std::collections::VecDeque<usize>,
    ranks: HashMap<(u32, Step), usize>,
    work: usize,
}

impl Walk {
    fn meet(&mut self, at: u32, step: Step) -> Option<()> {
        self.work += 1;
        if self.work > BUDGET {
            return None;
        }
        let next = self.ranks.len();
        self.ranks.entry((at, step)).or_insert(next);
        Some(())
    }

    /// A node PyYAML raises at whatever mzk reported there (a merge source
    /// that is no mapping: mzk may have refused its value or its tag).
    fn meet_any(&mut self, at: u32) -> Option<()> {
        self.meet(at, Step::Construct)?;
        self.meet(at, Step::Resume)
    }

    /// PyYAML's `construct_object`: once per node; an immediate
    /// constructor's errors now, a generator's when the queue reaches it.
    fn construct(&mut self, node: usize) -> Option<()> {
        if std::mem::replace(&mut self.constructed[node], true) {
            return Some(());
        }
        if self.nodes[node].deferred() {
            self.queue.push_back(node);
            Some(())
        } else {
            self.meet(self.nodes[node].start, Step::Construct)
        }
    }

    /// A generator resumed: the node's own mismatch (`!!seq` on a mapping),
    /// then its children.
    fn process(&mut self, node: usize) -> Option<()> {
        self.meet(self.nodes[node].start, Step::Resume)?;
        if self.nodes[node].constructs_as_mapping() {
            self.flatten(node, 0)?;
            let pairs = self.nodes[node].pairs.clone();
            for (key, value) in pairs {
                self.construct(key.node)?;
                self.meet(key.at, Step::Key)?;
                self.construct(value.node)?;
            }
        } else if self.nodes[node].constructs_as_sequence() {
            for item in self.nodes[node].items.clone() {
                self.construct(item.node)?;
            }
        } else if self.nodes[node].constructs_as_pairs() {
            for item in self.nodes[node].items.clone() {
                self.meet(item.at, Step::Construct)?;
                if let [(key, value)] = self.nodes[item.node].pairs[..] {
                    self.construct(key.node)?;
                    self.construct(value.node)?;
                }
            }
        }
        Some(())
    }

    /// PyYAML 6.0.4's `flatten_mapping`: each `<<` source's pairs (merged
    /// first itself), a key node met before skipped, in front of the
    /// mapping's own pairs.
    fn flatten(&mut self, node: usize, depth: usize) -> Option<()> {
        if self.nodes[node].flattened {
            return Some(());
        }
        if depth > MAX_MERGE_DEPTH {
            return None;
        }
        self.nodes[node].flattened = true;
        let mut merged: Vec<(Ref, Ref)> = Vec::new();
        let mut own: Vec<(Ref, Ref)> = Vec::new();
        let mut seen_nodes: HashSet<usize> = HashSet::default();
        let mut seen_texts: HashSet<String> = HashSet::default();
        for (key, value) in self.nodes[node].pairs.clone() {
            if !self.nodes[key.node].merge_key {
                own.push((key, value));
                continue;
            }
            let sources = match self.nodes[value.node].kind {
                Kind::Map => vec![value],
                Kind::Seq => self.nodes[value.node].items.clone(),
                Kind::Scalar => {
                    // "expected a mapping or list of mappings for merging",
                    // raised at the node: its own error, if it has one, is
                    // where PyYAML stops. The walk goes on past it.
                    self.meet(value.at, Step::Merge)?;
                    self.meet_any(self.nodes[value.node].start)?;
                    continue;
                }
            };
            for source in sources {
                if self.nodes[source.node].kind != Kind::Map {
                    // "expected a mapping for merging"
                    self.meet(source.at, Step::Merge)?;
                    self.meet_any(self.nodes[source.node].start)?;
                    continue;
                }
                self.flatten(source.node, depth + 1)?;
                for pair in self.nodes[source.node].pairs.clone() {
                    self.work += 1;
                    let text = self.nodes[pair.0.node].shared_text.clone();
                    let again = !seen_nodes.insert(pair.0.node)
                        || text.is_some_and(|t| !seen_texts.insert(t));
                    if !again {
                        merged.push(pair);
                    }
                }
            }
        }
        merged.extend(own);
        self.nodes[node].pairs = merged;
        (self.work <= BUDGET).then_some(())
    }
}
