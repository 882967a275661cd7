//! The evaluator of conditions over one assignment, with Python's
//! equality, truth and ordering.

use crate::syntax::expression::{CmpOp, Const, Expr};
use crate::syntax::Value;

/// A Python value the evaluator models.
#[derive(Debug, Clone)]
pub(super) enum Py {
    V(Value),
    List(Vec<Py>),
}

pub(super) fn truthy(p: &Py) -> bool {
    match p {
        Py::V(Value::Null) => false,
        Py::V(Value::Bool(b)) => *b,
        Py::V(Value::Int(i)) => i.get() != 0,
        Py::V(Value::Float(f)) => *f != 0.0,
        Py::V(Value::Str(s)) => !s.is_empty(),
        Py::V(_) => true,
        Py::List(xs) => !xs.is_empty(),
    }
}

pub(super) fn py_eq(a: &Py, b: &Py) -> bool {
    match (a, b) {
        (Py::V(x), Py::V(y)) => x.hash_key() == y.hash_key(),
        (Py::List(x), Py::List(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| py_eq(p, q))
        }
        _ => false,
    }
}

pub(super) fn number(v: &Value) -> Option<f64> {
    match v {
        Value::Bool(b) => Some(*b as i32 as f64),
        Value::Int(i) => Some(i.get() as f64),
        Value::Float(f) => Some(*f),
        _ => None,
    }
}

/// Orders two values as Python does; `None` where Python raises.
pub(super) fn py_cmp(a: &Py, b: &Py) -> Option<std::cmp::Ordering> {
    match (a, b) {
        (Py::V(Value::Str(x)), Py::V(Value::Str(y))) => Some(x.cmp(y)),
        (Py::V(x), Py::V(y)) => number(x)?.partial_cmp(&number(y)?),
        _ => None,
    }
}

/// Evaluates with Python's semantics; `None` when Python would raise or the
/// construct is not modelled.
pub(super) fn eval(e: &Expr, lookup: &dyn Fn(&str) -> Value) -> Option<Py> {
    Some(match e {
        Expr::Ref(n) => Py::V(lookup(n)),
        Expr::Const(c) => Py::V(match c {
            Const::None => Value::Null,
            Const::Bool(b) => Value::Bool(*b),
            Const::Int(i) => Value::Int((*i).into()),
            Const::Float(f) => Value::Float(*f),
            Const::Str(s) => Value::Str(s.clone()),
            Const::Bytes(_) | Const::Other(_) => return None,
        }),
        Expr::List(xs) | Expr::Tuple(xs) => {
            Py::List(xs.iter().map(|x| eval(x, lookup)).collect::<Option<_>>()?)
        }
        Expr::Not(x) => Py::V(Value::Bool(!truthy(&eval(x, lookup)?))),
        Expr::And(xs) => {
            let mut last = Py::V(Value::Bool(true));
            for x in xs {
                last = eval(x, lookup)?;
                if !truthy(&last) {
                    break;
                }
            }
            last
        }
        Expr::Or(xs) => {
            let mut last = Py::V(Value::Bool(false));
            for x in xs {
                last = eval(x, lookup)?;
                if truthy(&last) {
                    break;
                }
            }
            last
        }
        Expr::Compare(first, rest) => {
            let mut left = eval(first, lookup)?;
            for (op, x) in rest {
                let right = eval(x, lookup)?;
                let holds = match op {
                    CmpOp::Eq => py_eq(&left, &right),
                    CmpOp::NotEq => !py_eq(&left, &right),
                    CmpOp::Lt => py_cmp(&left, &right)?.is_lt(),
                    CmpOp::LtE => py_cmp(&left, &right)?.is_le(),
                    CmpOp::Gt => py_cmp(&left, &right)?.is_gt(),
                    CmpOp::GtE => py_cmp(&left, &right)?.is_ge(),
                    CmpOp::In | CmpOp::NotIn => {
                        let found = match (&left, &right) {
                            (_, Py::List(items)) => items.iter().any(|i| py_eq(&left, i)),
                            (Py::V(Value::Str(a)), Py::V(Value::Str(b))) => b.contains(a.as_str()),
                            _ => return None,
                        };
                        found == (*op == CmpOp::In)
                    }
                    CmpOp::Is | CmpOp::IsNot => {
                        let same = match (&left, &right) {
                            (Py::V(Value::Null), Py::V(Value::Null)) => true,
                            (Py::V(Value::Null), _) | (_, Py::V(Value::Null)) => false,
                            (Py::V(Value::Bool(a)), Py::V(Value::Bool(b))) => a == b,
                            _ => return None,
                        };
                        same == (*op == CmpOp::Is)
                    }
                };
                if !holds {
                    return Some(Py::V(Value::Bool(false)));
                }
                left = right;
            }
            Py::V(Value::Bool(true))
        }
        Expr::Len(args) => {
            let [arg] = args.as_slice() else { return None };
            match eval(arg, lookup)? {
                Py::V(Value::Str(s)) => Py::V(Value::Int((s.chars().count() as i128).into())),
                Py::List(xs) => Py::V(Value::Int((xs.len() as i128).into())),
                _ => return None,
            }
        }
        Expr::Lookup(_) | Expr::LenFunction => return None,
    })
}
