use std::sync::Arc;

use super::{Cond, Effect, ModuleEffects, Sym, WriteKind};
use crate::syntax::python_validity::check_and_read;
use crate::syntax::Value;

fn effects(src: &str) -> ModuleEffects {
    let (error, effects) = check_and_read(src, src.len());
    assert!(error.is_none(), "{error:?}");
    effects.expect("a module that compiles is read")
}

fn writes(m: &ModuleEffects, function: &str) -> Vec<(Sym, Sym, Cond)> {
    m.function(function)
        .expect("the function")
        .effects
        .iter()
        .filter_map(|e| match e {
            Effect::Write {
                kind: WriteKind::Set,
                key,
                value,
                when,
                ..
            } => Some((key.clone(), value.clone(), when.clone())),
            _ => None,
        })
        .collect()
}

fn s(v: &str) -> Sym {
    Sym::Const(Value::Str(v.into()))
}

#[test]
fn a_set_through_a_parameter_is_a_write_in_terms_of_the_parameters() {
    let m = effects("def tool(verdict, context_variables=None):\n    context_variables.set('verdict', verdict)\n");
    assert_eq!(
        writes(&m, "tool"),
        vec![(s("verdict"), Sym::Param(0), Cond::ALWAYS)]
    );
}

fn escapes(m: &ModuleEffects, function: &str) -> Vec<String> {
    m.function(function)
        .expect("the function")
        .effects
        .iter()
        .filter_map(|e| match e {
            Effect::Escape { what, .. } => Some(what.to_string()),
            _ => None,
        })
        .collect()
}

#[test]
fn guards_become_conditions_on_the_parameter() {
    let m = effects(
        "def tool(v, context_variables=None):\n    if context_variables is not None and hasattr(context_variables, 'set'):\n        context_variables.set('k', v)\n",
    );
    let present = Cond::Present(Sym::Param(1));
    assert_eq!(
        writes(&m, "tool"),
        vec![(
            s("k"),
            Sym::Param(0),
            Cond::And(vec![present.clone(), present])
        )]
    );
    // An early return: what follows runs when the test is false.
    let m = effects(
        "def tool(v, context_variables=None):\n    if context_variables is None:\n        return None\n    context_variables.set('k', v)\n",
    );
    let missing = Cond::Not(Arc::new(Cond::Present(Sym::Param(1))));
    assert_eq!(
        writes(&m, "tool"),
        vec![(s("k"), Sym::Param(0), Cond::Not(Arc::new(missing)))]
    );
}

#[test]
fn locals_follow_statement_order_and_join_branches() {
    let m = effects(
        "def tool(x, context_variables=None):\n    status = 'a'\n    status = 'b'\n    if x:\n        status = 'c'\n    context_variables.set('k', status)\n",
    );
    assert_eq!(
        writes(&m, "tool")[0].1,
        Sym::Choose(
            Arc::new(Cond::Present(Sym::Param(0))),
            Arc::new(s("c")),
            Arc::new(s("b"))
        )
    );
    // A loop makes what it assigns unknown; a handler sees the body's
    // assignments as unknown but its own as written.
    let m = effects(
        "def tool(xs, context_variables=None):\n    status = 'a'\n    for x in xs:\n        status = x\n    context_variables.set('k', status)\n    try:\n        r = 'ok'\n    except Exception:\n        r = 'failed'\n    context_variables.set('r', r)\n",
    );
    let w = writes(&m, "tool");
    assert!(matches!(w[0].1, Sym::Unknown(_)), "{:?}", w[0].1);
    assert_eq!(w[1].1, Sym::OneOf(vec![s("ok"), s("failed")]));
}

#[test]
fn a_parameter_kept_or_handed_to_what_is_not_followed_escapes() {
    for (src, what) in [
        ("def f(cv):\n    STORE['x'] = cv\n", "stores"),
        ("def f(cv):\n    other = cv and {}\n", "combines"),
        (
            "def f(cv):\n    def inner():\n        cv.set('k', 1)\n",
            "captures",
        ),
        (
            "def f(cv):\n    cv.update({'k': 1})\n",
            "calls `.update(…)` on",
        ),
        (
            "def f(cv):\n    cv.data['k'] = 1\n",
            "reads an attribute of",
        ),
        (
            "def f(cv):\n    obj = make()\n    obj.method(cv)\n",
            "hands to a method",
        ),
        ("def f(cv):\n    run(*[cv])\n", "stores"),
    ] {
        let m = effects(src);
        assert!(
            escapes(&m, "f").iter().any(|e| e == what),
            "{src}: {:?}",
            escapes(&m, "f")
        );
    }
    // Looking at it is not handing it on.
    for src in [
        "def f(cv):\n    if isinstance(cv, dict) or not hasattr(cv, 'get'):\n        return\n    logger.info('ctx %s', cv)\n    print(type(cv), f'{cv}')\n",
        "def f(cv):\n    value = cv.get('k')\n    keys = list(cv.keys())\n",
    ] {
        assert_eq!(escapes(&effects(src), "f"), Vec::<String>::new(), "{src}");
    }
}

#[test]
fn module_constants_tables_and_enum_members_are_read() {
    let m = effects(
        "from enum import Enum\n\nclass V(str, Enum):\n    A = 'a'\n\nTABLE = {'x': V.A, 'y': 'b'}\nONCE = 'one'\nTWICE = 1\nTWICE = 2\n",
    );
    assert_eq!(
        m.global("V.A"),
        Some(&Sym::Member {
            value: Value::Str("a".into()),
            str_based: true
        })
    );
    assert_eq!(m.global("V.A.value"), Some(&s("a")));
    assert_eq!(m.global("ONCE"), Some(&s("one")));
    assert_eq!(
        m.global("TWICE"),
        None,
        "a name bound twice is not a constant"
    );
    assert!(matches!(m.global("TABLE"), Some(Sym::Dict(items)) if items.len() == 2));
}

#[test]
fn values_stay_small_whatever_the_code_and_never_lose_the_parameter() {
    // A deep literal table, and a local rebuilt from itself 500 times.
    let deep = format!("T = {}1{}\n", "[".repeat(5000), "]".repeat(5000));
    let mut src = deep;
    src.push_str("def f(c):\n    return c\n\ndef tool(v, context_variables=None):\n    ctx = context_variables\n");
    for _ in 0..500 {
        src.push_str("    ctx = f(ctx)\n");
    }
    src.push_str("    ctx.set('k', v)\n");
    let m = effects(&src);
    assert!(
        !matches!(m.global("T"), Some(Sym::Seq(_))),
        "a table deeper than the reader keeps is not read"
    );
    let recv = m
        .function("tool")
        .unwrap()
        .effects
        .iter()
        .find_map(|e| match e {
            Effect::Write { recv, .. } => Some(recv.clone()),
            _ => None,
        })
        .expect("the write");
    // Never larger than a local may hold, and still the parameter it may be
    // (beside an unknown where it was cut short).
    assert!(super::function::size(&recv, 1000) <= 64, "{recv:?}");
    let text = format!("{recv:?}");
    assert!(text.contains("OneOf([Param(1), Unknown("), "{text}");
}
