//! Sets `MZK_VERSION`, what `mzk --version` prints: the package version, plus
//! the commit and its date when built from a git checkout
//! (`0.1.0 (1a2b3c4d5 2026-11-01)`); just the version otherwise (an sdist, a
//! crates.io download, a machine without git).

use std::path::Path;
use std::process::Command;

fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .ok()?;
    let text = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (out.status.success() && !text.is_empty()).then_some(text)
}

fn main() {
    let version = std::env::var("CARGO_PKG_VERSION").unwrap_or_default();
    let manifest = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default();
    let dir = Path::new(&manifest);
    println!("cargo:rerun-if-changed=build.rs");
    // Only a checkout of mzk itself counts: not a parent repository that
    // happens to hold an unpacked sdist.
    let own_checkout = git(dir, &["rev-parse", "--show-toplevel"])
        .is_some_and(|top| dir.parent().is_some_and(|p| Path::new(&top) == p));
    let commit = own_checkout
        .then(|| git(dir, &["log", "-1", "--format=%h %cs", "--abbrev=9"]))
        .flatten();
    match commit {
        Some(commit) => {
            println!("cargo:rustc-env=MZK_VERSION={version} ({commit})");
            // Build again when HEAD moves: HEAD itself, the branch it names,
            // and packed refs (only files that exist, or cargo reruns always).
            let mut watched = Vec::new();
            if let Some(git_dir) = git(dir, &["rev-parse", "--absolute-git-dir"]) {
                watched.push(Path::new(&git_dir).join("HEAD"));
            }
            if let Some(common) = git(
                dir,
                &["rev-parse", "--path-format=absolute", "--git-common-dir"],
            ) {
                let common = Path::new(&common);
                watched.push(common.join("packed-refs"));
                if let Some(branch) = git(dir, &["symbolic-ref", "-q", "HEAD"]) {
                    watched.push(common.join(branch));
                }
            }
            for path in watched.iter().filter(|p| p.exists()) {
                println!("cargo:rerun-if-changed={}", path.display());
            }
        }
        None => println!("cargo:rustc-env=MZK_VERSION={version}"),
    }
}
