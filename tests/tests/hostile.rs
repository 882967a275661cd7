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

// Deep nesting, through every entry point: 10^4 and 10^5 levels of each
// shape the input languages allow, each refused with a diagnostic at the
// level past the limit (Python's own limits where mozaiks has them), never a
// stack overflow. Two bundles are checked together, so the analysis runs on
// worker threads, not only on the main thread's larger stack.

/// The line of SupportDesk's transition_graph.yaml holding its expression.
const EXPRESSION_LINE: usize = 50;
const EXPRESSION: &str = "${research_status} in ['completed', 'partial']";
/// Where the expression starts on its line (1-based, in characters).
const EXPRESSION_COLUMN: usize = "    context_expression: \"".len() + 1;

/// SupportDesk's transition_graph.yaml with its expression replaced.
fn graph_with_expression(expression: &str) -> String {
    let text = std::fs::read_to_string(
        mzk_tests::repo().join("bundles/SupportDesk/transition_graph.yaml"),
    )
    .unwrap();
    assert_eq!(
        text.lines().nth(EXPRESSION_LINE - 1),
        Some(format!("    context_expression: \"{EXPRESSION}\"").as_str())
    );
    text.replace(EXPRESSION, expression)
}

/// The deep shapes of an expression, with the column (1-based) where each
/// must be refused: the 201st bracket, the 1,001st `not`.
fn deep_expressions() -> Vec<(String, String, usize)> {
    let mut shapes = Vec::new();
    for n in [10_000, 100_000] {
        shapes.push((
            format!("{n} parentheses"),
            format!("{}{EXPRESSION}{}", "(".repeat(n), ")".repeat(n)),
            EXPRESSION_COLUMN + 200,
        ));
        shapes.push((
            format!("{n} nots"),
            format!("{}{EXPRESSION}", "not ".repeat(n)),
            EXPRESSION_COLUMN + 4 * 1000,
        ));
        shapes.push((
            format!("{n} len calls"),
            format!("{}${{research_status}}{}", "len(".repeat(n), ")".repeat(n)),
            // The `(` of the 201st `len(`.
            EXPRESSION_COLUMN + 4 * 200 + 3,
        ));
    }
    shapes
}

/// SupportDesk with `graph` as its transition graph, beside a Hello with an
/// unknown key planted: (the scratch folder holding both, SupportDesk).
fn two_bundles(test: &str, graph: &str) -> (Scratch, std::path::PathBuf) {
    let hello = bundle_copy("hostile", "Hello", test);
    plant_unknown_key(&hello);
    let support = hello.root().join("SupportDesk");
    mzk_tests::copy_dir(&mzk_tests::repo().join("bundles/SupportDesk"), &support);
    std::fs::write(support.join("transition_graph.yaml"), graph).unwrap();
    (hello, support)
}

/// The diagnostic with `code` in `file`: (line, column) of its start.
fn position_of(report: &Value, file: &str, code: &str) -> Option<(u64, u64)> {
    report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find_map(|d| {
            (d["code"] == code && d["path"].as_str().is_some_and(|p| p.ends_with(file))).then(
                || {
                    let start = &d["range"]["start"];
                    (
                        start["line"].as_u64().unwrap(),
                        start["column"].as_u64().unwrap(),
                    )
                },
            )
        })
}

#[test]
fn deeply_nested_context_expressions() {
    for (shape, expression, column) in deep_expressions() {
        let (hello, _) = two_bundles("expression", &graph_with_expression(&expression));
        let (code, report) = check(hello.root());
        assert_eq!(code, 1, "{shape}");
        assert_eq!(
            position_of(&report, "SupportDesk/transition_graph.yaml", "MZ402"),
            Some((EXPRESSION_LINE as u64, column as u64)),
            "{shape}: {report}"
        );
        assert_still_analysed(&report);
    }
}

/// Anchors that each nest the previous one 250 levels deeper: written out,
/// the last would be thousands of levels deep.
fn stacked_aliases(levels: usize) -> String {
    let mut text = String::new();
    for k in 0..levels {
        let inner = if k == 0 {
            "x".to_string()
        } else {
            format!("*a{}", k - 1)
        };
        text.push_str(&format!(
            "a{k}: &a{k} {}{inner}{}\n",
            "[".repeat(250),
            "]".repeat(250)
        ));
    }
    text
}

#[test]
fn aliases_stacked_past_the_nesting_limit() {
    let mut graph = std::fs::read_to_string(
        mzk_tests::repo().join("bundles/SupportDesk/transition_graph.yaml"),
    )
    .unwrap();
    graph.push_str(&stacked_aliases(40));
    let (hello, _) = two_bundles("aliases", &graph);
    let (code, report) = check(hello.root());
    assert_eq!(code, 1);
    // The second anchor's alias is the first that would pass 256 levels.
    assert_eq!(
        position_of(&report, "SupportDesk/transition_graph.yaml", "MZ008"),
        Some((
            graph.lines().position(|l| l.starts_with("a1:")).unwrap() as u64 + 1,
            "a1: &a1 ".len() as u64 + 250 + 1
        )),
        "{report}"
    );
    assert_still_analysed(&report);
}

#[test]
fn python_nested_past_pythons_limits() {
    for (shape, source, line, column) in [
        (
            "10^4 parentheses",
            format!(
                "def lookup_plan(plan={}1{}):\n    return 1\n",
                "(".repeat(10_000),
                ")".repeat(10_000)
            ),
            1,
            // The `(` after the name is the first.
            "def lookup_plan(plan=".len() + 200,
        ),
        (
            "10^5 brackets in a body",
            format!(
                "def lookup_plan(plan):\n    return {}{}\n",
                "[".repeat(100_000),
                "]".repeat(100_000)
            ),
            2,
            "    return ".len() + 201,
        ),
        (
            "3,000 indented blocks",
            (0..3_000)
                .map(|i| format!("{}if x:\n", " ".repeat(i)))
                .chain(["def lookup_plan(plan):\n    return 1\n".to_string()])
                .collect(),
            101,
            101,
        ),
    ] {
        let (hello, support) = two_bundles(
            "python",
            &std::fs::read_to_string(
                mzk_tests::repo().join("bundles/SupportDesk/transition_graph.yaml"),
            )
            .unwrap(),
        );
        std::fs::write(support.join("tools/lookup_plan.py"), source).unwrap();
        let (code, report) = check(hello.root());
        assert_eq!(code, 1, "{shape}");
        assert_eq!(
            position_of(&report, "tools/lookup_plan.py", "MZ504"),
            Some((line, column as u64)),
            "{shape}: {report}"
        );
        assert_still_analysed(&report);
    }
}

#[test]
fn python_ten_thousand_levels_deep_is_too_large_to_read() {
    // Indented one space a level, 10^4 levels take 50 MB.
    let source: String = (0..10_000)
        .map(|i| format!("{}if x:\n", " ".repeat(i)))
        .chain(["def lookup_plan(plan):\n    return 1\n".to_string()])
        .collect();
    let (hello, support) = two_bundles("python-large", &graph_with_expression(EXPRESSION));
    std::fs::write(support.join("tools/lookup_plan.py"), source).unwrap();
    let (code, report) = check(hello.root());
    assert_eq!(code, 1);
    assert_eq!(
        codes_in(&report, "tools/lookup_plan.py"),
        vec!["MZ007"],
        "{report}"
    );
    assert!(
        !codes_in(&report, "SupportDesk/tools.yaml").contains(&"MZ503".into()),
        "{report}"
    );
    assert_still_analysed(&report);
}

/// A language server as an editor runs it: a process on pipes.
struct Server {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    incoming: std::sync::mpsc::Receiver<Value>,
    next_id: i64,
}

impl Server {
    fn start(root: &Path) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_mzk-e2e"))
            .arg("lsp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("mzk lsp starts");
        let stdin = child.stdin.take().unwrap();
        let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
        let (tx, incoming) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            use std::io::BufRead;
            loop {
                let mut length = 0;
                loop {
                    let mut line = String::new();
                    if stdout.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    match line.trim_end() {
                        "" => break,
                        header => {
                            if let Some(n) = header.strip_prefix("Content-Length: ") {
                                length = n.parse().unwrap();
                            }
                        }
                    }
                }
                let mut body = vec![0; length];
                if stdout.read_exact(&mut body).is_err() {
                    return;
                }
                let _ = tx.send(serde_json::from_slice(&body).unwrap());
            }
        });
        let mut server = Server {
            child,
            stdin,
            incoming,
            next_id: 1,
        };
        let root_uri = format!("file://{}", root.display());
        server.request(
            "initialize",
            serde_json::json!({"processId": null, "rootUri": root_uri, "capabilities": {}}),
        );
        server.notify("initialized", serde_json::json!({}));
        server
    }

    fn send(&mut self, message: Value) {
        use std::io::Write;
        let body = serde_json::to_vec(&message).unwrap();
        write!(self.stdin, "Content-Length: {}\r\n\r\n", body.len()).unwrap();
        self.stdin.write_all(&body).unwrap();
        self.stdin.flush().unwrap();
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(serde_json::json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    fn next(&mut self) -> Value {
        self.incoming.recv_timeout(GUARD).unwrap_or_else(|e| {
            panic!(
                "the server stopped answering ({e}); exited: {:?}",
                self.child.try_wait()
            )
        })
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(
            serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
        );
        loop {
            let message = self.next();
            if message["id"] == id && message.get("method").is_none() {
                assert!(message.get("error").is_none(), "{method}: {message}");
                return message["result"].clone();
            }
        }
    }

    /// The next diagnostics published for `version` of `uri`; those of an
    /// earlier version, still on their way when the edit was sent, are skipped.
    fn diagnostics(&mut self, uri: &str, version: i64) -> Vec<Value> {
        loop {
            let message = self.next();
            if message["method"] == "textDocument/publishDiagnostics"
                && message["params"]["uri"] == uri
                && message["params"]["version"] == version
            {
                return message["params"]["diagnostics"].as_array().unwrap().clone();
            }
        }
    }
}

#[test]
fn the_language_server_keeps_answering_after_deep_nesting() {
    let (hello, support) = two_bundles("lsp", &graph_with_expression(EXPRESSION));
    let mut server = Server::start(hello.root());
    let graph = support.join("transition_graph.yaml");
    let uri = format!("file://{}", graph.display());
    let mut texts: Vec<(String, String, &str, usize)> = deep_expressions()
        .into_iter()
        .map(|(shape, expression, column)| {
            (shape, graph_with_expression(&expression), "MZ402", column)
        })
        .collect();
    let mut aliases = graph_with_expression(EXPRESSION);
    aliases.push_str(&stacked_aliases(40));
    texts.push(("stacked aliases".into(), aliases, "MZ008", 0));
    for (version, (shape, text, code, column)) in texts.into_iter().enumerate() {
        let version = version as i64 + 1;
        if version == 1 {
            server.notify("textDocument/didOpen", serde_json::json!({"textDocument": {"uri": uri, "languageId": "yaml", "version": version, "text": text}}));
        } else {
            server.notify("textDocument/didChange", serde_json::json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]}));
        }
        let diagnostics = loop {
            let found = server.diagnostics(&uri, version);
            if found.iter().any(|d| d["code"] == code) {
                break found;
            }
        };
        if code == "MZ402" {
            let d = diagnostics.iter().find(|d| d["code"] == code).unwrap();
            assert_eq!(d["range"]["start"]["line"], EXPRESSION_LINE - 1, "{shape}");
            assert_eq!(d["range"]["start"]["character"], column - 1, "{shape}");
        }
        // Still answering: a hover on the first rule's source agent.
        let hover = server.request(
            "textDocument/hover",
            serde_json::json!({"textDocument": {"uri": uri}, "position": {"line": 2, "character": 20}}),
        );
        assert!(
            hover.is_object(),
            "{shape}: no hover after the deep input: {hover}"
        );
    }
    assert_eq!(server.request("shutdown", Value::Null), Value::Null);
    server.notify("exit", Value::Null);
    let status = server.child.wait().unwrap();
    assert!(status.success(), "{status}");
}

#[test]
fn runs_refuse_deep_nesting_with_an_error() {
    let run = |args: &[&str], cwd: &Path| {
        let out = Command::new(env!("CARGO_BIN_EXE_mzk-e2e"))
            .arg("run")
            .args(args)
            .current_dir(cwd)
            .output()
            .unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        (out.status, text)
    };
    for (shape, expression, _) in deep_expressions() {
        let (hello, _) = two_bundles("run", &graph_with_expression(&expression));
        let (status, text) = run(&["SupportDesk", "--db", "runs.db"], hello.root());
        assert_eq!(status.code(), Some(2), "{shape}: {status}: {text}");
        assert!(text.contains("MZ402"), "{shape}: {text}");
    }
    let (hello, _) = two_bundles("run-inputs", &graph_with_expression(EXPRESSION));
    for n in [10_000, 100_000] {
        let root = hello.root();
        std::fs::write(
            root.join("context.json"),
            format!("{{\"a\": {}{}}}", "[".repeat(n), "]".repeat(n)),
        )
        .unwrap();
        let (status, text) = run(
            &[
                "SupportDesk",
                "--db",
                "runs.db",
                "--context",
                "context.json",
            ],
            root,
        );
        assert_eq!(status.code(), Some(2), "{n}: {status}: {text}");
        assert!(
            text.contains("context.json") && text.contains("nested"),
            "{n}: {text}"
        );
        for (form, scenario) in [
            (
                "block",
                format!(
                    "initial_context:\n  a: {}{}\n",
                    "[".repeat(n),
                    "]".repeat(n)
                ),
            ),
            (
                "flow",
                format!("initial_context: {}1{}\n", "{a: ".repeat(n), "}".repeat(n)),
            ),
        ] {
            std::fs::write(root.join("scenario.yaml"), scenario).unwrap();
            let (status, text) = run(
                &[
                    "SupportDesk",
                    "--db",
                    "runs.db",
                    "--scenario",
                    "scenario.yaml",
                ],
                root,
            );
            assert_eq!(status.code(), Some(2), "{n} {form}: {status}: {text}");
            assert!(
                text.contains("scenario.yaml") && text.contains("nested"),
                "{n} {form}: {text}"
            );
        }
    }
}
