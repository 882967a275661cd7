use super::{read, Written};
use crate::syntax::Value;

/// What the Python code of the MZ307 rule fixture writes, with `record.py`
/// replaced.
fn writes_of(record: &str) -> super::PythonWrites {
    read(&crate::model::domains::tests::judge(record).bundle)
}

fn consts(w: &super::PythonWrites, key: &str) -> Vec<(Value, bool)> {
    w.writes
        .get(key)
        .into_iter()
        .flatten()
        .filter_map(|w| match &w.value {
            Written::Const(v) => Some((v.clone(), w.unconditional)),
            _ => None,
        })
        .collect()
}

fn s(v: &str) -> Value {
    Value::Str(v.into())
}

#[test]
fn helpers_are_followed_with_the_values_passed_in() {
    let w = writes_of(
        "def _set(ctx, key, value):\n    if ctx is None:\n        return\n    ctx.set(key, value)\n\ndef record_verdict(verdict, context_variables=None):\n    _set(context_variables, 'verdict', 'done')\n    if verdict:\n        _set(context_variables, ' verdict ', True)\n",
    );
    assert_eq!(w.opaque, None);
    // The bridge strips its keys; a helper called under a condition writes
    // on some calls only.
    assert_eq!(
        consts(&w, "verdict"),
        vec![(s("done"), true), (Value::Bool(true), false)]
    );
}

#[test]
fn what_a_helper_returns_is_followed() {
    let w = writes_of(
        "def _status(ok):\n    if ok:\n        return 'passed'\n    return 'failed'\n\ndef record_verdict(verdict, context_variables=None):\n    context_variables['verdict'] = _status(verdict == 'publish')\n",
    );
    assert_eq!(
        consts(&w, "verdict"),
        vec![(s("passed"), true), (s("failed"), true)]
    );
}

#[test]
fn the_bridge_handed_to_code_mzk_does_not_read_makes_every_key_unknown() {
    for (src, why) in [
        ("from x import save\n\ndef record_verdict(verdict, context_variables=None):\n    save(context_variables)\n", "hands the context to `save`"),
        ("def record_verdict(verdict, context_variables=None):\n    ctx = context_variables and context_variables\n    ctx['k'] = 1\n", "combines the context"),
        ("def record_verdict(verdict, context_variables=None):\n    context_variables.set(f'k_{verdict}', 1)\n", "writes a key mzk cannot compute"),
        ("def record_verdict(verdict, context_variables=None):\n    getattr(context_variables, '_pending_set')['k'] = 1\n", "writes through a value that may be the context"),
    ] {
        let w = writes_of(src);
        let opaque = w.opaque.unwrap_or_default();
        assert!(opaque.contains(why), "{src}: {opaque}");
        assert!(opaque.contains("`tools/record.py` line"), "{opaque}");
    }
}

#[test]
fn a_helper_returning_the_bridge_is_still_followed() {
    let w = writes_of(
        "def _ctx(cv):\n    return cv\n\ndef record_verdict(verdict, context_variables=None):\n    ctx = _ctx(context_variables)\n    ctx.set('verdict', 'done')\n",
    );
    assert_eq!(w.opaque, None);
    assert_eq!(consts(&w, "verdict"), vec![(s("done"), true)]);
}

#[test]
fn writes_the_bridge_guards_rule_out_are_not_writes() {
    let w = writes_of(
        "def record_verdict(verdict, context_variables=None):\n    if context_variables is None:\n        context_variables = {}\n        context_variables['verdict'] = 'offline'\n    data = getattr(context_variables, 'data', None)\n    if isinstance(data, dict):\n        data['verdict'] = 'raw'\n    context_variables.set('verdict', 'done')\n",
    );
    assert_eq!(w.opaque, None, "{w:?}");
    assert_eq!(consts(&w, "verdict"), vec![(s("done"), true)]);
}

#[test]
fn helpers_that_fan_out_are_followed_within_a_budget() {
    // Each helper returns one of eight calls of the next: 8^12 paths, which
    // only a budget keeps from hanging.
    let mut src = String::new();
    for i in 0..12 {
        src.push_str(&format!("def f{i}(x):\n"));
        for b in 0..8 {
            src.push_str(&format!("    if x == {b}:\n        return f{}(x)\n", i + 1));
        }
        src.push_str(&format!("    return f{}(x)\n\n", i + 1));
    }
    src.push_str("def f12(x):\n    return 'done'\n\n");
    src.push_str("def record_verdict(verdict, context_variables=None):\n    context_variables.set('verdict', f0(verdict))\n");
    let w = writes_of(&src);
    // Followed as far as the budget goes, then nothing is claimed.
    let opaque = w.opaque.unwrap_or_default();
    assert!(
        opaque.contains("reaches more code than mzk follows"),
        "{opaque}"
    );
}
