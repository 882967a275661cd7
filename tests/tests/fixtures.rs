//! Fixture snapshots: each folder of tests/fixtures is a workflows root holding
//! one or more bundles and `expected.txt`, the diagnostics mzk must report.
//! Set UPDATE_EXPECT=1 to rewrite the expectations (then review the diff).

use mzk_tests::{render_all, repo};

#[test]
fn fixtures_match_their_expected_diagnostics() {
    let fixtures = repo().join("tests/fixtures");
    let mut cases: Vec<_> = std::fs::read_dir(&fixtures)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    cases.sort();
    assert!(cases.len() >= 5, "fixtures are missing");
    let update = std::env::var_os("UPDATE_EXPECT").is_some();
    let mut failed = Vec::new();
    for case in &cases {
        let actual = render_all(case);
        let expected_path = case.join("expected.txt");
        if update {
            std::fs::write(&expected_path, &actual).unwrap();
            continue;
        }
        let expected = std::fs::read_to_string(&expected_path).unwrap_or_default();
        if actual != expected {
            failed.push(format!(
                "fixture {}:\n--- expected\n{expected}\n--- actual\n{actual}",
                case.display()
            ));
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

#[test]
fn example_bundles_are_clean() {
    let out = render_all(&repo().join("bundles"));
    assert_eq!(out, "", "the example bundles must have no diagnostics");
}

/// Every rule has a failing case in some fixture snapshot, except the two
/// limits that need inputs too large to keep in the repository (their unit
/// tests in analyzer/src/syntax/yaml.rs build them in memory).
#[test]
fn every_rule_is_exercised_by_a_fixture() {
    let fixtures = repo().join("tests/fixtures");
    let mut expected = String::new();
    for entry in std::fs::read_dir(&fixtures).unwrap() {
        let path = entry.unwrap().path().join("expected.txt");
        expected.push_str(&std::fs::read_to_string(path).unwrap_or_default());
    }
    let exempt = ["MZ007", "MZ008"];
    let missing: Vec<&str> = mzk_analyzer::rules::Rule::ALL
        .iter()
        .map(|r| r.code())
        .filter(|code| !exempt.contains(code) && !expected.contains(&format!("[{code}]")))
        .collect();
    assert!(
        missing.is_empty(),
        "rules without a fixture case: {missing:?}"
    );
}
