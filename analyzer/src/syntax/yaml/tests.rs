//! The YAML layer's tests: ranges, PyYAML's values and its errors.

use super::*;
use crate::syntax::Value;

fn parse_ok(text: &str) -> (Node, Vec<Diagnostic>) {
    let mut diags = Vec::new();
    let doc = parse(text, FileId(0), &mut diags);
    (doc.root.expect("root"), diags)
}

fn codes(text: &str) -> Vec<&'static str> {
    let mut diags = Vec::new();
    parse(text, FileId(0), &mut diags);
    diags.iter().map(|d| d.rule.code()).collect()
}

#[test]
fn ranges_are_bytes_and_exact() {
    let text = "é: 'ü😀'\nlist:\n  - a\n  - {b: 1}\n";
    let (root, diags) = parse_ok(text);
    assert!(diags.is_empty());
    let e = &root.as_map().unwrap()[0];
    assert_eq!(
        &text[e.key.range.start as usize..e.key.range.end as usize],
        "é"
    );
    assert_eq!(
        &text[e.value.range.start as usize..e.value.range.end as usize],
        "'ü😀'"
    );
    let list = root.get("list").unwrap();
    assert_eq!(
        &text[list.range.start as usize..list.range.end as usize],
        "- a\n  - {b: 1}"
    );
    let flow = &list.as_seq().unwrap()[1];
    assert_eq!(
        &text[flow.range.start as usize..flow.range.end as usize],
        "{b: 1}"
    );
}

#[test]
fn quoted_scalars_end_at_their_closing_quote() {
    let text = "a: \"x \\\" == 'd'\"   # comment\nb: 'it''s'  # c\n";
    let (root, _) = parse_ok(text);
    let a = root.get("a").unwrap().range;
    assert_eq!(&text[a.start as usize..a.end as usize], "\"x \\\" == 'd'\"");
    let b = root.get("b").unwrap().range;
    assert_eq!(&text[b.start as usize..b.end as usize], "'it''s'");
}

#[test]
fn duplicate_keys_keep_the_last_value() {
    let (root, diags) = parse_ok("k: 1\nk: 2\n");
    assert_eq!(
        root.get("k").unwrap().as_scalar().unwrap().value,
        Value::Int(2.into())
    );
    assert_eq!(diags.len(), 1);
    assert_eq!(diags[0].rule, Rule::DuplicateKey);
    assert_eq!(diags[0].range, TextRange::new(5, 6));
    assert_eq!(diags[0].related[0].range, TextRange::new(0, 1));
    // yes and true are the same key to PyYAML.
    assert_eq!(codes("yes: 1\ntrue: 2\n"), vec!["MZ002"]);
}

#[test]
fn merge_keys_follow_pyyaml() {
    let text = "base: &b {x: 1, name: p}\nother: &o {name: q}\nitem:\n  <<: [*b, *o]\n  x: 5\n";
    let (root, diags) = parse_ok(text);
    assert!(diags.is_empty(), "{diags:?}");
    let item = root.get("item").unwrap();
    assert_eq!(
        item.get("x").unwrap().as_scalar().unwrap().value,
        Value::Int(5.into())
    );
    assert_eq!(item.get("name").unwrap().as_str(), Some("q"));
}

#[test]
fn merged_one_character_keys_keep_the_first_source() {
    // PyYAML 6.0.4 skips a merged key whose text is the same Python object
    // as an earlier one: CPython shares one-character strings, so `x` and
    // `1` keep the first source's value, `xx` the last's.
    let (root, diags) = parse_ok("m:\n  <<: [{x: 1, xx: 1, 1: a}, {x: 2, xx: 2, '1': b, 1: c}]\n");
    assert!(diags.is_empty(), "{diags:?}");
    let m = root.get("m").unwrap();
    let Some(NodeKind::Map(entries)) = Some(&m.kind) else {
        panic!("m is a mapping");
    };
    let values: Vec<String> = entries
        .iter()
        .map(|e| format!("{:?}", e.value.as_scalar().unwrap().value))
        .collect();
    assert_eq!(entries.len(), 3, "{values:?}");
    assert_eq!(
        m.get("x").unwrap().as_scalar().unwrap().value,
        Value::Int(1.into())
    );
    assert_eq!(
        m.get("xx").unwrap().as_scalar().unwrap().value,
        Value::Int(2.into())
    );
    assert_eq!(values[2], format!("{:?}", Value::Str("a".into())));
}

#[test]
fn alias_bomb_is_bounded() {
    let mut text = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..10 {
        let prev = format!("*a{}", i - 1);
        text.push_str(&format!(
            "a{i}: &a{i} [{}]\n",
            [prev.as_str(); 10].join(", ")
        ));
    }
    let started = std::time::Instant::now();
    let got = codes(&text);
    assert!(got.contains(&"MZ003"), "{got:?}");
    assert!(started.elapsed().as_secs() < 5);
}

#[test]
fn syntax_problems_become_diagnostics() {
    assert_eq!(codes("a: b: c\n"), vec!["MZ001"]);
    assert_eq!(codes("a: 1\n---\nb: 2\n"), vec!["MZ004"]);
    assert_eq!(codes("a:\n\t- b\n"), vec!["MZ006"]);
    assert_eq!(codes("a:\tb\n"), vec!["MZ006"]);
    assert_eq!(codes("a: b\t# comment\n"), vec!["MZ006"]);
    assert_eq!(codes("a: [1,\tb]\n"), vec!["MZ006"]);
    assert_eq!(codes("a: \"x\ty\"\n# c\tomment\n"), Vec::<&str>::new());
    assert_eq!(codes("a: \u{7}\n"), vec!["MZ005"]);
    assert_eq!(codes("d: 2026-02-30\n"), vec!["MZ009"]);
    assert_eq!(codes("d: !custom x\n"), vec!["MZ009"]);
    assert_eq!(codes("a: *nowhere\n"), vec!["MZ001"]);
    // Where YAML 1.2 readers accept and PyYAML refuses.
    assert_eq!(codes("a: [x, >y]\n"), vec!["MZ001"]);
    assert_eq!(codes("a: &x 1\nb: *x.y\n"), vec!["MZ001"]);
    // A second document stops the reading, as in PyYAML, before its errors.
    assert_eq!(codes("a: 1\n---\n- b\n: c\n"), vec!["MZ004"]);
    for text in ["a: 1\n: b\n", "- : b\n", "a: {x: 1, : 2}\n"] {
        assert_eq!(codes(text), vec!["MZ001"], "{text:?}");
    }
    assert_eq!(codes("?\n: b\n"), Vec::<&str>::new());
    assert_eq!(codes("? [a]\n: b\n"), vec!["MZ009"]);
    assert_eq!(codes("{[a]: b}\n"), vec!["MZ009"]);
    // `!` alone is the non-specific tag: the node's default constructor.
    for text in [
        "a: !\n  b: 1\n",
        "a: ! [1]\n",
        "a: ! \"x\"\n",
        "a: !\nb: 1\n",
    ] {
        assert_eq!(codes(text), Vec::<&str>::new(), "{text:?}");
    }
}

#[test]
fn quoted_scalars_pyyaml_accepts_keep_their_values() {
    // Continuation lines indented less than YAML 1.2 asks: PyYAML reads
    // these, folding line breaks as in any quoted scalar.
    let (root, diags) = parse_ok("a: \"foo\nbar\"\nb:\n  c: 'x\n\n y''s'\n  d: \"p\\\nq\"\n");
    assert!(diags.is_empty(), "{diags:?}");
    assert_eq!(root.get("a").and_then(Node::as_str), Some("foo bar"));
    let b = root.get("b").unwrap();
    assert_eq!(b.get("c").and_then(Node::as_str), Some("x\ny's"));
    assert_eq!(b.get("d").and_then(Node::as_str), Some("pq"));
    assert_eq!(root.get("a").unwrap().range, TextRange::new(3, 12));
    // Unclosed, the same scalar is PyYAML's "unexpected end of stream".
    let mut diags = Vec::new();
    parse("a: \"foo\nb: 1\n", FileId(0), &mut diags);
    assert_eq!(diags.len(), 1);
    assert_eq!(diags[0].range, TextRange::empty(13));
    assert!(diags[0].message.contains("found unexpected end of stream"));
}

#[test]
fn bom_crlf_and_empty_documents() {
    let (root, diags) = parse_ok("\u{feff}a: 1\r\nb: yes\r\n");
    assert!(diags.is_empty());
    assert_eq!(
        root.get("b").unwrap().as_scalar().unwrap().value,
        Value::Bool(true)
    );
    assert_eq!(root.get("a").unwrap().range, TextRange::new(6, 7));
    let mut diags = Vec::new();
    assert_eq!(
        parse("# only a comment\n", FileId(0), &mut diags).root,
        None
    );
    assert!(diags.is_empty());
}

#[test]
fn oversized_files_are_refused_before_parsing() {
    let text = "- v\n".repeat(MAX_FILE_BYTES / 4 + 1);
    assert_eq!(codes(&text), vec!["MZ007"]);
    let text = "- v\n".repeat(1000);
    assert!(codes(&text).is_empty());
}

#[test]
fn deep_nesting_is_refused_not_recursed() {
    let text: String = (0..400).map(|i| format!("{}a:\n", " ".repeat(i))).collect();
    assert!(codes(&text).contains(&"MZ008"));
    let flow = format!("{}1{}", "[".repeat(5000), "]".repeat(5000));
    assert!(!codes(&flow).is_empty());
}

#[test]
fn python_str_of_collections() {
    let (root, _) = parse_ok("a: [a, 1, yes]\nb: {a: 1}\n");
    assert_eq!(root.get("a").unwrap().python_str(), "['a', 1, True]");
    assert_eq!(root.get("b").unwrap().python_str(), "{'a': 1}");
}

#[test]
fn a_forbidden_character_is_found_wherever_it_stands() {
    let allowed = "key: value é\t\r\n";
    for bad in ['\u{1}', '\u{7f}', '\u{fffe}', '\u{9f}'] {
        for at in 0..60 {
            let mut text: String = allowed.chars().cycle().take(at).collect();
            let offset = text.len();
            text.push(bad);
            text.push_str(&"x".repeat(40));
            assert_eq!(
                super::forbidden_char(&text),
                Some((offset, bad)),
                "{bad:?} after {at} characters"
            );
        }
    }
    assert_eq!(super::forbidden_char(&"abc ".repeat(100)), None);
}

/// A BOM inside the document is an ordinary character to PyYAML (copy-paste
/// from Windows editors leaves them in prompts); only the one at offset 0 is
/// skipped. Found by the differential test against PyYAML.
#[test]
fn a_bom_inside_the_document_is_text() {
    let text = "prompt: Hello\u{feff} world\nkey\u{feff}: 'q\u{feff}'\nother: \u{e000}\n";
    let (root, diags) = parse_ok(text);
    assert!(diags.is_empty(), "{diags:?}");
    assert_eq!(
        root.get("prompt").unwrap().as_str(),
        Some("Hello\u{feff} world")
    );
    assert_eq!(root.get("key\u{feff}").unwrap().as_str(), Some("q\u{feff}"));
    // The text's own private-use characters stay what they are.
    assert_eq!(root.get("other").unwrap().as_str(), Some("\u{e000}"));
    let value = root.get("prompt").unwrap().range;
    assert_eq!(
        &text[value.start as usize..value.end as usize],
        "Hello\u{feff} world"
    );
}

/// PyYAML's anchor names are ASCII letters, digits, `-` and `_` (saphyr
/// takes any non-space characters); the error is at the first other
/// character, as PyYAML reports it. Found by the differential test.
#[test]
fn anchor_names_are_pyyaml_names() {
    for (text, at) in [
        ("a: &x.y 1\n", 5),
        ("a: &é [1]\n", 4),
        ("a:\n  - &ok 1\n  - &n|o\n    b: 2\n", 19),
        ("a: &ok # &not.this\n  b: 1\n", usize::MAX),
    ] {
        let mut diags = Vec::new();
        parse(text, FileId(0), &mut diags);
        let first = diags.iter().find(|d| d.rule == Rule::YamlSyntax);
        match at {
            usize::MAX => assert!(first.is_none(), "{text:?}: {diags:?}"),
            at => {
                let first = first.unwrap_or_else(|| panic!("{text:?}: no error"));
                assert_eq!(first.range.start as usize, at, "{text:?}: {first:?}");
                assert!(
                    first.message.contains("while scanning an anchor"),
                    "{first:?}"
                );
            }
        }
    }
}

/// The first error of each case, where PyYAML 6.0.4 raises it.
fn first_error(text: &str) -> (&'static str, u32) {
    let mut diags = Vec::new();
    parse(text, FileId(0), &mut diags);
    let first = diags.first().expect("an error");
    (first.rule.code(), first.range.start)
}

#[test]
fn construction_errors_come_in_pyyaml_s_order() {
    // PyYAML constructs the root's values before its children's: `!y` at
    // the root is the error it raises, though `!x` comes first in the text.
    assert_eq!(first_error("a:\n  b: !x 1\nc: !y 2\n"), ("MZ009", 16));
    // A merge source is merged, never constructed: its tag is not looked up.
    let (root, diags) = parse_ok("<<: !x {a: 1}\n");
    assert!(diags.is_empty(), "{diags:?}");
    assert_eq!(
        root.get("a").unwrap().as_scalar().unwrap().value,
        Value::Int(1.into())
    );
}

#[test]
fn tagged_values_are_constructed_as_pyyaml_does() {
    let value = |text: &str| {
        parse_ok(text)
            .0
            .get("k")
            .unwrap()
            .as_scalar()
            .unwrap()
            .value
            .clone()
    };
    assert_eq!(value("k: !!binary 'aGk='\n"), Value::Binary(b"hi".to_vec()));
    assert_eq!(value("k: !!float 1:30.5\n"), Value::Float(90.5));
    // A negative zero offset is UTC, as Python's timezone prints it.
    assert_eq!(
        format!("{:?}", value("k: 2001-12-14 21:59:43.10 -0:00\n")),
        format!("{:?}", value("k: 2001-12-14 21:59:43.10 +00:00\n"))
    );
    // CPython's base64: a group without its pad, or of one character.
    assert_eq!(first_error("k: !!binary aGk\n"), ("MZ009", 3));
    assert_eq!(first_error("k: !!binary 'a'\n"), ("MZ009", 3));
    assert_eq!(first_error("k: !!binary 'é'\n"), ("MZ009", 3));
    // Python's int() of text that is no number: an error, never a panic
    // (the base's prefix is looked for on characters, not bytes).
    assert_eq!(first_error("k: !!int 0é\n"), ("MZ009", 3));
    assert_eq!(first_error("k: !!int 0bé\n"), ("MZ009", 3));
    assert_eq!(first_error("k: !!float é\n"), ("MZ009", 3));
    // `!` makes a quoted `*` implicit, and PyYAML resolves it to `!!yaml`.
    assert_eq!(first_error("k: ! \"*\"\n"), ("MZ009", 3));
}
