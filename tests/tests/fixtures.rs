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
