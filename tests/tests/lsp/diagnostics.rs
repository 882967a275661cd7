//! Diagnostics in the editor: pushed as the text changes, pulled per document
//! and per workspace, with the configuration, suppressions and related
//! locations `mzk check` applies.

use mzk_tests::bundle_copy;
use mzk_tests::lsp_client::{uri, Client};
use serde_json::{json, Value};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn diagnostics_follow_edits_and_navigation_crosses_files() {
    let dir = bundle_copy("lsp", "SupportDesk", "navigation");
    let graph = dir.join("transition_graph.yaml");
    let graph_uri = uri(&graph);
    let original = std::fs::read_to_string(&graph).unwrap();
    let broken = mzk_tests::misspelt_target(&original);
    let (mut client, server, init) = Client::start(&["utf-16"]).await;
    assert_eq!(init["capabilities"]["positionEncoding"], "utf-16");

    client.open(&graph_uri, 1, &broken).await;
    let diagnostics = client.diagnostics(&graph_uri, Some(1)).await;
    let typo = diagnostics
        .iter()
        .find(|d| d["code"] == "MZ201")
        .expect("the typo is reported");
    let line = broken
        .lines()
        .position(|l| l.contains("ClasifierAgent"))
        .unwrap();
    assert_eq!(typo["range"]["start"]["line"], line);
    assert_eq!(typo["range"]["start"]["character"], 18);
    assert_eq!(typo["range"]["end"]["character"], 32);
    assert!(typo["message"]
        .as_str()
        .unwrap()
        .contains("did you mean `ClassifierAgent`"));

    // The quick fix replaces exactly the misspelt name.
    let actions = client
        .request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": graph_uri},
                   "range": {"start": {"line": line, "character": 20}, "end": {"line": line, "character": 20}},
                   "context": {"diagnostics": [typo], "only": ["quickfix"]}}),
        )
        .await;
    let actions = actions.as_array().unwrap();
    assert_eq!(actions.len(), 1, "{actions:?}");
    assert_eq!(actions[0]["kind"], "quickfix");
    assert_eq!(actions[0]["diagnostics"][0]["code"], "MZ201");
    let edits = &actions[0]["edit"]["changes"][graph_uri.as_str()];
    assert_eq!(edits[0]["newText"], "ClassifierAgent");
    assert_eq!(edits[0]["range"], typo["range"]);
    // Fix-all on save offers the same edit; quick fixes are not source actions.
    let fix_all = client
        .request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": graph_uri},
                   "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
                   "context": {"diagnostics": [], "only": ["source.fixAll"]}}),
        )
        .await;
    let fix_all = fix_all.as_array().unwrap();
    assert_eq!(fix_all.len(), 1, "{fix_all:?}");
    assert_eq!(fix_all[0]["kind"], "source.fixAll.mzk");
    assert_eq!(fix_all[0]["edit"]["changes"][graph_uri.as_str()], *edits);

    // Fix it with an incremental edit: insert the missing `s`.
    client
        .notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": graph_uri, "version": 2},
                   "contentChanges": [{"range": {"start": {"line": line, "character": 22}, "end": {"line": line, "character": 22}}, "text": "s"}]}),
        )
        .await;
    let diagnostics = client.diagnostics(&graph_uri, Some(2)).await;
    assert!(
        diagnostics.iter().all(|d| d["code"] != "MZ201"),
        "{diagnostics:?}"
    );

    // Go to definition: the target in transition_graph.yaml → agents.yaml.
    let definition = client
        .request("textDocument/definition", json!({"textDocument": {"uri": graph_uri}, "position": {"line": line, "character": 20}}))
        .await;
    assert_eq!(definition["uri"], uri(&dir.join("agents.yaml")));
    let agents = std::fs::read_to_string(dir.join("agents.yaml")).unwrap();
    let agent_line = agents
        .lines()
        .position(|l| l.contains("name: ClassifierAgent"))
        .unwrap();
    assert_eq!(definition["range"]["start"]["line"], agent_line);

    // References of ClassifierAgent include the rules, registry and view entries.
    let references = client
        .request(
            "textDocument/references",
            json!({"textDocument": {"uri": graph_uri}, "position": {"line": line, "character": 20}, "context": {"includeDeclaration": true}}),
        )
        .await;
    let files: Vec<&str> = references
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["uri"].as_str().unwrap())
        .collect();
    for expected in [
        "agents.yaml",
        "transition_graph.yaml",
        "structured_outputs.yaml",
        "context_variables.yaml",
        "tools.yaml",
        "ui_config.yaml",
    ] {
        assert!(
            files.iter().any(|f| f.ends_with(expected)),
            "{expected} missing from {files:?}"
        );
    }

    // Highlights: exactly the references that live in transition_graph.yaml, all
    // reads (the declaration is in agents.yaml).
    let highlights = client
        .request(
            "textDocument/documentHighlight",
            json!({"textDocument": {"uri": graph_uri}, "position": {"line": line, "character": 20}}),
        )
        .await;
    let highlights = highlights.as_array().unwrap();
    let in_graph = files
        .iter()
        .filter(|f| f.ends_with("transition_graph.yaml"))
        .count();
    assert!(in_graph >= 2, "{files:?}");
    assert_eq!(highlights.len(), in_graph, "{highlights:?}");
    let graph_lines: Vec<&str> = original.lines().collect();
    for h in highlights {
        assert_eq!(h["kind"], 2, "uses are reads: {h}");
        let l = h["range"]["start"]["line"].as_u64().unwrap() as usize;
        let (a, b) = (
            h["range"]["start"]["character"].as_u64().unwrap() as usize,
            h["range"]["end"]["character"].as_u64().unwrap() as usize,
        );
        assert_eq!(&graph_lines[l][a..b], "ClassifierAgent");
    }

    // Into Python: the tool's function in tools.yaml → its def.
    let tools = std::fs::read_to_string(dir.join("tools.yaml")).unwrap();
    let tool_line = tools
        .lines()
        .position(|l| l.contains("function: classify_ticket"))
        .unwrap();
    let python = client
        .request("textDocument/definition", json!({"textDocument": {"uri": uri(&dir.join("tools.yaml"))}, "position": {"line": tool_line, "character": 16}}))
        .await;
    assert_eq!(python["uri"], uri(&dir.join("tools/classify_ticket.py")));
    assert_eq!(python["range"]["start"], json!({"line": 3, "character": 4}));

    // Hover on a variable shows its authority.
    let cv = std::fs::read_to_string(dir.join("context_variables.yaml")).unwrap();
    let var_line = cv
        .lines()
        .position(|l| l.starts_with("  triage_outcome:"))
        .unwrap();
    let hover = client
        .request("textDocument/hover", json!({"textDocument": {"uri": uri(&dir.join("context_variables.yaml"))}, "position": {"line": var_line, "character": 4}}))
        .await;
    let text = hover["contents"]["value"].as_str().unwrap();
    assert!(
        text.contains("closed_writer_routing_state") && text.contains("deterministic_tool"),
        "{text}"
    );

    client.stop(server).await;
}

/// The editor shows what `mzk check` shows: the configuration found above
/// the bundle and the suppression comments of the (unsaved) text apply.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn configuration_and_suppressions_apply_in_the_editor() {
    let dir = bundle_copy("lsp", "SupportDesk", "config");
    let root = dir.root().to_path_buf();
    let graph = dir.join("transition_graph.yaml");
    let graph_uri = uri(&graph);
    let original = std::fs::read_to_string(&graph).unwrap();
    std::fs::write(root.join("mzk.toml"), "[severity]\nMZ201 = \"warning\"\n").unwrap();
    let broken = original.replacen("target_agent: ClassifierAgent", "target_agent: Zebra", 1);
    let (mut client, server, _) = Client::start(&["utf-8"]).await;
    client.open(&graph_uri, 1, &broken).await;
    let diagnostics = client.diagnostics(&graph_uri, Some(1)).await;
    let zebra = diagnostics
        .iter()
        .find(|d| d["code"] == "MZ201")
        .unwrap_or_else(|| panic!("{diagnostics:?}"));
    assert_eq!(zebra["severity"], 2, "the configuration makes it a warning");
    // A suppression typed in the editor, not saved.
    let suppressed = broken.replacen(
        "target_agent: Zebra",
        "target_agent: Zebra  # mzk: ignore[MZ201]",
        1,
    );
    client
        .notify("textDocument/didChange", json!({"textDocument": {"uri": graph_uri, "version": 2}, "contentChanges": [{"text": suppressed}]}))
        .await;
    let diagnostics = client.diagnostics(&graph_uri, Some(2)).await;
    assert!(
        !diagnostics.iter().any(|d| d["code"] == "MZ201"),
        "{diagnostics:?}"
    );

    // A broken configuration is shown to the user, and the defaults apply.
    std::fs::write(root.join("mzk.toml"), "selct = [\"MZ1\"]\n").unwrap();
    client
        .notify(
            "workspace/didChangeWatchedFiles",
            json!({"changes": [{"uri": uri(&root.join("mzk.toml")), "type": 2}]}),
        )
        .await;
    loop {
        let message = client.next().await;
        if message["method"] == "window/showMessage" {
            let text = message["params"]["message"].as_str().unwrap();
            assert!(
                text.contains("unknown key `selct` (did you mean `select`?)"),
                "{text}"
            );
            assert_eq!(message["params"]["type"], 1);
            break;
        }
    }
    client.stop(server).await;
}

/// A line the author is typing that breaks its file changes nothing in the
/// other files: they are checked against the last readable version of it,
/// and the broken file shows its syntax error alone, without fixes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broken_line_leaves_the_other_files_as_they_were() {
    let dir = bundle_copy("lsp", "SupportDesk", "broken-line");
    let graph = dir.join("transition_graph.yaml");
    let agents = dir.join("agents.yaml");
    let (graph_uri, agents_uri) = (uri(&graph), uri(&agents));
    let graph_text = mzk_tests::misspelt_target(&std::fs::read_to_string(&graph).unwrap());
    let agents_text = std::fs::read_to_string(&agents).unwrap();
    let (mut client, server, _) =
        Client::start_with(json!({"processId": null, "rootUri": null, "capabilities": {
        "general": {"positionEncodings": ["utf-16"]},
        "textDocument": {"publishDiagnostics": {"relatedInformation": true}}}}))
        .await;
    client.open(&graph_uri, 1, &graph_text).await;
    client.open(&agents_uri, 1, &agents_text).await;
    // The typo's findings: the unknown target, and the agent it strands.
    let agents_before = client.diagnostics(&agents_uri, Some(1)).await;
    assert!(
        agents_before.iter().all(|d| d["code"] != "MZ001"),
        "{agents_before:?}"
    );
    let before = client.diagnostics(&graph_uri, Some(1)).await;
    assert!(before.iter().any(|d| d["code"] == "MZ201"), "{before:?}");
    // A tab replaces the indentation of agents.yaml's third line.
    let mut lines: Vec<&str> = agents_text.lines().collect();
    let tabbed = format!("\t{}", lines[2].trim_start());
    lines[2] = &tabbed;
    let broken = lines.join("\n") + "\n";
    client
        .notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": agents_uri, "version": 2}, "contentChanges": [{"text": broken}]}),
        )
        .await;
    let syntax = client.diagnostics(&agents_uri, Some(2)).await;
    assert_eq!(syntax.len(), 1, "{syntax:?}");
    assert_eq!(syntax[0]["code"], "MZ006");
    assert_eq!(
        syntax[0]["range"]["start"],
        json!({"line": 2, "character": 0})
    );
    assert!(
        syntax[0]["message"]
            .as_str()
            .unwrap()
            .contains("last version of agents.yaml"),
        "{syntax:?}"
    );
    // The same findings; their related locations inside agents.yaml are left
    // out meanwhile, since they point into a text that is no longer there.
    let without_related = |ds: &[Value]| {
        ds.iter()
            .map(|d| {
                let mut d = d.clone();
                d.as_object_mut().unwrap().remove("relatedInformation");
                d
            })
            .collect::<Vec<_>>()
    };
    let after = client.diagnostics(&graph_uri, Some(1)).await;
    assert_eq!(
        without_related(&after),
        without_related(&before),
        "the other file changed while agents.yaml was broken"
    );
    assert!(
        after.iter().all(|d| !d.to_string().contains("agents.yaml")),
        "{after:?}"
    );
    let actions = client
        .request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": agents_uri},
                   "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
                   "context": {"diagnostics": [], "only": ["source.fixAll"]}}),
        )
        .await;
    assert!(
        actions.as_array().is_none_or(|a| a.is_empty()),
        "{actions:?}"
    );
    client.stop(server).await;
}

/// Related locations go where the client can show them: as
/// `relatedInformation` when it declares support, else into the message
/// (Emacs' eglot declares `relatedInformation: false`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn related_locations_follow_the_clients_capability() {
    let dir = bundle_copy("lsp", "SupportDesk", "related");
    let graph = dir.join("transition_graph.yaml");
    let graph_uri = uri(&graph);
    let text = mzk_tests::misspelt_target(&std::fs::read_to_string(&graph).unwrap());
    for supported in [true, false] {
        let (mut client, server, _) =
            Client::start_with(json!({"processId": null, "rootUri": null, "capabilities": {
            "textDocument": {"publishDiagnostics": {"relatedInformation": supported}}}}))
            .await;
        client.open(&graph_uri, 1, &text).await;
        let diagnostics = client.diagnostics(&graph_uri, Some(1)).await;
        let typo = diagnostics.iter().find(|d| d["code"] == "MZ201").unwrap();
        let message = typo["message"].as_str().unwrap();
        let place = "\nagents.yaml:18:11: `ClassifierAgent` is defined here";
        if supported {
            assert_eq!(
                typo["relatedInformation"][0]["message"],
                "`ClassifierAgent` is defined here"
            );
            assert!(!message.contains(place), "{message}");
        } else {
            assert!(typo.get("relatedInformation").is_none(), "{typo}");
            assert!(message.ends_with(place), "{message}");
        }
        // A quick fix still finds its diagnostic, as the client echoes it.
        let line = typo["range"]["start"]["line"].clone();
        let actions = client
            .request(
                "textDocument/codeAction",
                json!({"textDocument": {"uri": graph_uri},
                       "range": {"start": {"line": line, "character": 20}, "end": {"line": line, "character": 20}},
                       "context": {"diagnostics": [typo], "only": ["quickfix"]}}),
            )
            .await;
        assert_eq!(actions.as_array().map(Vec::len), Some(1), "{actions}");
        client.stop(server).await;
    }
}

/// A client that pulls diagnostics (LSP 3.17 `textDocument/diagnostic`):
/// the open file's findings are answered, with a result id that makes an
/// unchanged report cheap, and reflect an edit as soon as it is asked after
/// it; pushed findings for the open file stay empty (no double display).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pulled_diagnostics_with_result_ids() {
    let dir = bundle_copy("lsp", "SupportDesk", "pull");
    let graph = dir.join("transition_graph.yaml");
    let graph_uri = uri(&graph);
    let broken = mzk_tests::misspelt_target(&std::fs::read_to_string(&graph).unwrap());
    let (mut client, server, init) = Client::start_with(json!({"processId": null, "rootUri": null,
        "capabilities": {"textDocument": {"diagnostic": {"dynamicRegistration": false}}}}))
    .await;
    assert_eq!(
        init["capabilities"]["diagnosticProvider"]["interFileDependencies"],
        true
    );
    client.open(&graph_uri, 1, &broken).await;
    let pushed = client.diagnostics(&graph_uri, Some(1)).await;
    assert!(
        pushed.is_empty(),
        "pushed to a client that pulls: {pushed:?}"
    );
    let pull =
        |previous: Value| json!({"textDocument": {"uri": graph_uri}, "previousResultId": previous});
    let first = client
        .request("textDocument/diagnostic", pull(Value::Null))
        .await;
    assert_eq!(first["kind"], "full");
    assert!(
        first["items"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d["code"] == "MZ201"),
        "{first}"
    );
    let again = client
        .request("textDocument/diagnostic", pull(first["resultId"].clone()))
        .await;
    assert_eq!(
        again,
        json!({"kind": "unchanged", "resultId": first["resultId"]})
    );
    // Fix the typo and ask at once: the answer waits for the edit's analysis.
    let line = broken
        .lines()
        .position(|l| l.contains("ClasifierAgent"))
        .unwrap();
    client
        .notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": graph_uri, "version": 2},
                   "contentChanges": [{"range": {"start": {"line": line, "character": 22}, "end": {"line": line, "character": 22}}, "text": "s"}]}),
        )
        .await;
    let fixed = client
        .request("textDocument/diagnostic", pull(first["resultId"].clone()))
        .await;
    assert_eq!(fixed["kind"], "full", "{fixed}");
    assert!(
        fixed["items"]
            .as_array()
            .unwrap()
            .iter()
            .all(|d| d["code"] != "MZ201"),
        "{fixed}"
    );
    client.stop(server).await;
}

/// Workspace pull diagnostics (LSP 3.17 `workspace/diagnostic`): every
/// analysed file of the bundle is reported, open or not; result ids sent back
/// unchanged make `unchanged` reports; once the client pulls the workspace,
/// nothing is pushed any more (it would show twice).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workspace_pull_diagnostics_with_result_ids() {
    let dir = bundle_copy("lsp", "SupportDesk", "workspace-pull");
    let graph = dir.join("transition_graph.yaml");
    let orchestrator = dir.join("orchestrator.yaml");
    let good = std::fs::read_to_string(&graph).unwrap();
    // The typo is on disk, in a file the editor never opens.
    std::fs::write(&graph, mzk_tests::misspelt_target(&good)).unwrap();
    let orchestrator_text = std::fs::read_to_string(&orchestrator).unwrap();
    let (mut client, server, init) = Client::start_with(json!({"processId": null, "rootUri": null,
        "capabilities": {"textDocument": {"diagnostic": {"dynamicRegistration": false}}}}))
    .await;
    assert_eq!(
        init["capabilities"]["diagnosticProvider"]["workspaceDiagnostics"],
        true
    );
    client
        .open(&uri(&orchestrator), 1, &orchestrator_text)
        .await;
    // Before any workspace pull, a file not open is pushed.
    let pushed = client.diagnostics(&uri(&graph), None).await;
    assert!(pushed.iter().any(|d| d["code"] == "MZ201"), "{pushed:?}");

    let first = client
        .request("workspace/diagnostic", json!({"previousResultIds": []}))
        .await;
    let items = first["items"].as_array().unwrap().clone();
    let reported: std::collections::HashSet<&str> =
        items.iter().map(|i| i["uri"].as_str().unwrap()).collect();
    assert_eq!(reported.len(), items.len(), "one report per file");
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "yaml") {
            assert!(reported.contains(uri(&path).as_str()), "{path:?} missing");
        }
    }
    let report = |items: &[Value], path: &std::path::Path| {
        items
            .iter()
            .find(|i| i["uri"] == uri(path))
            .cloned()
            .unwrap()
    };
    let graph_report = report(&items, &graph);
    assert_eq!(graph_report["kind"], "full");
    assert!(
        graph_report["version"].is_null(),
        "not open: {graph_report}"
    );
    assert!(graph_report["items"]
        .as_array()
        .unwrap()
        .iter()
        .any(|d| d["code"] == "MZ201"));
    assert_eq!(report(&items, &orchestrator)["version"], 1);

    // Sent back, every id is unchanged.
    let previous: Vec<Value> = items
        .iter()
        .map(|i| json!({"uri": i["uri"], "value": i["resultId"]}))
        .collect();
    let again = client
        .request(
            "workspace/diagnostic",
            json!({"previousResultIds": previous}),
        )
        .await;
    let again = again["items"].as_array().unwrap().clone();
    assert_eq!(again.len(), items.len());
    assert!(again.iter().all(|i| i["kind"] == "unchanged"), "{again:?}");

    // The graph fixed in the editor: its report is full and clean, pushes
    // stay empty, the other files are unchanged.
    client.open(&uri(&graph), 1, &good).await;
    let pushed = client.diagnostics(&uri(&graph), Some(1)).await;
    assert!(
        pushed.is_empty(),
        "pushed after a workspace pull: {pushed:?}"
    );
    let fixed = client
        .request(
            "workspace/diagnostic",
            json!({"previousResultIds": previous}),
        )
        .await;
    let fixed = fixed["items"].as_array().unwrap().clone();
    let graph_report = report(&fixed, &graph);
    assert_eq!(graph_report["kind"], "full", "{graph_report}");
    assert_eq!(graph_report["version"], 1);
    assert!(graph_report["items"]
        .as_array()
        .unwrap()
        .iter()
        .all(|d| d["code"] != "MZ201"));
    // A full report only where the findings changed (the typo also made
    // findings elsewhere), `unchanged` everywhere else.
    let mut unchanged = 0;
    for entry in &fixed {
        let was = items.iter().find(|i| i["uri"] == entry["uri"]).unwrap();
        match entry["kind"].as_str() {
            Some("unchanged") => unchanged += 1,
            _ => assert_ne!(entry["items"], was["items"], "{entry}"),
        }
    }
    assert!(unchanged > 0, "{fixed:?}");
    assert_eq!(report(&fixed, &dir.join("tools.yaml"))["kind"], "unchanged");
    client.stop(server).await;
}
