//! The session itself: malformed messages, file watching, workspace folders,
//! symbols, lenses and commands, and requests that come before the first
//! analysis.

use mzk_tests::bundle_copy;
use mzk_tests::lsp_client::{uri, Client};
use serde_json::{json, Value};

/// Malformed and unexpected messages get the JSON-RPC answers the protocol
/// prescribes, and the server keeps serving.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_messages_are_answered_per_the_protocol() {
    let (mut client, server, _) = Client::start(&["utf-16"]).await;
    // Not JSON at all: a parse error with a null id.
    client
        .send_raw(b"{\"jsonrpc\": \"2.0\", \"id\": 41, \"method\":")
        .await;
    let answer = client.next().await;
    assert_eq!(answer["error"]["code"], -32700, "{answer}");
    assert_eq!(answer["id"], Value::Null, "{answer}");
    // A method nobody implements: method not found, with the request's id.
    client
        .send(json!({"jsonrpc": "2.0", "id": 42, "method": "mzk/noSuchThing", "params": {}}))
        .await;
    let answer = client.next().await;
    assert_eq!(answer["id"], 42, "{answer}");
    assert_eq!(answer["error"]["code"], -32601, "{answer}");
    // Parameters of the wrong shape: invalid params.
    client
        .send(json!({"jsonrpc": "2.0", "id": 43, "method": "textDocument/hover", "params": {"textDocument": 7}}))
        .await;
    let answer = client.next().await;
    assert_eq!(answer["id"], 43, "{answer}");
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    // An unknown notification is ignored; a request still gets served after all this.
    client.notify("$/somethingNew", json!({"x": 1})).await;
    let symbols = client
        .request("workspace/symbol", json!({"query": ""}))
        .await;
    assert!(symbols.is_array() || symbols.is_null(), "{symbols}");
    client.stop(server).await;
}

/// A client that cannot watch files for the server (no dynamic registration
/// of didChangeWatchedFiles): the server watches the workspace itself.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_watches_files_itself_when_the_client_cannot() {
    let dir = bundle_copy("lsp", "SupportDesk", "own-watcher");
    let root = dir.root().to_path_buf();
    let tools_uri = uri(&dir.join("tools.yaml"));
    let python = dir.join("tools/lookup_plan.py");
    let original = std::fs::read_to_string(&python).unwrap();
    let (mut client, server, _) = Client::start_with(json!({
        "processId": null,
        "capabilities": {},
        "workspaceFolders": [{"uri": uri(&root), "name": "w"}],
    }))
    .await;
    let diagnostics = client.diagnostics(&tools_uri, None).await;
    assert!(diagnostics.is_empty(), "{diagnostics:?}");

    // Another tool renames the function on disk; nobody tells the server.
    std::fs::write(
        &python,
        original.replacen("def lookup_plan(", "def find_plan(", 1),
    )
    .unwrap();
    let diagnostics = client.diagnostics(&tools_uri, None).await;
    assert!(
        diagnostics.iter().any(|d| d["code"] == "MZ503"),
        "{diagnostics:?}"
    );
    std::fs::write(&python, &original).unwrap();
    let diagnostics = client.diagnostics(&tools_uri, None).await;
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    assert!(
        !client
            .server_requests
            .iter()
            .any(|r| r["method"] == "client/registerCapability"),
        "nothing is registered with a client that cannot watch"
    );
    client.stop(server).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workspace_folders_watched_files_symbols_lenses_and_commands() {
    let dir = bundle_copy("lsp", "SupportDesk", "workspace");
    let root = dir.root().to_path_buf();
    let agents = dir.join("agents.yaml");
    let agents_uri = uri(&agents);
    let original = std::fs::read_to_string(&agents).unwrap();
    // A mistake in a file the editor never opens.
    std::fs::write(
        &agents,
        original.replacen("system_message:", "system_mesage:", 1),
    )
    .unwrap();
    let (mut client, server, _) = Client::start_with(json!({
        "processId": null,
        "capabilities": {"workspace": {"didChangeWatchedFiles": {"dynamicRegistration": true}}},
        "workspaceFolders": [{"uri": uri(&root), "name": "w"}],
    }))
    .await;
    let diagnostics = client.diagnostics(&agents_uri, None).await;
    assert!(
        diagnostics.iter().any(|d| d["code"] == "MZ101"),
        "{diagnostics:?}"
    );

    // Fixed on disk (by another tool): the watcher notification re-analyses.
    std::fs::write(&agents, &original).unwrap();
    client
        .notify(
            "workspace/didChangeWatchedFiles",
            json!({"changes": [{"uri": agents_uri, "type": 2}]}),
        )
        .await;
    let diagnostics = client.diagnostics(&agents_uri, None).await;
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    let registration = client
        .server_requests
        .iter()
        .find(|r| r["method"] == "client/registerCapability")
        .expect("the server registers its file watchers");
    let watchers = &registration["params"]["registrations"][0]["registerOptions"]["watchers"];
    assert!(
        watchers
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w["globPattern"] == "**/*.py"),
        "{watchers}"
    );

    // Workspace symbols search every analysed bundle.
    let symbols = client
        .request("workspace/symbol", json!({"query": "classif"}))
        .await;
    let symbols = symbols.as_array().unwrap();
    let classifier = symbols
        .iter()
        .find(|s| s["name"] == "ClassifierAgent")
        .expect("ClassifierAgent is found");
    assert_eq!(classifier["containerName"], "SupportDesk");
    assert_eq!(classifier["location"]["uri"], agents_uri);
    assert!(symbols.iter().all(|s| s["name"]
        .as_str()
        .unwrap()
        .to_lowercase()
        .contains("classif")));

    // Lenses on orchestrator.yaml, bound to commands.
    let orchestrator_uri = uri(&dir.join("orchestrator.yaml"));
    let lenses = client
        .request(
            "textDocument/codeLens",
            json!({"textDocument": {"uri": orchestrator_uri}}),
        )
        .await;
    let commands: Vec<&str> = lenses
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["command"]["command"].as_str().unwrap())
        .collect();
    assert_eq!(commands, ["mzk.runWorkflow", "mzk.showGraph"]);
    let show = &lenses[1]["command"];
    let graph = client
        .request(
            "workspace/executeCommand",
            json!({"command": show["command"], "arguments": show["arguments"]}),
        )
        .await;
    let graph = graph.as_str().unwrap();
    assert!(graph.starts_with("flowchart TD\n"), "{graph}");
    assert!(graph.contains("[\"ClassifierAgent\"]"), "{graph}");
    // With the html format, the graph page, whose one script carries the
    // webview's nonce under a policy that allows no other.
    let page = client
        .request(
            "workspace/executeCommand",
            json!({"command": "mzk.showGraph", "arguments": [show["arguments"][0], {"format": "html", "nonce": "n0nce"}]}),
        )
        .await;
    let page = page.as_str().unwrap();
    assert!(page.starts_with("<!DOCTYPE html>"), "{page}");
    assert!(page.contains("script-src 'nonce-n0nce'"), "{page}");
    assert_eq!(page.matches("<script nonce=\"n0nce\">").count(), 1);
    assert!(page.contains("data-node=") && page.contains(">ClassifierAgent</text>"));
    // Running needs a model: the bundle has no scenario, and the synthetic
    // model needs no configuration, so the lens starts a run.
    let run = &lenses[0]["command"];
    let started = client
        .request(
            "workspace/executeCommand",
            json!({"command": run["command"], "arguments": run["arguments"]}),
        )
        .await;
    assert!(started["runId"].is_string(), "{started}");
    let agent_lenses = client
        .request(
            "textDocument/codeLens",
            json!({"textDocument": {"uri": agents_uri}}),
        )
        .await;
    assert!(agent_lenses
        .as_array()
        .unwrap()
        .iter()
        .any(|l| l["command"]["command"] == "mzk.runFromAgent"
            && l["command"]["arguments"][1] == "ClassifierAgent"));
    // Beside it, the size of its static prompt, as `mzk context` counts it;
    // the lens opens the prompt itself.
    let analysis = mzk_analyzer::analyze_bundle(&mzk_analyzer::RealFs, &dir);
    let prompt = mzk_analyzer::prompt::compose(&analysis.bundle)
        .into_iter()
        .find(|p| p.agent == "ClassifierAgent")
        .unwrap();
    let tokens = mzk_analyzer::tokens::count(&prompt.text);
    assert!(tokens > 0);
    let size = agent_lenses
        .as_array()
        .unwrap()
        .iter()
        .find(|l| {
            l["command"]["command"] == "mzk.showPrompt"
                && l["command"]["arguments"][1] == "ClassifierAgent"
        })
        .expect("a prompt-size lens on ClassifierAgent");
    assert_eq!(
        size["command"]["title"],
        format!(
            "prompt: {tokens} tokens, {} chars",
            prompt.text.chars().count()
        )
    );
    let shown = client
        .request(
            "workspace/executeCommand",
            json!({"command": "mzk.showPrompt", "arguments": size["command"]["arguments"]}),
        )
        .await;
    let shown = shown.as_str().unwrap();
    assert!(shown.starts_with("# ClassifierAgent\n"), "{shown}");
    assert!(shown.contains(&format!("**{tokens} tokens**")), "{shown}");
    assert!(shown.contains(&prompt.text), "{shown}");

    client.stop(server).await;
}

/// A request that comes before the first analysis of its bundle (right after
/// the editor opened it) is answered once the bundle is analysed, not with
/// nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_before_the_first_analysis_are_answered() {
    let dir = bundle_copy("lsp", "SupportDesk", "first-request");
    let agents = dir.join("agents.yaml");
    let agents_uri = uri(&agents);
    let text = std::fs::read_to_string(&agents).unwrap();
    let root_uri = uri(dir.root());
    let (mut client, server, _) =
        Client::start_with(json!({"processId": null, "rootUri": root_uri, "capabilities": {}}))
            .await;
    client.open(&agents_uri, 1, &text).await;
    // No wait for diagnostics: the hover goes right behind the open.
    let line = text
        .lines()
        .position(|l| l.contains("name: IntakeAgent"))
        .unwrap();
    let hover = client
        .request(
            "textDocument/hover",
            json!({"textDocument": {"uri": agents_uri}, "position": {"line": line, "character": 12}}),
        )
        .await;
    assert!(
        hover["contents"].to_string().contains("IntakeAgent"),
        "{hover}"
    );
    let references = client
        .request(
            "textDocument/references",
            json!({"textDocument": {"uri": agents_uri}, "position": {"line": line, "character": 12},
                   "context": {"includeDeclaration": true}}),
        )
        .await;
    assert!(
        references.as_array().is_some_and(|r| r.len() > 1),
        "{references}"
    );
    client.stop(server).await;
}
