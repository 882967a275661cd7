//! Navigation and structure: outline, rename, completion, folding, selection
//! ranges, document links and the call hierarchy.

use mzk_tests::bundle_copy;
use mzk_tests::lsp_client::{uri, Client};
use serde_json::{json, Value};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn outline_and_rename_across_files() {
    let dir = bundle_copy("lsp", "SupportDesk", "rename");
    let agents = dir.join("agents.yaml");
    let agents_uri = uri(&agents);
    let text = std::fs::read_to_string(&agents).unwrap();
    let (mut client, _server, _) = Client::start(&["utf-16"]).await;
    client.open(&agents_uri, 1, &text).await;
    let _ = client.diagnostics(&agents_uri, Some(1)).await;
    let outline = client
        .request(
            "textDocument/documentSymbol",
            json!({"textDocument": {"uri": agents_uri}}),
        )
        .await;
    let names: Vec<&str> = outline
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "IntakeAgent",
            "ClassifierAgent",
            "ResearchPlannerAgent",
            "KnowledgeAgent",
            "LogAgent",
            "ReplyAgent"
        ]
    );

    let line = text
        .lines()
        .position(|l| l.contains("name: ReplyAgent"))
        .unwrap();
    let prepared = client
        .request("textDocument/prepareRename", json!({"textDocument": {"uri": agents_uri}, "position": {"line": line, "character": 14}}))
        .await;
    assert_eq!(prepared["start"], json!({"line": line, "character": 10}));
    let edit = client
        .request(
            "textDocument/rename",
            json!({"textDocument": {"uri": agents_uri}, "position": {"line": line, "character": 14}, "newName": "AnswerAgent"}),
        )
        .await;
    let changes = edit["changes"].as_object().unwrap();
    for file in [
        "agents.yaml",
        "transition_graph.yaml",
        "structured_outputs.yaml",
        "context_variables.yaml",
        "tools.yaml",
        "middleware.yaml",
        "ui_config.yaml",
    ] {
        assert!(
            changes.keys().any(|k| k.ends_with(file)),
            "{file} not edited: {:?}",
            changes.keys()
        );
    }
    assert!(changes
        .values()
        .flat_map(|v| v.as_array().unwrap())
        .all(|e| e["newText"] == "AnswerAgent"));
    // A reserved name is refused with an error response.
    let id = 99;
    client
        .send(json!({"jsonrpc": "2.0", "id": id, "method": "textDocument/rename",
                     "params": {"textDocument": {"uri": agents_uri}, "position": {"line": line, "character": 14}, "newName": "user"}}))
        .await;
    loop {
        let message = client.next().await;
        if message["id"] == id {
            assert!(
                message["error"]["message"]
                    .as_str()
                    .unwrap()
                    .contains("reserved"),
                "{message}"
            );
            break;
        }
    }
    let _ = client.request("shutdown", Value::Null).await;
    client.notify("exit", Value::Null).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn completion_on_a_half_typed_line() {
    let dir = bundle_copy("lsp", "SupportDesk", "completion");
    let graph = dir.join("transition_graph.yaml");
    let graph_uri = uri(&graph);
    let mut text = std::fs::read_to_string(&graph).unwrap();
    text.push_str("  - source_agent: ReplyAgent\n    target_agent: Re\n");
    let (mut client, _server, _) = Client::start(&["utf-16"]).await;
    client.open(&graph_uri, 1, &text).await;
    let _ = client.diagnostics(&graph_uri, Some(1)).await;
    let line = text.lines().count() - 1;
    let items = client
        .request("textDocument/completion", json!({"textDocument": {"uri": graph_uri}, "position": {"line": line, "character": 20}}))
        .await;
    let labels: Vec<&str> = items
        .as_array()
        .unwrap_or_else(|| panic!("{items}"))
        .iter()
        .map(|i| i["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels, ["ResearchPlannerAgent", "ReplyAgent"]);
    let edit = &items[0]["textEdit"];
    assert_eq!(
        edit["range"]["start"],
        json!({"line": line, "character": 18})
    );
    assert_eq!(edit["newText"], "ResearchPlannerAgent");
    let _ = client.request("shutdown", Value::Null).await;
    client.notify("exit", Value::Null).await;
}

/// Folding ranges, selection ranges and document links over the protocol,
/// on the example bundle: what `analyzer::ide` computes, in the negotiated
/// encoding, with links to the Python files the bindings resolve to.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn folding_selection_ranges_and_document_links() {
    let dir = bundle_copy("lsp", "SupportDesk", "structure");
    let graph = dir.join("transition_graph.yaml");
    let tools = dir.join("tools.yaml");
    let graph_text = std::fs::read_to_string(&graph).unwrap();
    let tools_text = std::fs::read_to_string(&tools).unwrap();
    let (mut client, server, init) = Client::start(&["utf-16"]).await;
    for provider in [
        "foldingRangeProvider",
        "selectionRangeProvider",
        "documentLinkProvider",
    ] {
        assert!(
            !init["capabilities"][provider].is_null(),
            "{provider} not advertised"
        );
    }
    client.open(&uri(&graph), 1, &graph_text).await;
    client.open(&uri(&tools), 1, &tools_text).await;
    client.diagnostics(&uri(&tools), Some(1)).await;

    // Each rule folds from its `- source_agent` line; the list from its key.
    let folds = client
        .request(
            "textDocument/foldingRange",
            json!({"textDocument": {"uri": uri(&graph)}}),
        )
        .await;
    let folds = folds.as_array().unwrap();
    let lines: Vec<&str> = graph_text.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        if line.trim_start().starts_with("- source_agent:") {
            assert!(
                folds
                    .iter()
                    .any(|f| f["startLine"] == i && f["endLine"].as_u64() > Some(i as u64)),
                "rule at line {i} does not fold: {folds:?}"
            );
        }
    }
    assert!(folds.iter().any(|f| f["startLine"] == 0), "{folds:?}");

    // From `target_agent` outwards: key, entry, rule, list, top entry, file.
    let line = lines
        .iter()
        .position(|l| l.contains("target_agent: ClassifierAgent"))
        .unwrap();
    let chain = client
        .request(
            "textDocument/selectionRange",
            json!({"textDocument": {"uri": uri(&graph)}, "positions": [{"line": line, "character": 6}]}),
        )
        .await;
    let mut ranges = Vec::new();
    let mut node = &chain[0];
    while node.is_object() {
        ranges.push(node["range"].clone());
        node = &node["parent"];
    }
    assert!(ranges.len() >= 5, "{ranges:?}");
    assert_eq!(ranges[0]["start"], json!({"line": line, "character": 4}));
    assert_eq!(ranges[0]["end"], json!({"line": line, "character": 16}));
    assert_eq!(
        ranges.last().unwrap()["start"],
        json!({"line": 0, "character": 0})
    );

    // Every tool's `file:` leads to its module under tools/.
    let links = client
        .request(
            "textDocument/documentLink",
            json!({"textDocument": {"uri": uri(&tools)}}),
        )
        .await;
    let links = links.as_array().unwrap();
    let files = tools_text.matches("file: ").count();
    assert_eq!(links.len(), files, "{links:?}");
    let tools_lines: Vec<&str> = tools_text.lines().collect();
    for link in links {
        let target = link["target"].as_str().unwrap();
        let line = &tools_lines[link["range"]["start"]["line"].as_u64().unwrap() as usize];
        let name = line.trim().trim_start_matches("file: ");
        assert_eq!(target, uri(&dir.join("tools").join(name)), "{link}");
    }
    client.stop(server).await;
}

/// The call hierarchy over ThemeCapture's real transition graph (rules at
/// the list key's column): counts read from its transition_graph.yaml.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn call_hierarchy_over_a_real_transition_graph() {
    let Some(corpus) = mzk_tests::corpus() else {
        return;
    };
    let (_scratch, dir) = mzk_tests::corpus_copy(&corpus, "ThemeCapture", "lsp-call-hierarchy");
    let graph = dir.join("transition_graph.yaml");
    let text = std::fs::read_to_string(&graph).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let (mut client, server, init) = Client::start(&["utf-16"]).await;
    assert_eq!(init["capabilities"]["callHierarchyProvider"], true);
    client.open(&uri(&graph), 1, &text).await;
    client.diagnostics(&uri(&graph), Some(1)).await;

    // On `target_agent: ThemeInterviewAgent` (line 8 of the file).
    let line = lines
        .iter()
        .position(|l| l.contains("target_agent: ThemeInterviewAgent"))
        .unwrap();
    let items = client
        .request(
            "textDocument/prepareCallHierarchy",
            json!({"textDocument": {"uri": uri(&graph)}, "position": {"line": line, "character": 18}}),
        )
        .await;
    let item = &items[0];
    assert_eq!(item["name"], "ThemeInterviewAgent", "{items}");
    // Located at its first rule: the calls' ranges are read in the file of
    // their item, and every rule is in transition_graph.yaml.
    assert_eq!(item["uri"], uri(&graph), "{item}");

    // Handed the turn only by `user`'s first rule.
    let incoming = client
        .request("callHierarchy/incomingCalls", json!({"item": item}))
        .await;
    let incoming = incoming.as_array().unwrap();
    assert_eq!(incoming.len(), 1, "{incoming:?}");
    assert_eq!(incoming[0]["from"]["name"], "user");
    assert_eq!(incoming[0]["from"]["uri"], uri(&graph));
    assert_eq!(incoming[0]["fromRanges"][0]["start"]["line"], line);

    // Leaves to user, ThemeAnalysisAgent, and terminate (two rules).
    let outgoing = client
        .request("callHierarchy/outgoingCalls", json!({"item": item}))
        .await;
    let outgoing = named_counts(&outgoing, "to");
    let count = |from: &str, to: &str| {
        lines
            .windows(2)
            .filter(|w| {
                w[0] == format!("- source_agent: {from}") && w[1] == format!("  target_agent: {to}")
            })
            .count()
    };
    assert_eq!(
        outgoing,
        [
            ("user".to_string(), count("ThemeInterviewAgent", "user")),
            (
                "ThemeAnalysisAgent".to_string(),
                count("ThemeInterviewAgent", "ThemeAnalysisAgent")
            ),
            (
                "terminate".to_string(),
                count("ThemeInterviewAgent", "terminate")
            ),
        ]
    );
    assert_eq!(outgoing[2].1, 2);

    // `terminate` is an item of its own: reached from two agents, 2 + 3 rules.
    let terminate = outgoing_item(
        &client_request_outgoing(&mut client, item).await,
        "terminate",
    );
    let callers = client
        .request("callHierarchy/incomingCalls", json!({"item": terminate}))
        .await;
    let callers = named_counts(&callers, "from");
    assert_eq!(
        callers,
        [
            (
                "ThemeInterviewAgent".to_string(),
                count("ThemeInterviewAgent", "terminate")
            ),
            (
                "ThemeConfigAssemblerAgent".to_string(),
                count("ThemeConfigAssemblerAgent", "terminate")
            ),
        ]
    );
    assert_eq!(callers[1].1, 3);
    client.stop(server).await;
}

/// Each call's other end (`side`: "from" or "to") by name, with its number
/// of ranges.
fn named_counts(calls: &Value, side: &str) -> Vec<(String, usize)> {
    calls
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c[side]["name"].as_str().unwrap().to_string(),
                c["fromRanges"].as_array().unwrap().len(),
            )
        })
        .collect()
}

async fn client_request_outgoing(client: &mut Client, item: &Value) -> Value {
    client
        .request("callHierarchy/outgoingCalls", json!({"item": item}))
        .await
}

fn outgoing_item(calls: &Value, name: &str) -> Value {
    calls
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["to"]["name"] == name)
        .map(|c| c["to"].clone())
        .unwrap()
}
