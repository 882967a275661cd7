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
            .stack_size(crate::base::limits::THREAD_STACK_BYTES / 2)
            .spawn(move || compile(&src).is_ok())
            .unwrap()
            .join()
            .expect("no stack overflow");
        assert!(compiled);
    }
}
