//! `mzk --version` is the package version (the one the wheel, the .vsix and
//! the archives carry), followed by the commit and its date when built from a
//! git checkout. This test also makes `cargo test` build `target/debug/mzk`,
//! which the packaging check wraps into a wheel.

use std::process::Command;

#[test]
fn version_is_the_package_version_then_the_commit() {
    let out = Command::new(env!("CARGO_BIN_EXE_mzk"))
        .arg("--version")
        .output()
        .expect("run mzk --version");
    assert!(out.status.success(), "mzk --version failed: {out:?}");
    let text = String::from_utf8(out.stdout).expect("UTF-8 version");
    let line = text.trim_end();
    let expected = format!("mzk {}", env!("CARGO_PKG_VERSION"));
    assert!(
        line == expected || line.starts_with(&format!("{expected} (")),
        "`mzk --version` printed {line:?}; expected {expected:?}, optionally followed by \"(COMMIT DATE)\""
    );
    let in_checkout = Command::new("git")
        .args([
            "-C",
            env!("CARGO_MANIFEST_DIR"),
            "rev-parse",
            "--short=9",
            "HEAD",
        ])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    if let Some(head) = in_checkout {
        assert!(
            line.contains(&format!("({head} ")),
            "built from a checkout at {head}, but `mzk --version` printed {line:?} (server/build.rs sets MZK_VERSION)"
        );
    }
}
