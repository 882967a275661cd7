//! YAML text → a tree where every key, value and item carries its byte range,
//! with PyYAML's (YAML 1.1, `safe_load`) reading of scalars, merge keys and
//! aliases, and every problem reported as a diagnostic instead of a panic.

use std::borrow::Cow;
use std::collections::HashMap;

use saphyr_parser::{Event, Parser, ScalarStyle as SaphyrStyle, Span};

use super::scalar::{resolve_plain, resolve_tagged, Resolved, ScalarStyle, Value};
use super::yaml_errors::{self, Verdict};
use super::TextRange;
use crate::diagnostics::{Diagnostic, FileId};
use crate::limits::{MAX_ALIAS_EXPANSION, MAX_FILE_BYTES, MAX_REWRITTEN_SCALARS, MAX_YAML_DEPTH};

/// Why the builder stopped before the end.
enum Stop {
    /// A syntax error, already reported.
    Failed,
    /// See [`Verdict::AcceptQuoted`] (local byte offsets).
    AcceptQuoted { start: usize, end: usize },
}
use crate::rules::Rule;

/// A node an anchor names, measured once for the aliases that copy it.
struct Anchored {
    node: Node,
    size: usize,
    height: usize,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub range: TextRange,
    pub kind: NodeKind,
}

#[derive(Debug, Clone, PartialEq)]
pub enum NodeKind {
    Scalar(Scalar),
    Seq(Vec<Node>),
    Map(Vec<Entry>),
    /// A value that could not be constructed; already reported, so later layers
    /// stay silent about it.
    Invalid,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Scalar {
    pub style: ScalarStyle,
    pub value: Value,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub key: Node,
    pub value: Node,
}

impl Node {
    pub fn as_map(&self) -> Option<&[Entry]> {
        match &self.kind {
            NodeKind::Map(entries) => Some(entries),
            _ => None,
        }
    }

    pub fn as_seq(&self) -> Option<&[Node]> {
        match &self.kind {
            NodeKind::Seq(items) => Some(items),
            _ => None,
        }
    }

    pub fn as_scalar(&self) -> Option<&Scalar> {
        match &self.kind {
            NodeKind::Scalar(s) => Some(s),
            _ => None,
        }
    }

    /// The string value of a string scalar.
    pub fn as_str(&self) -> Option<&str> {
        self.as_scalar().and_then(|s| s.value.as_str())
    }

    pub fn is_null(&self) -> bool {
        matches!(
            &self.kind,
            NodeKind::Scalar(Scalar {
                value: Value::Null,
                ..
            })
        )
    }

    /// Looks up a string key in a mapping; the last occurrence wins, as in PyYAML.
    pub fn get(&self, key: &str) -> Option<&Node> {
        self.entry(key).map(|e| &e.value)
    }

    pub fn entry(&self, key: &str) -> Option<&Entry> {
        self.as_map()?
            .iter()
            .rev()
            .find(|e| e.key.as_str() == Some(key))
    }

    /// A short description of what the node is, for messages.
    pub fn type_name(&self) -> &'static str {
        match &self.kind {
            NodeKind::Scalar(s) => s.value.type_name(),
            NodeKind::Seq(_) => "list",
            NodeKind::Map(_) => "mapping",
            NodeKind::Invalid => "invalid value",
        }
    }

    /// Collections nested in this node, itself included (0 for a scalar).
    /// Like every recursive pass over a tree, it relies on the nesting limit.
    fn height(&self) -> usize {
        match &self.kind {
            NodeKind::Seq(items) => 1 + items.iter().map(Node::height).max().unwrap_or(0),
            NodeKind::Map(entries) => {
                1 + entries
                    .iter()
                    .map(|e| e.key.height().max(e.value.height()))
                    .max()
                    .unwrap_or(0)
            }
            _ => 0,
        }
    }

    fn size(&self) -> usize {
        match &self.kind {
            NodeKind::Seq(items) => 1 + items.iter().map(Node::size).sum::<usize>(),
            NodeKind::Map(entries) => {
                1 + entries
                    .iter()
                    .map(|e| e.key.size() + e.value.size())
                    .sum::<usize>()
            }
            _ => 1,
        }
    }

    /// Python's `str()` of the value this node loads as (used by lax text fields).
    pub fn python_str(&self) -> String {
        match &self.kind {
            NodeKind::Scalar(s) => s.value.python_str(),
            _ => self.python_repr(),
        }
    }

    fn python_repr(&self) -> String {
        match &self.kind {
            NodeKind::Scalar(s) => s.value.python_repr(),
            NodeKind::Seq(items) => {
                let parts: Vec<String> = items.iter().map(Node::python_repr).collect();
                format!("[{}]", parts.join(", "))
            }
            NodeKind::Map(entries) => {
                let parts: Vec<String> = entries
                    .iter()
                    .map(|e| format!("{}: {}", e.key.python_repr(), e.value.python_repr()))
                    .collect();
                format!("{{{}}}", parts.join(", "))
            }
            NodeKind::Invalid => "None".into(),
        }
    }
}

/// The result of parsing one YAML file.
#[derive(Debug, Clone, PartialEq)]
pub struct YamlDocument {
    /// `None` for an empty document or when the file could not be parsed.
    pub root: Option<Node>,
    /// Set when the file failed to parse (the root is then unusable).
    pub failed: bool,
}

/// Parses YAML text. Problems are pushed to `diagnostics`; the function never
/// panics and its time is linear in the input for all practical purposes.
pub fn parse(text: &str, file: FileId, diagnostics: &mut Vec<Diagnostic>) -> YamlDocument {
    let failed = |diagnostics: &mut Vec<Diagnostic>, rule, range, message: String| {
        diagnostics.push(Diagnostic::new(rule, file, range, message));
        YamlDocument {
            root: None,
            failed: true,
        }
    };
    if text.len() > MAX_FILE_BYTES {
        return failed(
            diagnostics,
            Rule::FileTooLarge,
            TextRange::empty(0),
            format!(
                "file is {} bytes; mzk reads YAML files up to {} bytes. Split it or remove generated content",
                text.len(),
                MAX_FILE_BYTES
            ),
        );
    }
    // A BOM is skipped only at offset 0, as PyYAML does.
    let bom = if text.starts_with('\u{feff}') { 3 } else { 0 };
    let body = &text[bom..];
    if let Some((offset, ch)) = forbidden_char(body) {
        let start = (bom + offset) as u32;
        return failed(
            diagnostics,
            Rule::InvalidEncoding,
            TextRange::new(start, start + ch.len_utf8() as u32),
            format!(
                "unacceptable character #x{:04x}: special characters are not allowed in YAML; remove it or write it as an escape inside a double-quoted string",
                ch as u32
            ),
        );
    }
    // Quoted scalars PyYAML accepts but saphyr refuses (continuation lines
    // indented less than YAML 1.2 asks) are parsed again with their line
    // breaks blanked out, which keeps every offset; their values are then
    // read from the original text.
    let mut parsed: Cow<str> = Cow::Borrowed(body);
    let mut rewritten = Vec::new();
    loop {
        let mut builder = Builder::new(&parsed, body, bom as u32, file, &rewritten);
        let outcome = builder.run();
        match outcome {
            Err(Stop::AcceptQuoted { start, end }) if rewritten.len() < MAX_REWRITTEN_SCALARS => {
                let blanked: String = parsed[start..end]
                    .chars()
                    .map(|c| if matches!(c, '\n' | '\r') { ' ' } else { c })
                    .collect();
                parsed.to_mut().replace_range(start..end, &blanked);
                rewritten.push(bom as u32 + start as u32);
                continue;
            }
            Err(_) => {
                diagnostics.append(&mut builder.diagnostics);
                return YamlDocument {
                    root: None,
                    failed: true,
                };
            }
            Ok(root) => {
                diagnostics.append(&mut builder.diagnostics);
                check_tabs(body, bom as u32, &builder.exempt, file, diagnostics);
                return YamlDocument {
                    failed: builder.stopped,
                    root: if builder.stopped { None } else { root },
                };
            }
        }
    }
}

/// PyYAML's reader refuses everything outside
/// `[\x09\x0A\x0D\x20-\x7E\x85\xA0-\uD7FF\uE000-\uFFFD\U00010000-\U0010FFFF]`.
fn forbidden_char(text: &str) -> Option<(usize, char)> {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        // Fast path: printable ASCII, tab, LF and CR are always allowed.
        if b < 0x80 {
            if !(b == 0x09 || b == 0x0A || b == 0x0D || (0x20..=0x7E).contains(&b)) {
                return Some((i, b as char));
            }
            i += 1;
            continue;
        }
        let ch = text[i..].chars().next()?;
        let c = ch as u32;
        let allowed = c == 0x85
            || (0xA0..=0xD7FF).contains(&c)
            || (0xE000..=0xFFFD).contains(&c)
            || (0x10000..=0x10FFFF).contains(&c);
        // A BOM later in the file is kept as a character by PyYAML.
        if !allowed && c != 0xFEFF {
            return Some((i, ch));
        }
        i += ch.len_utf8();
    }
    None
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

struct Builder<'t> {
    /// The text saphyr parses: the file's, or with some line breaks blanked.
    text: &'t str,
    /// The file's own text, where rewritten scalars' values are read.
    original: &'t str,
    /// Where rewritten quoted scalars start (absolute byte offsets).
    rewritten: &'t [u32],
    offsets: Offsets,
    file: FileId,
    diagnostics: Vec<Diagnostic>,
    stack: Vec<Frame>,
    /// Anchored nodes with their size (for MZ003) and height (for MZ008).
    anchors: HashMap<usize, Anchored>,
    expansion: usize,
    expansion_reported: bool,
    documents: usize,
    root: Option<Node>,
    /// Byte ranges where a tab is legal (quoted and block scalars).
    exempt: Vec<TextRange>,
    /// Depth past the limit: events are skipped until the stack unwinds.
    skipping: usize,
    /// Set when a structural problem makes the document unusable.
    stopped: bool,
}

impl<'t> Builder<'t> {
    fn new(
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

    fn run(&mut self) -> Result<Option<Node>, Stop> {
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
        match yaml_errors::explain(self.text, info, (at - base) as usize, &legal) {
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
                if let Some((at, message)) = yaml_errors::name_error(self.text, local) {
                    let end = next_char_end(self.text, at as u32) + self.offsets.base;
                    let at = at as u32 + self.offsets.base;
                    self.report(
                        Rule::YamlSyntax,
                        TextRange::new(at, end),
                        format!("{message}{}", yaml_errors::FIX),
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
                    format!("{context}, but found ':': this `:` has no key before it; write the key{}", yaml_errors::FIX),
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
                yaml_errors::scan_quoted(self.text, local).err().map(|(at, problem)| {
                    (at as u32, format!("while scanning a double-quoted scalar, {problem}{}", yaml_errors::FIX))
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
        let end = yaml_errors::scan_quoted(self.original, local).ok()?;
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
                None => Err(super::scalar::ScalarError(format!(
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

/// PyYAML accepts no tab outside quoted scalars, block scalar content and
/// comments. saphyr (YAML 1.2) accepts some, so check separately.
fn check_tabs(
    text: &str,
    base: u32,
    exempt: &[TextRange],
    file: FileId,
    out: &mut Vec<Diagnostic>,
) {
    if !text.contains('\t') {
        return;
    }
    let legal: Vec<TextRange> = exempt
        .iter()
        .map(|r| TextRange::new(r.start - base, r.end - base))
        .collect();
    for tab in yaml_errors::illegal_tabs(text, &legal) {
        let at = base + tab as u32;
        out.push(Diagnostic::new(
            Rule::TabCharacter,
            file,
            TextRange::new(at, at + 1),
            "found character '\\t' that cannot start any token: YAML as mozaiks reads it allows no tabs outside quoted or block text; indent with spaces",
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_ok(text: &str) -> (Node, Vec<Diagnostic>) {
        let mut diags = Vec::new();
        let doc = parse(text, FileId(0), &mut diags);
        (doc.root.expect("root"), diags)
    }

    fn codes(text: &str) -> Vec<&'static str> {
        let mut diags = Vec::new();
        parse(text, FileId(0), &mut diags);
        diags.iter().map(|d| d.rule.code()).collect()
    }

    #[test]
    fn ranges_are_bytes_and_exact() {
        let text = "é: 'ü😀'\nlist:\n  - a\n  - {b: 1}\n";
        let (root, diags) = parse_ok(text);
        assert!(diags.is_empty());
        let e = &root.as_map().unwrap()[0];
        assert_eq!(
            &text[e.key.range.start as usize..e.key.range.end as usize],
            "é"
        );
        assert_eq!(
            &text[e.value.range.start as usize..e.value.range.end as usize],
            "'ü😀'"
        );
        let list = root.get("list").unwrap();
        assert_eq!(
            &text[list.range.start as usize..list.range.end as usize],
            "- a\n  - {b: 1}"
        );
        let flow = &list.as_seq().unwrap()[1];
        assert_eq!(
            &text[flow.range.start as usize..flow.range.end as usize],
            "{b: 1}"
        );
    }

    #[test]
    fn quoted_scalars_end_at_their_closing_quote() {
        let text = "a: \"x \\\" == 'd'\"   # comment\nb: 'it''s'  # c\n";
        let (root, _) = parse_ok(text);
        let a = root.get("a").unwrap().range;
        assert_eq!(&text[a.start as usize..a.end as usize], "\"x \\\" == 'd'\"");
        let b = root.get("b").unwrap().range;
        assert_eq!(&text[b.start as usize..b.end as usize], "'it''s'");
    }

    #[test]
    fn duplicate_keys_keep_the_last_value() {
        let (root, diags) = parse_ok("k: 1\nk: 2\n");
        assert_eq!(
            root.get("k").unwrap().as_scalar().unwrap().value,
            Value::Int(2)
        );
        assert_eq!(diags.len(), 1);
        assert_eq!(diags[0].rule, Rule::DuplicateKey);
        assert_eq!(diags[0].range, TextRange::new(5, 6));
        assert_eq!(diags[0].related[0].range, TextRange::new(0, 1));
        // yes and true are the same key to PyYAML.
        assert_eq!(codes("yes: 1\ntrue: 2\n"), vec!["MZ002"]);
    }

    #[test]
    fn merge_keys_follow_pyyaml() {
        let text = "base: &b {x: 1, name: p}\nother: &o {name: q}\nitem:\n  <<: [*b, *o]\n  x: 5\n";
        let (root, diags) = parse_ok(text);
        assert!(diags.is_empty(), "{diags:?}");
        let item = root.get("item").unwrap();
        assert_eq!(
            item.get("x").unwrap().as_scalar().unwrap().value,
            Value::Int(5)
        );
        assert_eq!(item.get("name").unwrap().as_str(), Some("q"));
    }

    #[test]
    fn alias_bomb_is_bounded() {
        let mut text = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..10 {
            let prev = format!("*a{}", i - 1);
            text.push_str(&format!(
                "a{i}: &a{i} [{}]\n",
                [prev.as_str(); 10].join(", ")
            ));
        }
        let started = std::time::Instant::now();
        let got = codes(&text);
        assert!(got.contains(&"MZ003"), "{got:?}");
        assert!(started.elapsed().as_secs() < 5);
    }

    #[test]
    fn syntax_problems_become_diagnostics() {
        assert_eq!(codes("a: b: c\n"), vec!["MZ001"]);
        assert_eq!(codes("a: 1\n---\nb: 2\n"), vec!["MZ004"]);
        assert_eq!(codes("a:\n\t- b\n"), vec!["MZ001"]);
        assert_eq!(codes("a:\tb\n"), vec!["MZ001"]);
        assert_eq!(codes("a: b\t# comment\n"), vec!["MZ006"]);
        assert_eq!(codes("a: [1,\tb]\n"), vec!["MZ006"]);
        assert_eq!(codes("a: \"x\ty\"\n# c\tomment\n"), Vec::<&str>::new());
        assert_eq!(codes("a: \u{7}\n"), vec!["MZ005"]);
        assert_eq!(codes("d: 2026-02-30\n"), vec!["MZ009"]);
        assert_eq!(codes("d: !custom x\n"), vec!["MZ009"]);
        assert_eq!(codes("a: *nowhere\n"), vec!["MZ001"]);
        // PyYAML refuses what saphyr accepts here.
        assert_eq!(codes("a: [x, >y]\n"), vec!["MZ001"]);
        assert_eq!(codes("a: &x 1\nb: *x.y\n"), vec!["MZ001"]);
        // A second document stops the reading, as in PyYAML, before its errors.
        assert_eq!(codes("a: 1\n---\n- b\n: c\n"), vec!["MZ004"]);
        for text in ["a: 1\n: b\n", "- : b\n", "a: {x: 1, : 2}\n"] {
            assert_eq!(codes(text), vec!["MZ001"], "{text:?}");
        }
        assert_eq!(codes("?\n: b\n"), Vec::<&str>::new());
        assert_eq!(codes("? [a]\n: b\n"), vec!["MZ009"]);
        assert_eq!(codes("{[a]: b}\n"), vec!["MZ009"]);
        // `!` alone is the non-specific tag: the node's default constructor.
        for text in [
            "a: !\n  b: 1\n",
            "a: ! [1]\n",
            "a: ! \"x\"\n",
            "a: !\nb: 1\n",
        ] {
            assert_eq!(codes(text), Vec::<&str>::new(), "{text:?}");
        }
    }

    #[test]
    fn quoted_scalars_pyyaml_accepts_keep_their_values() {
        // Continuation lines indented less than YAML 1.2 asks: PyYAML reads
        // these, folding line breaks as in any quoted scalar.
        let (root, diags) = parse_ok("a: \"foo\nbar\"\nb:\n  c: 'x\n\n y''s'\n  d: \"p\\\nq\"\n");
        assert!(diags.is_empty(), "{diags:?}");
        assert_eq!(root.get("a").and_then(Node::as_str), Some("foo bar"));
        let b = root.get("b").unwrap();
        assert_eq!(b.get("c").and_then(Node::as_str), Some("x\ny's"));
        assert_eq!(b.get("d").and_then(Node::as_str), Some("pq"));
        assert_eq!(root.get("a").unwrap().range, TextRange::new(3, 12));
        // Unclosed, the same scalar is PyYAML's "unexpected end of stream".
        let mut diags = Vec::new();
        parse("a: \"foo\nb: 1\n", FileId(0), &mut diags);
        assert_eq!(diags.len(), 1);
        assert_eq!(diags[0].range, TextRange::empty(13));
        assert!(diags[0].message.contains("found unexpected end of stream"));
    }

    #[test]
    fn bom_crlf_and_empty_documents() {
        let (root, diags) = parse_ok("\u{feff}a: 1\r\nb: yes\r\n");
        assert!(diags.is_empty());
        assert_eq!(
            root.get("b").unwrap().as_scalar().unwrap().value,
            Value::Bool(true)
        );
        assert_eq!(root.get("a").unwrap().range, TextRange::new(6, 7));
        let mut diags = Vec::new();
        assert_eq!(
            parse("# only a comment\n", FileId(0), &mut diags).root,
            None
        );
        assert!(diags.is_empty());
    }

    #[test]
    fn oversized_files_are_refused_before_parsing() {
        let text = "- v\n".repeat(MAX_FILE_BYTES / 4 + 1);
        assert_eq!(codes(&text), vec!["MZ007"]);
        let text = "- v\n".repeat(1000);
        assert!(codes(&text).is_empty());
    }

    #[test]
    fn deep_nesting_is_refused_not_recursed() {
        let text: String = (0..400).map(|i| format!("{}a:\n", " ".repeat(i))).collect();
        assert!(codes(&text).contains(&"MZ008"));
        let flow = format!("{}1{}", "[".repeat(5000), "]".repeat(5000));
        assert!(!codes(&flow).is_empty());
    }

    #[test]
    fn python_str_of_collections() {
        let (root, _) = parse_ok("a: [a, 1, yes]\nb: {a: 1}\n");
        assert_eq!(root.get("a").unwrap().python_str(), "['a', 1, True]");
        assert_eq!(root.get("b").unwrap().python_str(), "{'a': 1}");
    }
}
