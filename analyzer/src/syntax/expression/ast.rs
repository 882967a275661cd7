//! The compiled tree the runner evaluates.

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

impl Expr {
    /// The context variables the expression reads, each once, in order.
    pub fn refs(&self, out: &mut Vec<String>) {
        match self {
            Expr::Ref(n) => {
                if !out.iter().any(|v| v == n) {
                    out.push(n.clone());
                }
            }
            Expr::List(xs)
            | Expr::Tuple(xs)
            | Expr::And(xs)
            | Expr::Or(xs)
            | Expr::Len(xs)
            | Expr::Lookup(xs) => xs.iter().for_each(|x| x.refs(out)),
            Expr::Not(x) => x.refs(out),
            Expr::Compare(first, rest) => {
                first.refs(out);
                rest.iter().for_each(|(_, x)| x.refs(out));
            }
            Expr::Const(_) | Expr::LenFunction => {}
        }
    }
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
