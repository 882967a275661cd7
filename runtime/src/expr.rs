//! Evaluates a compiled `context_expression` over the channel context with
//! Python's semantics (§2.3.3): missing keys read as None, `and`/`or`
//! short-circuit and return an operand, type errors raise with Python's text.

use mzk_analyzer::syntax::expression::{CmpOp, Const, Expr};
use serde_json::{Map, Value};

use crate::error::Error;
use crate::value::{py_cmp, py_eq, py_type, truthy};

/// What an operand evaluates to: JSON data, or one of the few Python values
/// JSON cannot hold (tuples behave as lists here).
#[derive(Debug, Clone)]
enum Py {
    Data(Value),
    Bytes(Vec<u8>),
    /// `len`, `...`, `1j`: only identity and equality with themselves.
    Opaque(String),
}

fn truth(v: &Py) -> bool {
    match v {
        Py::Data(d) => truthy(d),
        Py::Bytes(b) => !b.is_empty(),
        Py::Opaque(_) => true,
    }
}

fn type_name(v: &Py) -> String {
    match v {
        Py::Data(d) => py_type(d).to_string(),
        Py::Bytes(_) => "bytes".into(),
        Py::Opaque(o) if o == "len" => "builtin_function_or_method".into(),
        Py::Opaque(o) if o == "Ellipsis" => "ellipsis".into(),
        Py::Opaque(_) => "complex".into(),
    }
}

fn eq(a: &Py, b: &Py) -> bool {
    match (a, b) {
        (Py::Data(x), Py::Data(y)) => py_eq(x, y),
        (Py::Bytes(x), Py::Bytes(y)) => x == y,
        (Py::Opaque(x), Py::Opaque(y)) => x == y,
        _ => false,
    }
}

/// The result of `rule.when(context)`: the expression's truth value, or what
/// Python raises.
pub fn evaluate(expr: &Expr, context: &Map<String, Value>) -> Result<bool, Error> {
    eval(expr, context).map(|v| truth(&v)).map_err(Error::Eval)
}

// `eval` recurses once per tree level and must fit the deepest compilable tree
// on a small stack, so its error stays a plain String (Python's text) and is
// typed once, in `evaluate`.

fn eval(expr: &Expr, ctx: &Map<String, Value>) -> Result<Py, String> {
    Ok(match expr {
        Expr::Ref(name) => Py::Data(ctx.get(name).cloned().unwrap_or(Value::Null)),
        Expr::Const(c) => match c {
            Const::None => Py::Data(Value::Null),
            Const::Bool(b) => Py::Data(Value::Bool(*b)),
            Const::Int(i) => {
                Py::Data(i64::try_from(*i).map_or_else(|_| float(*i as f64), Value::from))
            }
            Const::Float(f) => Py::Data(float(*f)),
            Const::Str(s) => Py::Data(Value::String(s.clone())),
            Const::Bytes(b) => Py::Bytes(b.clone()),
            Const::Other(o) => Py::Opaque(o.clone()),
        },
        Expr::List(items) | Expr::Tuple(items) => {
            let mut out = Vec::with_capacity(items.len());
            for item in items {
                match eval(item, ctx)? {
                    Py::Data(d) => out.push(d),
                    // Containers of bytes or builtins never match context data.
                    other => out.push(Value::String(format!("\u{0}{other:?}"))),
                }
            }
            Py::Data(Value::Array(out))
        }
        Expr::Not(inner) => Py::Data(Value::Bool(!truth(&eval(inner, ctx)?))),
        Expr::And(items) => {
            let mut last = Py::Data(Value::Bool(true));
            for item in items {
                last = eval(item, ctx)?;
                if !truth(&last) {
                    break;
                }
            }
            last
        }
        Expr::Or(items) => {
            let mut last = Py::Data(Value::Bool(false));
            for item in items {
                last = eval(item, ctx)?;
                if truth(&last) {
                    break;
                }
            }
            last
        }
        Expr::Compare(first, links) => {
            let mut left = eval(first, ctx)?;
            for (op, right_expr) in links {
                let right = eval(right_expr, ctx)?;
                if !compare(&left, *op, &right)? {
                    return Ok(Py::Data(Value::Bool(false)));
                }
                left = right;
            }
            Py::Data(Value::Bool(true))
        }
        Expr::Len(args) => {
            if args.len() != 1 {
                return Err(format!(
                    "len() takes exactly one argument ({} given)",
                    args.len()
                ));
            }
            let n = match eval(&args[0], ctx)? {
                Py::Data(Value::String(s)) => s.chars().count(),
                Py::Data(Value::Array(a)) => a.len(),
                Py::Data(Value::Object(o)) => o.len(),
                Py::Bytes(b) => b.len(),
                other => {
                    return Err(format!(
                        "object of type '{}' has no len()",
                        type_name(&other)
                    ))
                }
            };
            Py::Data(Value::from(n))
        }
        Expr::Lookup(args) => {
            if args.len() != 1 {
                return Err(format!(
                    "__ctx() takes 1 positional argument but {} were given",
                    args.len()
                ));
            }
            match eval(&args[0], ctx)? {
                Py::Data(Value::String(key)) => {
                    Py::Data(ctx.get(&key).cloned().unwrap_or(Value::Null))
                }
                _ => Py::Data(Value::Null),
            }
        }
        Expr::LenFunction => Py::Opaque("len".into()),
    })
}

fn float(f: f64) -> Value {
    serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)
}

fn compare(a: &Py, op: CmpOp, b: &Py) -> Result<bool, String> {
    use std::cmp::Ordering::*;
    Ok(match op {
        CmpOp::Eq => eq(a, b),
        CmpOp::NotEq => !eq(a, b),
        // Identity: None, True and False are singletons; other values are
        // distinct objects unless they are the same constant.
        CmpOp::Is | CmpOp::IsNot => {
            let same = match (a, b) {
                (Py::Data(Value::Null), Py::Data(Value::Null)) => true,
                (Py::Data(Value::Bool(x)), Py::Data(Value::Bool(y))) => x == y,
                (Py::Opaque(x), Py::Opaque(y)) => x == y,
                _ => false,
            };
            same == (op == CmpOp::Is)
        }
        CmpOp::In | CmpOp::NotIn => {
            let found = match (a, b) {
                (Py::Data(Value::String(needle)), Py::Data(Value::String(hay))) => {
                    hay.contains(needle.as_str())
                }
                (_, Py::Data(Value::String(_))) => {
                    return Err(format!(
                        "'in <string>' requires string as left operand, not {}",
                        type_name(a)
                    ))
                }
                (Py::Data(item), Py::Data(Value::Array(items))) => {
                    items.iter().any(|x| py_eq(x, item))
                }
                (Py::Data(Value::String(key)), Py::Data(Value::Object(map))) => {
                    map.contains_key(key)
                }
                (Py::Data(Value::Array(_) | Value::Object(_)), Py::Data(Value::Object(_))) => {
                    return Err(format!("unhashable type: '{}'", type_name(a)))
                }
                (_, Py::Data(Value::Object(_))) => false,
                (_, Py::Data(Value::Array(_))) => false,
                (Py::Bytes(n), Py::Bytes(h)) => {
                    n.is_empty() || h.windows(n.len()).any(|w| w == n.as_slice())
                }
                _ => {
                    return Err(format!(
                        "argument of type '{}' is not iterable",
                        type_name(b)
                    ))
                }
            };
            found == (op == CmpOp::In)
        }
        CmpOp::Lt | CmpOp::LtE | CmpOp::Gt | CmpOp::GtE => {
            let ordering = match (a, b) {
                (Py::Data(x), Py::Data(y)) => {
                    py_cmp(x, y, op.as_str()).map_err(|e| e.to_string())?
                }
                (Py::Bytes(x), Py::Bytes(y)) => x.cmp(y),
                _ => {
                    return Err(format!(
                        "'{}' not supported between instances of '{}' and '{}'",
                        op.as_str(),
                        type_name(a),
                        type_name(b)
                    ))
                }
            };
            match op {
                CmpOp::Lt => ordering == Less,
                CmpOp::LtE => ordering != Greater,
                CmpOp::Gt => ordering == Greater,
                _ => ordering != Less,
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use mzk_analyzer::syntax::expression::compile;
    use serde_json::json;

    use super::*;

    fn run(src: &str, ctx: Value) -> Result<bool, String> {
        let (expr, _) = compile(src).expect(src);
        evaluate(&expr, ctx.as_object().unwrap()).map_err(|e| e.to_string())
    }

    #[test]
    fn conformance_11_expression_success_and_fall_through() {
        let src = "${route} == 'review' and len(${items}) > 0";
        assert_eq!(
            run(src, json!({"route": "review", "items": ["a"]})),
            Ok(true)
        );
        assert_eq!(run(src, json!({"route": "review", "items": []})), Ok(false));
    }

    #[test]
    fn conformance_13_type_errors_raise_with_pythons_text() {
        assert_eq!(
            run("len(${missing}) > 0", json!({})),
            Err("object of type 'NoneType' has no len()".into())
        );
        assert_eq!(
            run("${missing} < 1", json!({})),
            Err("'<' not supported between instances of 'NoneType' and 'int'".into())
        );
        // The guard the spec recommends short-circuits.
        assert_eq!(run("${x} and len(${x}) > 0", json!({})), Ok(false));
    }

    #[test]
    fn python_semantics() {
        let ctx = json!({"s": "partial", "n": 3, "flag": true, "m": {"k": 1}});
        for (src, expected) in [
            ("${s} in ['completed', 'partial']", true),
            ("${s} not in ('completed',)", true),
            ("1 < ${n} <= 3", true),
            ("${flag} == 1", true),
            ("${flag} is True", true),
            ("${absent} is None", true),
            ("'k' in ${m}", true),
            ("'art' in ${s}", true),
            ("not ${absent}", true),
            ("${s} == 'done' or ${n} >= 4", false),
            ("(${n})", true),
            ("${n} == (3)", true),
            ("[] == ()", true),
            ("len", true),
            ("__ctx('n') == 3", true),
        ] {
            assert_eq!(run(src, ctx.clone()), Ok(expected), "{src}");
        }
        assert!(run("1 in ${n}", ctx.clone())
            .unwrap_err()
            .contains("not iterable"));
    }

    /// The deepest trees the compiler lets through evaluate on half the
    /// stack of the threads that run them.
    #[test]
    fn the_deepest_compilable_trees_evaluate_on_a_small_stack() {
        let deepest = [
            format!("{}${{a}}", "not ".repeat(999)),
            format!("{}1 in ${{a}}{}", "(".repeat(199), ")".repeat(199)),
            format!("{}${{a}}{}", "len([".repeat(99), "])".repeat(99)),
            format!(
                "{}{}${{a}}{}",
                "len([not ".repeat(99),
                "not ".repeat(700),
                "])".repeat(99)
            ),
        ];
        for src in deepest {
            let outcome = std::thread::Builder::new()
                .stack_size(mzk_analyzer::base::limits::THREAD_STACK_BYTES / 2)
                .spawn(move || run(&src, json!({"a": [1]})))
                .unwrap()
                .join()
                .expect("no stack overflow");
            assert!(outcome.is_ok(), "{outcome:?}");
        }
    }
}
