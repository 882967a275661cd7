//! The `context_expression` language exactly as mozaiks 0.2.0 compiles it
//! (bundle-format §7.3): `${name}` references, and/or/not, comparisons (chains,
//! `in`, `is`), `len(...)`, constants, list and tuple displays. Everything else
//! Python would parse (arithmetic, unary minus, attributes, subscripts, other
//! names and calls, dict/set displays, comprehensions, lambdas, f-strings,
//! keyword arguments) is rejected, with the offset of the offending token.

use crate::limits::{MAX_EXPRESSION_BRACKETS, MAX_EXPRESSION_DEPTH};

/// A compile error: what is wrong and where (byte offsets in the expression).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExprError {
    pub start: usize,
    pub end: usize,
    pub message: String,
}

/// A `${name}` reference found while parsing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExprRef {
    pub name: String,
    pub start: usize,
    pub end: usize,
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ref(String),
    Name(String),
    Number,
    Str,
    Op(&'static str),
    End,
}

#[derive(Debug, Clone)]
struct Token {
    tok: Tok,
    start: usize,
    end: usize,
}

const OPERATORS: &[&str] = &[
    "**=", "//=", ">>=", "<<=", "...", "==", "!=", "<=", ">=", "//", "**", "<<", ">>", "->", ":=",
    "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "@=", "<", ">", "(", ")", "[", "]", "{", "}",
    ",", ":", ".", ";", "=", "+", "-", "*", "/", "%", "&", "|", "^", "~", "@",
];

fn err<T>(start: usize, end: usize, message: impl Into<String>) -> Result<T, ExprError> {
    Err(ExprError {
        start,
        end,
        message: message.into(),
    })
}

fn is_ident_start(c: char) -> bool {
    c == '_' || c.is_alphabetic()
}

fn is_ident(c: char) -> bool {
    c == '_' || c.is_alphanumeric()
}

/// Python's "too many nested parentheses", at the bracket past the limit.
fn too_many_brackets<T>(start: usize, end: usize) -> Result<T, ExprError> {
    err(
        start,
        end,
        format!(
            "too many nested parentheses: Python's parser stops at {MAX_EXPRESSION_BRACKETS} open brackets \
             (`${{name}}` counts as one, since it becomes a call); remove the redundant brackets"
        ),
    )
}

fn tokenize(src: &str) -> Result<(Vec<Token>, Vec<ExprRef>), ExprError> {
    let mut tokens = Vec::new();
    let mut refs = Vec::new();
    let bytes = src.as_bytes();
    let mut i = 0;
    // Brackets open here, as Python's tokenizer counts them.
    let mut open_brackets = 0usize;
    while i < src.len() {
        let c = src[i..].chars().next().unwrap_or(' ');
        if c.is_whitespace() {
            i += c.len_utf8();
            continue;
        }
        let start = i;
        if src[i..].starts_with("${") {
            let Some(close) = src[i + 2..].find('}') else {
                return err(i, src.len(), "`${` is not closed: write `${variable_name}`");
            };
            let inner = &src[i + 2..i + 2 + close];
            let name = inner.trim();
            let valid = name
                .chars()
                .next()
                .is_some_and(|c| c == '_' || c.is_ascii_alphabetic())
                && name.chars().all(|c| c == '_' || c.is_ascii_alphanumeric());
            let end = i + 3 + close;
            if !valid {
                return err(
                    start,
                    end,
                    format!("`${{{inner}}}` must name one variable (a Python identifier); attribute paths and other text are not allowed inside `${{}}`"),
                );
            }
            // `${name}` becomes `__ctx('name')`: one more bracket for an instant.
            if open_brackets >= MAX_EXPRESSION_BRACKETS {
                return too_many_brackets(start, end);
            }
            let lead = inner.len() - inner.trim_start().len();
            refs.push(ExprRef {
                name: name.to_string(),
                start: i + 2 + lead,
                end: i + 2 + lead + name.len(),
            });
            tokens.push(Token {
                tok: Tok::Ref(name.to_string()),
                start,
                end,
            });
            i = end;
            continue;
        }
        if c == '$' {
            return err(i, i + 1, "`$` is only allowed as `${variable_name}`");
        }
        // String literal with an optional prefix.
        let prefix_len = src[i..]
            .chars()
            .take(3)
            .take_while(|c| matches!(c, 'r' | 'R' | 'b' | 'B' | 'u' | 'U' | 'f' | 'F'))
            .count();
        let after_prefix = i + prefix_len;
        if matches!(bytes.get(after_prefix), Some(b'\'' | b'"')) && prefix_len <= 2 {
            let prefix = src[i..after_prefix].to_ascii_lowercase();
            if prefix.contains('f') {
                return err(
                    i,
                    after_prefix + 1,
                    "f-strings are not allowed in context_expression; compare with a plain string",
                );
            }
            let quote = bytes[after_prefix];
            let triple =
                bytes.get(after_prefix..after_prefix + 3) == Some(&[quote, quote, quote][..]);
            let mut j = after_prefix + if triple { 3 } else { 1 };
            loop {
                match bytes.get(j) {
                    None => return err(start, src.len(), "this string is not closed"),
                    Some(b'\\') => j += 2,
                    Some(&b) if b == quote => {
                        if !triple {
                            j += 1;
                            break;
                        }
                        if bytes.get(j..j + 3) == Some(&[quote, quote, quote][..]) {
                            j += 3;
                            break;
                        }
                        j += 1;
                    }
                    Some(b'\n') if !triple => {
                        return err(start, j, "this string is not closed on its line")
                    }
                    Some(_) => j += 1,
                }
            }
            tokens.push(Token {
                tok: Tok::Str,
                start,
                end: j,
            });
            i = j;
            continue;
        }
        if c.is_ascii_digit() || (c == '.' && bytes.get(i + 1).is_some_and(u8::is_ascii_digit)) {
            let mut j = i;
            while j < src.len() {
                let ch = bytes[j] as char;
                let prev = if j > i { bytes[j - 1] as char } else { ' ' };
                if ch.is_ascii_alphanumeric()
                    || ch == '_'
                    || ch == '.'
                    || ((ch == '+' || ch == '-')
                        && matches!(prev, 'e' | 'E')
                        && !src[i..j].starts_with("0x"))
                {
                    j += 1;
                } else {
                    break;
                }
            }
            let text = src[i..j].replace('_', "");
            if !valid_number(&text) {
                return err(i, j, format!("`{}` is not a valid number", &src[i..j]));
            }
            tokens.push(Token {
                tok: Tok::Number,
                start,
                end: j,
            });
            i = j;
            continue;
        }
        if is_ident_start(c) {
            let mut j = i;
            while let Some(ch) = src[j..].chars().next() {
                if is_ident(ch) {
                    j += ch.len_utf8();
                } else {
                    break;
                }
            }
            tokens.push(Token {
                tok: Tok::Name(src[i..j].to_string()),
                start,
                end: j,
            });
            i = j;
            continue;
        }
        match OPERATORS.iter().find(|op| src[i..].starts_with(**op)) {
            Some(op) => {
                match *op {
                    "(" | "[" | "{" => {
                        if open_brackets >= MAX_EXPRESSION_BRACKETS {
                            return too_many_brackets(i, i + 1);
                        }
                        open_brackets += 1;
                    }
                    ")" | "]" | "}" => open_brackets = open_brackets.saturating_sub(1),
                    _ => {}
                }
                tokens.push(Token {
                    tok: Tok::Op(op),
                    start,
                    end: i + op.len(),
                });
                i += op.len();
            }
            None => return err(i, i + c.len_utf8(), format!("invalid character `{c}`")),
        }
    }
    tokens.push(Token {
        tok: Tok::End,
        start: src.len(),
        end: src.len(),
    });
    Ok((tokens, refs))
}

fn valid_number(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    let body = lower.strip_suffix('j').unwrap_or(&lower);
    if let Some(hex) = body.strip_prefix("0x") {
        return !hex.is_empty() && hex.chars().all(|c| c.is_ascii_hexdigit());
    }
    if let Some(oct) = body.strip_prefix("0o") {
        return !oct.is_empty() && oct.chars().all(|c| ('0'..='7').contains(&c));
    }
    if let Some(bin) = body.strip_prefix("0b") {
        return !bin.is_empty() && bin.chars().all(|c| c == '0' || c == '1');
    }
    // Python forbids leading zeros in non-zero decimal integers ("010").
    if body.len() > 1
        && body.starts_with('0')
        && body.chars().all(|c| c.is_ascii_digit())
        && body.chars().any(|c| c != '0')
    {
        return false;
    }
    body.parse::<f64>().is_ok() && !body.contains("inf") && !body.contains("nan")
}

/// A compiled expression, evaluated by the runner over the channel context.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    /// `${name}`: the context value, null when missing.
    Ref(String),
    Const(Const),
    List(Vec<Expr>),
    Tuple(Vec<Expr>),
    Not(Box<Expr>),
    And(Vec<Expr>),
    Or(Vec<Expr>),
    /// A comparison chain `a < b <= c`.
    Compare(Box<Expr>, Vec<(CmpOp, Expr)>),
    /// `len(args)`; Python raises unless there is exactly one argument.
    Len(Vec<Expr>),
    /// `__ctx(args)`: the lookup `${}` compiles to.
    Lookup(Vec<Expr>),
    /// The bare builtin `len`.
    LenFunction,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Const {
    None,
    Bool(bool),
    Int(i128),
    Float(f64),
    Str(String),
    Bytes(Vec<u8>),
    /// Imaginary literals (`1j`) and `...`: valid Python, never equal to context data.
    Other(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CmpOp {
    Eq,
    NotEq,
    Lt,
    LtE,
    Gt,
    GtE,
    In,
    NotIn,
    Is,
    IsNot,
}

impl CmpOp {
    pub fn as_str(self) -> &'static str {
        match self {
            CmpOp::Eq => "==",
            CmpOp::NotEq => "!=",
            CmpOp::Lt => "<",
            CmpOp::LtE => "<=",
            CmpOp::Gt => ">",
            CmpOp::GtE => ">=",
            CmpOp::In => "in",
            CmpOp::NotIn => "not in",
            CmpOp::Is => "is",
            CmpOp::IsNot => "is not",
        }
    }
}

struct Parser<'s> {
    src: &'s str,
    tokens: Vec<Token>,
    at: usize,
    /// Python tree nodes (`not`, calls, lists, tuples) around the current
    /// position: kept under `MAX_EXPRESSION_DEPTH`, so no pass over a tree
    /// this parser builds recurses deeper than that.
    depth: usize,
}

type Parsed = Result<Expr, ExprError>;

/// One item, or the chain of items joined by `and`/`or`.
fn chain(mut items: Vec<Expr>, join: fn(Vec<Expr>) -> Expr) -> Expr {
    if items.len() == 1 {
        items.pop().unwrap_or(Expr::Const(Const::None))
    } else {
        join(items)
    }
}

impl Parser<'_> {
    fn peek(&self) -> &Token {
        &self.tokens[self.at.min(self.tokens.len() - 1)]
    }

    fn next(&mut self) -> Token {
        let t = self.peek().clone();
        if self.at < self.tokens.len() - 1 {
            self.at += 1;
        }
        t
    }

    fn is_op(&self, op: &str) -> bool {
        matches!(&self.peek().tok, Tok::Op(o) if *o == op)
    }

    fn is_name(&self, name: &str) -> bool {
        matches!(&self.peek().tok, Tok::Name(n) if n == name)
    }

    fn expr(&mut self) -> Parsed {
        if self.is_name("lambda") {
            let t = self.peek();
            return err(
                t.start,
                t.end,
                "lambdas are not allowed in context_expression",
            );
        }
        let e = self.or_test()?;
        if self.is_name("if") {
            let t = self.peek();
            return err(
                t.start,
                t.end,
                "conditional expressions (`x if c else y`) are not allowed in context_expression",
            );
        }
        Ok(e)
    }

    fn or_test(&mut self) -> Parsed {
        let mut items = vec![self.and_test()?];
        while self.is_name("or") {
            self.next();
            items.push(self.and_test()?);
        }
        Ok(chain(items, Expr::Or))
    }

    fn and_test(&mut self) -> Parsed {
        let mut items = vec![self.not_test()?];
        while self.is_name("and") {
            self.next();
            items.push(self.not_test()?);
        }
        Ok(chain(items, Expr::And))
    }

    /// `not not … comparison`, read in a loop: a chain of any length costs
    /// no stack here, and one past the depth limit is refused.
    fn not_test(&mut self) -> Parsed {
        let mut nots = 0;
        while self.is_name("not") {
            if self.depth + nots >= MAX_EXPRESSION_DEPTH {
                let t = self.peek();
                return err(
                    t.start,
                    t.end,
                    format!(
                        "the expression nests more than {MAX_EXPRESSION_DEPTH} levels (`not`, calls and lists) here, \
                         where Python's compiler gives up with RecursionError; `not not x` tests the same as `x`, \
                         so remove pairs of `not`"
                    ),
                );
            }
            self.next();
            nots += 1;
        }
        self.depth += nots;
        let mut e = self.comparison();
        self.depth -= nots;
        for _ in 0..nots {
            e = e.map(|inner| Expr::Not(Box::new(inner)));
        }
        e
    }

    /// Parses what `inside` reads one Python tree level deeper (a call's
    /// arguments, a display's items), refusing it past the depth limit.
    fn nested<T>(
        &mut self,
        opener: &Token,
        inside: impl FnOnce(&mut Self) -> Result<T, ExprError>,
    ) -> Result<T, ExprError> {
        if self.depth >= MAX_EXPRESSION_DEPTH {
            return err(
                opener.start,
                opener.end,
                format!(
                    "the expression nests more than {MAX_EXPRESSION_DEPTH} levels (`not`, calls and lists) here, \
                     where Python's compiler gives up with RecursionError; flatten it"
                ),
            );
        }
        self.depth += 1;
        let result = inside(self);
        self.depth -= 1;
        result
    }

    fn comparison(&mut self) -> Parsed {
        let left = self.operand()?;
        let mut links = Vec::new();
        loop {
            let op = match &self.peek().tok {
                Tok::Op("==") => CmpOp::Eq,
                Tok::Op("!=") => CmpOp::NotEq,
                Tok::Op("<") => CmpOp::Lt,
                Tok::Op("<=") => CmpOp::LtE,
                Tok::Op(">") => CmpOp::Gt,
                Tok::Op(">=") => CmpOp::GtE,
                Tok::Name(n) if n == "in" => CmpOp::In,
                Tok::Name(n) if n == "is" => {
                    self.next();
                    if self.is_name("not") {
                        CmpOp::IsNot
                    } else {
                        links.push((CmpOp::Is, self.operand()?));
                        continue;
                    }
                }
                Tok::Name(n) if n == "not" => {
                    let t = self.next();
                    if !self.is_name("in") {
                        return err(
                            t.start,
                            t.end,
                            "invalid syntax: `not` here must be followed by `in`",
                        );
                    }
                    CmpOp::NotIn
                }
                _ => break,
            };
            self.next();
            links.push((op, self.operand()?));
        }
        Ok(if links.is_empty() {
            left
        } else {
            Expr::Compare(Box::new(left), links)
        })
    }

    /// An operand, refusing arithmetic around it.
    fn operand(&mut self) -> Parsed {
        if ["-", "+", "~"].iter().any(|op| self.is_op(op)) {
            let t = self.peek();
            return err(
                t.start,
                t.end,
                format!("unary `{}` is not allowed in context_expression (so `-1` is rejected); compare differently, e.g. `len(${{x}}) > 0` instead of `> -1`", &self.tok_text(t)),
            );
        }
        let e = self.atom_expr()?;
        const ARITHMETIC: &[&str] = &[
            "+", "-", "*", "/", "//", "%", "**", "@", "&", "|", "^", "<<", ">>",
        ];
        if let Some(op) = ARITHMETIC.iter().find(|op| self.is_op(op)) {
            let t = self.peek();
            return err(t.start, t.end, format!("arithmetic (`{op}`) is not allowed in context_expression; only comparisons, and/or/not, `in` and len()"));
        }
        Ok(e)
    }

    fn tok_text(&self, t: &Token) -> String {
        match &t.tok {
            Tok::Op(o) => (*o).to_string(),
            Tok::Name(n) | Tok::Ref(n) => n.clone(),
            _ => String::new(),
        }
    }

    fn atom_expr(&mut self) -> Parsed {
        let atom = self.next();
        let value = match &atom.tok {
            Tok::Ref(name) => Expr::Ref(name.clone()),
            Tok::Number => Expr::Const(number_value(&self.src[atom.start..atom.end])),
            Tok::Str => {
                let mut value = string_value(&self.src[atom.start..atom.end]);
                while matches!(self.peek().tok, Tok::Str) {
                    let t = self.next();
                    value = match (value, string_value(&self.src[t.start..t.end])) {
                        (Const::Str(a), Const::Str(b)) => Const::Str(a + &b),
                        (Const::Bytes(mut a), Const::Bytes(b)) => {
                            a.extend(b);
                            Const::Bytes(a)
                        }
                        _ => return err(atom.start, t.end, "cannot mix bytes and text literals"),
                    };
                }
                Expr::Const(value)
            }
            Tok::Name(n) if n == "True" => Expr::Const(Const::Bool(true)),
            Tok::Name(n) if n == "False" => Expr::Const(Const::Bool(false)),
            Tok::Name(n) if n == "None" => Expr::Const(Const::None),
            // `__ctx` is the lookup `${}` compiles to; the reference allows it by name.
            Tok::Name(n) if n == "len" || n == "__ctx" => {
                let is_len = n == "len";
                if self.is_op("(") {
                    let opener = self.next();
                    let args = self.nested(&opener, Self::call_arguments)?;
                    if is_len {
                        Expr::Len(args)
                    } else {
                        Expr::Lookup(args)
                    }
                } else if is_len {
                    Expr::LenFunction
                } else {
                    Expr::Const(Const::Other("<function __ctx>".into()))
                }
            }
            Tok::Name(n) if is_keyword(n) => {
                return err(atom.start, atom.end, format!("invalid syntax at `{n}`"))
            }
            Tok::Name(n) => {
                let hint = match n.as_str() {
                    "true" | "false" | "none" | "null" => {
                        " (Python constants are `True`, `False` and `None`)".to_string()
                    }
                    _ => " (use `${variable}` for context values and quotes for text)".to_string(),
                };
                return err(
                    atom.start,
                    atom.end,
                    format!(
                        "unknown name `{n}`: only `len` and `${{…}}` references are allowed{hint}"
                    ),
                );
            }
            Tok::Op("...") => Expr::Const(Const::Other("Ellipsis".into())),
            // A grouping bracket makes no tree node in Python, a tuple does;
            // either way the bracket limit bounds this recursion.
            Tok::Op("(") => {
                let (items, trailing_comma) =
                    self.display(")", "a parenthesised expression or tuple")?;
                if items.len() == 1 && !trailing_comma {
                    items.into_iter().next().unwrap_or(Expr::Tuple(Vec::new()))
                } else {
                    Expr::Tuple(items)
                }
            }
            Tok::Op("[") => Expr::List(self.nested(&atom, |p| p.display("]", "a list"))?.0),
            Tok::Op("{") => return err(
                atom.start,
                atom.end,
                "dict and set displays are not allowed in context_expression; use a list `[...]`",
            ),
            Tok::End => return err(atom.start, atom.end, "the expression ends too early"),
            Tok::Op(op) => return err(atom.start, atom.end, format!("invalid syntax at `{op}`")),
        };
        // Trailers: a call on anything but `len`, attributes and subscripts are refused.
        if self.is_op("(") {
            let t = self.peek();
            return err(
                t.start,
                t.end,
                "only `len(...)` may be called in context_expression",
            );
        }
        if self.is_op(".") {
            let t = self.peek();
            return err(
                t.start,
                t.end,
                "attribute access is not allowed in context_expression",
            );
        }
        if self.is_op("[") {
            let t = self.peek();
            return err(
                t.start,
                t.end,
                "subscripts (`x[...]`) are not allowed in context_expression",
            );
        }
        Ok(value)
    }

    fn call_arguments(&mut self) -> Result<Vec<Expr>, ExprError> {
        let mut args = Vec::new();
        while !self.is_op(")") {
            if matches!(self.peek().tok, Tok::Name(_))
                && matches!(
                    self.tokens.get(self.at + 1).map(|t| &t.tok),
                    Some(Tok::Op("="))
                )
            {
                let t = self.peek();
                return err(
                    t.start,
                    t.end,
                    "keyword arguments are not allowed in context_expression",
                );
            }
            if self.is_op("*") || self.is_op("**") {
                let t = self.peek();
                return err(
                    t.start,
                    t.end,
                    "argument unpacking is not allowed in context_expression",
                );
            }
            args.push(self.expr()?);
            self.comprehension_check()?;
            if self.is_op(",") {
                self.next();
            } else if !self.is_op(")") {
                let t = self.peek();
                return err(t.start, t.end, "invalid syntax: expected `,` or `)`");
            }
        }
        self.next();
        Ok(args)
    }

    fn comprehension_check(&self) -> Result<(), ExprError> {
        if self.is_name("for") || self.is_name("async") {
            let t = self.peek();
            return err(
                t.start,
                t.end,
                "comprehensions are not allowed in context_expression",
            );
        }
        Ok(())
    }

    /// The items of a display and whether a comma followed the last one.
    fn display(&mut self, close: &'static str, what: &str) -> Result<(Vec<Expr>, bool), ExprError> {
        let mut items = Vec::new();
        let mut trailing_comma = false;
        while !self.is_op(close) {
            if matches!(self.peek().tok, Tok::End) {
                let t = self.peek();
                return err(
                    t.start,
                    t.end,
                    format!("{what} is not closed: add `{close}`"),
                );
            }
            if self.is_op("*") {
                let t = self.peek();
                return err(
                    t.start,
                    t.end,
                    "unpacking (`*x`) is not allowed in context_expression",
                );
            }
            items.push(self.expr()?);
            trailing_comma = false;
            self.comprehension_check()?;
            if self.is_op(",") {
                self.next();
                trailing_comma = true;
            } else if matches!(self.peek().tok, Tok::End) {
                let t = self.peek();
                return err(
                    t.start,
                    t.end,
                    format!("{what} is not closed: add `{close}`"),
                );
            } else if !self.is_op(close) {
                let t = self.peek();
                return err(
                    t.start,
                    t.end,
                    format!("invalid syntax: expected `,` or `{close}`"),
                );
            }
        }
        self.next();
        Ok((items, trailing_comma))
    }
}

/// The value of a number token the tokenizer already validated.
fn number_value(text: &str) -> Const {
    let clean = text.replace('_', "").to_ascii_lowercase();
    if clean.ends_with('j') {
        return Const::Other(text.to_string());
    }
    let radix = [("0x", 16), ("0o", 8), ("0b", 2)]
        .iter()
        .find_map(|(p, r)| clean.strip_prefix(p).map(|rest| (rest.to_string(), *r)));
    if let Some((digits, radix)) = radix {
        return i128::from_str_radix(&digits, radix)
            .map(Const::Int)
            .unwrap_or(Const::Float(f64::INFINITY));
    }
    if clean.contains(['.', 'e']) {
        return Const::Float(clean.parse().unwrap_or(f64::NAN));
    }
    clean
        .parse::<i128>()
        .map(Const::Int)
        .unwrap_or_else(|_| Const::Float(clean.parse().unwrap_or(f64::INFINITY)))
}

/// The value of a string token: prefix, quotes and the common escapes.
fn string_value(text: &str) -> Const {
    let prefix_len = text.find(['\'', '"']).unwrap_or(0);
    let prefix = text[..prefix_len].to_ascii_lowercase();
    let body = &text[prefix_len..];
    let quote = &body[..1.min(body.len())];
    let quote_len = if body.len() >= 6 && body[1..].starts_with(&quote.repeat(2)) {
        3
    } else {
        1
    };
    let inner = body
        .get(quote_len..body.len().saturating_sub(quote_len))
        .unwrap_or("");
    let raw = prefix.contains('r');
    let mut out = String::new();
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c != '\\' || raw {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('0') => out.push('\0'),
            Some('\\') => out.push('\\'),
            Some('\'') => out.push('\''),
            Some('"') => out.push('"'),
            Some('\n') => {}
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    if prefix.contains('b') {
        Const::Bytes(out.into_bytes())
    } else {
        Const::Str(out)
    }
}

fn is_keyword(name: &str) -> bool {
    matches!(
        name,
        "and"
            | "or"
            | "not"
            | "in"
            | "is"
            | "if"
            | "else"
            | "elif"
            | "for"
            | "while"
            | "lambda"
            | "def"
            | "class"
            | "return"
            | "yield"
            | "await"
            | "async"
            | "import"
            | "from"
            | "as"
            | "with"
            | "try"
            | "except"
            | "finally"
            | "raise"
            | "del"
            | "pass"
            | "break"
            | "continue"
            | "global"
            | "nonlocal"
            | "assert"
    )
}

/// Parses an expression. On success returns its `${}` references.
pub fn parse(src: &str) -> Result<Vec<ExprRef>, ExprError> {
    compile(src).map(|(_, refs)| refs)
}

/// Compiles an expression as the reference does at run start: its tree and
/// its `${}` references.
pub fn compile(src: &str) -> Result<(Expr, Vec<ExprRef>), ExprError> {
    let (tokens, refs) = tokenize(src)?;
    let mut parser = Parser {
        src,
        tokens,
        at: 0,
        depth: 0,
    };
    if matches!(parser.peek().tok, Tok::End) {
        return err(0, src.len(), "the expression is empty");
    }
    let expr = parser.expr()?;
    let t = parser.peek();
    if !matches!(t.tok, Tok::End) {
        let text = src[t.start..t.end].to_string();
        let message = if t.tok == Tok::Op("=") {
            "`=` assigns; compare with `==`".to_string()
        } else {
            format!("invalid syntax at `{text}`: the expression should end here")
        };
        return err(t.start, t.end, message);
    }
    Ok((expr, refs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_the_grammar() {
        for ok in [
            "${task_batch_route_ready} and ${routing_mode} == 'task_batch' and len(${selected_capabilities}) > 0",
            "${fix_tasks_status} in ['completed', 'partial']",
            "${app_task_batch_results}",
            "not ${a} or ${b} is not None",
            "${x} not in ('a', \"b\")",
            "1 < ${n} <= 10",
            "len",
            "len(${a}, ${b}) == 2",
            "${ spaced } == True",
            "${a} == b'x' and ${b} == ...",
            "${a} == 1.5e3 and ${b} != 0x1F",
            "(${a} or ${b}) and []",
        ] {
            assert!(parse(ok).is_ok(), "{ok}: {:?}", parse(ok));
        }
        assert_eq!(parse("${a} and ${ b }").unwrap().len(), 2);
    }

    #[test]
    fn rejects_what_mozaiks_rejects_at_the_right_place() {
        let cases = [
            ("len(${x}) > -1", "-", "unary"),
            ("${x} == completed", "completed", "unknown name"),
            ("${x} == true", "true", "True"),
            ("${a.b} == 1", "${a.b}", "one variable"),
            ("${x} + 1 > 2", "+", "arithmetic"),
            ("str(${x}) == '1'", "str", "unknown name"),
            ("${x}.items", ".", "attribute"),
            ("${x}[0] == 1", "[", "subscript"),
            ("${x} in {1, 2}", "{", "dict and set"),
            ("1 if ${x} else 2", "if", "conditional"),
            ("f'{x}' == 'a'", "f'", "f-strings"),
            ("len(obj=${x})", "obj", "keyword"),
            ("[${y} for y in ${x}]", "for", "comprehensions"),
            ("${x} = 1", "=", "compare with"),
            ("${x} == 'open", "'open", "not closed"),
            ("(${x} == 1", "", "not closed"),
            ("", "", "empty"),
            ("$x == 1", "$", "only allowed"),
        ];
        for (src, at, message) in cases {
            let e = parse(src).expect_err(src);
            assert_eq!(&src[e.start..e.end], at, "{src}: {e:?}");
            assert!(e.message.contains(message), "{src}: {}", e.message);
        }
    }

    /// Verdicts measured with mozaiks 0.2.0's own expression compiler
    /// (`_MozaiksExpression` in mozaiksai/core/adapters/ag2_transition_conditions.py).
    #[test]
    fn agrees_with_the_reference_compiler() {
        let measured: &[(&str, bool)] = &[
            ("${a} == 1", true),
            ("${a} and ${b}", true),
            ("not ${a}", true),
            ("${a} in [1, 2]", true),
            ("${a} not in (1, 2)", true),
            ("${a} is None", true),
            ("${a} is not None", true),
            ("len(${a}) > 0", true),
            ("len(${a}) > -1", false),
            ("-1 == ${a}", false),
            ("+1 == ${a}", false),
            ("~${a}", false),
            ("${a} + 1", false),
            ("${a} * 2 > 3", false),
            ("${a}.b", false),
            ("${a}[0]", false),
            ("{1: 2}", false),
            ("{1, 2}", false),
            ("1 if ${a} else 2", false),
            ("lambda: 1", false),
            ("[x for x in ${a}]", false),
            ("f'{1}' == 'a'", false),
            ("len(x=${a})", false),
            ("str(${a})", false),
            ("true", false),
            ("True", true),
            ("None", true),
            ("...", true),
            ("1j", true),
            ("0x1F == ${a}", true),
            ("010 == ${a}", false),
            ("1_000 == ${a}", true),
            ("${a.b} == 1", false),
            ("${ a } == 1", true),
            ("__ctx('a') == 1", true),
            ("len", true),
            ("len(${a}, ${b})", true),
            ("len()", true),
            ("b'x' == ${a}", true),
            ("'a' 'b' == ${a}", true),
            ("${a} == 'x' or ${b} == \"y\"", true),
            ("(${a})", true),
            ("()", true),
            ("[]", true),
            ("${a} == (1,)", true),
            ("${a} := 1", false),
            ("${a} = 1", false),
            ("${a} ==", false),
            ("== 1", false),
            ("${a} < ${b} < ${c}", true),
            ("not not ${a}", true),
            ("${a} and not ${b} or ${c}", true),
            ("len(*${a})", false),
            ("${a} is not not ${b}", false),
        ];
        for (src, accepted) in measured {
            assert_eq!(parse(src).is_ok(), *accepted, "{src}: {:?}", parse(src));
        }
    }

    fn nested(open: &str, inner: &str, close: &str, n: usize) -> String {
        format!("{}{inner}{}", open.repeat(n), close.repeat(n))
    }

    /// Nesting limits, measured on mozaiks 0.2.0's compiler under Python 3.11:
    /// the 201st open bracket is a SyntaxError (`${a}` is one), more than
    /// about 990 `not`s a RecursionError (100,000 a MemoryError).
    #[test]
    fn nesting_agrees_with_the_reference_compiler() {
        let measured = [
            (nested("(", "${a}", ")", 199), true),
            (nested("(", "${a}", ")", 200), false),
            (nested("(", "1", ")", 200), true),
            (nested("(", "1", ")", 201), false),
            (nested("[", "", "]", 200), true),
            (nested("[", "", "]", 201), false),
            (nested("len(", "${a}", ")", 199), true),
            (format!("{}${{a}}", "not ".repeat(900)), true),
            (format!("{}${{a}}", "not ".repeat(1001)), false),
            (format!("{}${{a}}", "not ".repeat(100_000)), false),
        ];
        for (src, accepted) in measured {
            assert_eq!(parse(&src).is_ok(), accepted, "{}…", &src[..40]);
        }
    }

    /// Past a limit, the error points at the bracket or `not` that crosses it;
    /// any depth is refused without using the stack (this runs on a test
    /// thread's small stack).
    #[test]
    fn deep_nesting_is_an_error_at_the_offending_token() {
        for n in [10_000, 100_000, 1_000_000] {
            let src = nested("(", "${a} == 1", ")", n);
            let e = parse(&src).unwrap_err();
            assert_eq!((e.start, e.end), (200, 201), "{n}");
            assert!(
                e.message.contains("too many nested parentheses"),
                "{}",
                e.message
            );

            let src = format!("{}${{a}}", "not ".repeat(n));
            let e = parse(&src).unwrap_err();
            assert_eq!((e.start, &src[e.start..e.end]), (4 * 1000, "not"), "{n}");
            assert!(e.message.contains("RecursionError"), "{}", e.message);
        }
        // `not`s inside brackets add up with the calls and lists around them.
        let src = format!("len([{}${{a}}])", "not ".repeat(999));
        let e = parse(&src).unwrap_err();
        assert_eq!(e.start, "len([".len() + 4 * 998, "{}", e.message);
        // Both limits reached by a tree just inside them: it parses and drops.
        let src = nested("(", &format!("{}${{a}}", "not ".repeat(990)), ")", 199);
        assert!(parse(&src).is_ok());
    }

    /// The deepest trees the limits let through compile on half the stack
    /// the analysis threads get.
    #[test]
    fn the_deepest_trees_fit_the_analysis_stack() {
        let deepest = [
            format!("{}${{a}}", "not ".repeat(999)),
            nested("(", "1 in ${a}", ")", 199),
            nested("len([", "${a}", "])", 99),
            nested(
                "len([not ",
                &format!("{}${{a}}", "not ".repeat(700)),
                "])",
                99,
            ),
        ];
        for src in deepest {
            let compiled = std::thread::Builder::new()
                .stack_size(crate::limits::THREAD_STACK_BYTES / 2)
                .spawn(move || compile(&src).is_ok())
                .unwrap()
                .join()
                .expect("no stack overflow");
            assert!(compiled);
        }
    }
}
