//! The pre-commit hook and the GitHub Action: their files parse, name
//! options mzk has, and the hook's file pattern selects bundle files only.

use std::process::Command;

use mzk_analyzer::base::FileId;
use mzk_analyzer::syntax::{self, Node};
use mzk_tests::repo;

fn yaml(relative: &str) -> Node {
    let text = std::fs::read_to_string(repo().join(relative)).unwrap();
    let mut diagnostics = Vec::new();
    let document = syntax::parse(&text, FileId(0), &mut diagnostics);
    assert!(diagnostics.is_empty(), "{relative}: {diagnostics:?}");
    document.root.expect("a document")
}

fn mzk_help(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_mzk-e2e"))
        .args(args)
        .arg("--help")
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap()
}

/// Both hook manifests (this repository's and the hook repository's in
/// pre-commit/) offer `mzk-check` (the wheel, `language: python`) and
/// `mzk-check-system` (the `mzk` on PATH). scripts/package_check.py runs them
/// for real with pre-commit.
#[test]
fn pre_commit_hooks_select_bundle_files() {
    for manifest in [
        ".pre-commit-hooks.yaml",
        "pre-commit/.pre-commit-hooks.yaml",
    ] {
        let hooks = yaml(manifest);
        let hooks = hooks.as_seq().unwrap();
        let ids: Vec<_> = hooks
            .iter()
            .map(|h| h.get("id").and_then(Node::as_str))
            .collect();
        assert_eq!(
            ids,
            [Some("mzk-check"), Some("mzk-check-system")],
            "{manifest}"
        );
        let languages: Vec<_> = hooks
            .iter()
            .map(|h| h.get("language").and_then(Node::as_str))
            .collect();
        assert_eq!(languages, [Some("python"), Some("system")], "{manifest}");
        for hook in hooks {
            check_hook(hook);
        }
    }
}

fn check_hook(hook: &Node) {
    let entry = hook.get("entry").and_then(Node::as_str).unwrap();
    assert!(entry.starts_with("mzk check"), "{entry}");
    let help = mzk_help(&["check"]);
    for option in entry.split_whitespace().filter(|w| w.starts_with("--")) {
        assert!(
            help.contains(option),
            "`{option}` is not an option of mzk check"
        );
    }
    // pre-commit matches `files` with Python's re.search.
    let pattern = hook.get("files").and_then(Node::as_str).unwrap();
    let script = r#"
import re, sys
pattern = re.compile(sys.argv[1])
selected = ["orchestrator.yaml", "flows/Desk/agents.yaml", "Desk/transition_graph.yaml",
            "Desk/extended_orchestration/task_batches.yaml", "Desk/tools/lookup.py", "mzk.toml",
            "pyproject.toml", "a/b/context_variables.yaml", "x/structured_outputs.yaml"]
skipped = ["README.md", "Desk/notes.yaml", "Desk/tools/sub/x.py", "src/app.py", "Desk/agents.yml"]
bad = [p for p in selected if not pattern.search(p)] + [p for p in skipped if pattern.search(p)]
print("\n".join(bad))
"#;
    let out = Command::new("python3")
        .args(["-c", script, pattern])
        .output()
        .expect("python3 is installed (the README's test command installs it)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let wrong = String::from_utf8(out.stdout).unwrap();
    assert!(wrong.trim().is_empty(), "mis-selected by the hook: {wrong}");
}

#[test]
fn github_action_installs_this_version_and_uses_real_options() {
    let action = yaml("action.yml");
    let steps = action
        .get("runs")
        .and_then(|r| r.get("steps"))
        .and_then(Node::as_seq)
        .unwrap();
    let scripts: Vec<&str> = steps
        .iter()
        .filter_map(|s| s.get("run").and_then(Node::as_str))
        .collect();
    // The wheel of the version in the action's own Cargo.toml, from PyPI
    // (source build only for a version not published).
    assert!(
        scripts[0].contains("\"$GITHUB_ACTION_PATH/Cargo.toml\""),
        "{}",
        scripts[0]
    );
    assert!(
        scripts[0].contains("pip install --quiet --disable-pip-version-check \"mzk==$version\""),
        "{}",
        scripts[0]
    );
    assert!(scripts[0].contains("--path \"$GITHUB_ACTION_PATH/server\""));
    assert!(repo().join("server/Cargo.toml").is_file());
    let help = mzk_help(&["check"]);
    for script in &scripts[1..] {
        for option in script
            .split_whitespace()
            .filter(|w| w.starts_with("--") && !w.contains('$'))
        {
            assert!(
                help.contains(option),
                "`{option}` is not an option of mzk check"
            );
        }
    }
    for format in ["sarif", "github", "concise"] {
        assert!(help.contains(format), "{format}");
    }
    assert!(steps.iter().any(|s| s
        .get("uses")
        .and_then(Node::as_str)
        .is_some_and(|u| u.starts_with("github/codeql-action/upload-sarif"))));
}

#[test]
fn helix_languages_file_covers_every_bundle_file() {
    let text = std::fs::read_to_string(repo().join("editors/helix/languages.toml")).unwrap();
    let document: toml::Table = text.parse().expect("valid TOML");
    let server = &document["language-server"]["mzk"];
    assert_eq!(server["command"].as_str(), Some("mzk"));
    assert_eq!(server["args"].as_array().unwrap()[0].as_str(), Some("lsp"));
    let language = &document["language"].as_array().unwrap()[0];
    assert!(language["language-servers"]
        .as_array()
        .unwrap()
        .iter()
        .any(|s| s.as_str() == Some("mzk")));
    let globs: Vec<&str> = language["file-types"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["glob"].as_str().unwrap())
        .collect();
    for kind in mzk_analyzer::base::FILE_KINDS {
        assert!(
            globs.contains(&format!("**/{}", kind.path()).as_str()),
            "{} missing from {globs:?}",
            kind.path()
        );
    }
}

/// The VS Code extension contributes every command the server executes, and
/// its own copy of that list (for palette argument mapping) is the same.
#[test]
fn vscode_extension_names_the_server_commands() {
    let manifest: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(repo().join("editors/vscode/package.json")).unwrap(),
    )
    .unwrap();
    let contributed: Vec<&str> = manifest["contributes"]["commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["command"].as_str().unwrap())
        .collect();
    let source = std::fs::read_to_string(repo().join("editors/vscode/src/commands.ts")).unwrap();
    let start = source.find("export const SERVER_COMMANDS").unwrap();
    let end = start + source[start..].find("as const").unwrap();
    let listed = &source[start..end];
    for command in mzk_server::lsp::COMMANDS {
        assert!(contributed.contains(&command), "{command} not contributed");
        assert!(
            listed.contains(&format!("\"{command}\"")),
            "{command} not in SERVER_COMMANDS"
        );
    }
    assert_eq!(
        listed.matches("\"mzk.").count(),
        mzk_server::lsp::COMMANDS.len(),
        "SERVER_COMMANDS names a command the server does not have: {listed}"
    );
    assert_eq!(
        manifest["activationEvents"],
        serde_json::json!(["workspaceContains:**/orchestrator.yaml"])
    );
}

#[test]
fn zed_settings_start_mzk_lsp() {
    let text = std::fs::read_to_string(repo().join("editors/zed/settings.json")).unwrap();
    // Zed's settings are JSON with comments.
    let json: String = text
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    let settings: serde_json::Value = serde_json::from_str(&json).expect("valid JSON");
    let binary = &settings["lsp"]["yaml-language-server"]["binary"];
    assert_eq!(binary["path"], "mzk");
    assert_eq!(binary["arguments"], serde_json::json!(["lsp"]));
}

/// The extension's `mzk.run.backend` setting offers exactly the backends the
/// runtime chooses between, and defaults to the one chosen without a setting.
#[test]
fn vscode_run_backend_setting_lists_the_runtime_backends() {
    use mzk_runtime::backend::BackendKind;
    use mzk_runtime::choice::ModelChoice;
    let manifest: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(repo().join("editors/vscode/package.json")).unwrap(),
    )
    .unwrap();
    let setting = &manifest["contributes"]["configuration"]["properties"]["mzk.run.backend"];
    assert_eq!(setting["enum"], serde_json::json!(BackendKind::names()));
    assert_eq!(
        setting["default"],
        ModelChoice::default().kind().name(),
        "the setting's default differs from the runtime's"
    );
}
