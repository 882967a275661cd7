//! Conformance with mozaiks 0.2.0: runs tests/conformance/run.py, which
//! installs the reference from PyPI (cached), compares verdicts on the real
//! bundles and on generated mutants, and prints the agreement table; then
//! checks that `mzk check --fix` never makes a verdict worse, and that the
//! exported JSON Schemas reject what mozaiks rejects in one file (and only that).
//! It skips only when PyPI is unreachable and nothing is cached (run.py exits
//! 3), and never under the test command (`MZK_REQUIRE_REFERENCE=1`).

use std::process::Command;

use mzk_tests::repo;

#[test]
fn mzk_agrees_with_the_reference_validator() {
    let script = repo().join("tests/conformance/run.py");
    let output = Command::new("python3")
        .arg(&script)
        .arg("--mzk")
        .arg(env!("CARGO_BIN_EXE_mzk-e2e"))
        .arg("--schema-check")
        .arg(env!("CARGO_BIN_EXE_mzk-schema-check"))
        .output()
        .expect("python3 is installed (the README's test command installs it)");
    let text = String::from_utf8_lossy(&output.stdout);
    let log = String::from_utf8_lossy(&output.stderr);
    println!("{text}");
    eprintln!("{log}");
    // run.py's status for "PyPI unreachable and nothing cached".
    if output.status.code() == Some(3) {
        mzk_tests::reference_missing(&format!(
            "mozaiks 0.2.0 could not be installed for the conformance suite: {log}"
        ));
        return;
    }
    assert!(
        output.status.success(),
        "conformance failed:\n{text}\n{log}"
    );
    assert!(
        text.contains("agreement: ") && text.contains("\nconformance: "),
        "the conformance script exited 0 without its report:\n{text}\n{log}"
    );
}
