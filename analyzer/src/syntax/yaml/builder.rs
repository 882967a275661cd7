//! saphyr's event stream → the tree, with PyYAML's reading: YAML 1.1
//! scalars, merge keys, aliases under an expansion and depth budget,
//! duplicate keys, and what saphyr accepts but PyYAML refuses.

use std::borrow::Cow;
use std::collections::HashMap;

use saphyr_parser::{Event, Parser, ScalarStyle as SaphyrStyle, Span};

use super::super::scalar::{resolve_plain, resolve_tagged, Resolved, ScalarStyle, Value};
use super::super::TextRange;
use super::errors::{self, Verdict};
use super::tree::{Entry, Node, NodeKind, Scalar};
use crate::diagnostics::{Diagnostic, FileId};
use crate::limits::{MAX_ALIAS_EXPANSION, MAX_YAML_DEPTH};
use crate::rules::Rule;

/// Why the builder stopped before the end.
pub(super) enum Stop {
    /// A syntax error, already reported.
    Failed,
    /// See [`Verdict::AcceptQuoted`] (local byte offsets).
    AcceptQuoted { start: usize, end: usize },
}

/// A node an anchor names, measured once for the aliases that copy it.
struct Anchored {
    node: Node,
    size: usize,
    height: usize,
}

/// Converts the parser's character indices to byte offsets.
struct Offsets {
    /// Byte offset of each char index; empty for ASCII text (identity).
    table: Vec<u32>,
    base: u32,
    len: u32,
}

impl Offsets {
    fn new(text: &str, base: u32) -> Offsets {
        let table = if text.is_ascii() {
            Vec::new()
        } else {
            text.char_indices().map(|(i, _)| i as u32).collect()
        };
        Offsets {
            table,
            base,
            len: text.len() as u32,
        }
    }

    fn byte(&self, char_index: usize) -> u32 {
        let local = if self.table.is_empty() {
            (char_index as u32).min(self.len)
        } else {
            self.table.get(char_index).copied().unwrap_or(self.len)
        };
        self.base + local
    }

    fn range(&self, span: &Span) -> TextRange {
        TextRange::new(self.byte(span.start.index()), self.byte(span.end.index()))
    }
}

enum Frame {
    Seq {
        start: u32,
        flow: bool,
        anchor: usize,
        items: Vec<Node>,
    },
    Map {
        start: u32,
        flow: bool,
        anchor: usize,
        entries: Vec<Entry>,
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
    /// Anchored nodes with their size (for MZ003) and height (for MZ008).
    anchors: HashMap<usize, Anchored>,
    expansion: usize,
    expansion_reported: bool,
    documents: usize,
    root: Option<Node>,
    /// Byte ranges where a tab is legal (quoted and block scalars).
    pub(super) exempt: Vec<TextRange>,
    /// Depth past the limit: events are skipped until the stack unwinds.
    skipping: usize,
    /// Set when a structural problem makes the document unusable.
    pub(super) stopped: bool,
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
            anchors: HashMap::new(),
            expansion: 0,
            expansion_reported: false,
            documents: 0,
            root: None,
            exempt: Vec::new(),
            skipping: 0,
            stopped: false,
        }
    }

    fn report(&mut self, rule: Rule, range: TextRange, message: impl Into<String>) {
        self.diagnostics
            .push(Diagnostic::new(rule, self.file, range, message));
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

    /// Reports the error saphyr stopped at (a character index), where and
    /// as PyYAML reports it.
    fn syntax_error(&mut self, char_index: usize, info: &str) -> Stop {
        let at = self.offsets.byte(char_index);
        // The parser's own depth guard (flow collections nest in its
        // recursion, before any event reaches us).
        if info.contains("recursion limit") {
            let end = next_char_end(self.text, at - self.offsets.base) + self.offsets.base;
            self.report(
                Rule::NestingTooDeep,
                TextRange::new(at, end),
                "collections are nested too deep here for the YAML parser; no bundle file needs this, so flatten the structure",
            );
            return Stop::Failed;
        }
        // PyYAML composes the whole document before constructing a value, so
        // a syntax error hides the values that could not be constructed.
        self.diagnostics.retain(|d| d.rule != Rule::InvalidScalar);
        let base = self.offsets.base;
        let legal: Vec<TextRange> = self
            .exempt
            .iter()
            .map(|r| TextRange::new(r.start - base, r.end - base))
            .collect();
        match errors::explain(self.text, info, (at - base) as usize, &legal) {
            Verdict::AcceptQuoted { start, end } => Stop::AcceptQuoted { start, end },
            Verdict::Error { range, message } => {
                self.report(
                    Rule::YamlSyntax,
                    TextRange::new(range.start + base, range.end + base),
                    message,
                );
                Stop::Failed
            }
        }
    }

    fn event(&mut self, event: Event<'_>, span: Span) {
        let range = self.offsets.range(&span);
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
                if let Some(problem) = self.pyyaml_refuses(&text, style, range, is_key) {
                    let (at, message) = problem;
                    let end = next_char_end(self.text, at) + self.offsets.base;
                    let at = at + self.offsets.base;
                    self.report(Rule::YamlSyntax, TextRange::new(at, end), message);
                    self.stopped = true;
                    return;
                }
                let text = match self.rewritten.contains(&range.start) {
                    true => Cow::Owned(
                        self.original_quoted(range.start)
                            .unwrap_or(text.into_owned()),
                    ),
                    false => text,
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
                let local = (range.start - self.offsets.base) as usize;
                if let Some((at, message)) = errors::name_error(self.text, local) {
                    let end = next_char_end(self.text, at as u32) + self.offsets.base;
                    let at = at as u32 + self.offsets.base;
                    self.report(
                        Rule::YamlSyntax,
                        TextRange::new(at, end),
                        format!("{message}{}", errors::FIX),
                    );
                    self.stopped = true;
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
                    items: Vec::new(),
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
                    entries: Vec::new(),
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
                    items,
                }) = self.stack.pop()
                {
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
                    entries,
                    merges,
                    ..
                }) = self.stack.pop()
                {
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

    /// What saphyr accepts in a scalar and PyYAML does not, as (local byte
    /// offset, message): a plain scalar starting with `>` or `|` inside `[]`
    /// or `{}`, and double-quoted escapes outside PyYAML's table.
    fn pyyaml_refuses(
        &self,
        value: &str,
        style: SaphyrStyle,
        range: TextRange,
        is_key: bool,
    ) -> Option<(u32, String)> {
        let local = (range.start - self.offsets.base) as usize;
        let first = self.text[local..].chars().next()?;
        match style {
            // An empty key before `:` (YAML 1.2 allows it; PyYAML only
            // after an explicit `?`).
            SaphyrStyle::Plain
                if is_key
                    && value.is_empty()
                    && first == ':'
                    && !self.text[..local].trim_end().ends_with('?') =>
            {
                let context = match self.in_flow() {
                    true => "while parsing a flow node, expected the node content",
                    false => "while parsing a block mapping, expected <block end>",
                };
                Some((
                    local as u32,
                    format!("{context}, but found ':': this `:` has no key before it; write the key{}", errors::FIX),
                ))
            }
            SaphyrStyle::Plain if matches!(first, '>' | '|') && self.in_flow() => Some((
                local as u32,
                format!("while scanning for the next token, found character '{first}' that cannot start any token: inside `[]` or `{{}}` a value cannot start with `{first}`; quote it (mozaiks cannot load this file)"),
            )),
            SaphyrStyle::DoubleQuoted if first == '"' => {
                let end = ((range.end - self.offsets.base) as usize).min(self.text.len());
                if !self.text[local..end].contains('\\') {
                    return None;
                }
                errors::scan_quoted(self.text, local).err().map(|(at, problem)| {
                    (at as u32, format!("while scanning a double-quoted scalar, {problem}{}", errors::FIX))
                })
            }
            _ => None,
        }
    }

    fn in_flow(&self) -> bool {
        matches!(
            self.stack.last(),
            Some(Frame::Seq { flow: true, .. } | Frame::Map { flow: true, .. })
        )
    }

    /// The value of a quoted scalar that was parsed with its line breaks
    /// blanked: its original text, read alone (at the top level no
    /// indentation is required, which is how PyYAML reads it in place).
    fn original_quoted(&self, start: u32) -> Option<String> {
        let local = (start - self.offsets.base) as usize;
        let end = errors::scan_quoted(self.original, local).ok()?;
        Parser::new_from_str(&self.original[local..end])
            .find_map(|next| match next {
                Ok((Event::Scalar(value, ..), _)) => Some(Ok(value.into_owned())),
                Ok(_) => None,
                Err(_) => Some(Err(())),
            })?
            .ok()
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
        self.text
            .as_bytes()
            .get((start - self.offsets.base) as usize)
            == Some(&open)
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

    /// Where a quoted or block scalar's text lies, for the tab check: block
    /// scalars start at their content, so extend back over the indicator line.
    fn scalar_extent(&self, range: TextRange, style: ScalarStyle) -> TextRange {
        if matches!(style, ScalarStyle::Literal | ScalarStyle::Folded) {
            let local = (range.start - self.offsets.base) as usize;
            let before = &self.text[..local];
            let line_start = before.rfind('\n').map_or(0, |i| i + 1);
            return TextRange::new(line_start as u32 + self.offsets.base, range.end);
        }
        range
    }

    fn scalar(
        &mut self,
        text: &str,
        style: SaphyrStyle,
        tag: Option<&saphyr_parser::Tag>,
        range: TextRange,
        is_key: bool,
    ) -> Option<Node> {
        let style = match style {
            SaphyrStyle::Plain => ScalarStyle::Plain,
            SaphyrStyle::SingleQuoted => ScalarStyle::SingleQuoted,
            SaphyrStyle::DoubleQuoted => ScalarStyle::DoubleQuoted,
            SaphyrStyle::Literal => ScalarStyle::Literal,
            SaphyrStyle::Folded => ScalarStyle::Folded,
        };
        // The parser's spans of quoted scalars run on to the next token (over
        // spaces and comments), and block scalars' into the next line: cut them
        // at the closing quote, or trim.
        let range = match style {
            ScalarStyle::SingleQuoted | ScalarStyle::DoubleQuoted => {
                quoted_range(self.text, self.offsets.base, range)
            }
            _ => trim_range(self.text, self.offsets.base, range),
        };
        let resolved = match tag {
            Some(tag) => match core_tag(tag) {
                // `!` (non-specific) resolves like an untagged plain scalar in PyYAML.
                Some("") if style == ScalarStyle::Plain => resolve_plain(text, is_key),
                Some("") => Ok(Resolved::Value(Value::Str(text.to_string()))),
                Some(suffix) => resolve_tagged(text, suffix).map(Resolved::Value),
                None => Err(super::super::scalar::ScalarError(format!(
                    "could not determine a constructor for the tag '{}{}'",
                    tag.handle, tag.suffix
                ))),
            },
            None if style == ScalarStyle::Plain => resolve_plain(text, is_key),
            None => Ok(Resolved::Value(Value::Str(text.to_string()))),
        };
        Some(match resolved {
            Ok(Resolved::Value(value)) => Node {
                range,
                kind: NodeKind::Scalar(Scalar { style, value }),
            },
            Ok(Resolved::Merge) if is_key => {
                if let Some(Frame::Map { merge_pending, .. }) = self.stack.last_mut() {
                    *merge_pending = true;
                }
                return None;
            }
            Ok(Resolved::Merge) => {
                self.report(
                    Rule::InvalidScalar,
                    range,
                    "`<<` is the merge key and cannot be a value; quote it ('<<') if you mean the text",
                );
                Node {
                    range,
                    kind: NodeKind::Invalid,
                }
            }
            Err(err) => {
                self.report(
                    Rule::InvalidScalar,
                    range,
                    format!("{}; mozaiks fails to load this file. Quote the value if it is meant as text, or correct it", err.0),
                );
                Node {
                    range,
                    kind: NodeKind::Invalid,
                }
            }
        })
    }

    fn check_collection_tag(
        &mut self,
        tag: Option<&saphyr_parser::Tag>,
        range: TextRange,
        allowed: &[&str],
    ) {
        if let Some(tag) = tag {
            match core_tag(tag) {
                Some(s) if s.is_empty() || allowed.contains(&s) => {}
                _ => self.report(
                    Rule::InvalidScalar,
                    range,
                    format!(
                        "could not determine a constructor for the tag '{}{}'; safe_load only knows the core YAML tags, so remove the tag",
                        tag.handle, tag.suffix
                    ),
                ),
            }
        }
    }

    /// Attaches a finished node to its parent (or makes it the root).
    fn finish(&mut self, node: Node) {
        match self.stack.last_mut() {
            None => {
                if self.documents <= 1 {
                    self.root = Some(node);
                }
            }
            Some(Frame::Seq { items, .. }) => items.push(node),
            Some(Frame::Map {
                entries,
                pending_key,
                merges,
                merge_pending,
                ..
            }) => {
                if *merge_pending {
                    *merge_pending = false;
                    merges.push(node);
                } else if let Some(key) = pending_key.take() {
                    entries.push(Entry { key, value: node });
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

    /// PyYAML's merge: merged keys come first, later sources override earlier
    /// ones, explicit keys override merged ones.
    fn apply_merges(&mut self, explicit: Vec<Entry>, merges: Vec<Node>) -> Vec<Entry> {
        if merges.is_empty() {
            return explicit;
        }
        let mut merged: Vec<Entry> = Vec::new();
        for source in merges {
            let sources: Vec<Node> = match source.kind {
                NodeKind::Map(_) => vec![source],
                NodeKind::Seq(items) => items,
                NodeKind::Invalid => continue,
                NodeKind::Scalar(_) => {
                    self.report(
                        Rule::InvalidScalar,
                        source.range,
                        "expected a mapping or list of mappings for merging, but found a scalar; `<<` takes an alias of a mapping (`<<: *base`)",
                    );
                    continue;
                }
            };
            for item in sources {
                match item.kind {
                    NodeKind::Map(entries) => {
                        for entry in entries {
                            let key = entry.key.as_scalar().map(|s| s.value.hash_key());
                            if key.is_some() {
                                merged.retain(|e| e.key.as_scalar().map(|s| s.value.hash_key()) != key);
                            }
                            merged.push(entry);
                        }
                    }
                    NodeKind::Invalid => {}
                    _ => self.report(
                        Rule::InvalidScalar,
                        item.range,
                        "expected a mapping for merging; every item of a `<<` list must be an alias of a mapping",
                    ),
                }
            }
        }
        let explicit_keys: Vec<String> = explicit
            .iter()
            .filter_map(|e| e.key.as_scalar().map(|s| s.value.hash_key()))
            .collect();
        merged.retain(|e| {
            e.key
                .as_scalar()
                .map(|s| !explicit_keys.contains(&s.value.hash_key()))
                .unwrap_or(true)
        });
        merged.extend(explicit);
        merged
    }

    fn report_duplicates(&mut self, entries: &[Entry]) {
        if entries.len() < 2 {
            return;
        }
        let mut found = Vec::new();
        if entries.len() <= 64 {
            // Small mappings (nearly all): pairwise, without allocating keys.
            for (i, entry) in entries.iter().enumerate() {
                let Some(key) = entry.key.as_scalar() else {
                    continue;
                };
                if let Some(first) = entries[..i].iter().find(|e| {
                    e.key
                        .as_scalar()
                        .is_some_and(|k| same_key(&k.value, &key.value))
                }) {
                    found.push((entry.key.range, first.key.range, key.value.python_str()));
                }
            }
        } else {
            let mut seen: HashMap<String, TextRange> = HashMap::new();
            for entry in entries {
                let Some(scalar) = entry.key.as_scalar() else {
                    continue;
                };
                if let Some(first) = seen.get(&scalar.value.hash_key()) {
                    found.push((entry.key.range, *first, scalar.value.python_str()));
                } else {
                    seen.insert(scalar.value.hash_key(), entry.key.range);
                }
            }
        }
        for (range, first, name) in found {
            let diagnostic = Diagnostic::new(
                Rule::DuplicateKey,
                self.file,
                range,
                format!("duplicate key `{name}`: YAML keeps only this last value and silently drops the earlier one; remove one of them"),
            )
            .with_related(self.file, first, "first written here");
            self.diagnostics.push(diagnostic);
        }
    }
}

/// Python dict-key equality of two scalars (`1 == True == 1.0`), cheaply for strings.
fn same_key(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Str(x), Value::Str(y)) => x == y,
        (Value::Str(_), _) | (_, Value::Str(_)) => false,
        _ => a.hash_key() == b.hash_key(),
    }
}

fn core_tag(tag: &saphyr_parser::Tag) -> Option<&str> {
    if tag.handle == "!!" {
        Some(tag.suffix.as_str())
    } else if (tag.handle == "!" && tag.suffix.is_empty())
        || (tag.handle.is_empty() && tag.suffix == "!")
    {
        Some("")
    } else if tag.handle.is_empty() || tag.handle == "!" {
        tag.suffix.strip_prefix("tag:yaml.org,2002:")
    } else {
        tag.handle
            .strip_prefix("tag:yaml.org,2002:")
            .filter(|rest| rest.is_empty())
            .map(|_| tag.suffix.as_str())
    }
}

/// The range of a quoted scalar, ending just after its closing quote.
fn quoted_range(text: &str, base: u32, range: TextRange) -> TextRange {
    let start = (range.start - base) as usize;
    let end = ((range.end - base) as usize).min(text.len());
    let bytes = text.as_bytes();
    let Some(&quote) = bytes.get(start) else {
        return range;
    };
    let mut i = start + 1;
    while i < end {
        match bytes[i] {
            b'\\' if quote == b'"' => i += 2,
            b'\'' if quote == b'\'' && bytes.get(i + 1) == Some(&b'\'') => i += 2,
            b if b == quote => return TextRange::new(range.start, base + i as u32 + 1),
            _ => i += 1,
        }
    }
    trim_range(text, base, range)
}

fn trim_range(text: &str, base: u32, range: TextRange) -> TextRange {
    let start = (range.start - base) as usize;
    let end = ((range.end - base) as usize).min(text.len());
    if start >= end || !text.is_char_boundary(start) || !text.is_char_boundary(end) {
        return range;
    }
    let trimmed = text[start..end].trim_end();
    TextRange::new(range.start, range.start + trimmed.len() as u32)
}

fn next_char_end(text: &str, at: u32) -> u32 {
    let at = at as usize;
    match text.get(at..).and_then(|rest| rest.chars().next()) {
        Some('\n') | Some('\r') | None => at as u32,
        Some(c) => (at + c.len_utf8()) as u32,
    }
}
