use super::*;

fn run(src: &str, vals: &[(&str, Value)]) -> Option<bool> {
    let (e, _) = compile(src).unwrap();
    let lookup = |n: &str| {
        vals.iter()
            .find(|(k, _)| *k == n)
            .map_or(Value::Null, |(_, v)| v.clone())
    };
    eval(&e, &lookup).map(|p| truthy(&p))
}

fn cuts(src: &str) -> Option<Vec<Span>> {
    let (e, _) = compile(src).unwrap();
    let mut starts = Vec::new();
    integer_uses(&e, "n", true, &mut starts)?;
    Some(partition(starts))
}

fn span(lo: Option<i128>, hi: Option<i128>) -> Span {
    Span { lo, hi }
}

#[test]
fn the_integer_line_is_cut_where_a_comparison_changes() {
    assert_eq!(
        cuts("${n} < 3"),
        Some(vec![span(None, Some(2)), span(Some(3), None)])
    );
    // `<=` and a constant on the left cut after the constant.
    assert_eq!(cuts("3 >= ${n}"), cuts("${n} <= 3"));
    assert_eq!(
        cuts("${n} <= 3"),
        Some(vec![span(None, Some(3)), span(Some(4), None)])
    );
    // Equality isolates the constant; a chain cuts at both ends.
    assert_eq!(
        cuts("${n} == 2 or 0 < ${n} < 5"),
        Some(vec![
            span(None, Some(0)),
            span(Some(1), Some(1)),
            span(Some(2), Some(2)),
            span(Some(3), Some(4)),
            span(Some(5), None)
        ])
    );
    // A bare reference is a test against 0; a null test cuts nothing.
    assert_eq!(
        cuts("${n} is not None and not ${n}"),
        Some(vec![
            span(None, Some(-1)),
            span(Some(0), Some(0)),
            span(Some(1), None)
        ])
    );
    assert_eq!(cuts("${other} == 'x'"), Some(vec![span(None, None)]));
    // Each stretch's representative lies in it.
    for p in cuts("${n} == 2 or 0 < ${n} < 5").unwrap() {
        let r = p.representative();
        assert!(p.lo.is_none_or(|l| l <= r) && p.hi.is_none_or(|h| r <= h));
    }
}

#[test]
fn other_uses_of_an_integer_are_not_understood() {
    for src in [
        "${n} < ${m}",
        "${n} == '3'",
        "${n} == 1.5",
        "${n} in [1, 2]",
        "len(${n}) > 0",
        "(${n} or 1) > 0",
        "${n} < 9007199254740993",
    ] {
        assert_eq!(cuts(src), None, "{src}");
    }
}

#[test]
fn witnesses_name_the_stretch() {
    assert_eq!(span(Some(3), None).describe("n"), "`n` ≥ 3");
    assert_eq!(span(None, Some(2)).describe("n"), "`n` ≤ 2");
    assert_eq!(span(Some(3), Some(3)).describe("n"), "`n` is `3`");
    assert_eq!(span(Some(3), Some(4)).describe("n"), "3 ≤ `n` ≤ 4");
}

#[test]
fn python_semantics() {
    let s = |x: &str| Value::Str(x.into());
    assert_eq!(
        run(
            "${a} == 'x' and ${b}",
            &[("a", s("x")), ("b", Value::Bool(true))]
        ),
        Some(true)
    );
    assert_eq!(run("${a} in ['x', 'y']", &[("a", s("y"))]), Some(true));
    assert_eq!(run("${a} not in ['x', 'y']", &[("a", s("z"))]), Some(true));
    assert_eq!(run("${n} >= 3", &[("n", Value::Int(3.into()))]), Some(true));
    // None < 1 raises: not modelled, nothing claimed.
    assert_eq!(run("${n} < 1", &[]), None);
    assert_eq!(run("${a} == 1", &[("a", Value::Bool(true))]), Some(true));
    assert_eq!(run("not ${a}", &[]), Some(true));
    assert_eq!(run("${a} is None", &[]), Some(true));
}
