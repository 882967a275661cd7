//! `mzk lsp` under real editors: headless Neovim 0.7 and Emacs 28 with eglot
//! open a bundle file with a mistake and must receive the diagnostic, a
//! definition, completions, folding ranges and document links.
//!
//! `scripts/test.sh` installs both editors and sets `MZK_REQUIRE_EDITORS=1`, so in CI
//! a missing editor fails the test instead of skipping it.

use std::path::Path;
use std::process::Command;

use mzk_tests::{bundle_copy, repo};
use serde_json::Value;

fn editor_available(program: &str) -> bool {
    let found = Command::new(program)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found && std::env::var_os("MZK_REQUIRE_EDITORS").is_some() {
        panic!("{program} is required (MZK_REQUIRE_EDITORS is set) but not installed");
    }
    if !found {
        eprintln!("skipped: {program} is not installed (scripts/test.sh installs it)");
    }
    found
}

fn line_of(path: &Path, needle: &str) -> usize {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .position(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("{needle} not in {}", path.display()))
}

/// Opens SupportDesk's transition_graph.yaml, with a misspelt agent, in an
/// editor driven by `script` (`{script}` in `args` is its path), and checks
/// what the editor received.
fn editor_receives_diagnostics_definition_and_completion(
    program: &str,
    args: &[&str],
    script: &str,
) -> Option<Value> {
    if !editor_available(program) {
        return None;
    }
    let dir = bundle_copy("editors", "SupportDesk", program);
    let graph = dir.join("transition_graph.yaml");
    let text = std::fs::read_to_string(&graph).unwrap();
    std::fs::write(&graph, mzk_tests::misspelt_target(&text)).unwrap();
    let typo_line = line_of(&graph, "ClasifierAgent");
    let source_line = line_of(&graph, "source_agent: IntakeAgent");
    let value_line = line_of(&graph, "condition_type: context_equals");
    let out = dir.join("editor.json");
    std::fs::write(
        dir.parent().unwrap().join("notes.yaml"),
        "title: not a bundle file\n",
    )
    .unwrap();
    let script = repo().join("tests/editors").join(script);
    let status = Command::new("timeout")
        .arg("120")
        .arg(program)
        .args(
            args.iter()
                .map(|a| a.replace("{script}", &script.to_string_lossy())),
        )
        .env("LSP_CMD", format!("{} lsp", env!("CARGO_BIN_EXE_mzk-e2e")))
        .env("TEST_FILE", &graph)
        .env("OUT", &out)
        .env("DEF_LINE", source_line.to_string())
        .env("DEF_COL", "20")
        .env("COMP_LINE", value_line.to_string())
        .env("COMP_COL", "20")
        .env("PLUGIN", repo().join("editors/neovim"))
        .env("PLUGIN_EMACS", repo().join("editors/emacs"))
        .env("OTHER_YAML", dir.parent().unwrap().join("notes.yaml"))
        .env("AGENTS_FILE", dir.join("agents.yaml"))
        .env("TOOLS_FILE", dir.join("tools.yaml"))
        .status()
        .expect("the editor runs");
    assert!(status.success(), "{program} exited with {status}");
    let got: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();

    assert_eq!(got["received"], true);
    let typo = got["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == "MZ201")
        .unwrap_or_else(|| panic!("no MZ201 in {got}"));
    assert_eq!(typo["range"]["start"]["line"], typo_line);
    assert_eq!(typo["range"]["start"]["character"], 18);
    assert_eq!(typo["range"]["end"]["character"], 32);

    let agents = dir.join("agents.yaml");
    assert!(
        got["definition"]["uri"]
            .as_str()
            .unwrap()
            .ends_with("/SupportDesk/agents.yaml"),
        "{got}"
    );
    assert_eq!(
        got["definition"]["range"]["start"]["line"],
        line_of(&agents, "name: IntakeAgent")
    );
    assert_eq!(
        got["completion"],
        serde_json::json!(["context_equals", "context_expression", "tool_called"])
    );
    // Every rule folds from its first line.
    let folds = got["folds"]
        .as_array()
        .unwrap_or_else(|| panic!("no folds in {got}"));
    let rules: Vec<usize> = std::fs::read_to_string(&graph)
        .unwrap()
        .lines()
        .enumerate()
        .filter(|(_, l)| l.trim_start().starts_with("- source_agent:"))
        .map(|(i, _)| i)
        .collect();
    assert!(!rules.is_empty());
    for rule in rules {
        assert!(
            folds.contains(&serde_json::json!(rule)),
            "rule at line {rule} does not fold: {folds:?}"
        );
    }
    // The first agent folds from its `- name:` line to its last line.
    let first = line_of(&agents, "name: IntakeAgent");
    let second = line_of(&agents, "name: ClassifierAgent");
    assert!(
        got["agent_folds"]
            .as_array()
            .is_some_and(|f| f.contains(&serde_json::json!([first, second - 1]))),
        "no fold of lines {first}..{} in {}",
        second - 1,
        got["agent_folds"]
    );
    // Every `file:` of tools.yaml links to its module under tools/.
    let tools = std::fs::read_to_string(dir.join("tools.yaml")).unwrap();
    let expected: Vec<Value> = tools
        .lines()
        .enumerate()
        .filter_map(|(i, l)| {
            let name = l.trim().strip_prefix("file: ")?;
            Some(serde_json::json!([i, format!("/SupportDesk/tools/{name}")]))
        })
        .collect();
    assert!(!expected.is_empty());
    let links: Vec<Value> = got["links"]
        .as_array()
        .unwrap_or_else(|| panic!("no links in {got}"))
        .iter()
        .map(|link| {
            // Only the path's end: the scratch folder is the test's.
            let target = link[1].as_str().unwrap_or("");
            let tail = target
                .find("/SupportDesk/")
                .map_or(target, |at| &target[at..]);
            serde_json::json!([link[0], tail])
        })
        .collect();
    assert_eq!(links, expected, "{got}");
    Some(got)
}

#[test]
fn neovim_receives_diagnostics_definition_and_completion() {
    let got = editor_receives_diagnostics_definition_and_completion(
        "nvim",
        &[
            "--headless",
            "--clean",
            "-n",
            "-i",
            "NONE",
            "-c",
            "luafile {script}",
        ],
        "nvim.lua",
    );
    // Neovim turned the diagnostic into one of its own; the shipped module
    // left a YAML file outside the bundle alone and showed the graph.
    if let Some(got) = got {
        assert!(got["editor_diagnostics"].as_u64().unwrap() >= 1, "{got}");
        assert_eq!(got["other_attached"], false, "{got}");
        let graph = got["graph"].as_str().unwrap();
        assert!(graph.starts_with("flowchart"), "{graph}");
        assert!(graph.contains("IntakeAgent"), "{graph}");
    }
}

#[test]
fn emacs_eglot_receives_diagnostics_definition_and_completion() {
    let got = editor_receives_diagnostics_definition_and_completion(
        "emacs",
        // Not `-Q`: Debian's site-start puts the elpa-eglot package on the load path.
        &["--batch", "-l", "{script}"],
        "eglot.el",
    );
    // Emacs sends `shutdown` with null params; the server must accept it.
    // The shipped mzk.el put the bundle file, and only it, in its mode.
    if let Some(got) = got {
        assert!(got["shutdown_error"].is_null(), "{got}");
        assert_eq!(got["mode"], "mzk-bundle-mode", "{got}");
        assert_ne!(got["other_mode"], "mzk-bundle-mode", "{got}");
    }
}
