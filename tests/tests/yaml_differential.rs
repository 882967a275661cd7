//! mzk reads YAML as PyYAML, mozaiks' loader, does: tests/yaml_differential
//! generates seeded documents (every kind of node, indicator characters at
//! every position, then near-valid edits), asks PyYAML (from the reference's
//! virtualenv, verdicts cached) and mzk (`mzk-yaml-dump`) about each, and
//! fails on any difference in verdict, error position or value that is not
//! one of the harness's documented intended differences or over the ceiling
//! of its class in tests/yaml_differential/known.txt (the ratchet while the
//! reader is brought to PyYAML's rules: no new class, no class growing).

use std::process::Command;

use mzk_tests::repo;

/// Documents per run of the test command (plus the kept regressions).
const DOCUMENTS: &str = "20000";

#[test]
fn mzk_reads_generated_yaml_as_pyyaml_does() {
    let output = Command::new("python3")
        .arg(repo().join("tests/yaml_differential/run.py"))
        .args(["--dump", env!("CARGO_BIN_EXE_mzk-yaml-dump")])
        .args(["--seed", "38", "--count", DOCUMENTS])
        .output()
        .expect("python3 is installed (the README's test command installs it)");
    let report = String::from_utf8_lossy(&output.stdout);
    let log = String::from_utf8_lossy(&output.stderr);
    println!("{report}");
    eprintln!("{log}");
    // run.py's status for "PyPI unreachable and nothing cached".
    if output.status.code() == Some(3) {
        mzk_tests::reference_missing(&format!(
            "PyYAML (mozaiks 0.2.0's) could not be installed: {log}"
        ));
        return;
    }
    assert!(
        output.status.success(),
        "mzk and PyYAML disagree (or the harness failed):\n{report}\n{log}"
    );
    assert!(
        report.contains(&format!("{DOCUMENTS} generated"))
            && report.contains("; 0 beyond the ceilings"),
        "the differential did not compare the documents it should have:\n{report}"
    );
}
