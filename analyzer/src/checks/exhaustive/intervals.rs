//! Integers as intervals: the constants a source's conditions compare a
//! variable with cut the integer line into stretches on which every
//! comparison has one answer; one integer stands for each.

use super::Cond;
use crate::model::TransitionRule;
use crate::syntax::expression::{CmpOp, Const, Expr};
use crate::syntax::Value;

/// Largest constant magnitude the partition accepts: the evaluator compares
/// numbers as `f64`, exact for integers only below 2^53.
pub(super) const MAX_CUT: i128 = 1 << 52;

/// A stretch of the integer line on which every comparison a source's
/// conditions make with one variable has the same answer.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Span {
    pub(super) lo: Option<i128>,
    pub(super) hi: Option<i128>,
}

impl Span {
    pub(super) fn representative(&self) -> i128 {
        match (self.lo, self.hi) {
            (Some(l), _) => l,
            (None, Some(h)) => h,
            (None, None) => 0,
        }
    }

    /// The stretch as a witness reads it (`` `n` ≥ 3 ``), not its
    /// representative.
    pub(super) fn describe(&self, var: &str) -> String {
        match (self.lo, self.hi) {
            (None, None) => format!("`{var}` is any integer"),
            (None, Some(h)) => format!("`{var}` ≤ {h}"),
            (Some(l), None) => format!("`{var}` ≥ {l}"),
            (Some(l), Some(h)) if l == h => format!("`{var}` is `{l}`"),
            (Some(l), Some(h)) => format!("{l} ≤ `{var}` ≤ {h}"),
        }
    }
}

/// Cuts the integer line before each of `starts`.
pub(super) fn partition(mut starts: Vec<i128>) -> Vec<Span> {
    starts.sort_unstable();
    starts.dedup();
    let mut spans = Vec::with_capacity(starts.len() + 1);
    let mut lo = None;
    for s in starts {
        spans.push(Span {
            lo,
            hi: Some(s - 1),
        });
        lo = Some(s);
    }
    spans.push(Span { lo, hi: None });
    spans
}

/// Where the answers of the comparisons of `var` in the conditions change
/// (the first integer of each new stretch); `None` when `var` is used in a
/// way the partition does not cover (arithmetic, another variable, a
/// string, `in`), and then nothing is claimed.
pub(super) fn integer_cuts(conds: &[(&TransitionRule, Cond)], var: &str) -> Option<Vec<i128>> {
    let mut starts = Vec::new();
    for (_, c) in conds {
        match c {
            Cond::Equals(k, v) if k == var => match v {
                Value::Int(i) => {
                    let i = small(i.get())?;
                    starts.extend([i, i + 1]);
                }
                Value::Null => {}
                _ => return None,
            },
            Cond::Equals(..) => {}
            Cond::Expression(e) => integer_uses(e, var, true, &mut starts)?,
        }
    }
    Some(starts)
}

pub(super) fn small(i: i128) -> Option<i128> {
    (i.abs() <= MAX_CUT).then_some(i)
}

pub(super) fn mentions(e: &Expr, var: &str) -> bool {
    let mut names = Vec::new();
    e.refs(&mut names);
    names.iter().any(|n| n == var)
}

/// `truth`: only the truthiness of `e` is used (the whole condition, or
/// under `not`/`and`/`or` there), so a bare `${var}` is a test against 0.
pub(super) fn integer_uses(e: &Expr, var: &str, truth: bool, starts: &mut Vec<i128>) -> Option<()> {
    match e {
        Expr::Ref(n) if n == var => {
            if !truth {
                return None;
            }
            starts.extend([0, 1]);
        }
        Expr::Not(x) => integer_uses(x, var, true, starts)?,
        Expr::And(xs) | Expr::Or(xs) => {
            for x in xs {
                integer_uses(x, var, truth, starts)?;
            }
        }
        Expr::Compare(first, rest) => {
            let operands: Vec<&Expr> = std::iter::once(first.as_ref())
                .chain(rest.iter().map(|(_, x)| x))
                .collect();
            if operands
                .iter()
                .any(|x| !matches!(x, Expr::Ref(_) | Expr::Const(_)) && mentions(x, var))
            {
                return None;
            }
            for (k, (op, _)) in rest.iter().enumerate() {
                integer_pair(operands[k], *op, operands[k + 1], var, starts)?;
            }
        }
        other => {
            if mentions(other, var) {
                return None;
            }
        }
    }
    Some(())
}

/// One link `left op right` of a comparison chain.
pub(super) fn integer_pair(
    left: &Expr,
    op: CmpOp,
    right: &Expr,
    var: &str,
    starts: &mut Vec<i128>,
) -> Option<()> {
    let is_var = |x: &Expr| matches!(x, Expr::Ref(n) if n == var);
    let (c, op) = match (left, right) {
        (l, Expr::Const(c)) if is_var(l) => (c, op),
        (Expr::Const(c), r) if is_var(r) => (
            c,
            match op {
                CmpOp::Lt => CmpOp::Gt,
                CmpOp::LtE => CmpOp::GtE,
                CmpOp::Gt => CmpOp::Lt,
                CmpOp::GtE => CmpOp::LtE,
                CmpOp::Eq | CmpOp::NotEq | CmpOp::Is | CmpOp::IsNot => op,
                CmpOp::In | CmpOp::NotIn => return None,
            },
        ),
        (l, r) if is_var(l) || is_var(r) => return None,
        _ => return Some(()),
    };
    match (c, op) {
        // A null test: no integer equals null.
        (Const::None, CmpOp::Eq | CmpOp::NotEq | CmpOp::Is | CmpOp::IsNot) => {}
        (Const::Int(i), _) => {
            let i = small(*i)?;
            match op {
                CmpOp::Lt | CmpOp::GtE => starts.push(i),
                CmpOp::LtE | CmpOp::Gt => starts.push(i + 1),
                CmpOp::Eq | CmpOp::NotEq => starts.extend([i, i + 1]),
                _ => return None,
            }
        }
        _ => return None,
    }
    Some(())
}
