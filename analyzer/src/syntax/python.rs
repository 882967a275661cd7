//! Python tool, hook and middleware files, read and never imported:
//! top-level functions with their parameters (parsed with ruff's parser),
//! imported and assigned names, string literals, and
//! whether Python can compile the module (`python_validity`).

use ruff_python_ast::{self as ast, Stmt};
use ruff_text_size::Ranged;

use super::python_effects::ModuleEffects;
use super::python_strings::{string_literal_end, Unclosed};
use super::python_validity;
pub use super::python_validity::SyntaxError;
use crate::base::limits::{MAX_PYTHON_BRACKETS, MAX_PYTHON_INDENT};
use crate::base::TextRange;

/// How a parameter can be passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamKind {
    PositionalOnly,
    PositionalOrKeyword,
    KeywordOnly,
    /// `*args`
    VarPositional,
    /// `**kwargs`
    VarKeyword,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Param {
    pub name: String,
    pub kind: ParamKind,
    pub has_default: bool,
    pub range: TextRange,
    /// The annotation as written (`str`, `list[str] | None`), if any.
    pub annotation: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Function {
    pub name: String,
    pub name_range: TextRange,
    pub is_async: bool,
    pub params: Vec<Param>,
    /// The docstring, cleaned as `inspect.cleandoc` does.
    pub docstring: Option<String>,
}

impl Function {
    pub fn param(&self, name: &str) -> Option<&Param> {
        self.params.iter().find(|p| p.name == name)
    }

    pub fn has_var_keyword(&self) -> bool {
        self.params.iter().any(|p| p.kind == ParamKind::VarKeyword)
    }
}

/// What a module defines at top level, as far as static reading can tell.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Module {
    /// Every module-level `def`, by name.
    pub defined: Vec<(String, TextRange)>,
    /// The docstring of each `defined` function, in the same order.
    pub docstrings: Vec<Option<String>>,
    /// The signatures of the functions asked for (see [`parse`]).
    pub functions: Vec<Function>,
    /// Names bound by `import` / `from … import` (the name as bound).
    pub imported: Vec<(String, TextRange)>,
    /// Names bound by top-level assignments.
    pub assigned: Vec<(String, TextRange)>,
    /// `context_variables.set("key", …)` calls with a literal key.
    pub context_writes: Vec<(String, TextRange)>,
    /// The first reason Python would refuse to compile the module.
    pub syntax_error: Option<SyntaxError>,
    /// What its functions do with their parameters; `None` when it does
    /// not compile or was not read whole.
    pub effects: Option<std::sync::Arc<ModuleEffects>>,
    /// The file is larger than the analyzer reads (MZ007): nothing above
    /// was read from it.
    pub too_large: bool,
}

impl Module {
    pub fn function(&self, name: &str) -> Option<&Function> {
        self.functions.iter().rev().find(|f| f.name == name)
    }
}

fn range(range: ruff_text_size::TextRange) -> TextRange {
    TextRange::new(range.start().to_u32(), range.end().to_u32())
}

fn text(range: ruff_text_size::TextRange, src: &str) -> &str {
    src.get(range.start().to_usize()..range.end().to_usize())
        .unwrap_or("")
}

/// Parses a Python source file. A fast pass splits it into logical lines
/// (strings, brackets, continuations and indentation, reporting lexical and
/// indentation errors) and finds the module-level `def`, `import` and
/// assignment lines; the bound `def` lines (and the imports, when a bound
/// name is not a `def`) are parsed as a small module of their own, for the
/// signatures. The whole module is parsed by ruff's parser, at about 45 MB/s,
/// for the syntax errors it may still hold.
pub fn parse(src: &str, wanted: &[&str]) -> Module {
    parse_reusing(src, wanted, None)
}

/// [`parse`], given the module `src` was parsed into for other wanted names
/// (the bundle renamed a bound function): whether Python can compile it
/// depends on the text alone, so the whole-module parse is not done again.
pub fn parse_reusing(src: &str, wanted: &[&str], same_text: Option<&Module>) -> Module {
    let mut module = parse_module(src, wanted, same_text);
    // Error ranges are found on bytes and on logical lines split at `\n`:
    // they are widened to whole characters and kept off the middle of a
    // `\r\n`, which no editor position can address.
    let bytes = src.as_bytes();
    let outside_crlf = |i: usize| {
        if i > 0 && bytes.get(i - 1) == Some(&b'\r') && bytes.get(i) == Some(&b'\n') {
            i - 1
        } else {
            i
        }
    };
    if let Some(SyntaxError { range: r, .. }) = &mut module.syntax_error {
        let mut start = (r.start as usize).min(src.len());
        while !src.is_char_boundary(start) {
            start -= 1;
        }
        let mut end = (r.end as usize).clamp(start, src.len());
        while !src.is_char_boundary(end) {
            end += 1;
        }
        let start = outside_crlf(start);
        *r = TextRange::new(start as u32, outside_crlf(end).max(start) as u32);
    }
    module
}

/// The module's first syntax error: the parser's or the fast pass's lexical
/// error, whichever comes first, as CPython's tokenizer raises its errors
/// when the parser reaches them (on 1,600 edited real modules this puts
/// MZ504 on CPython's line 93-95% of the time, against 90-92% for the
/// parser's error alone; tests/conformance/python_syntax.py). Past one of
/// Python's limits the fast pass's error stands alone: the rest of the file
/// is too deep to hand to a parser.
fn whole_module_error(
    src: &str,
    lines: &[LogicalLine],
    lexical: Option<LexicalError>,
) -> (Option<SyntaxError>, Option<std::sync::Arc<ModuleEffects>>) {
    let longest = match lexical {
        Some(error) if error.past_limit => None,
        // Lines stop at the error: bound the nesting by the whole file.
        Some(_) => Some(src.len()),
        None => Some(lines.iter().map(LogicalLine::code_bytes).max().unwrap_or(0)),
    };
    let (parsed, effects) = longest.map_or((None, None), |longest| {
        python_validity::check_and_read(src, longest)
    });
    let lexical = lexical.map(|error| SyntaxError {
        range: error.range,
        problem: error.problem.to_string(),
    });
    let error = match (parsed, lexical) {
        (Some(parsed), Some(lexical)) if lexical.range.start < parsed.range.start => Some(lexical),
        (parsed, lexical) => parsed.or(lexical),
    };
    let effects = effects.filter(|_| error.is_none()).map(std::sync::Arc::new);
    (error, effects)
}

fn parse_module(src: &str, wanted: &[&str], same_text: Option<&Module>) -> Module {
    let mut module = Module::default();
    let (lines, lexical_error) = logical_lines(src);
    (module.syntax_error, module.effects) = match same_text {
        Some(known) => (known.syntax_error.clone(), known.effects.clone()),
        None => whole_module_error(src, &lines, lexical_error),
    };
    // Module-level def and import lines: (line, opens a block).
    let mut defs: Vec<(&LogicalLine, bool)> = Vec::new();
    let mut imports: Vec<&LogicalLine> = Vec::new();
    // Enclosing block headers: (indent, transparent). Definitions inside
    // module-level `if`/`try`/`with` blocks are still module attributes.
    let mut blocks: Vec<(usize, bool)> = Vec::new();
    for (index, line) in lines.iter().enumerate() {
        while blocks
            .last()
            .is_some_and(|(indent, _)| *indent >= line.indent)
        {
            blocks.pop();
        }
        let module_level = blocks.iter().all(|(_, transparent)| *transparent);
        let text = &src[line.start..line.end];
        let first_word = text
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .next()
            .unwrap_or("");
        let opens_block = text.ends_with(':');
        if opens_block {
            let transparent = matches!(
                first_word,
                "if" | "elif" | "else" | "try" | "except" | "finally" | "with"
            );
            blocks.push((line.indent, transparent && module_level));
        }
        if !module_level {
            continue;
        }
        match first_word {
            "def" | "async" => {
                if let Some((name, offset)) = def_name(text) {
                    let start = (line.start + offset) as u32;
                    module.defined.push((
                        name.to_string(),
                        TextRange::new(start, start + name.len() as u32),
                    ));
                    let body = lines
                        .get(index + 1)
                        .filter(|next| opens_block && next.indent > line.indent);
                    module
                        .docstrings
                        .push(body.and_then(|next| docstring(&src[next.start..next.end])));
                    defs.push((line, opens_block));
                }
            }
            "import" | "from" => imports.push(line),
            _ => {
                if let Some(name) = assigned_name(text) {
                    let start = line.start as u32;
                    module.assigned.push((
                        name.to_string(),
                        TextRange::new(start, start + name.len() as u32),
                    ));
                }
            }
        }
    }
    context_writes(src, &mut module);
    // Only the signatures the bundle binds are parsed for their parameters;
    // import lines only when a wanted name is not a def.
    let mut chosen: Vec<(&LogicalLine, bool)> = Vec::new();
    for name in wanted {
        if let Some(i) = module.defined.iter().rposition(|(n, _)| n == name) {
            chosen.push(defs[i]);
        }
    }
    if wanted
        .iter()
        .any(|w| !module.defined.iter().any(|(n, _)| n == w))
    {
        chosen.extend(imports.iter().map(|l| (*l, false)));
    }
    if chosen.is_empty() {
        return module;
    }
    // Each line is the synthetic module's line as long: it bounds the nesting.
    let longest = chosen
        .iter()
        .map(|(line, _)| line.code_bytes())
        .max()
        .unwrap_or(0);
    let mut synthetic = String::new();
    let mut segments: Vec<(usize, usize, usize)> = Vec::new(); // (synthetic start, original start, len)
    for (line, opens_block) in chosen {
        let text = &src[line.start..line.end];
        segments.push((synthetic.len(), line.start, text.len()));
        synthetic.push_str(text);
        synthetic.push_str(if opens_block { "\n    pass\n" } else { "\n" });
    }
    let Some(parsed) = python_validity::with_parsed(&synthetic, longest, |parsed| {
        let mut found = Module::default();
        top_level(&parsed.syntax().body, &synthetic, &mut found);
        found
    }) else {
        return module;
    };
    // Map a synthetic offset back to the original file.
    let original = |offset: u32| -> u32 {
        let offset = offset as usize;
        let i = segments
            .partition_point(|(s, _, _)| *s <= offset)
            .saturating_sub(1);
        let (s, o, len) = segments[i];
        (o + (offset - s).min(len)) as u32
    };
    let shift = |r: TextRange| TextRange::new(original(r.start), original(r.end));
    for mut f in parsed.functions {
        f.name_range = shift(f.name_range);
        f.docstring = module
            .defined
            .iter()
            .rposition(|(_, r)| *r == f.name_range)
            .and_then(|i| module.docstrings[i].clone());
        for p in &mut f.params {
            p.range = shift(p.range);
        }
        module.functions.push(f);
    }
    module
        .imported
        .extend(parsed.imported.into_iter().map(|(n, r)| (n, shift(r))));
    module
}

/// The text of a logical line that is only a string literal, cleaned as
/// `inspect.cleandoc` cleans a docstring (escapes are shown as written).
fn docstring(line: &str) -> Option<String> {
    let body = line.strip_prefix(['r', 'R', 'u', 'U']).unwrap_or(line);
    let inner = ["\"\"\"", "'''", "\"", "'"].iter().find_map(|quote| {
        body.strip_prefix(quote)?
            .strip_suffix(quote)
            .filter(|_| body.len() >= 2 * quote.len())
    })?;
    let mut lines = inner.lines();
    let first = lines.next().unwrap_or("").trim();
    let rest: Vec<&str> = lines.collect();
    let indent = rest
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    let mut cleaned: Vec<&str> = std::iter::once(first)
        .chain(
            rest.iter()
                .map(|l| l.get(indent..).unwrap_or("").trim_end()),
        )
        .collect();
    while cleaned.first().is_some_and(|l| l.is_empty()) {
        cleaned.remove(0);
    }
    while cleaned.last().is_some_and(|l| l.is_empty()) {
        cleaned.pop();
    }
    (!cleaned.is_empty()).then(|| cleaned.join("\n"))
}

/// The name after `def` / `async def`, and its offset in the line.
fn def_name(text: &str) -> Option<(&str, usize)> {
    let rest = text
        .strip_prefix("async")
        .map(str::trim_start)
        .unwrap_or(text);
    let rest = rest.strip_prefix("def")?;
    if !rest.starts_with(char::is_whitespace) {
        return None;
    }
    let rest = rest.trim_start();
    let offset = text.len() - rest.len();
    let end = rest
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    (end > 0).then(|| (&rest[..end], offset))
}

/// `NAME = …` or `NAME: T = …` at the start of a logical line.
pub(super) fn assigned_name(text: &str) -> Option<&str> {
    let end = text
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(text.len());
    let name = &text[..end];
    if name.is_empty() || name.chars().next().is_some_and(|c| c.is_ascii_digit()) {
        return None;
    }
    let rest = text[end..].trim_start();
    let is_assignment = (rest.starts_with('=') && !rest.starts_with("=="))
        || (rest.starts_with(':') && rest.contains('='));
    is_assignment.then_some(name)
}

/// One logical line: where its text starts (after indentation) and ends.
#[derive(Debug)]
pub(super) struct LogicalLine {
    pub(super) start: usize,
    pub(super) end: usize,
    pub(super) indent: usize,
    /// Bytes of string literals in it: a string is one token, and never
    /// nests, however long.
    pub(super) string_bytes: usize,
}

impl LogicalLine {
    /// The bytes outside string literals: at most one more level of nesting
    /// each.
    pub(super) fn code_bytes(&self) -> usize {
        (self.end - self.start).saturating_sub(self.string_bytes)
    }
}

/// The length of the longest logical line of `src` (see
/// [`LogicalLine::code_bytes`]), or `None` when it has a lexical error.
pub(crate) fn longest_logical_line(src: &str) -> Option<usize> {
    match logical_lines(src) {
        (_, Some(_)) => None,
        (lines, None) => Some(lines.iter().map(LogicalLine::code_bytes).max().unwrap_or(0)),
    }
}

/// The first lexical or indentation error the fast pass finds.
#[derive(Debug, Clone, Copy)]
pub(super) struct LexicalError {
    pub(super) range: TextRange,
    /// In Python's words, where it has them.
    pub(super) problem: &'static str,
    /// One of Python's tokenizer limits (the 201st open bracket, the 100th
    /// indentation level): reported exactly here, and the rest of the file
    /// is too deep to hand to a parser.
    pub(super) past_limit: bool,
}

/// Splits Python source into logical lines, as Python's tokenizer does, and
/// reports the first lexical or indentation error.
pub(super) fn logical_lines(src: &str) -> (Vec<LogicalLine>, Option<LexicalError>) {
    let mut lines = Vec::new();
    let error = split_lines(src, &mut lines).err();
    (lines, error)
}

fn split_lines(src: &str, lines: &mut Vec<LogicalLine>) -> Result<(), LexicalError> {
    let bytes = src.as_bytes();
    let mut indents: Vec<usize> = vec![0];
    let mut brackets: Vec<(u8, usize)> = Vec::new();
    let mut i = 0;
    let mut line_start: Option<(usize, usize)> = None; // (text start, indent)
    let mut previous_opened_block = false;
    let mut at_line_start = true;
    let mut code_end = 0usize;
    let mut string_bytes = 0usize;
    let range = |start: usize, end: usize| TextRange::new(start as u32, end.max(start) as u32);
    let err = |start: usize, end: usize, problem: &'static str| LexicalError {
        range: range(start, end),
        problem,
        past_limit: false,
    };
    let past_limit = |start: usize, end: usize, problem: &'static str| LexicalError {
        range: range(start, end),
        problem,
        past_limit: true,
    };
    while i < bytes.len() {
        if at_line_start && brackets.is_empty() {
            // Measure indentation of a new physical line.
            let mut col = 0;
            let mut j = i;
            while j < bytes.len() && matches!(bytes[j], b' ' | b'\t' | b'\x0c') {
                col = if bytes[j] == b'\t' {
                    (col / 8 + 1) * 8
                } else {
                    col + 1
                };
                j += 1;
            }
            at_line_start = false;
            if j >= bytes.len() || matches!(bytes[j], b'\n' | b'\r' | b'#') {
                // Blank or comment-only line: no logical line.
                i = j;
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
                i += 1;
                at_line_start = true;
                continue;
            }
            if line_start.is_none() {
                let current = *indents.last().unwrap_or(&0);
                if col > current {
                    // Python's "too many levels of indentation".
                    if indents.len() >= MAX_PYTHON_INDENT {
                        return Err(past_limit(j, j + 1, "too many levels of indentation"));
                    }
                    if !previous_opened_block {
                        return Err(err(j, j + 1, "unexpected indent"));
                    }
                    indents.push(col);
                } else if col < current {
                    while indents.last().is_some_and(|&x| x > col) {
                        indents.pop();
                    }
                    if indents.last() != Some(&col) {
                        return Err(err(
                            j,
                            j + 1,
                            "unindent does not match any outer indentation level",
                        ));
                    }
                }
                line_start = Some((j, col));
            }
            i = j;
            continue;
        }
        let b = bytes[i];
        match b {
            b'#' => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'\'' | b'"' => {
                i = match string_literal_end(bytes, i) {
                    Ok(end) => {
                        // The fields of an f-string (or t-string) are code.
                        let prefix = &bytes[i.saturating_sub(2)..i];
                        if !prefix
                            .iter()
                            .any(|b| matches!(b, b'f' | b'F' | b't' | b'T'))
                        {
                            string_bytes += end - i;
                        }
                        end
                    }
                    Err(Unclosed::AtEnd) => {
                        return Err(err(i, src.len(), "unterminated string literal"))
                    }
                    Err(Unclosed::AtLineBreak(at)) => {
                        return Err(err(i, at, "unterminated string literal"))
                    }
                };
            }
            b'(' | b'[' | b'{' => {
                // Python's "too many nested parentheses".
                if brackets.len() >= MAX_PYTHON_BRACKETS {
                    return Err(past_limit(i, i + 1, "too many nested parentheses"));
                }
                brackets.push((b, i));
                i += 1;
            }
            b')' | b']' | b'}' => {
                let open = match b {
                    b')' => b'(',
                    b']' => b'[',
                    _ => b'{',
                };
                match brackets.pop() {
                    Some((o, _)) if o == open => {}
                    _ => return Err(err(i, i + 1, "unmatched closing bracket")),
                }
                i += 1;
            }
            b'\\' if matches!(bytes.get(i + 1), Some(b'\n')) => i += 2,
            b'\\' if bytes.get(i + 1..i + 3) == Some(b"\r\n") => i += 3,
            b'\n' => {
                if brackets.is_empty() {
                    if let Some((start, indent)) = line_start.take() {
                        // The logical line ends at its last code byte (not at a comment).
                        let end = code_end.max(start);
                        previous_opened_block = src[start..end].ends_with(':');
                        lines.push(LogicalLine {
                            start,
                            end,
                            indent,
                            string_bytes,
                        });
                        string_bytes = 0;
                    }
                    at_line_start = true;
                }
                i += 1;
                continue;
            }
            b' ' | b'\t' | b'\r' | b'\x0c' => {
                i += 1;
                continue;
            }
            _ => i += 1,
        }
        code_end = i;
    }
    if let Some((_, at)) = brackets.first() {
        return Err(err(*at, *at + 1, "bracket never closed"));
    }
    if let Some((start, indent)) = line_start {
        lines.push(LogicalLine {
            start,
            end: code_end.max(start),
            indent,
            string_bytes,
        });
    }
    Ok(())
}

/// `<receiver containing "context">.set("key", …)` with a literal key.
fn context_writes(src: &str, module: &mut Module) {
    let bytes = src.as_bytes();
    let mut from = 0;
    while let Some(found) = src[from..].find(".set(") {
        let at = from + found;
        from = at + 5;
        // Just after the last character that cannot be in a name (which
        // may be several bytes long).
        let receiver_start = src[..at]
            .char_indices()
            .rfind(|(_, c)| !(c.is_alphanumeric() || *c == '_'))
            .map_or(0, |(i, c)| i + c.len_utf8());
        if !src[receiver_start..at].contains("context") {
            continue;
        }
        let mut j = at + 5;
        while j < bytes.len() && matches!(bytes[j], b' ' | b'\n' | b'\r' | b'\t') {
            j += 1;
        }
        let Some(&quote) = bytes.get(j).filter(|q| matches!(q, b'"' | b'\'')) else {
            continue;
        };
        let Some(len) = src[j + 1..].find(|c: char| c as u32 == quote as u32 || c == '\n') else {
            continue;
        };
        if bytes.get(j + 1 + len) != Some(&quote) {
            continue;
        }
        let key = &src[j + 1..j + 1 + len];
        module.context_writes.push((
            key.to_string(),
            TextRange::new(j as u32, (j + len + 2) as u32),
        ));
    }
}

fn top_level(body: &[Stmt], src: &str, module: &mut Module) {
    for statement in body {
        match statement {
            Stmt::FunctionDef(f) => module.functions.push(function(f, src)),
            Stmt::Import(ast::StmtImport { names, .. })
            | Stmt::ImportFrom(ast::StmtImportFrom { names, .. }) => {
                for alias in names {
                    let bound = alias.asname.as_ref().unwrap_or(&alias.name);
                    if bound.as_str() == "*" {
                        continue;
                    }
                    // `import a.b` binds `a`.
                    let bound_text = text(bound.range, src)
                        .split('.')
                        .next()
                        .unwrap_or("")
                        .to_string();
                    module.imported.push((bound_text, range(bound.range)));
                }
            }
            // Definitions inside `if`/`try`/`with` at module level are still
            // module attributes.
            Stmt::If(s) => {
                top_level(&s.body, src, module);
                for clause in &s.elif_else_clauses {
                    top_level(&clause.body, src, module);
                }
            }
            Stmt::Try(s) => {
                top_level(&s.body, src, module);
                for ast::ExceptHandler::ExceptHandler(handler) in &s.handlers {
                    top_level(&handler.body, src, module);
                }
                top_level(&s.orelse, src, module);
                top_level(&s.finalbody, src, module);
            }
            Stmt::With(s) => top_level(&s.body, src, module),
            _ => {}
        }
    }
}

fn function(f: &ast::StmtFunctionDef, src: &str) -> Function {
    let annotation = |p: &ast::Parameter| {
        p.annotation
            .as_ref()
            .map(|a| text(a.range(), src).to_string())
    };
    let param = |p: &ast::Parameter, kind, has_default, whole: ruff_text_size::TextRange| Param {
        name: p.name.as_str().to_string(),
        kind,
        has_default,
        range: range(whole),
        annotation: annotation(p),
    };
    let with_default = |p: &ast::ParameterWithDefault, kind| {
        param(&p.parameter, kind, p.default.is_some(), p.range)
    };
    let parameters = &f.parameters;
    let mut params: Vec<Param> = Vec::new();
    for (list, kind) in [
        (&parameters.posonlyargs, ParamKind::PositionalOnly),
        (&parameters.args, ParamKind::PositionalOrKeyword),
    ] {
        params.extend(list.iter().map(|p| with_default(p, kind)));
    }
    // A `*args` parameter's range holds its star.
    if let Some(p) = &parameters.vararg {
        params.push(param(p, ParamKind::VarPositional, false, p.range));
    }
    let keyword_only = parameters.kwonlyargs.iter();
    params.extend(keyword_only.map(|p| with_default(p, ParamKind::KeywordOnly)));
    if let Some(p) = &parameters.kwarg {
        params.push(param(p, ParamKind::VarKeyword, false, p.range));
    }
    Function {
        name: f.name.as_str().to_string(),
        name_range: range(f.name.range),
        is_async: f.is_async,
        params,
        docstring: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_module_read_again_for_other_names_is_the_module_read_fresh() {
        for src in [
            "def old(a):\n    return a\n\ndef new(b, *, c=1):\n    pass\n",
            "def old(a):\n    print 'py2'\n\ndef new(b):\n    pass\n",
        ] {
            let first = parse(src, &["old"]);
            assert_eq!(
                parse_reusing(src, &["new"], Some(&first)),
                parse(src, &["new"])
            );
        }
    }

    #[test]
    fn docstrings_are_read_and_cleaned() {
        let src = "def a(x):\n    \"\"\"Look up a plan.\n\n    Args:\n        x: the id\n    \"\"\"\n    return x\n\nasync def b():\n    'One line.'\n\ndef c():\n    return 1\n\ndef d(): pass\n";
        let module = parse(src, &["a", "b", "c", "d"]);
        let doc = |name: &str| module.function(name).unwrap().docstring.clone();
        assert_eq!(
            doc("a").as_deref(),
            Some("Look up a plan.\n\nArgs:\n    x: the id")
        );
        assert_eq!(doc("b").as_deref(), Some("One line."));
        assert_eq!(doc("c"), None);
        assert_eq!(doc("d"), None);
    }

    #[test]
    fn functions_and_parameter_kinds() {
        let src = "import os\nfrom a.b import c as d, e\nX = 1\n\n@decorator\nasync def f(a, /, b, c=1, *args, d, e: int = 2, **kw):\n    context_variables.set('key_one', 1)\n    return 'text'\n\ndef g(x: int, *, y): pass\n";
        let m = parse(src, &["f", "g", "missing"]);
        assert_eq!(m.syntax_error, None);
        let f = m.function("f").unwrap();
        assert!(f.is_async);
        let kinds: Vec<(&str, ParamKind, bool)> = f
            .params
            .iter()
            .map(|p| (p.name.as_str(), p.kind, p.has_default))
            .collect();
        assert_eq!(
            kinds,
            vec![
                ("a", ParamKind::PositionalOnly, false),
                ("b", ParamKind::PositionalOrKeyword, false),
                ("c", ParamKind::PositionalOrKeyword, true),
                ("args", ParamKind::VarPositional, false),
                ("d", ParamKind::KeywordOnly, false),
                ("e", ParamKind::KeywordOnly, true),
                ("kw", ParamKind::VarKeyword, false),
            ]
        );
        assert_eq!(
            &src[f.name_range.start as usize..f.name_range.end as usize],
            "f"
        );
        let g = m.function("g").unwrap();
        assert_eq!(g.params[1].kind, ParamKind::KeywordOnly);
        let imported: Vec<&str> = m.imported.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(imported, vec!["os", "d", "e"]);
        assert_eq!(m.assigned[0].0, "X");
        assert_eq!(m.context_writes[0].0, "key_one");
    }

    #[test]
    fn context_writes_after_a_multibyte_character() {
        let m = parse("x = 1😀.set('a', 1)\ncontext😀context.set('key', 2)\n", &[]);
        let keys: Vec<&str> = m.context_writes.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["key"]);
    }

    #[test]
    fn syntax_error_ranges_never_split_a_crlf_or_a_character() {
        for src in ["def f(:\r\n    return 1\r\n", " é\ndef f():\n    pass\n"] {
            let m = parse(src, &["f"]);
            let r = m.syntax_error.expect(src).range;
            {
                for at in [r.start as usize, r.end as usize] {
                    assert!(src.is_char_boundary(at), "{src:?} {r:?}");
                    assert!(
                        !(src[..at].ends_with('\r') && src[at..].starts_with('\n')),
                        "{r:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn syntax_errors_are_located_and_the_rest_is_kept() {
        let m = parse("def ok(a):\n    pass\n\ndef broken(:\n    pass\n", &["ok"]);
        let error = m.syntax_error.as_ref().unwrap();
        // On line 4, as CPython 3.11 (which points one column later, at
        // the `:`): the fast pass's unclosed `(` comes before the parser's
        // error there, and the earlier error is reported.
        assert_eq!(error.range, TextRange::new(31, 32));
        assert_eq!(error.problem, "bracket never closed");
        assert!(m.function("ok").is_some());
    }

    /// Python's tokenizer limits, at the position it reports (measured on
    /// Python 3.11): the 201st open bracket, the 100th indentation level.
    #[test]
    fn nesting_past_pythons_limits_is_a_syntax_error_there() {
        for n in [200, 201, 10_000, 100_000] {
            let src = format!("x = {}1{}\n", "(".repeat(n), ")".repeat(n));
            let m = parse(&src, &[]);
            if n <= 200 {
                assert_eq!(m.syntax_error, None, "{n}");
            } else {
                assert_eq!(
                    m.syntax_error.unwrap().range,
                    TextRange::new(204, 205),
                    "{n}"
                );
            }
        }
        for n in [99, 100, 3_000] {
            let src: String = (0..n)
                .map(|i| format!("{}if x:\n", "    ".repeat(i)))
                .chain([format!("{}pass\n", "    ".repeat(n))])
                .collect();
            let m = parse(&src, &[]);
            if n < 100 {
                assert_eq!(m.syntax_error, None, "{n}");
            } else {
                let line_101 = (0..100).map(|i| 4 * i + 6).sum::<usize>() + 400;
                assert_eq!(
                    m.syntax_error.unwrap().range.start as usize,
                    line_101,
                    "{n}"
                );
            }
        }
    }
}
