//! The `context_expression` language exactly as mozaiks 0.2.0 compiles it
//! (bundle-format §7.3): `${name}` references, and/or/not, comparisons (chains,
//! `in`, `is`), `len(...)`, constants, list and tuple displays. Everything else
//! Python would parse (arithmetic, unary minus, attributes, subscripts, other
//! names and calls, dict/set displays, comprehensions, lambdas, f-strings,
//! keyword arguments) is rejected, with the offset of the offending token.

mod ast;
mod lexer;
mod literals;
mod parser;
#[cfg(test)]
mod tests;

pub use ast::{CmpOp, Const, Expr};

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

fn err<T>(start: usize, end: usize, message: impl Into<String>) -> Result<T, ExprError> {
    Err(ExprError {
        start,
        end,
        message: message.into(),
    })
}

/// Parses an expression. On success returns its `${}` references.
pub fn parse(src: &str) -> Result<Vec<ExprRef>, ExprError> {
    compile(src).map(|(_, refs)| refs)
}

/// Compiles an expression as the reference does at run start: its tree and
/// its `${}` references.
pub fn compile(src: &str) -> Result<(Expr, Vec<ExprRef>), ExprError> {
    let (tokens, refs) = lexer::tokenize(src)?;
    let expr = parser::parse_tokens(src, tokens)?;
    Ok((expr, refs))
}
