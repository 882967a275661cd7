//! Tokens → events, by PyYAML's parser rules: its states, its directive and
//! tag-handle rules, its empty scalars, and its errors in its words. Events
//! carry the byte ranges of the nodes they start (anchor and tag included).

use super::scanner::{Directive, Mark, Scanner, Token, TokenKind, YamlError};
use crate::syntax::scalar::ScalarStyle;

#[derive(Debug, Clone, PartialEq)]
pub(super) enum EventKind {
    StreamStart,
    StreamEnd,
    DocumentStart,
    DocumentEnd,
    Alias(String),
    Scalar {
        anchor: Option<String>,
        /// The resolved tag (`tag:yaml.org,2002:str`, `!local`, `!`).
        tag: Option<String>,
        /// Plain and untagged, or tagged `!`: the resolver reads the value.
        implicit: bool,
        value: String,
        style: ScalarStyle,
    },
    SequenceStart {
        anchor: Option<String>,
        tag: Option<String>,
        flow: bool,
    },
    SequenceEnd,
    MappingStart {
        anchor: Option<String>,
        tag: Option<String>,
        flow: bool,
    },
    MappingEnd,
}

#[derive(Debug, Clone, PartialEq)]
pub(super) struct Event {
    pub kind: EventKind,
    pub start: Mark,
    pub end: Mark,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum State {
    StreamStart,
    ImplicitDocumentStart,
    DocumentStart,
    DocumentEnd,
    DocumentContent,
    BlockNode,
    BlockSequenceFirstEntry,
    BlockSequenceEntry,
    IndentlessSequenceEntry,
    BlockMappingFirstKey,
    BlockMappingKey,
    BlockMappingValue,
    FlowSequenceFirstEntry,
    FlowSequenceEntry,
    FlowSequenceEntryMappingKey,
    FlowSequenceEntryMappingValue,
    FlowSequenceEntryMappingEnd,
    FlowMappingFirstKey,
    FlowMappingKey,
    FlowMappingValue,
    FlowMappingEmptyValue,
    End,
}

pub(super) struct Parser<'t> {
    scanner: Scanner<'t>,
    state: State,
    states: Vec<State>,
    marks: Vec<Mark>,
    /// `%TAG` handles of the current document, after PyYAML's defaults.
    tag_handles: Vec<(String, String)>,
}

type Parse<T> = Result<T, YamlError>;

fn error(context: &'static str, context_mark: Mark, problem: String, at: Mark) -> YamlError {
    YamlError {
        context: Some(context),
        context_mark: Some(context_mark),
        problem,
        problem_mark: at,
        too_deep: false,
    }
}

fn plain_error(problem: String, at: Mark) -> YamlError {
    YamlError {
        context: None,
        context_mark: None,
        problem,
        problem_mark: at,
        too_deep: false,
    }
}

fn default_tag_handles() -> Vec<(String, String)> {
    vec![
        ("!".to_string(), "!".to_string()),
        ("!!".to_string(), "tag:yaml.org,2002:".to_string()),
    ]
}

impl<'t> Parser<'t> {
    pub(super) fn new(text: &'t str) -> Parser<'t> {
        Parser {
            scanner: Scanner::new(text),
            state: State::StreamStart,
            states: Vec::new(),
            marks: Vec::new(),
            tag_handles: default_tag_handles(),
        }
    }

    /// The next event; `None` after the stream's end.
    pub(super) fn next_event(&mut self) -> Parse<Option<Event>> {
        if self.state == State::End {
            return Ok(None);
        }
        self.step().map(Some)
    }

    fn peek(&mut self) -> Parse<&Token> {
        self.scanner.peek_token()
    }

    fn peek_kind(&mut self) -> Parse<&TokenKind> {
        Ok(&self.scanner.peek_token()?.kind)
    }

    fn next(&mut self) -> Parse<Token> {
        self.scanner.next_token()
    }

    fn pop_state(&mut self) -> State {
        self.states.pop().unwrap_or(State::End)
    }

    fn event(kind: EventKind, start: Mark, end: Mark) -> Event {
        Event { kind, start, end }
    }

    fn empty_scalar(mark: Mark) -> Event {
        Self::event(
            EventKind::Scalar {
                anchor: None,
                tag: None,
                implicit: true,
                value: String::new(),
                style: ScalarStyle::Plain,
            },
            mark,
            mark,
        )
    }

    fn step(&mut self) -> Parse<Event> {
        match self.state {
            State::StreamStart => {
                let token = self.next()?;
                self.state = State::ImplicitDocumentStart;
                Ok(Self::event(EventKind::StreamStart, token.start, token.end))
            }
            State::ImplicitDocumentStart => {
                if matches!(
                    self.peek_kind()?,
                    TokenKind::Directive(_) | TokenKind::DocumentStart | TokenKind::StreamEnd
                ) {
                    return self.document_start();
                }
                self.tag_handles = default_tag_handles();
                let mark = self.peek()?.start;
                self.states.push(State::DocumentEnd);
                self.state = State::BlockNode;
                Ok(Self::event(EventKind::DocumentStart, mark, mark))
            }
            State::DocumentStart => self.document_start(),
            State::DocumentEnd => {
                let token = self.peek()?;
                let (start, mut end) = (token.start, token.start);
                if matches!(token.kind, TokenKind::DocumentEnd) {
                    end = self.next()?.end;
                }
                self.state = State::DocumentStart;
                Ok(Self::event(EventKind::DocumentEnd, start, end))
            }
            State::DocumentContent => {
                if matches!(
                    self.peek_kind()?,
                    TokenKind::Directive(_)
                        | TokenKind::DocumentStart
                        | TokenKind::DocumentEnd
                        | TokenKind::StreamEnd
                ) {
                    let mark = self.peek()?.start;
                    self.state = self.pop_state();
                    return Ok(Self::empty_scalar(mark));
                }
                self.node(true, false)
            }
            State::BlockNode => self.node(true, false),
            State::BlockSequenceFirstEntry => {
                let token = self.next()?;
                self.marks.push(token.start);
                self.block_sequence_entry()
            }
            State::BlockSequenceEntry => self.block_sequence_entry(),
            State::IndentlessSequenceEntry => {
                if matches!(self.peek_kind()?, TokenKind::BlockEntry) {
                    let token = self.next()?;
                    if !matches!(
                        self.peek_kind()?,
                        TokenKind::BlockEntry
                            | TokenKind::Key
                            | TokenKind::Value
                            | TokenKind::BlockEnd
                    ) {
                        self.states.push(State::IndentlessSequenceEntry);
                        return self.node(true, false);
                    }
                    self.state = State::IndentlessSequenceEntry;
                    return Ok(Self::empty_scalar(token.end));
                }
                let mark = self.peek()?.start;
                self.state = self.pop_state();
                Ok(Self::event(EventKind::SequenceEnd, mark, mark))
            }
            State::BlockMappingFirstKey => {
                let token = self.next()?;
                self.marks.push(token.start);
                self.block_mapping_key()
            }
            State::BlockMappingKey => self.block_mapping_key(),
            State::BlockMappingValue => {
                if matches!(self.peek_kind()?, TokenKind::Value) {
                    let token = self.next()?;
                    if !matches!(
                        self.peek_kind()?,
                        TokenKind::Key | TokenKind::Value | TokenKind::BlockEnd
                    ) {
                        self.states.push(State::BlockMappingKey);
                        return self.node(true, true);
                    }
                    self.state = State::BlockMappingKey;
                    return Ok(Self::empty_scalar(token.end));
                }
                self.state = State::BlockMappingKey;
                let mark = self.peek()?.start;
                Ok(Self::empty_scalar(mark))
            }
            State::FlowSequenceFirstEntry => {
                let token = self.next()?;
                self.marks.push(token.start);
                self.flow_sequence_entry(true)
            }
            State::FlowSequenceEntry => self.flow_sequence_entry(false),
            State::FlowSequenceEntryMappingKey => {
                let token = self.next()?;
                if !matches!(
                    self.peek_kind()?,
                    TokenKind::Value | TokenKind::FlowEntry | TokenKind::FlowSequenceEnd
                ) {
                    self.states.push(State::FlowSequenceEntryMappingValue);
                    return self.node(false, false);
                }
                self.state = State::FlowSequenceEntryMappingValue;
                Ok(Self::empty_scalar(token.end))
            }
            State::FlowSequenceEntryMappingValue => self.flow_value(
                TokenKind::FlowSequenceEnd,
                State::FlowSequenceEntryMappingEnd,
            ),
            State::FlowSequenceEntryMappingEnd => {
                self.state = State::FlowSequenceEntry;
                let mark = self.peek()?.start;
                Ok(Self::event(EventKind::MappingEnd, mark, mark))
            }
            State::FlowMappingFirstKey => {
                let token = self.next()?;
                self.marks.push(token.start);
                self.flow_mapping_key(true)
            }
            State::FlowMappingKey => self.flow_mapping_key(false),
            State::FlowMappingValue => {
                self.flow_value(TokenKind::FlowMappingEnd, State::FlowMappingKey)
            }
            State::FlowMappingEmptyValue => {
                self.state = State::FlowMappingKey;
                let mark = self.peek()?.start;
                Ok(Self::empty_scalar(mark))
            }
            State::End => Err(plain_error("no more events".into(), self.peek()?.start)),
        }
    }

    fn document_start(&mut self) -> Parse<Event> {
        while matches!(self.peek_kind()?, TokenKind::DocumentEnd) {
            self.next()?;
        }
        if matches!(self.peek_kind()?, TokenKind::StreamEnd) {
            let token = self.next()?;
            self.state = State::End;
            return Ok(Self::event(EventKind::StreamEnd, token.start, token.end));
        }
        let start = self.peek()?.start;
        self.process_directives()?;
        let token = self.peek()?;
        if !matches!(token.kind, TokenKind::DocumentStart) {
            return Err(plain_error(
                format!("expected '<document start>', but found {}", token.kind.id()),
                token.start,
            ));
        }
        let token = self.next()?;
        self.states.push(State::DocumentEnd);
        self.state = State::DocumentContent;
        Ok(Self::event(EventKind::DocumentStart, start, token.end))
    }

    fn process_directives(&mut self) -> Parse<()> {
        let mut version_seen = false;
        let mut handles: Vec<(String, String)> = Vec::new();
        while matches!(self.peek_kind()?, TokenKind::Directive(_)) {
            let token = self.next()?;
            match token.kind {
                TokenKind::Directive(Directive::Yaml(major, _)) => {
                    if version_seen {
                        return Err(plain_error(
                            "found duplicate YAML directive".into(),
                            token.start,
                        ));
                    }
                    if major != 1 {
                        return Err(plain_error(
                            "found incompatible YAML document (version 1.* is required)".into(),
                            token.start,
                        ));
                    }
                    version_seen = true;
                }
                TokenKind::Directive(Directive::Tag(handle, prefix)) => {
                    if handles.iter().any(|(h, _)| *h == handle) {
                        return Err(plain_error(
                            format!("duplicate tag handle {}", py_str(&handle)),
                            token.start,
                        ));
                    }
                    handles.push((handle, prefix));
                }
                _ => {}
            }
        }
        for (handle, prefix) in default_tag_handles() {
            if !handles.iter().any(|(h, _)| *h == handle) {
                handles.push((handle, prefix));
            }
        }
        self.tag_handles = handles;
        Ok(())
    }

    fn node(&mut self, block: bool, indentless_sequence: bool) -> Parse<Event> {
        if matches!(self.peek_kind()?, TokenKind::Alias(_)) {
            let token = self.next()?;
            self.state = self.pop_state();
            let TokenKind::Alias(name) = token.kind else {
                unreachable!()
            };
            return Ok(Self::event(EventKind::Alias(name), token.start, token.end));
        }
        let mut anchor = None;
        let mut tag_parts = None;
        let mut start = None;
        let mut end = None;
        let mut tag_mark = None;
        match self.peek_kind()? {
            TokenKind::Anchor(_) => {
                let token = self.next()?;
                start = Some(token.start);
                end = Some(token.end);
                if let TokenKind::Anchor(name) = token.kind {
                    anchor = Some(name);
                }
                if matches!(self.peek_kind()?, TokenKind::Tag(..)) {
                    let token = self.next()?;
                    tag_mark = Some(token.start);
                    end = Some(token.end);
                    if let TokenKind::Tag(handle, suffix) = token.kind {
                        tag_parts = Some((handle, suffix));
                    }
                }
            }
            TokenKind::Tag(..) => {
                let token = self.next()?;
                start = Some(token.start);
                tag_mark = Some(token.start);
                end = Some(token.end);
                if let TokenKind::Tag(handle, suffix) = token.kind {
                    tag_parts = Some((handle, suffix));
                }
                if matches!(self.peek_kind()?, TokenKind::Anchor(_)) {
                    let token = self.next()?;
                    end = Some(token.end);
                    if let TokenKind::Anchor(name) = token.kind {
                        anchor = Some(name);
                    }
                }
            }
            _ => {}
        }
        let tag = match tag_parts {
            None => None,
            Some((None, suffix)) => Some(suffix),
            Some((Some(handle), suffix)) => {
                match self.tag_handles.iter().find(|(h, _)| *h == handle) {
                    Some((_, prefix)) => Some(format!("{prefix}{suffix}")),
                    None => {
                        return Err(error(
                            "while parsing a node",
                            start.unwrap_or_default(),
                            format!("found undefined tag handle {}", py_str(&handle)),
                            tag_mark.unwrap_or_default(),
                        ))
                    }
                }
            }
        };
        let (start, end) = match start {
            Some(start) => (start, end.unwrap_or(start)),
            None => {
                let mark = self.peek()?.start;
                (mark, mark)
            }
        };
        let non_specific = tag.is_none() || tag.as_deref() == Some("!");
        if indentless_sequence && matches!(self.peek_kind()?, TokenKind::BlockEntry) {
            let end = self.peek()?.end;
            self.state = State::IndentlessSequenceEntry;
            return Ok(Self::event(
                EventKind::SequenceStart {
                    anchor,
                    tag,
                    flow: false,
                },
                start,
                end,
            ));
        }
        if matches!(self.peek_kind()?, TokenKind::Scalar { .. }) {
            let token = self.next()?;
            let TokenKind::Scalar {
                value,
                plain,
                style,
            } = token.kind
            else {
                unreachable!()
            };
            let implicit = (plain && tag.is_none()) || tag.as_deref() == Some("!");
            self.state = self.pop_state();
            return Ok(Self::event(
                EventKind::Scalar {
                    anchor,
                    tag,
                    implicit,
                    value,
                    style,
                },
                start,
                token.end,
            ));
        }
        // A collection opens: a flow one's event ends after its bracket, a
        // block one's is empty.
        let opened = match self.peek_kind()? {
            TokenKind::FlowSequenceStart => Some((true, true, State::FlowSequenceFirstEntry)),
            TokenKind::FlowMappingStart => Some((false, true, State::FlowMappingFirstKey)),
            TokenKind::BlockSequenceStart if block => {
                Some((true, false, State::BlockSequenceFirstEntry))
            }
            TokenKind::BlockMappingStart if block => {
                Some((false, false, State::BlockMappingFirstKey))
            }
            _ => None,
        };
        if let Some((sequence, flow, state)) = opened {
            let token = self.peek()?;
            let end = if flow { token.end } else { token.start };
            self.state = state;
            let kind = if sequence {
                EventKind::SequenceStart { anchor, tag, flow }
            } else {
                EventKind::MappingStart { anchor, tag, flow }
            };
            return Ok(Self::event(kind, start, end));
        }
        // Not a scalar nor a collection: what is cloned holds no text.
        let kind = self.peek_kind()?.clone();
        match kind {
            _ if anchor.is_some() || tag.is_some() => {
                // An empty scalar may carry an anchor or a tag.
                self.state = self.pop_state();
                Ok(Self::event(
                    EventKind::Scalar {
                        anchor,
                        tag,
                        implicit: non_specific,
                        value: String::new(),
                        style: ScalarStyle::Plain,
                    },
                    start,
                    end,
                ))
            }
            other => {
                let at = self.peek()?.start;
                Err(error(
                    if block {
                        "while parsing a block node"
                    } else {
                        "while parsing a flow node"
                    },
                    start,
                    format!("expected the node content, but found {}", other.id()),
                    at,
                ))
            }
        }
    }

    /// A value in flow context (after a key in `{…}`, or of a single pair
    /// in `[…]`): the node after `:`, or an empty scalar; then `next`.
    fn flow_value(&mut self, end: TokenKind, next: State) -> Parse<Event> {
        self.state = next;
        if !matches!(self.peek_kind()?, TokenKind::Value) {
            let mark = self.peek()?.start;
            return Ok(Self::empty_scalar(mark));
        }
        let token = self.next()?;
        let kind = self.peek_kind()?;
        if matches!(kind, TokenKind::FlowEntry) || *kind == end {
            return Ok(Self::empty_scalar(token.end));
        }
        self.states.push(next);
        self.node(false, false)
    }

    fn block_sequence_entry(&mut self) -> Parse<Event> {
        if matches!(self.peek_kind()?, TokenKind::BlockEntry) {
            let token = self.next()?;
            if !matches!(
                self.peek_kind()?,
                TokenKind::BlockEntry | TokenKind::BlockEnd
            ) {
                self.states.push(State::BlockSequenceEntry);
                return self.node(true, false);
            }
            self.state = State::BlockSequenceEntry;
            return Ok(Self::empty_scalar(token.end));
        }
        self.block_end("while parsing a block collection", EventKind::SequenceEnd)
    }

    fn block_mapping_key(&mut self) -> Parse<Event> {
        if matches!(self.peek_kind()?, TokenKind::Key) {
            let token = self.next()?;
            if !matches!(
                self.peek_kind()?,
                TokenKind::Key | TokenKind::Value | TokenKind::BlockEnd
            ) {
                self.states.push(State::BlockMappingValue);
                return self.node(true, true);
            }
            self.state = State::BlockMappingValue;
            return Ok(Self::empty_scalar(token.end));
        }
        self.block_end("while parsing a block mapping", EventKind::MappingEnd)
    }

    /// The end of a block collection: its `<block end>` token, or PyYAML's
    /// error naming what came instead.
    fn block_end(&mut self, context: &'static str, end: EventKind) -> Parse<Event> {
        let context_mark = self.context_mark();
        let token = self.peek()?;
        if !matches!(token.kind, TokenKind::BlockEnd) {
            return Err(error(
                context,
                context_mark,
                format!("expected <block end>, but found {}", token.kind.id()),
                token.start,
            ));
        }
        self.close_collection(end)
    }

    /// Where the collection being parsed started (PyYAML's `marks[-1]`).
    fn context_mark(&self) -> Mark {
        self.marks.last().copied().unwrap_or_default()
    }

    /// A collection's closing token: its end event, back to the state
    /// that opened it.
    fn close_collection(&mut self, end: EventKind) -> Parse<Event> {
        let token = self.next()?;
        self.state = self.pop_state();
        self.marks.pop();
        Ok(Self::event(end, token.start, token.end))
    }

    /// Between two entries of a flow collection: the `,` PyYAML requires,
    /// or its error naming what came instead.
    fn flow_entry_separator(&mut self, context: &'static str, closer: char) -> Parse<()> {
        if matches!(self.peek_kind()?, TokenKind::FlowEntry) {
            self.next()?;
            return Ok(());
        }
        let context_mark = self.context_mark();
        let token = self.peek()?;
        Err(error(
            context,
            context_mark,
            format!("expected ',' or '{closer}', but got {}", token.kind.id()),
            token.start,
        ))
    }

    fn flow_sequence_entry(&mut self, first: bool) -> Parse<Event> {
        if !matches!(self.peek_kind()?, TokenKind::FlowSequenceEnd) {
            if !first {
                self.flow_entry_separator("while parsing a flow sequence", ']')?;
            }
            let token = self.peek()?;
            if matches!(token.kind, TokenKind::Key) {
                let (start, end) = (token.start, token.end);
                self.state = State::FlowSequenceEntryMappingKey;
                return Ok(Self::event(
                    EventKind::MappingStart {
                        anchor: None,
                        tag: None,
                        flow: true,
                    },
                    start,
                    end,
                ));
            }
            if !matches!(token.kind, TokenKind::FlowSequenceEnd) {
                self.states.push(State::FlowSequenceEntry);
                return self.node(false, false);
            }
        }
        self.close_collection(EventKind::SequenceEnd)
    }

    fn flow_mapping_key(&mut self, first: bool) -> Parse<Event> {
        if !matches!(self.peek_kind()?, TokenKind::FlowMappingEnd) {
            if !first {
                self.flow_entry_separator("while parsing a flow mapping", '}')?;
            }
            if matches!(self.peek_kind()?, TokenKind::Key) {
                let token = self.next()?;
                if !matches!(
                    self.peek_kind()?,
                    TokenKind::Value | TokenKind::FlowEntry | TokenKind::FlowMappingEnd
                ) {
                    self.states.push(State::FlowMappingValue);
                    return self.node(false, false);
                }
                self.state = State::FlowMappingValue;
                return Ok(Self::empty_scalar(token.end));
            }
            if !matches!(self.peek_kind()?, TokenKind::FlowMappingEnd) {
                self.states.push(State::FlowMappingEmptyValue);
                return self.node(false, false);
            }
        }
        self.close_collection(EventKind::MappingEnd)
    }
}

/// Python's `repr()` of a string, as PyYAML's messages show it (enough for
/// tag handles, which hold no quotes or escapes).
fn py_str(s: &str) -> String {
    format!("'{s}'")
}
