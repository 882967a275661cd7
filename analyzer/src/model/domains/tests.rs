use std::path::{Path, PathBuf};

use super::*;
use crate::{analyze_bundle, MemoryFs};

/// The MZ307 rule fixture in memory, with `record.py` replaced.
pub(crate) fn judge(record: &str) -> crate::Analysis {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/rules/MZ307");
    let mut fs = MemoryFs::new();
    for entry in std::fs::read_dir(&source).unwrap() {
        let path = entry.unwrap().path();
        if path.is_file() {
            fs.insert(
                PathBuf::from("/w/MZ307").join(path.file_name().unwrap()),
                std::fs::read(&path).unwrap(),
            );
        }
    }
    fs.insert(
        PathBuf::from("/w/MZ307/tools/record.py"),
        record.as_bytes().to_vec(),
    );
    analyze_bundle(&fs, Path::new("/w/MZ307"))
}

/// The `domains/IntervalUncovered` fixture in memory, with files replaced.
fn interval(replace: &[(&str, &str)]) -> crate::Analysis {
    let source =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/domains/IntervalUncovered");
    let mut fs = MemoryFs::new();
    for rel in [
        "agents.yaml",
        "context_variables.yaml",
        "orchestrator.yaml",
        "structured_outputs.yaml",
        "tools.yaml",
        "transition_graph.yaml",
        "tools/record.py",
    ] {
        let text = replace.iter().find(|(r, _)| *r == rel).map_or_else(
            || std::fs::read(source.join(rel)).unwrap(),
            |(_, t)| t.as_bytes().to_vec(),
        );
        fs.insert(PathBuf::from("/w/B").join(rel), text);
    }
    analyze_bundle(&fs, Path::new("/w/B"))
}

#[test]
fn an_int_field_through_an_auto_tool_is_any_integer() {
    let a = interval(&[]);
    let Some(Domain::Integers(d)) = a.bundle.domains().of("revision_count") else {
        panic!("{:?}", a.bundle.domains().of("revision_count"));
    };
    assert!(!d.may_be_null);
    assert_eq!(d.fresh_for, vec!["JudgeAgent".to_string()]);
    let f = a.bundle.file_at("context_variables.yaml").unwrap();
    let at = f.text.find("revision_count:").unwrap() as u32 + 2;
    let text = crate::ide::hover(&a, f.id, at).unwrap().1;
    assert!(
        text.contains("Values: any integer (`tools/record.py` line 3 writes `JudgeVerdict.revision_count` through auto tool `record_verdict`; default `0`)"),
        "{text}"
    );
}

#[test]
fn integers_beside_other_values_are_unknown() {
    let so = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../tests/fixtures/domains/IntervalUncovered/structured_outputs.yaml"),
    )
    .unwrap();
    let string_default = so.replace(
        "revision_count: {type: int}",
        "revision_count: {type: int, default: 'none'}",
    );
    let cv_string = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../tests/fixtures/domains/IntervalUncovered/context_variables.yaml"),
    )
    .unwrap()
    .replace("type: integer", "type: string");
    for replace in [
        // a string written beside the integers
        vec![("tools/record.py", "def record_verdict(verdict: str, revision_count: int, context_variables=None):\n    context_variables.set(\"revision_count\", revision_count)\n    context_variables.set(\"revision_count\", 'many')\n")],
        // a default Pydantic does not validate
        vec![("structured_outputs.yaml", string_default.as_str())],
        // a declared type persistence rejects integers with
        vec![("context_variables.yaml", cv_string.as_str())],
        // a computed value
        vec![("tools/record.py", "def record_verdict(verdict: str, revision_count: int, context_variables=None):\n    context_variables.set(\"revision_count\", revision_count + 1)\n")],
    ] {
        let a = interval(&replace);
        assert!(
            matches!(a.bundle.domains().of("revision_count"), Some(Domain::Unknown(_))),
            "{replace:?}: {:?}",
            a.bundle.domains().of("revision_count")
        );
    }
    // An optional field may write null.
    let optional = so.replace(
        "revision_count: {type: int}",
        "revision_count: {type: int, default: null}",
    );
    let a = interval(&[("structured_outputs.yaml", optional.as_str())]);
    assert!(matches!(
        a.bundle.domains().of("revision_count"),
        Some(Domain::Integers(IntegerDomain {
            may_be_null: true,
            ..
        }))
    ));
}

fn values(a: &crate::Analysis, name: &str) -> Option<Vec<String>> {
    a.bundle
        .domains()
        .known(name)
        .map(|k| k.with_initial().iter().map(show).collect())
}

#[test]
fn a_literal_field_reaches_the_variable_through_the_auto_tool() {
    let a = judge("def record_verdict(verdict: str, context_variables=None):\n    context_variables.set(\"verdict\", verdict)\n");
    assert_eq!(
        values(&a, "verdict"),
        Some(vec![
            "publish".into(),
            "revise".into(),
            "reject".into(),
            "null".into()
        ])
    );
    // Hover shows the domain and where it comes from.
    let f = a.bundle.file_at("context_variables.yaml").unwrap();
    let at = f.text.find("verdict:").unwrap() as u32 + 2;
    let text = crate::ide::hover(&a, f.id, at).unwrap().1;
    assert!(
        text.contains("Values: `publish`, `revise`, `reject`, `null` until set (`tools/record.py` line 2 writes `JudgeVerdict.verdict` through auto tool `record_verdict`)"),
        "{text}"
    );
}

#[test]
fn a_writer_not_followed_makes_the_domain_unknown() {
    for record in [
        // the bridge handed on
        "def record_verdict(verdict: str, context_variables=None):\n    context_variables.set(\"verdict\", verdict)\n    helper(context_variables)\n",
        // a computed key
        "def record_verdict(verdict: str, context_variables=None):\n    for k, v in {\"verdict\": verdict}.items():\n        context_variables.set(k, v)\n",
        // a computed value
        "def record_verdict(verdict: str, context_variables=None):\n    context_variables.set(\"verdict\", verdict.title())\n",
        // the parameter rebound to what code mzk does not read returns
        "def record_verdict(verdict: str, context_variables=None):\n    verdict = compute(verdict)\n    context_variables.set(\"verdict\", verdict)\n",
        // no writer at all: mozaiks' own code might write it
        "def record_verdict(verdict: str, context_variables=None):\n    return verdict\n",
    ] {
        let a = judge(record);
        assert!(
            matches!(a.bundle.domains().of("verdict"), Some(Domain::Unknown(_))),
            "{record}: {:?}",
            a.bundle.domains().of("verdict")
        );
    }
}

#[test]
fn constants_written_on_every_branch() {
    let a = judge("def record_verdict(verdict: str, context_variables=None):\n    if verdict == 'publish':\n        context_variables.set('verdict', 'approved')  # done\n    else:\n        context_variables.set('verdict', None)\n");
    assert_eq!(
        values(&a, "verdict"),
        Some(vec!["approved".into(), "null".into()])
    );
}
