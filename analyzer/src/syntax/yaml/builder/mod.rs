//! Events → the tree, as PyYAML composes and constructs it: YAML 1.1
//! scalars, merge keys, aliases under an expansion and depth budget,
//! duplicate keys and anchors, and the first error where PyYAML raises it.

mod mapping;
mod order;
mod scalars;

use order::Step;

use super::errors;
use super::parser::{Event, EventKind, Parser};
use super::scanner::YamlError;
use super::tree::{Entry, Node, NodeKind};
use crate::base::hash::HashMap;
use crate::base::limits::{MAX_ALIAS_EXPANSION, MAX_YAML_DEPTH};
use crate::base::{FileId, TextRange};
use crate::diagnostics::Diagnostic;
use crate::rules::Rule;

/// The builder stopped at an error, already reported.
pub(super) struct Failed;

/// A node an anchor names, measured once for the aliases that copy it.
struct Anchored {
    node: Node,
    size: usize,
    height: usize,
}

/// An open collection. Its finished children wait on the builder's shared
/// `items`/`entries` stacks from the index it records, so a collection's
/// children are moved once into a vector of their exact size when it ends:
/// no per-collection vector grows by doubling and is shrunk again (most of
/// the allocation and page faults of a large file's tree).
enum Frame {
    Seq {
        start: u32,
        flow: bool,
        anchor: usize,
        items_from: usize,
        /// The list of a `<<` key: its items are merge sources.
        merge_sources: bool,
    },
    Map {
        start: u32,
        flow: bool,
        anchor: usize,
        entries_from: usize,
        pending_key: Option<Node>,
        /// Merge sources (`<<: *base`) in source order.
        merges: Vec<Node>,
        /// Set while the next value belongs to a `<<` key.
        merge_pending: bool,
    },
}

pub(super) struct Builder<'t> {
    /// The text parsed: the file's after a leading BOM.
    text: &'t str,
    /// Where `text` starts in the file (after a BOM).
    base: u32,
    file: FileId,
    pub(super) diagnostics: Vec<Diagnostic>,
    stack: Vec<Frame>,
    /// Finished children of the open sequences, innermost last.
    items: Vec<Node>,
    /// Finished entries of the open mappings, innermost last.
    entries: Vec<Entry>,
    /// Each anchor's number (from 1) and where it was first written; a
    /// node's anchor is defined at its start, as PyYAML composes.
    anchor_ids: HashMap<String, (usize, TextRange)>,
    /// Finished anchored nodes with their size (for MZ003) and height (for
    /// MZ008), by anchor number; an anchor not here is still open.
    anchors: HashMap<usize, Anchored>,
    expansion: usize,
    expansion_reported: bool,
    documents: usize,
    root: Option<Node>,
    /// Depth past the limit: events are skipped until the stack unwinds.
    skipping: usize,
    /// Set when a structural problem makes the document unusable.
    pub(super) stopped: bool,
    /// Set at the first merge key (`<<`).
    merged: bool,
    /// The step of the diagnostics at these indices, when not constructing.
    steps: HashMap<usize, Step>,
}

impl<'t> Builder<'t> {
    pub(super) fn new(text: &'t str, base: u32, file: FileId) -> Self {
        Builder {
            text,
            base,
            file,
            diagnostics: Vec::new(),
            stack: Vec::new(),
            items: Vec::new(),
            entries: Vec::new(),
            anchor_ids: HashMap::default(),
            anchors: HashMap::default(),
            expansion: 0,
            expansion_reported: false,
            documents: 0,
            root: None,
            skipping: 0,
            stopped: false,
            merged: false,
            steps: HashMap::default(),
        }
    }

    fn report(&mut self, rule: Rule, range: TextRange, message: impl Into<String>) {
        self.diagnostics
            .push(Diagnostic::new(rule, self.file, range, message));
    }

    /// Reports what PyYAML raises at another step than constructing the
    /// node there (merging it, hashing it as a key), for the ordering.
    fn report_step(
        &mut self,
        step: Step,
        rule: Rule,
        range: TextRange,
        message: impl Into<String>,
    ) {
        self.steps.insert(self.diagnostics.len(), step);
        self.report(rule, range, message);
    }

    /// Reports what PyYAML raises while composing (an undefined alias, a
    /// duplicate anchor, a second document) and stops there, as it does: it
    /// constructs nothing, so the values' own errors go too.
    fn refuse(&mut self, rule: Rule, range: TextRange, message: String) {
        self.drop_construction_errors();
        self.report(rule, range, message);
        self.stopped = true;
    }

    /// What only constructing the values finds (MZ009, MZ003): PyYAML
    /// never gets there when composing the document fails.
    fn drop_construction_errors(&mut self) {
        self.diagnostics
            .retain(|d| !matches!(d.rule, Rule::InvalidScalar | Rule::AliasExpansion));
    }

    fn range(&self, event: &Event) -> TextRange {
        TextRange::new(self.base + event.start.pos, self.base + event.end.pos)
    }

    pub(super) fn run(&mut self) -> Result<Option<Node>, Failed> {
        let mut parser = Parser::new(self.text);
        loop {
            let event = match parser.next_event() {
                Ok(Some(event)) => event,
                Ok(None) => break,
                Err(error) => {
                    self.syntax_error(&error);
                    return Err(Failed);
                }
            };
            self.event(event);
            if self.stopped {
                break;
            }
        }
        if !self.stopped {
            self.order_construction_errors();
        }
        Ok(self.root.take())
    }

    /// Puts the values PyYAML cannot construct (MZ009) in the order its
    /// constructor meets them, so the first is the one mozaiks reports, and
    /// mzk's own refusals of aliases (MZ003, which PyYAML accepts) after
    /// them; drops those in nodes PyYAML never constructs (a merged pair it
    /// skips). Events come depth first, PyYAML constructs breadth first:
    /// the orders differ only with two or more errors, or with merges.
    fn order_construction_errors(&mut self) {
        let invalid = self
            .diagnostics
            .iter()
            .filter(|d| d.rule == Rule::InvalidScalar)
            .count();
        // Past the nesting limit the tree is cut short: keep the text's order.
        let cut = self
            .diagnostics
            .iter()
            .any(|d| d.rule == Rule::NestingTooDeep);
        let ranks = if (invalid >= 2 || (invalid == 1 && self.merged)) && !cut {
            order::construction_ranks(self.text)
        } else {
            None
        };
        let ordered = |rule: Rule| matches!(rule, Rule::InvalidScalar | Rule::AliasExpansion);
        if ranks.is_none() && self.diagnostics.iter().filter(|d| ordered(d.rule)).count() < 2 {
            return; // nearly every file: nothing to drop or to order
        }
        let base = self.base;
        let steps = std::mem::take(&mut self.steps);
        let met = |i: usize, d: &Diagnostic| {
            let ranks = ranks.as_ref()?;
            let step = steps.get(&i).copied().unwrap_or(Step::Construct);
            ranks
                .get(&(d.range.start.checked_sub(base)?, step))
                .copied()
        };
        // Indices before any is dropped, for the steps.
        let mut indexed: Vec<(usize, Diagnostic)> = std::mem::take(&mut self.diagnostics)
            .into_iter()
            .enumerate()
            .collect();
        if ranks.is_some() {
            indexed.retain(|(i, d)| d.rule != Rule::InvalidScalar || met(*i, d).is_some());
        }
        let slots: Vec<usize> = (0..indexed.len())
            .filter(|&k| ordered(indexed[k].1.rule))
            .collect();
        let rank = |(i, d): &(usize, Diagnostic)| {
            (
                d.rule == Rule::AliasExpansion,
                met(*i, d).unwrap_or(usize::MAX),
            )
        };
        let mut errors: Vec<(usize, Diagnostic)> =
            slots.iter().map(|&k| indexed[k].clone()).collect();
        errors.sort_by_key(rank); // stable: ties keep the order of the text
        for (slot, error) in slots.into_iter().zip(errors) {
            indexed[slot] = error;
        }
        self.diagnostics = indexed.into_iter().map(|(_, d)| d).collect();
    }

    /// The error PyYAML raises, where and as it raises it. PyYAML composes
    /// the whole document before constructing a value, so a syntax error
    /// hides the values that could not be constructed.
    fn syntax_error(&mut self, error: &YamlError) {
        self.drop_construction_errors();
        let (rule, at, message) = errors::describe(self.text, error);
        let range = errors::char_range(self.text, at);
        self.report(
            rule,
            TextRange::new(range.start + self.base, range.end + self.base),
            message,
        );
    }

    /// Registers the anchor a node starts with; `None` after refusing a
    /// duplicate, as PyYAML does.
    fn define_anchor(&mut self, anchor: Option<String>, range: TextRange) -> Option<usize> {
        let Some(name) = anchor else {
            return Some(0);
        };
        if let Some((_, first)) = self.anchor_ids.get(&name) {
            let line = self.text[..(first.start - self.base) as usize]
                .matches('\n')
                .count()
                + 1;
            let message = format!(
                "found duplicate anchor '{name}'; first occurrence on line {line}, second occurrence here: give one of them another name{}",
                errors::FIX
            );
            self.refuse(Rule::YamlSyntax, range, message);
            return None;
        }
        let id = self.anchor_ids.len() + 1;
        self.anchor_ids.insert(name, (id, range));
        Some(id)
    }

    fn event(&mut self, event: Event) {
        let range = self.range(&event);
        if self.skipping > 0 {
            match event.kind {
                EventKind::SequenceStart { .. } | EventKind::MappingStart { .. } => {
                    self.skipping += 1
                }
                EventKind::SequenceEnd | EventKind::MappingEnd => {
                    self.skipping -= 1;
                    if self.skipping == 0 {
                        self.finish(Node {
                            range,
                            kind: NodeKind::Invalid,
                        });
                    }
                }
                _ => {}
            }
            return;
        }
        match event.kind {
            EventKind::DocumentStart => {
                self.documents += 1;
                if self.documents == 2 {
                    self.refuse(
                        Rule::MultipleDocuments,
                        range,
                        "expected a single document in the stream, but found another document; keep one document per file (remove this `---` and what follows, or merge it into the first)".to_string(),
                    );
                }
            }
            EventKind::Scalar {
                anchor,
                tag,
                implicit,
                value,
                style,
            } => {
                let Some(anchor) = self.define_anchor(anchor, range) else {
                    return;
                };
                let is_key = self.expecting_key();
                let Some(node) = self.scalar(value, style, tag.as_deref(), implicit, range, is_key)
                else {
                    return; // a merge key: its value is collected as a merge source
                };
                if anchor != 0 {
                    self.anchors.insert(
                        anchor,
                        Anchored {
                            node: node.clone(),
                            size: 1,
                            height: 0,
                        },
                    );
                }
                self.finish(node);
            }
            EventKind::Alias(name) => {
                let Some(&(id, _)) = self.anchor_ids.get(&name) else {
                    let message = format!(
                        "found undefined alias '{name}': no `&{name}` comes before it; fix the YAML syntax here (mozaiks cannot load this file)"
                    );
                    self.refuse(Rule::YamlSyntax, range, message);
                    return;
                };
                let node = match self.anchors.get(&id) {
                    // An alias copies its collection here: the copy must fit
                    // under the nesting limit like anything written out.
                    Some(anchored) if self.stack.len() + anchored.height > MAX_YAML_DEPTH => {
                        self.report(
                            Rule::NestingTooDeep,
                            range,
                            format!("this alias nests its collection more than {MAX_YAML_DEPTH} levels deep here; no bundle file needs this, so flatten the structure"),
                        );
                        Node {
                            range,
                            kind: NodeKind::Invalid,
                        }
                    }
                    Some(Anchored { node, size, .. }) => {
                        self.expansion += *size;
                        if self.expansion > MAX_ALIAS_EXPANSION {
                            if !self.expansion_reported {
                                self.expansion_reported = true;
                                self.report(
                                    Rule::AliasExpansion,
                                    range,
                                    format!(
                                        "aliases in this file expand to more than {MAX_ALIAS_EXPANSION} nodes (an alias bomb?); write the repeated content out or reduce the nesting of aliases"
                                    ),
                                );
                            }
                            Node {
                                range,
                                kind: NodeKind::Invalid,
                            }
                        } else {
                            let mut copy = node.clone();
                            copy.range = range;
                            copy
                        }
                    }
                    None => {
                        self.report(
                            Rule::AliasExpansion,
                            range,
                            "this alias refers to the collection that contains it (a recursive alias); mozaiks cannot validate a self-containing value, so write the value out",
                        );
                        Node {
                            range,
                            kind: NodeKind::Invalid,
                        }
                    }
                };
                self.finish(node);
            }
            EventKind::SequenceStart { anchor, tag, flow } => {
                let Some(anchor) = self.define_anchor(anchor, range) else {
                    return;
                };
                if self.too_deep(range) {
                    return;
                }
                let merge_value = self.in_merge_value();
                if !merge_value {
                    self.check_collection_tag(tag.as_deref(), range, &["seq", "omap", "pairs"]);
                }
                self.stack.push(Frame::Seq {
                    start: range.start,
                    flow,
                    anchor,
                    items_from: self.items.len(),
                    merge_sources: merge_value,
                });
            }
            EventKind::MappingStart { anchor, tag, flow } => {
                let Some(anchor) = self.define_anchor(anchor, range) else {
                    return;
                };
                if self.too_deep(range) {
                    return;
                }
                if !self.in_merge_value() {
                    self.check_collection_tag(tag.as_deref(), range, &["map", "set"]);
                }
                self.stack.push(Frame::Map {
                    start: range.start,
                    flow,
                    anchor,
                    entries_from: self.entries.len(),
                    pending_key: None,
                    merges: Vec::new(),
                    merge_pending: false,
                });
            }
            EventKind::SequenceEnd => {
                if let Some(Frame::Seq {
                    start,
                    flow,
                    anchor,
                    items_from,
                    ..
                }) = self.stack.pop()
                {
                    let items: Vec<Node> = self.items.drain(items_from..).collect();
                    let end = if flow {
                        range.end
                    } else {
                        items.last().map_or(range.start, |n| n.range.end)
                    };
                    let node = Node {
                        range: TextRange::new(start, end.max(start)),
                        kind: NodeKind::Seq(items),
                    };
                    self.remember(anchor, &node);
                    self.finish(node);
                }
            }
            EventKind::MappingEnd => {
                if let Some(Frame::Map {
                    start,
                    flow,
                    anchor,
                    entries_from,
                    merges,
                    ..
                }) = self.stack.pop()
                {
                    let entries: Vec<Entry> = self.entries.drain(entries_from..).collect();
                    let end = if flow {
                        range.end
                    } else {
                        entries
                            .last()
                            .map(|e| e.value.range.end.max(e.key.range.end))
                            .unwrap_or(range.start)
                    };
                    // Duplicates among the mapping's own keys (merged keys
                    // override nothing the author wrote twice).
                    self.report_duplicates(&entries);
                    let entries = self.apply_merges(entries, merges);
                    let node = Node {
                        range: TextRange::new(start, end.max(start)),
                        kind: NodeKind::Map(entries),
                    };
                    self.remember(anchor, &node);
                    self.finish(node);
                }
            }
            EventKind::StreamStart | EventKind::StreamEnd | EventKind::DocumentEnd => {}
        }
    }

    fn too_deep(&mut self, range: TextRange) -> bool {
        if self.stack.len() >= MAX_YAML_DEPTH {
            self.report(
                Rule::NestingTooDeep,
                range,
                format!("collections are nested more than {MAX_YAML_DEPTH} levels deep here; no bundle file needs this, so flatten the structure"),
            );
            self.skipping = 1;
            return true;
        }
        false
    }

    fn remember(&mut self, anchor: usize, node: &Node) {
        if anchor != 0 {
            let anchored = Anchored {
                node: node.clone(),
                size: node.size(),
                height: node.height(),
            };
            self.anchors.insert(anchor, anchored);
        }
    }

    /// Whether the next node is a merge source (`<<`'s value or an item of
    /// its list): PyYAML merges its pairs and never constructs the node
    /// itself, so its tag is never looked up.
    fn in_merge_value(&self) -> bool {
        matches!(
            self.stack.last(),
            Some(Frame::Map {
                merge_pending: true,
                ..
            }) | Some(Frame::Seq {
                merge_sources: true,
                ..
            })
        )
    }

    fn expecting_key(&self) -> bool {
        matches!(
            self.stack.last(),
            Some(Frame::Map {
                pending_key: None,
                merge_pending: false,
                ..
            })
        )
    }

    /// Attaches a finished node to its parent (or makes it the root).
    fn finish(&mut self, node: Node) {
        match self.stack.last_mut() {
            None => {
                if self.documents <= 1 {
                    self.root = Some(node);
                }
            }
            Some(Frame::Seq { .. }) => self.items.push(node),
            Some(Frame::Map {
                pending_key,
                merges,
                merge_pending,
                ..
            }) => {
                if *merge_pending {
                    *merge_pending = false;
                    merges.push(node);
                } else if let Some(key) = pending_key.take() {
                    self.entries.push(Entry { key, value: node });
                } else {
                    let unhashable = matches!(node.kind, NodeKind::Seq(_) | NodeKind::Map(_));
                    let range = node.range;
                    *pending_key = Some(node);
                    if unhashable {
                        self.report_step(
                            Step::Key,
                            Rule::InvalidScalar,
                            range,
                            "while constructing a mapping, found unhashable key: a list or mapping cannot be a key in Python; mozaiks fails to load this file. Write the key as text",
                        );
                    }
                }
            }
        }
    }
}
