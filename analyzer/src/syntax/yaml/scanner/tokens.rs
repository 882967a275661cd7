//! What the scanner produces: marks, tokens, directives, and its errors.

use crate::syntax::scalar::ScalarStyle;

/// A place in the text: its byte offset (what ranges use), and PyYAML's
/// character index, line and column (what its rules use).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(in crate::syntax::yaml) struct Mark {
    pub pos: u32,
    pub index: u32,
    pub line: u32,
    pub column: u32,
}

#[derive(Debug, Clone, PartialEq)]
pub(in crate::syntax::yaml) enum Directive {
    Yaml(u32, u32),
    Tag(String, String),
    Other,
}

#[derive(Debug, Clone, PartialEq)]
pub(in crate::syntax::yaml) enum TokenKind {
    StreamStart,
    StreamEnd,
    Directive(Directive),
    DocumentStart,
    DocumentEnd,
    BlockSequenceStart,
    BlockMappingStart,
    BlockEnd,
    FlowSequenceStart,
    FlowMappingStart,
    FlowSequenceEnd,
    FlowMappingEnd,
    BlockEntry,
    FlowEntry,
    Key,
    Value,
    Alias(String),
    Anchor(String),
    /// (handle, suffix); no handle for `!<verbatim>` and a lone `!`.
    Tag(Option<String>, String),
    Scalar {
        value: String,
        plain: bool,
        style: ScalarStyle,
    },
}

impl TokenKind {
    /// PyYAML's name of the token as its messages show it (Python's `repr`).
    pub(in crate::syntax::yaml) fn id(&self) -> &'static str {
        match self {
            TokenKind::StreamStart => "'<stream start>'",
            TokenKind::StreamEnd => "'<stream end>'",
            TokenKind::Directive(_) => "'<directive>'",
            TokenKind::DocumentStart => "'<document start>'",
            TokenKind::DocumentEnd => "'<document end>'",
            TokenKind::BlockSequenceStart => "'<block sequence start>'",
            TokenKind::BlockMappingStart => "'<block mapping start>'",
            TokenKind::BlockEnd => "'<block end>'",
            TokenKind::FlowSequenceStart => "'['",
            TokenKind::FlowMappingStart => "'{'",
            TokenKind::FlowSequenceEnd => "']'",
            TokenKind::FlowMappingEnd => "'}'",
            TokenKind::BlockEntry => "'-'",
            TokenKind::FlowEntry => "','",
            TokenKind::Key => "'?'",
            TokenKind::Value => "':'",
            TokenKind::Alias(_) => "'<alias>'",
            TokenKind::Anchor(_) => "'<anchor>'",
            TokenKind::Tag(..) => "'<tag>'",
            TokenKind::Scalar { .. } => "'<scalar>'",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub(in crate::syntax::yaml) struct Token {
    pub kind: TokenKind,
    pub start: Mark,
    pub end: Mark,
}

/// A refusal, as PyYAML raises it: an optional context ("while scanning a
/// quoted scalar") with its mark, and the problem at the place it names.
#[derive(Debug, Clone, PartialEq)]
pub(in crate::syntax::yaml) struct YamlError {
    pub context: Option<&'static str>,
    pub context_mark: Option<Mark>,
    pub problem: String,
    pub problem_mark: Mark,
    /// Nesting past mzk's limit (MZ008), not a PyYAML error.
    pub too_deep: bool,
}

impl YamlError {
    pub(super) fn new(
        context: Option<&'static str>,
        context_mark: Option<Mark>,
        problem: String,
        at: Mark,
    ) -> Self {
        YamlError {
            context,
            context_mark,
            problem,
            problem_mark: at,
            too_deep: false,
        }
    }
}

pub(super) type Scan<T> = Result<T, YamlError>;

/// What a URI belongs to: PyYAML words its errors after it.
#[derive(Clone, Copy)]
pub(super) enum UriOf {
    Tag,
    Directive,
}

impl UriOf {
    pub(super) fn parsing(self) -> &'static str {
        match self {
            UriOf::Tag => "while parsing a tag",
            UriOf::Directive => "while parsing a directive",
        }
    }

    pub(super) fn scanning(self) -> &'static str {
        match self {
            UriOf::Tag => "while scanning a tag",
            UriOf::Directive => "while scanning a directive",
        }
    }
}
