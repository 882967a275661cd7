//! `mzk check --fix`: which fixes are written and which are held back.

use super::*;

#[test]
fn fix_writes_the_sure_fixes_and_reports_what_remains() {
    let dir = bundle_copy("cli", "SupportDesk", "fix");
    let graph = dir.join("transition_graph.yaml");
    let original = std::fs::read_to_string(&graph).unwrap();
    let broken = original
        .replacen(
            "target_agent: ClassifierAgent",
            "target_agent: ClasifierAgent",
            1,
        )
        .replacen(
            "condition_type: context_equals",
            "condition_type: context_equal",
            1,
        )
        // No agent is close to `Zebra`: this one must stay for the author.
        .replacen("target_agent: ReplyAgent", "target_agent: Zebra", 1);
    assert_ne!(broken, original);
    std::fs::write(&graph, &broken).unwrap();

    // JSON names each fix with its title, applicability and edits.
    let json: Value = serde_json::from_str(&stdout(&mzk(
        &["check", "--output-format", "json", "."],
        &dir,
    )))
    .unwrap();
    let fixes: Vec<(&str, &Value)> = json["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|d| Some((d["code"].as_str().unwrap(), d["fixes"].get(0)?)))
        .collect();
    assert_eq!(fixes.len(), 2, "{fixes:?}");
    // The summary says how many `--fix` fixes, in every format.
    assert_eq!(json["summary"]["fixable"], 2, "{json}");
    let concise = stdout(&mzk(&["check", "--output-format", "concise", "."], &dir));
    assert!(
        concise.contains("\n2 findings fixable with `mzk check --fix`\n"),
        "{concise}"
    );
    assert_eq!(fixes[0].0, "MZ201");
    assert_eq!(
        fixes[0].1["title"],
        "Replace `ClasifierAgent` with `ClassifierAgent`"
    );
    assert_eq!(fixes[0].1["applicability"], "safe");
    let edit = &fixes[0].1["edits"][0];
    assert_eq!(edit["path"], "transition_graph.yaml");
    assert_eq!(edit["new_text"], "ClassifierAgent");
    assert_eq!(edit["range"]["start"]["line"], 4);
    assert_eq!(edit["range"]["start"]["column"], 19);

    let out = mzk(&["check", "--fix", "--output-format", "concise", "."], &dir);
    let stderr = String::from_utf8(out.stderr.clone()).unwrap();
    assert!(stderr.contains("fixed 2 problems in 1 file"), "{stderr}");
    assert_eq!(out.status.code(), Some(1), "`Zebra` remains an error");
    let remaining = stdout(&out);
    assert!(remaining.contains("error[MZ201] `Zebra`"), "{remaining}");
    assert!(!remaining.contains("ClasifierAgent"), "{remaining}");
    assert!(
        !remaining.contains("fixable with"),
        "nothing left to fix: {remaining}"
    );
    assert_eq!(
        std::fs::read_to_string(&graph).unwrap(),
        original.replacen("target_agent: ReplyAgent", "target_agent: Zebra", 1)
    );
}

#[test]
fn unsafe_fixes_apply_only_when_asked() {
    let dir = bundle_copy("cli", "SupportDesk", "unsafe-fixes");
    let graph = dir.join("transition_graph.yaml");
    let original = std::fs::read_to_string(&graph).unwrap();
    let fallback = "  - source_agent: IntakeAgent\n    target_agent: user\n    transition_type: after_turn\n    transition_target: RevertToUserTarget\n";
    let broken = original.replacen(fallback, "", 1).replacen(
        "    condition_value: true\n",
        "    condition_value: true\n    weight: 3\n",
        1,
    );
    std::fs::write(&graph, &broken).unwrap();

    // Safe only: nothing to do, and the full report says how to apply them.
    let out = mzk(&["check", "--fix", "--no-color", "."], &dir);
    let stderr = String::from_utf8(out.stderr.clone()).unwrap();
    assert!(stderr.contains("fixed 0 problems in 0 files"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&graph).unwrap(), broken);
    let report = stdout(&out);
    assert!(
        report.contains(
            "Remove the key `weight` (`mzk check --fix --unsafe-fixes` does it; review the change)"
        ),
        "{report}"
    );
    assert!(
        report.contains("Add an after_turn fallback from `IntakeAgent` back to the user"),
        "{report}"
    );

    let out = mzk(
        &["check", "--fix", "--unsafe-fixes", "--no-color", "."],
        &dir,
    );
    let stderr = String::from_utf8(out.stderr.clone()).unwrap();
    assert!(stderr.contains("fixed 2 problems in 1 file"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&graph).unwrap(), original);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));

    // SARIF carries the same fixes for code-scanning UIs.
    std::fs::write(&graph, &broken).unwrap();
    let sarif: Value = serde_json::from_str(&stdout(&mzk(
        &["check", "--output-format", "sarif", "."],
        &dir,
    )))
    .unwrap();
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    let removal = results
        .iter()
        .find(|r| r["ruleId"] == "MZ101")
        .expect("MZ101 result");
    let change = &removal["fixes"][0]["artifactChanges"][0];
    assert_eq!(change["artifactLocation"]["uri"], "transition_graph.yaml");
    assert_eq!(change["replacements"][0]["insertedContent"]["text"], "");
}

/// A misspelt function name (MZ503) and variable type (MZ410) come with the
/// safe fix their message suggests.
#[test]
fn misspelt_function_names_and_types_are_fixed() {
    let out = mzk(
        &[
            "check",
            "--diff",
            "tests/fixtures/rules/MZ503",
            "tests/fixtures/rules/MZ410",
        ],
        &repo(),
    );
    let diff = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{diff}");
    assert!(
        diff.contains("-    function: lookup_custmer\n+    function: lookup_customer\n"),
        "{diff}"
    );
    assert!(
        diff.contains("-    type: boolen\n+    type: boolean\n"),
        "{diff}"
    );
}

/// While one file cannot be read, the others report nothing caused by it and
/// `--fix` touches nothing on the strength of the partial analysis: the
/// suppression that looks unused while agents.yaml is broken is kept, and
/// suppresses its finding again once the file is mended.
#[test]
fn a_broken_file_holds_back_what_depends_on_it_and_fixes_nothing() {
    let dir = bundle_copy("cli", "SupportDesk", "broken-fix");
    let agents = dir.join("agents.yaml");
    let variables = dir.join("context_variables.yaml");
    let original = std::fs::read_to_string(&agents).unwrap();
    let suppressed = std::fs::read_to_string(&variables).unwrap();
    assert!(suppressed.contains("# mzk: ignore[MZ805]"));
    let mut lines: Vec<String> = original.lines().map(str::to_string).collect();
    lines[2] = format!("\t{}", lines[2].trim_start());
    std::fs::write(&agents, lines.join("\n") + "\n").unwrap();

    let out = mzk(
        &[
            "check",
            "--fix",
            "--output-format",
            "concise",
            "SupportDesk",
        ],
        dir.root(),
    );
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    let findings: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("SupportDesk/"))
        .collect();
    assert_eq!(findings.len(), 1, "{text}");
    assert!(
        findings[0].starts_with("SupportDesk/agents.yaml:3:1: error[MZ006] found character '\\t'"),
        "{text}"
    );
    assert!(findings[0].contains("holds back"), "{text}");
    assert_eq!(
        std::fs::read_to_string(&variables).unwrap(),
        suppressed,
        "--fix edited a file on partial knowledge"
    );

    std::fs::write(&agents, &original).unwrap();
    let out = mzk(&["check", "SupportDesk"], dir.root());
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(
        stdout(&out).starts_with("0 errors, 0 warnings"),
        "{}",
        stdout(&out)
    );
}

/// A misspelt outcome value is one root cause: one finding at the value,
/// naming the outcome it meant (not a second "no rule routes `ready`"),
/// and `--fix` restores it.
#[test]
fn a_misspelt_outcome_value_is_found_at_the_value_and_fixed() {
    let scratch = mzk_tests::Scratch::new("cli-outcome-typo");
    let dir = scratch.root().join("OutcomeTypo");
    mzk_tests::copy_dir(&repo().join("tests/fixtures/typos/OutcomeTypo"), &dir);
    let graph = dir.join("transition_graph.yaml");
    let broken = std::fs::read_to_string(&graph).unwrap();
    let out = mzk(&["check", "--output-format", "concise", "."], &dir);
    let report = stdout(&out);
    let findings: Vec<&str> = report.lines().filter(|l| l.contains("[MZ")).collect();
    assert_eq!(findings.len(), 1, "{report}");
    // transition_graph.yaml line 3; `redy` starts at column 148 (1-based).
    let column = broken.lines().nth(2).unwrap().find("redy").unwrap() + 1;
    assert!(
        findings[0].starts_with(&format!("transition_graph.yaml:3:{column}: error[MZ123] `redy` is not an outcome of `TriageAgent`")),
        "{report}"
    );
    assert!(findings[0].contains("(did you mean `ready`?)"), "{report}");

    let out = mzk(&["check", "--fix", "--output-format", "concise", "."], &dir);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert_eq!(
        std::fs::read_to_string(&graph).unwrap(),
        broken.replacen("condition_value: redy}", "condition_value: ready}", 1)
    );
}

/// A misspelt agent in a rule is one finding (MZ201 with its fix): the
/// routing checks reason about the graph as meant, so the target's typo
/// is not also "no path reaches terminate" (MZ306), nor the source's an
/// unrouted outcome (MZ123) and an uncovered value (MZ302).
#[test]
fn a_misspelt_agent_in_a_rule_is_one_finding() {
    for (line, consequence) in [
        (4, "the graph fails to compile when a run starts"),
        (22, "this rule can never fire"),
    ] {
        let dir = bundle_copy("cli", "SupportDesk", &format!("agent-typo-{line}"));
        let graph = dir.join("transition_graph.yaml");
        let original = std::fs::read_to_string(&graph).unwrap();
        let mut lines: Vec<String> = original.lines().map(str::to_string).collect();
        assert!(
            lines[line - 1].contains("ClassifierAgent"),
            "{}",
            lines[line - 1]
        );
        lines[line - 1] = lines[line - 1].replace("ClassifierAgent", "ClasifierAgent");
        std::fs::write(&graph, lines.join("\n") + "\n").unwrap();
        let report = stdout(&mzk(&["check", "--output-format", "concise", "."], &dir));
        let findings: Vec<&str> = report.lines().filter(|l| l.contains("[MZ")).collect();
        assert_eq!(findings.len(), 1, "line {line}: {report}");
        assert!(
            findings[0].starts_with(&format!(
                "transition_graph.yaml:{line}:19: error[MZ201] `ClasifierAgent`"
            )) && findings[0].contains("(did you mean `ClassifierAgent`?)")
                && findings[0].ends_with(consequence),
            "line {line}: {report}"
        );
    }
}
