//! The recursive-descent parser: accepts exactly the AST nodes the
//! reference allows and refuses the rest at the offending token.

use super::lexer::{Tok, Token};
use super::literals::{number_value, string_value};
use super::{err, CmpOp, Const, Expr, ExprError};
use crate::base::limits::MAX_EXPRESSION_DEPTH;

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

/// The whole token stream as one expression, nothing left over.
pub(super) fn parse_tokens(src: &str, tokens: Vec<Token>) -> Parsed {
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
    Ok(expr)
}
