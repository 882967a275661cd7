//! Hostile inputs, each as a bundle on disk checked by `mzk check` as a
//! process: the run must end, within a wall-clock guard and an address-space
//! limit (so a blow-up aborts instead of swapping), with the input reported
//! by a diagnostic and the bundle's other files still analysed.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use mzk_tests::{bundle_copy, Scratch};
use serde_json::Value;

/// Far above what any case needs (they finish in seconds); only a hang
/// reaches it.
const GUARD: Duration = Duration::from_secs(120);
/// Address-space limit for the checker, in KiB (1.5 GiB: virtual memory,
/// so well above the resident peak).
const MEMORY_KIB: u64 = 1536 * 1024;

/// Runs `mzk check --output-format json DIR` under the limits; returns the
/// exit status and the report.
fn check(dir: &Path) -> (i32, Value) {
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -v {MEMORY_KIB} && exec \"$0\" check --output-format json \"$1\""
        ))
        .arg(env!("CARGO_BIN_EXE_mzk-e2e"))
        .arg(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("mzk runs");
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut out = String::new();
        let _ = stdout.read_to_string(&mut out);
        out
    });
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > GUARD {
            let _ = child.kill();
            panic!(
                "mzk check {} did not finish within {GUARD:?}",
                dir.display()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut stderr = String::new();
    let _ = child.stderr.take().unwrap().read_to_string(&mut stderr);
    let out = reader.join().unwrap();
    let code = status.code().unwrap_or_else(|| {
        panic!("mzk check was killed by a signal ({status:?}); stderr: {stderr}")
    });
    assert!(
        code == 0 || code == 1,
        "exit status {code}; stderr: {stderr}"
    );
    (code, serde_json::from_str(&out).expect("a JSON report"))
}

/// The codes reported for `file` (a path relative to the bundle's parent).
fn codes_in(report: &Value, file: &str) -> Vec<String> {
    report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["path"].as_str().is_some_and(|p| p.ends_with(file)))
        .map(|d| d["code"].as_str().unwrap().to_string())
        .collect()
}

/// A copy of the Hello example with `file` replaced by `contents`.
fn hello_with(test: &str, file: &str, contents: &[u8]) -> Scratch {
    let dir = bundle_copy("hostile", "Hello", test);
    std::fs::write(dir.join(file), contents).unwrap();
    dir
}

/// The other files are still analysed: an unknown key planted in
/// orchestrator.yaml is still found.
fn plant_unknown_key(dir: &Path) {
    let path = dir.join("orchestrator.yaml");
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str("max_turnz: 5\n");
    std::fs::write(path, text).unwrap();
}

fn assert_still_analysed(report: &Value) {
    assert!(
        codes_in(report, "orchestrator.yaml").contains(&"MZ101".to_string()),
        "the other files were not analysed: {report}"
    );
}

#[test]
fn ten_thousand_levels_of_nesting() {
    let text = format!("agents: {}{}\n", "[".repeat(10_000), "]".repeat(10_000));
    let dir = hello_with("nesting", "agents.yaml", text.as_bytes());
    plant_unknown_key(&dir);
    let (code, report) = check(&dir);
    assert_eq!(code, 1);
    assert!(
        codes_in(&report, "agents.yaml").contains(&"MZ008".into()),
        "{report}"
    );
    assert_still_analysed(&report);
}

#[test]
fn an_alias_bomb() {
    let mut text = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..12 {
        let p = i - 1;
        text.push_str(&format!(
            "a{i}: &a{i} [*a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}]\n"
        ));
    }
    text.push_str("definitions: {}\n");
    let dir = hello_with("alias", "context_variables.yaml", text.as_bytes());
    plant_unknown_key(&dir);
    let (code, report) = check(&dir);
    assert_eq!(code, 1);
    assert!(
        codes_in(&report, "context_variables.yaml").contains(&"MZ003".into()),
        "{report}"
    );
    assert_still_analysed(&report);
}

#[test]
fn a_fifty_megabyte_file() {
    let line =
        "  - name: Agent\n    system_message: Say hello to the customer and ask what they need.\n";
    let mut text = String::from("agents:\n");
    while text.len() < 50 * 1024 * 1024 {
        text.push_str(line);
    }
    let dir = hello_with("large", "agents.yaml", text.as_bytes());
    plant_unknown_key(&dir);
    let (code, report) = check(&dir);
    assert_eq!(code, 1);
    assert!(
        codes_in(&report, "agents.yaml").contains(&"MZ007".into()),
        "{report}"
    );
    assert_still_analysed(&report);
}

#[test]
fn binary_garbage_and_invalid_utf8() {
    // A deterministic byte soup (xorshift), every byte value included.
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let garbage: Vec<u8> = (0..64 * 1024)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 24) as u8
        })
        .collect();
    let dir = hello_with("garbage", "transition_graph.yaml", &garbage);
    // Valid YAML but for one byte that is not UTF-8.
    std::fs::write(
        dir.join("context_variables.yaml"),
        b"definitions:\n  note:\n    description: caf\xe9\n    source: {type: state}\n",
    )
    .unwrap();
    plant_unknown_key(&dir);
    let (code, report) = check(&dir);
    assert_eq!(code, 1);
    assert!(
        codes_in(&report, "transition_graph.yaml").contains(&"MZ005".into()),
        "{report}"
    );
    assert!(
        codes_in(&report, "context_variables.yaml").contains(&"MZ005".into()),
        "{report}"
    );
    assert_still_analysed(&report);
}

#[test]
fn a_bundle_of_ten_thousand_files() {
    let dir = bundle_copy("hostile", "Hello", "many");
    let tools = dir.join("tools");
    std::fs::create_dir_all(&tools).unwrap();
    for i in 0..10_000 {
        std::fs::write(
            tools.join(format!("helper_{i}.py")),
            format!("def helper_{i}():\n    return {i}\n"),
        )
        .unwrap();
    }
    plant_unknown_key(&dir);
    let (code, report) = check(&dir);
    assert_eq!(code, 1);
    assert_still_analysed(&report);
    assert_eq!(report["summary"]["bundles"], 1);
}

#[test]
fn tool_files_that_loop_or_leave_the_workspace() {
    let dir = bundle_copy("hostile", "Hello", "symlinks");
    let tools = dir.join("tools");
    std::fs::create_dir_all(&tools).unwrap();
    // A loop (a → b → a) and a link to a file outside the workflows root.
    std::os::unix::fs::symlink(tools.join("b.py"), tools.join("a.py")).unwrap();
    std::os::unix::fs::symlink(tools.join("a.py"), tools.join("b.py")).unwrap();
    let elsewhere = Scratch::new("hostile-outside");
    let outside = elsewhere.join("outside.py");
    std::fs::write(&outside, "def escape(context_variables):\n    return 1\n").unwrap();
    std::os::unix::fs::symlink(&outside, tools.join("out.py")).unwrap();
    std::fs::write(
        dir.join("tools.yaml"),
        "tools:\n  - agent: GreeterAgent\n    file: a.py\n    function: loop\n    description: Loops.\n    tool_type: Agent_Tool\n  - agent: GreeterAgent\n    file: ../../../../../../../../etc/hostname\n    function: escape\n    description: Leaves.\n    tool_type: Agent_Tool\n  - agent: GreeterAgent\n    file: out.py\n    function: escape\n    description: Points outside.\n    tool_type: Agent_Tool\n",
    )
    .unwrap();
    plant_unknown_key(&dir);
    let (code, report) = check(&dir);
    assert_eq!(code, 1);
    let tools_codes = codes_in(&report, "tools.yaml");
    // The loop cannot be read; the `../` path leaves the workflows root.
    assert!(tools_codes.contains(&"MZ501".into()), "{report}");
    assert!(tools_codes.contains(&"MZ502".into()), "{report}");
    assert_still_analysed(&report);
}
