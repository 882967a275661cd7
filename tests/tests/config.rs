//! Configuration (`mzk.toml`, `[tool.mzk]`), command-line selection,
//! suppression comments, `--diff` and `--watch`, through the binary.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use mzk_tests::{bundle_copy, Scratch};

fn mzk(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mzk-e2e"))
        .args(args)
        .current_dir(cwd)
        .env("NO_COLOR", "1")
        .output()
        .expect("mzk runs")
}

fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8(out.stderr.clone()).unwrap()
}

/// An unused variable (MZ211, a warning) declared at the end of the
/// definitions of SupportDesk; returns the copy's workflows root.
fn with_unused_variable(test: &str, comment: &str) -> (PathBuf, Scratch) {
    let dir = bundle_copy("config", "SupportDesk", test);
    let variables = dir.join("context_variables.yaml");
    let text = std::fs::read_to_string(&variables).unwrap();
    let text = text.replacen(
        "definitions:\n",
        &format!("definitions:\n{comment}  spare_note:\n    type: string\n    source: {{type: computed, default: null}}\n"),
        1,
    );
    std::fs::write(&variables, text).unwrap();
    (dir.root().to_path_buf(), dir)
}

fn check(root: &Path, extra: &[&str]) -> Output {
    let mut args = vec!["check", "--output-format", "concise", "."];
    args.extend_from_slice(extra);
    mzk(&args, root)
}

#[test]
fn configuration_files_select_rules_and_set_severities() {
    let (root, bundle) = with_unused_variable("select", "");
    let out = check(&root, &[]);
    assert!(stdout(&out).contains("warning[MZ211] "), "{}", stdout(&out));
    assert_eq!(out.status.code(), Some(0));

    // Severity override: the warning becomes an error, and fails the run.
    std::fs::write(root.join("mzk.toml"), "[severity]\nMZ211 = \"error\"\n").unwrap();
    let out = check(&root, &[]);
    assert!(stdout(&out).contains("error[MZ211] "), "{}", stdout(&out));
    assert_eq!(out.status.code(), Some(1));

    // Ignored by prefix in the root's file...
    std::fs::write(root.join("mzk.toml"), "ignore = [\"MZ2\"]\n").unwrap();
    assert!(!stdout(&check(&root, &[])).contains("MZ211"));
    // ...but the bundle's own file is nearer and wins.
    std::fs::write(bundle.join("mzk.toml"), "select = [\"MZ211\"]\n").unwrap();
    assert!(stdout(&check(&root, &[])).contains("MZ211"));
    std::fs::remove_file(bundle.join("mzk.toml")).unwrap();

    // The command line: --select replaces, --ignore adds.
    assert!(stdout(&check(&root, &["--select", "ALL"])).contains("MZ211"));
    assert!(!stdout(&check(&root, &["--select", "ALL", "--ignore", "MZ211"])).contains("MZ211"));

    // Per-file ignores, relative to the configuration's folder.
    std::fs::write(
        root.join("mzk.toml"),
        "[per-file-ignores]\n\"SupportDesk/context_*.yaml\" = [\"MZ211\"]\n",
    )
    .unwrap();
    assert!(!stdout(&check(&root, &[])).contains("MZ211"));

    // pyproject.toml's [tool.mzk] when there is no mzk.toml; one without it is skipped.
    std::fs::remove_file(root.join("mzk.toml")).unwrap();
    std::fs::write(
        bundle.join("pyproject.toml"),
        "[project]\nname = \"desk\"\n",
    )
    .unwrap();
    std::fs::write(
        root.join("pyproject.toml"),
        "[project]\nname = \"x\"\n\n[tool.mzk]\nignore = [\"MZ211\"]\n",
    )
    .unwrap();
    assert!(!stdout(&check(&root, &[])).contains("MZ211"));

    // Exclusion of bundles found under a folder (not of a bundle named explicitly).
    std::fs::write(root.join("mzk.toml"), "exclude = [\"Support*\"]\n").unwrap();
    let out = check(&root, &[]);
    assert!(stdout(&out).contains("in 0 bundles"), "{}", stdout(&out));
    assert!(stdout(&mzk(
        &["check", "--output-format", "concise", "SupportDesk"],
        &root
    ))
    .contains("MZ211"));

    // --config names the file to use.
    std::fs::write(
        root.join("strict.toml"),
        "select = [\"MZ211\"]\n[severity]\nMZ211 = \"error\"\n",
    )
    .unwrap();
    let out = check(&root, &["--config", "strict.toml"]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
}

#[test]
fn configuration_mistakes_stop_the_run_with_the_line_and_a_hint() {
    let (root, _bundle) = with_unused_variable("mistakes", "");
    std::fs::write(
        root.join("mzk.toml"),
        "select = [\"MZ1\"]\nselct = [\"MZ2\"]\n",
    )
    .unwrap();
    let out = check(&root, &[]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("mzk.toml:2: unknown key `selct` (did you mean `select`?)"),
        "{err}"
    );
    std::fs::write(root.join("mzk.toml"), "ignore = [\"MZ2111\"]\n").unwrap();
    let err = stderr(&check(&root, &[]));
    assert!(
        err.contains("`MZ2111` is not a rule code, code prefix or group (did you mean `MZ211`?)"),
        "{err}"
    );
    std::fs::remove_file(root.join("mzk.toml")).unwrap();
    let err = stderr(&check(&root, &["--ignore", "MZ7777"]));
    assert!(err.contains("`MZ7777` is not a rule code"), "{err}");
}

#[test]
fn suppression_comments_in_yaml_and_python() {
    // On the line above, and at the end of the line.
    let (root, bundle) = with_unused_variable("suppress-above", "  # mzk: ignore[MZ211]\n");
    let out = check(&root, &[]);
    assert!(!stdout(&out).contains("MZ2"), "{}", stdout(&out));
    let variables = bundle.join("context_variables.yaml");
    let text = std::fs::read_to_string(&variables).unwrap();
    std::fs::write(
        &variables,
        text.replacen(
            "  # mzk: ignore[MZ211]\n  spare_note:\n",
            "  spare_note:  # mzk: ignore[MZ2]\n",
            1,
        ),
    )
    .unwrap();
    assert!(!stdout(&check(&root, &[])).contains("MZ2"));

    // File level, in a Python tool file.
    let python = bundle.join("tools/lookup_plan.py");
    let original = std::fs::read_to_string(&python).unwrap();
    let writes = original.replacen(
        "context_variables.set(\"customer_plan\", plan)",
        "context_variables.set(\"customer_plan\", plan)\n        context_variables.set(\"scratch_value\", 1)",
        1,
    );
    std::fs::write(&python, &writes).unwrap();
    assert!(stdout(&check(&root, &[])).contains("MZ509"));
    std::fs::write(&python, format!("# mzk: ignore-file[MZ509]\n{writes}")).unwrap();
    let out = check(&root, &[]);
    assert!(!stdout(&out).contains("MZ509"), "{}", stdout(&out));
    assert!(!stdout(&out).contains("MZ90"), "{}", stdout(&out));

    // An invalid one is reported, not silently ignored.
    std::fs::write(&python, format!("# mzk: ignore-file[MZ5O9]\n{writes}")).unwrap();
    let out = check(&root, &[]);
    assert!(
        stdout(&out).contains("warning[MZ902] `MZ5O9`"),
        "{}",
        stdout(&out)
    );
    assert!(stdout(&out).contains("MZ509"), "{}", stdout(&out));
}

#[test]
fn unused_suppressions_are_reported_and_fixed() {
    let dir = bundle_copy("config", "SupportDesk", "unused");
    let root = dir.root().to_path_buf();
    let orchestrator = dir.join("orchestrator.yaml");
    let original = std::fs::read_to_string(&orchestrator).unwrap();
    let first = original.lines().next().unwrap().to_string();
    let suppressed = original.replacen(&first, &format!("{first}  # mzk: ignore[MZ301]"), 1);
    std::fs::write(&orchestrator, &suppressed).unwrap();
    let out = check(&root, &[]);
    assert!(
        stdout(&out).contains("orchestrator.yaml:1:") && stdout(&out).contains("warning[MZ901]"),
        "{}",
        stdout(&out)
    );
    // --diff shows the fix and writes nothing.
    let out = mzk(&["check", "--diff", "."], &root);
    let diff = stdout(&out);
    assert!(
        diff.contains("--- a/SupportDesk/orchestrator.yaml"),
        "{diff}"
    );
    assert!(
        diff.contains(&format!("-{first}  # mzk: ignore[MZ301]")),
        "{diff}"
    );
    assert!(diff.contains(&format!("+{first}\n")), "{diff}");
    assert_eq!(std::fs::read_to_string(&orchestrator).unwrap(), suppressed);
    // --fix removes it, and the file is what it was.
    let out = mzk(
        &["check", "--fix", "--output-format", "concise", "."],
        &root,
    );
    assert!(
        stderr(&out).contains("fixed 1 problem in 1 file"),
        "{}",
        stderr(&out)
    );
    assert_eq!(std::fs::read_to_string(&orchestrator).unwrap(), original);
    assert!(!stdout(&out).contains("MZ901"));
}

/// `--watch` prints the first report, then only what changed.
#[test]
fn watch_mode_prints_what_changed() {
    let (root, bundle) = with_unused_variable("watch", "");
    let mut child = Command::new(env!("CARGO_BIN_EXE_mzk-e2e"))
        .args(["check", "--watch", "."])
        .current_dir(&root)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    let out = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let read_until = |needle: &str| -> Vec<String> {
        let deadline = Instant::now() + Duration::from_secs(20);
        let mut seen = Vec::new();
        while Instant::now() < deadline {
            if let Ok(line) = rx.recv_timeout(Duration::from_millis(200)) {
                let done = line.contains(needle);
                seen.push(line);
                if done {
                    return seen;
                }
            }
        }
        panic!("no `{needle}` in {seen:?}");
    };
    let first = read_until("watching for changes");
    assert!(
        first.iter().any(|l| l.contains("warning[MZ211]")),
        "{first:?}"
    );
    // Declare the variable used: the warning goes away, a new problem comes.
    let variables = bundle.join("context_variables.yaml");
    let text = std::fs::read_to_string(&variables).unwrap();
    std::fs::write(
        &variables,
        text.replacen(
            "  spare_note:\n    type: string\n",
            "  spare_note:\n    type: string\n    bogus_flag: 1\n",
            1,
        ),
    )
    .unwrap();
    let second = read_until("changed");
    let _ = child.kill();
    let _ = child.wait();
    assert!(
        second
            .iter()
            .any(|l| l.starts_with("+ ") && l.contains("error[MZ101]")),
        "{second:?}"
    );
    assert!(!second.iter().any(|l| l.starts_with("  ")), "{second:?}");
}

/// `--fix` on the fixture bundles (every rule family, broken on purpose),
/// then again: the second run has nothing left to fix.
#[test]
fn fix_is_idempotent_on_the_fixtures() {
    let root = Scratch::new("config-idempotent");
    mzk_tests::copy_dir(&mzk_tests::repo().join("tests/fixtures"), &root);
    let fix_all = [
        "check",
        "--fix",
        "--unsafe-fixes",
        "--output-format",
        "concise",
        ".",
    ];
    let first = mzk(&fix_all, &root);
    let said = stderr(&first);
    assert!(said.contains("mzk: fixed "), "{said}");
    assert!(
        !said.contains("fixed 0 problems"),
        "the fixtures offer fixes: {said}"
    );
    let second = mzk(&fix_all, &root);
    assert!(
        stderr(&second).contains("fixed 0 problems in 0 files"),
        "{}",
        stderr(&second)
    );
    let _ = std::fs::remove_dir_all(&root);
}
