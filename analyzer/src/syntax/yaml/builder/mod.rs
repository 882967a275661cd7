//! saphyr's event stream → the tree, with PyYAML's reading: YAML 1.1
//! scalars, merge keys, aliases under an expansion and depth budget,
//! duplicate keys, and what saphyr accepts but PyYAML refuses.

mod mapping;
mod refusals;
mod scalars;
mod spans;

use std::borrow::Cow;

use saphyr_parser::{Event, Parser, Span};

use super::super::TextRange;
use super::errors;
use super::tree::{Entry, Node, NodeKind};
use crate::diagnostics::{Diagnostic, FileId};
use crate::hash::HashMap;
use crate::limits::{MAX_ALIAS_EXPANSION, MAX_YAML_DEPTH};
use crate::rules::Rule;
use spans::Offsets;

/// Why the builder stopped before the end.
pub(super) enum Stop {
    /// A syntax error, already reported.
    Failed,
    /// See [`errors::Verdict::AcceptQuoted`] (local byte offsets).
    AcceptQuoted { start: usize, end: usize },
}

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
    /// The text saphyr parses: the file's, or with some line breaks blanked.
    text: &'t str,
    /// The file's own text, where rewritten scalars' values are read.
    original: &'t str,
    /// Where rewritten quoted scalars start (absolute byte offsets).
    rewritten: &'t [u32],
    offsets: Offsets,
    file: FileId,
    pub(super) diagnostics: Vec<Diagnostic>,
    stack: Vec<Frame>,
    /// Finished children of the open sequences, innermost last.
    items: Vec<Node>,
    /// Finished entries of the open mappings, innermost last.
    entries: Vec<Entry>,
    /// Anchored nodes with their size (for MZ003) and height (for MZ008).
    anchors: HashMap<usize, Anchored>,
    expansion: usize,
    expansion_reported: bool,
    documents: usize,
    root: Option<Node>,
    /// Where a tab is legal (quoted and block scalars), as ranges in `text`:
    /// PyYAML's tab rules are applied to the parsed text.
    pub(super) exempt: Vec<TextRange>,
    /// Depth past the limit: events are skipped until the stack unwinds.
    skipping: usize,
    /// Set when a structural problem makes the document unusable.
    pub(super) stopped: bool,
    /// What `text` holds in place of each BOM inside the document (see
    /// `yaml::bom_stand_in`): scalar values get the BOM back.
    pub(super) bom_stand_in: Option<char>,
}

impl<'t> Builder<'t> {
    pub(super) fn new(
        text: &'t str,
        original: &'t str,
        base: u32,
        file: FileId,
        rewritten: &'t [u32],
    ) -> Self {
        Builder {
            text,
            original,
            rewritten,
            offsets: Offsets::new(text, base),
            file,
            diagnostics: Vec::new(),
            stack: Vec::new(),
            items: Vec::new(),
            entries: Vec::new(),
            anchors: HashMap::default(),
            expansion: 0,
            expansion_reported: false,
            documents: 0,
            root: None,
            exempt: Vec::new(),
            skipping: 0,
            stopped: false,
            bom_stand_in: None,
        }
    }

    fn report(&mut self, rule: Rule, range: TextRange, message: impl Into<String>) {
        self.diagnostics
            .push(Diagnostic::new(rule, self.file, range, message));
    }

    /// Reports what PyYAML refuses and saphyr reads on (at a local byte
    /// offset, on the character there) and stops: PyYAML raises there.
    fn refuse(&mut self, at: u32, message: String) {
        let range = self.char_range(at);
        self.report(Rule::YamlSyntax, range, message);
        self.stopped = true;
    }

    /// The character at a local byte offset, as an absolute range (empty at
    /// a line break or the end).
    fn char_range(&self, at: u32) -> TextRange {
        let end = spans::next_char_end(self.text, at);
        TextRange::new(at + self.offsets.base, end + self.offsets.base)
    }

    pub(super) fn run(&mut self) -> Result<Option<Node>, Stop> {
        let parser = Parser::new_from_str(self.text);
        // The parser's iterator repeats its error forever: stop at the first.
        for next in parser {
            let (event, span) = match next {
                Ok(pair) => pair,
                Err(err) => return Err(self.syntax_error(err.marker().index(), err.info())),
            };
            if self.stopped {
                // PyYAML stops at a second document before reading into it.
                if self.documents > 1 {
                    break;
                }
                continue;
            }
            self.event(event, span);
        }
        Ok(self.root.take())
    }

    fn event(&mut self, event: Event<'_>, span: Span) {
        let range = self.offsets.range(&span);
        // saphyr (YAML 1.2) takes any non-space characters as an anchor's
        // name; PyYAML only ASCII letters, digits, `-` and `_`, then an end.
        let anchored = match &event {
            Event::Scalar(_, _, anchor, _)
            | Event::SequenceStart(anchor, _)
            | Event::MappingStart(anchor, _) => *anchor != 0,
            _ => false,
        };
        if anchored && self.skipping == 0 {
            let start = self.offsets.local(range.start);
            if let Some((at, message)) =
                errors::anchor_at(self.text, start).and_then(|at| errors::name_error(self.text, at))
            {
                self.refuse(at as u32, format!("{message}{}", errors::FIX));
                return;
            }
        }
        if self.skipping > 0 {
            match event {
                Event::SequenceStart(..) | Event::MappingStart(..) => self.skipping += 1,
                Event::SequenceEnd | Event::MappingEnd => {
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
        match event {
            Event::DocumentStart(_) => {
                self.documents += 1;
                if self.documents == 2 {
                    self.report(
                        Rule::MultipleDocuments,
                        range,
                        "expected a single document in the stream, but found another document; keep one document per file (remove this `---` and what follows, or merge it into the first)",
                    );
                    self.stopped = true;
                }
            }
            Event::Scalar(text, style, anchor, tag) => {
                let is_key = self.expecting_key();
                if let Some((at, message)) = self.pyyaml_refuses(&text, style, range, is_key) {
                    self.refuse(at, message);
                    return;
                }
                let text = match self.rewritten.contains(&range.start) {
                    true => Cow::Owned(
                        self.original_quoted(range.start)
                            .unwrap_or(text.into_owned()),
                    ),
                    false => text,
                };
                let text = match self.bom_stand_in {
                    Some(stand_in) if text.contains(stand_in) => {
                        Cow::Owned(text.replace(stand_in, "\u{feff}"))
                    }
                    _ => text,
                };
                let Some(node) = self.scalar(&text, style, tag.as_deref(), range, is_key) else {
                    return; // a merge key: its value is collected as a merge source
                };
                if let NodeKind::Scalar(s) = &node.kind {
                    if s.style.is_quoted() {
                        self.exempt.push(self.scalar_extent(range, s.style));
                    }
                }
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
            Event::Alias(id) => {
                let local = self.offsets.local(range.start);
                if let Some((at, message)) = errors::name_error(self.text, local) {
                    self.refuse(at as u32, format!("{message}{}", errors::FIX));
                    return;
                }
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
            Event::SequenceStart(anchor, tag) => {
                if self.too_deep(range) {
                    return;
                }
                self.check_collection_tag(tag.as_deref(), range, &["seq", "omap", "pairs"]);
                self.stack.push(Frame::Seq {
                    start: range.start,
                    flow: self.is_flow(range.start, b'['),
                    anchor,
                    items_from: self.items.len(),
                });
            }
            Event::MappingStart(anchor, tag) => {
                if self.too_deep(range) {
                    return;
                }
                self.check_collection_tag(tag.as_deref(), range, &["map", "set"]);
                self.stack.push(Frame::Map {
                    start: range.start,
                    flow: self.is_flow(range.start, b'{'),
                    anchor,
                    entries_from: self.entries.len(),
                    pending_key: None,
                    merges: Vec::new(),
                    merge_pending: false,
                });
            }
            Event::SequenceEnd => {
                if let Some(Frame::Seq {
                    start,
                    flow,
                    anchor,
                    items_from,
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
            Event::MappingEnd => {
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
                    let entries = self.apply_merges(entries, merges);
                    self.report_duplicates(&entries);
                    let node = Node {
                        range: TextRange::new(start, end.max(start)),
                        kind: NodeKind::Map(entries),
                    };
                    self.remember(anchor, &node);
                    self.finish(node);
                }
            }
            Event::StreamStart | Event::StreamEnd | Event::DocumentEnd | Event::Nothing => {}
        }
    }

    fn in_flow(&self) -> bool {
        matches!(
            self.stack.last(),
            Some(Frame::Seq { flow: true, .. } | Frame::Map { flow: true, .. })
        )
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

    fn is_flow(&self, start: u32, open: u8) -> bool {
        self.text.as_bytes().get(self.offsets.local(start)) == Some(&open)
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
                        self.report(
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
