//! The language server driven in-process over an in-memory duplex, speaking
//! the protocol byte for byte as an editor would.

use std::time::Duration;

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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quick_fixes_edit_other_files_and_fix_all_stays_safe() {
    let dir = bundle_copy("lsp", "SupportDesk", "cross-file-fixes");
    let graph = dir.join("transition_graph.yaml");
    let graph_uri = uri(&graph);
    let variables_uri = uri(&dir.join("context_variables.yaml"));
    let original = std::fs::read_to_string(&graph).unwrap();
    // An undeclared routing flag, and a key no field is close to.
    let broken = original
        .replacen(
            "condition_key: ticket_captured",
            "condition_key: vip_customer",
            1,
        )
        .replacen(
            "    condition_value: true\n",
            "    condition_value: true\n    weight: 3\n",
            1,
        );
    let (mut client, server, _) = Client::start(&["utf-16"]).await;
    client.open(&graph_uri, 1, &broken).await;
    let diagnostics = client.diagnostics(&graph_uri, Some(1)).await;
    let undeclared = diagnostics
        .iter()
        .find(|d| d["code"] == "MZ121")
        .expect("the undeclared variable is reported")
        .clone();
    let line = undeclared["range"]["start"]["line"].clone();
    let actions = client
        .request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": graph_uri},
                   "range": {"start": {"line": line, "character": 20}, "end": {"line": line, "character": 20}},
                   "context": {"diagnostics": [undeclared], "only": ["quickfix"]}}),
        )
        .await;
    let declare = actions
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["title"] == "Declare `vip_customer` (type boolean) in context_variables.yaml")
        .unwrap_or_else(|| panic!("{actions:?}"));
    assert_eq!(
        declare["isPreferred"], true,
        "no name is close: the declaration is the preferred fix"
    );
    let changes = declare["edit"]["changes"].as_object().unwrap();
    assert_eq!(changes.keys().collect::<Vec<_>>(), [&variables_uri]);
    let inserted = changes[&variables_uri][0]["newText"].as_str().unwrap();
    assert!(
        inserted.starts_with("  vip_customer:\n    type: boolean\n"),
        "{inserted}"
    );

    // The removal is offered as a quick fix but is not safe: fix-all leaves
    // it out and applies only the declaration.
    let weight_line = broken
        .lines()
        .position(|l| l.contains("weight: 3"))
        .unwrap();
    let actions = client
        .request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": graph_uri},
                   "range": {"start": {"line": weight_line, "character": 5}, "end": {"line": weight_line, "character": 5}},
                   "context": {"diagnostics": [], "only": ["quickfix"]}}),
        )
        .await;
    let titles: Vec<&str> = actions
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["title"].as_str().unwrap())
        .collect();
    assert!(
        titles.contains(&"Remove the key `weight` (review the change)"),
        "{titles:?}"
    );
    let fix_all = client
        .request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": graph_uri},
                   "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
                   "context": {"diagnostics": [], "only": ["source.fixAll"]}}),
        )
        .await;
    let changes = fix_all[0]["edit"]["changes"].as_object().unwrap();
    assert_eq!(
        changes.keys().collect::<Vec<_>>(),
        [&variables_uri],
        "{fix_all:?}"
    );
    client.stop(server).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn positions_are_counted_in_the_negotiated_encoding() {
    // `  - {source_agent: "😀", target_agent: ` is 38 characters; the emoji is
    // 2 UTF-16 units and 4 UTF-8 bytes, so `Nobody` starts at 39 or 41.
    for (encodings, expected_character) in [(vec!["utf-16"], 39u64), (vec!["utf-8", "utf-16"], 41)]
    {
        let dir = bundle_copy("lsp", "Hello", &format!("encoding-{}", encodings.len()));
        let graph = dir.join("transition_graph.yaml");
        let graph_uri = uri(&graph);
        // An emoji (2 UTF-16 units, 4 UTF-8 bytes) before an unknown target on the same line.
        let text = "transition_rules:\n  - {source_agent: \"😀\", target_agent: Nobody, transition_type: after_turn}\n";
        let (mut client, _server, init) = Client::start(&encodings).await;
        let expected_encoding = encodings[0];
        assert_eq!(init["capabilities"]["positionEncoding"], expected_encoding);
        client.open(&graph_uri, 7, text).await;
        let diagnostics = client.diagnostics(&graph_uri, Some(7)).await;
        let target = diagnostics
            .iter()
            .find(|d| d["code"] == "MZ201" && d["message"].as_str().unwrap().contains("Nobody"))
            .expect("unknown target reported");
        assert_eq!(target["range"]["start"]["line"], 1);
        assert_eq!(
            target["range"]["start"]["character"], expected_character,
            "{encodings:?}"
        );
        let _ = client.request("shutdown", Value::Null).await;
        client.notify("exit", Value::Null).await;
    }
}

/// Many incremental edits in a row, multi-byte text included: the server's
/// text must end equal to the client's, and the last diagnostics published
/// must be those of the last version.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rapid_incremental_edits_stay_in_order() {
    let dir = bundle_copy("lsp", "SupportDesk", "rapid");
    let path = dir.join("agents.yaml");
    let file_uri = uri(&path);
    let mut text: Vec<char> = std::fs::read_to_string(&path).unwrap().chars().collect();
    let (mut client, _server, _) = Client::start(&["utf-16"]).await;
    client
        .open(&file_uri, 0, &text.iter().collect::<String>())
        .await;
    // Edits inside the description of the first agent: insert and delete
    // characters (é and 😀 included) at a fixed line, tracked client-side.
    let line_no = text
        .iter()
        .collect::<String>()
        .lines()
        .position(|l| l.contains("description: Collects"))
        .unwrap();
    let line_start = {
        let s: String = text.iter().collect();
        s.lines()
            .take(line_no)
            .map(|l| l.chars().count() + 1)
            .sum::<usize>()
    };
    let base = line_start + "    description: Collects".chars().count();
    let inserts = ["a", "é", "😀", "b"];
    let mut inserted: Vec<char> = Vec::new();
    let edits = 2000;
    for i in 0..edits {
        let version = i + 1;
        let (range_start, range_end, new_text) = if i % 3 == 2 && !inserted.is_empty() {
            // Delete the last inserted character.
            let ch = inserted.pop().unwrap();
            let units: usize = inserted.iter().map(|c| c.len_utf16()).sum();
            (units, units + ch.len_utf16(), String::new())
        } else {
            let ch = inserts[i % inserts.len()].chars().next().unwrap();
            let units: usize = inserted.iter().map(|c| c.len_utf16()).sum();
            inserted.push(ch);
            (units, units, ch.to_string())
        };
        let column = "    description: Collects".encode_utf16().count();
        client
            .notify(
                "textDocument/didChange",
                json!({"textDocument": {"uri": file_uri, "version": version},
                       "contentChanges": [{"range": {"start": {"line": line_no, "character": column + range_start},
                                                     "end": {"line": line_no, "character": column + range_end}},
                                           "text": new_text}]}),
            )
            .await;
    }
    // The client's view of the final text.
    let insert_at = base;
    let mut expected = text.clone();
    for (k, ch) in inserted.iter().enumerate() {
        expected.insert(insert_at + k, *ch);
    }
    text = expected;
    let last = client.diagnostics(&file_uri, Some(edits as i64)).await;
    assert!(last.is_empty(), "{last:?}");
    // Ask for the hover of the agent name to prove the server's text matches:
    // its range must land on `IntakeAgent` in the client's text.
    let final_text: String = text.iter().collect();
    let name_line = final_text
        .lines()
        .position(|l| l.contains("name: IntakeAgent"))
        .unwrap();
    let hover = client
        .request("textDocument/hover", json!({"textDocument": {"uri": file_uri}, "position": {"line": name_line, "character": 12}}))
        .await;
    assert!(
        hover["contents"]["value"]
            .as_str()
            .unwrap()
            .contains("`IntakeAgent`"),
        "{hover}"
    );
    let description_line = final_text.lines().nth(line_no).unwrap().to_string();
    // On the description line the only thing to hover is the key itself.
    let key_hover = client
        .request("textDocument/hover", json!({"textDocument": {"uri": file_uri}, "position": {"line": line_no, "character": 6}}))
        .await;
    assert!(
        key_hover["contents"]["value"]
            .as_str()
            .unwrap()
            .starts_with("**`description`**"),
        "{key_hover} on {description_line}"
    );
    assert_eq!(key_hover["range"]["start"]["character"], 4);
    assert_eq!(key_hover["range"]["end"]["character"], 15);
    let _ = client.request("shutdown", Value::Null).await;
    client.notify("exit", Value::Null).await;
}

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

/// The resident memory of this process, in KiB (Linux).
fn rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// 10,000 random incremental edits anywhere in agents.yaml (line breaks,
/// YAML punctuation, é and 😀 included), with hover and completion requests
/// interleaved and some of them cancelled. Every request is answered (a
/// result, or the cancellation error); the diagnostics published for the
/// last version are exactly those of the client's final text analysed
/// directly, so the server's text is the client's; memory stays bounded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_random_edits_with_requests_and_cancellations() {
    let dir = bundle_copy("lsp", "SupportDesk", "stress");
    let path = dir.join("agents.yaml");
    let file_uri = uri(&path);
    let mut text: Vec<char> = std::fs::read_to_string(&path).unwrap().chars().collect();
    let (mut client, server, _) = Client::start(&["utf-16"]).await;
    client
        .open(&file_uri, 0, &text.iter().collect::<String>())
        .await;
    let rss_before = rss_kib();
    // A deterministic generator (xorshift), so a failure can be replayed.
    let mut state: u64 = 0x2545_F491_4F6C_DD1D;
    let mut random = move |n: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n.max(1) as u64) as usize
    };
    let pieces = [
        "a", "é", "😀", "\n", ": ", "- ", " ", "name", "\"", "#", "日本",
    ];
    // UTF-16 line/character of a char index in the client's text.
    let position = |text: &[char], at: usize| -> Value {
        let line = text[..at].iter().filter(|c| **c == '\n').count();
        let line_start = text[..at]
            .iter()
            .rposition(|c| *c == '\n')
            .map_or(0, |i| i + 1);
        let character: usize = text[line_start..at].iter().map(|c| c.len_utf16()).sum();
        json!({"line": line, "character": character})
    };
    let edits = 10_000;
    let mut pending: Vec<i64> = Vec::new();
    for version in 1..=edits {
        let at = random(text.len() + 1);
        let delete = random(4).min(text.len() - at);
        // Keep the file from growing without bound: delete more than is
        // inserted once it is large.
        let insert = if text.len() > 8_000 {
            String::new()
        } else {
            pieces[random(pieces.len())].to_string()
        };
        let range = json!({"start": position(&text, at), "end": position(&text, at + delete)});
        text.splice(at..at + delete, insert.chars());
        client
            .notify(
                "textDocument/didChange",
                json!({"textDocument": {"uri": file_uri, "version": version},
                       "contentChanges": [{"range": range, "text": insert}]}),
            )
            .await;
        if version % 25 == 0 {
            let at = random(text.len() + 1);
            let method = if version % 50 == 0 {
                "textDocument/hover"
            } else {
                "textDocument/completion"
            };
            let id = client.next_id;
            client.next_id += 1;
            client
                .send(json!({"jsonrpc": "2.0", "id": id, "method": method,
                             "params": {"textDocument": {"uri": file_uri}, "position": position(&text, at)}}))
                .await;
            if version % 75 == 0 {
                client.notify("$/cancelRequest", json!({"id": id})).await;
            }
            pending.push(id);
        }
    }
    // Every request answered; then the diagnostics of the last version.
    let mut last = None;
    while !pending.is_empty() || last.is_none() {
        let message = client.next().await;
        if let Some(id) = message["id"]
            .as_i64()
            .filter(|_| message.get("method").is_none())
        {
            if let Some(error) = message.get("error") {
                assert_eq!(
                    error["code"], -32800,
                    "only cancellations may fail: {message}"
                );
            }
            pending.retain(|p| *p != id);
        } else if message["method"] == "textDocument/publishDiagnostics"
            && message["params"]["uri"] == file_uri.as_str()
            && message["params"]["version"] == edits
        {
            last = Some(message["params"]["diagnostics"].as_array().unwrap().clone());
        }
    }
    let last = last.unwrap();
    // The client's final text, analysed directly with the same configuration.
    let final_text: String = text.iter().collect();
    std::fs::write(&path, &final_text).unwrap();
    let config = mzk_analyzer::Config::discover(&mzk_analyzer::RealFs, &dir).unwrap();
    let analysis = mzk_analyzer::analyze(
        &mzk_analyzer::RealFs,
        &dir,
        Some(&config),
        &mut mzk_analyzer::AnalysisCache::new(),
    );
    let agents = analysis.bundle.file_at("agents.yaml").unwrap();
    let expected: Vec<(String, u32, u32, String)> = analysis
        .diagnostics
        .iter()
        .filter(|d| d.file == agents.id)
        .map(|d| {
            let p = agents.line_index.position(
                &agents.text,
                d.range.start,
                mzk_analyzer::syntax::ColumnUnit::Utf16,
            );
            (d.rule.code().to_string(), p.line, p.col, d.message.clone())
        })
        .collect();
    let published: Vec<(String, u32, u32, String)> = last
        .iter()
        .map(|d| {
            (
                d["code"].as_str().unwrap().to_string(),
                d["range"]["start"]["line"].as_u64().unwrap() as u32,
                d["range"]["start"]["character"].as_u64().unwrap() as u32,
                d["message"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    // The editor deliberately words two things its own way: while the file
    // cannot be read, the other files are checked against its last readable
    // version (so the note on its first error differs from `mzk check`'s),
    // and related locations may be folded into the message.
    let core = |message: &str| {
        let first = message.split('\n').next().unwrap_or("");
        [" (until ", " (meanwhile mzk checks"]
            .iter()
            .filter_map(|note| first.find(note))
            .min()
            .map_or(first, |at| &first[..at])
            .to_string()
    };
    let mut expected: Vec<_> = expected
        .into_iter()
        .map(|(c, l, col, m)| (c, l, col, core(&m)))
        .collect();
    let mut published: Vec<_> = published
        .into_iter()
        .map(|(c, l, col, m)| (c, l, col, core(&m)))
        .collect();
    expected.sort();
    published.sort();
    assert!(
        !expected.is_empty(),
        "random edits leave mistakes to report"
    );
    assert_eq!(published, expected);
    if let (Some(before), Some(after)) = (rss_before, rss_kib()) {
        assert!(
            after < before + 512 * 1024,
            "memory grew from {before} KiB to {after} KiB over {edits} edits"
        );
    }
    client.stop(server).await;
}

/// Collects server messages until one satisfies `done`.
async fn collect_until(client: &mut Client, done: impl Fn(&Value) -> bool) -> Vec<Value> {
    let mut seen = Vec::new();
    loop {
        let message = client.next().await;
        let finished = done(&message);
        seen.push(message);
        if finished {
            return seen;
        }
    }
}

fn run_events(messages: &[Value]) -> Vec<String> {
    messages
        .iter()
        .filter(|m| m["method"] == "mzk/runEvent")
        .map(|m| m["params"]["event"]["type"].as_str().unwrap().to_string())
        .collect()
}

fn shows(message: &Value, text: &str) -> bool {
    message["method"] == "window/showMessage"
        && message["params"]["message"]
            .as_str()
            .unwrap()
            .contains(text)
}

#[tokio::test]
async fn runs_from_the_editor_stream_events_ask_the_user_and_can_be_cancelled() {
    let root = mzk_tests::Scratch::new("lsp-runs");
    let dir = root.join("PauseResume");
    mzk_tests::copy_dir(
        &mzk_tests::repo().join("tests/fixtures/runtime/PauseResume"),
        &dir,
    );
    std::fs::write(
        dir.join("model.yaml"),
        "responses:\n  A: [question?, again?]\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("slow.yaml"),
        "responses:\n  A: [{text: late, delay: 30}]\n",
    )
    .unwrap();
    let (mut client, server, _) = Client::start_with(json!({
        "processId": null,
        "capabilities": {"window": {"workDoneProgress": true}},
        "initializationOptions": {"run": {"backend": "synthetic"}},
    }))
    .await;
    let folder = dir.to_string_lossy().to_string();
    let scenario = json!({"scenario": dir.join("model.yaml").to_string_lossy()});

    // 1. The client answers the pause: the run completes in one go.
    client
        .answers
        .insert("mzk/askUser".into(), json!({"text": "yes"}));
    let started = client
        .request(
            "workspace/executeCommand",
            json!({"command": "mzk.runWorkflow", "arguments": [folder, scenario]}),
        )
        .await;
    let run_id = started["runId"].as_str().unwrap().to_string();
    let messages = collect_until(&mut client, |m| shows(m, "completed")).await;
    assert_eq!(
        run_events(&messages),
        [
            "run_started",
            "transition",
            "turn_started",
            "prompt",
            "model_response",
            "transition",
            "paused",
            "run_finished",
            "user_message",
            "transition",
            "run_finished"
        ]
    );
    assert!(messages
        .iter()
        .filter(|m| m["method"] == "mzk/runEvent")
        .all(|m| m["params"]["runId"] == run_id.as_str()));
    let ask = client
        .server_requests
        .iter()
        .find(|r| r["method"] == "mzk/askUser")
        .expect("asked");
    assert_eq!(ask["params"]["prompt"], "A asks: question?");
    assert!(client
        .server_requests
        .iter()
        .any(|r| r["method"] == "window/workDoneProgress/create"));
    let progress: Vec<&str> = messages
        .iter()
        .filter(|m| m["method"] == "$/progress")
        .map(|m| m["params"]["value"]["kind"].as_str().unwrap())
        .collect();
    assert_eq!(progress.first(), Some(&"begin"));
    assert_eq!(progress.last(), Some(&"end"));
    assert!(progress.contains(&"report"));
    let summary = messages.last().unwrap()["params"]["message"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        summary,
        format!("mzk: run {run_id} of PauseResume: completed (workflow_complete) after 3 turns")
    );

    // 2. No answer: the server says how to reply, and mzk.reply continues the run.
    client
        .answers
        .insert("mzk/askUser".into(), json!({"text": null}));
    let started = client
        .request(
            "workspace/executeCommand",
            json!({"command": "mzk.runFromAgent", "arguments": [folder, "A", scenario]}),
        )
        .await;
    let run_id = started["runId"].as_str().unwrap().to_string();
    collect_until(&mut client, |m| shows(m, "waits for your reply")).await;
    collect_until(&mut client, |m| shows(m, "paused (awaiting_user_input)")).await;
    client
        .request(
            "workspace/executeCommand",
            json!({"command": "mzk.reply", "arguments": [run_id, "yes"]}),
        )
        .await;
    let messages = collect_until(&mut client, |m| shows(m, "completed")).await;
    assert_eq!(
        run_events(&messages).first().map(String::as_str),
        Some("user_message")
    );

    // 3. Cancelled mid-turn: interrupted, and the history keeps it.
    let started = client
        .request(
            "workspace/executeCommand",
            json!({"command": "mzk.runWorkflow", "arguments": [folder, {"scenario": dir.join("slow.yaml").to_string_lossy()}]}),
        )
        .await;
    let slow = started["runId"].as_str().unwrap().to_string();
    collect_until(&mut client, |m| {
        m["method"] == "mzk/runEvent" && m["params"]["event"]["type"] == "prompt"
    })
    .await;
    client
        .request(
            "workspace/executeCommand",
            json!({"command": "mzk.cancelRun", "arguments": [slow]}),
        )
        .await;
    collect_until(&mut client, |m| shows(m, "interrupted")).await;
    let history = mzk_runtime::history::History::open(&dir.join(".mzk/runs.db")).unwrap();
    let runs = history.list(10).unwrap();
    let statuses: Vec<(&str, &str)> = runs
        .iter()
        .map(|r| (r.id.as_str(), r.status.as_str()))
        .collect();
    assert!(
        statuses.contains(&(slow.as_str(), "interrupted")),
        "{statuses:?}"
    );
    assert!(
        statuses.contains(&(run_id.as_str(), "completed")),
        "{statuses:?}"
    );

    // Unknown runs and bundles with errors are refused with a reason.
    let refused = client
        .request_raw(
            "workspace/executeCommand",
            json!({"command": "mzk.reply", "arguments": ["nope", "x"]}),
        )
        .await;
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no run `nope`"),
        "{refused}"
    );
    std::fs::write(dir.join("orchestrator.yaml"), "schema_version: mozaiks.orchestrator.v1\nworkflow_name: PauseResume\nworkflow_startup_mode: Sometimes\n").unwrap();
    let orchestrator = uri(&dir.join("orchestrator.yaml"));
    client
        .open(
            &orchestrator,
            1,
            &std::fs::read_to_string(dir.join("orchestrator.yaml")).unwrap(),
        )
        .await;
    client.diagnostics(&orchestrator, Some(1)).await;
    let refused = client
        .request_raw(
            "workspace/executeCommand",
            json!({"command": "mzk.runWorkflow", "arguments": [folder]}),
        )
        .await;
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("error"),
        "{refused}"
    );
    client.stop(server).await;
}

/// After `mzk test`, each rule of transition_graph.yaml shows how often it
/// fired; the server watches the coverage file and asks the client to refresh
/// its hints; a rule edited since the test shows no stale count.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn transition_coverage_of_the_last_mzk_test_shows_as_inlay_hints() {
    let dir = bundle_copy("lsp", "SupportDesk", "coverage");
    let root = dir.root().to_path_buf();
    let graph = dir.join("transition_graph.yaml");
    let graph_uri = uri(&graph);
    let text = std::fs::read_to_string(&graph).unwrap();
    let (mut client, server, init) = Client::start_with(json!({
        "processId": null,
        "capabilities": {"workspace": {"inlayHint": {"refreshSupport": true}}},
        "workspaceFolders": [{"uri": uri(&root), "name": "w"}],
    }))
    .await;
    assert_eq!(init["capabilities"]["inlayHintProvider"], true);
    client.open(&graph_uri, 1, &text).await;
    let whole = json!({"textDocument": {"uri": graph_uri},
        "range": {"start": {"line": 0, "character": 0}, "end": {"line": 10_000, "character": 0}}});
    // No test has run: no hints.
    assert_eq!(
        client
            .request("textDocument/inlayHint", whole.clone())
            .await,
        Value::Null
    );

    let out = std::process::Command::new(env!("CARGO_BIN_EXE_mzk-e2e"))
        .args(["test", "."])
        .current_dir(&*dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let scenarios = mzk_runtime::suite::scenario_files(&dir).len();
    // The server sees the coverage file appear and asks for a refresh.
    let started = std::time::Instant::now();
    while !client
        .server_requests
        .iter()
        .any(|r| r["method"] == "workspace/inlayHint/refresh")
    {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "no refresh request"
        );
        let _ = tokio::time::timeout(Duration::from_millis(200), client.next()).await;
    }

    let hints = client
        .request("textDocument/inlayHint", whole.clone())
        .await;
    let hints = hints.as_array().unwrap();
    let rule_lines: Vec<usize> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| l.trim_start().starts_with("- source_agent"))
        .map(|(i, _)| i)
        .collect();
    assert_eq!(hints.len(), rule_lines.len(), "{hints:#?}");
    for (hint, line) in hints.iter().zip(&rule_lines) {
        assert_eq!(hint["position"]["line"], *line);
        assert_eq!(
            hint["position"]["character"],
            text.lines().nth(*line).unwrap().encode_utf16().count()
        );
        let label = hint["label"].as_str().unwrap();
        assert!(label.starts_with("fired "), "{label}");
        assert!(
            label.ends_with(&format!("in {scenarios} scenarios")),
            "{label}"
        );
    }

    // The first rule never fired; the second was edited since the test.
    let path = mzk_runtime::suite::Coverage::path(&dir);
    let mut coverage: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    coverage["rules"][0]["hits"] = 0.into();
    coverage["rules"][1]["rule"] = "Someone → Else (after turn)".into();
    std::fs::write(&path, coverage.to_string()).unwrap();
    let hints = client.request("textDocument/inlayHint", whole).await;
    let hints = hints.as_array().unwrap();
    assert_eq!(hints.len(), rule_lines.len() - 1, "{hints:#?}");
    assert_eq!(
        hints[0]["label"],
        format!("never fired in {scenarios} scenarios")
    );
    assert_eq!(hints[1]["position"]["line"], rule_lines[2]);
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
    assert_eq!(syntax[0]["code"], "MZ001");
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

/// A VS Code-like client sends a change whose range ends past the end of its
/// line (and another past the end of the file): the position means the
/// line's end (the text's end), the edit applies, and the server goes on
/// answering.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn edits_past_the_end_of_a_line_are_clamped() {
    let dir = bundle_copy("lsp", "SupportDesk", "past-line-end");
    let agents = dir.join("agents.yaml");
    let agents_uri = uri(&agents);
    let text = std::fs::read_to_string(&agents).unwrap();
    let (mut client, server, _) = Client::start(&["utf-16"]).await;
    client.open(&agents_uri, 1, &text).await;
    client.diagnostics(&agents_uri, Some(1)).await;
    // Line 1 is `  - name: IntakeAgent`: replace from `Intake` to far past its end.
    client
        .notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": agents_uri, "version": 2}, "contentChanges": [
                {"range": {"start": {"line": 1, "character": 10}, "end": {"line": 1, "character": 500}}, "text": "IntakeAgent"},
                {"range": {"start": {"line": 100000, "character": 3}, "end": {"line": 100000, "character": 9}}, "text": "# end\n"}
            ]}),
        )
        .await;
    let diagnostics = client.diagnostics(&agents_uri, Some(2)).await;
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    let hover = client
        .request(
            "textDocument/hover",
            json!({"textDocument": {"uri": agents_uri}, "position": {"line": 1, "character": 12}}),
        )
        .await;
    assert!(
        hover["contents"].to_string().contains("IntakeAgent"),
        "{hover}"
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

/// Hostile positions in every position encoding a client may negotiate:
/// past a line's end, in the middle of a CRLF, of a surrogate pair and of a
/// UTF-8 sequence, past the file's end and at `u32::MAX`. Each edit and
/// request is clamped as the protocol says: never an internal error, the
/// server keeps answering and the rest of the text stays as it was.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_positions_in_every_encoding() {
    let dir = bundle_copy("lsp", "SupportDesk", "hostile-positions");
    let agents = dir.join("agents.yaml");
    let agents_uri = uri(&agents);
    // A comment line with a surrogate pair, a multi-byte character and a CRLF.
    let first = "# a😀b é日本\r\n";
    let text = format!("{first}{}", std::fs::read_to_string(&agents).unwrap());
    let agent_line = text
        .lines()
        .position(|l| l.contains("name: IntakeAgent"))
        .unwrap();
    for offered in [vec!["utf-16"], vec!["utf-8"], vec!["utf-32"]] {
        let (mut client, server, init) = Client::start(&offered).await;
        let encoding = init["capabilities"]["positionEncoding"].clone();
        client.open(&agents_uri, 1, &text).await;
        client.diagnostics(&agents_uri, Some(1)).await;
        let content = first.trim_end().chars().count() as u32;
        let hostile = [
            (0, 1_000),       // past the line's end
            (0, content + 1), // between the CR and the LF
            (0, 4),           // inside the emoji's UTF-8 bytes
            (0, 2),           // between the emoji's surrogates (UTF-16)
            (100_000, 5),     // past the file's end
            (u32::MAX, u32::MAX),
        ];
        let mut version = 1;
        for (line, character) in hostile {
            let at = json!({"line": line, "character": character});
            version += 1;
            // Text inserted in the comment (or at the file's end) changes
            // nothing the analysis sees.
            let inserted = if line == 0 { "x" } else { "\n# end\n" };
            client
                .notify(
                    "textDocument/didChange",
                    json!({"textDocument": {"uri": agents_uri, "version": version},
                           "contentChanges": [{"range": {"start": at, "end": at}, "text": inserted}]}),
                )
                .await;
            let diagnostics = client.diagnostics(&agents_uri, Some(version)).await;
            assert!(diagnostics.is_empty(), "{encoding} {at}: {diagnostics:?}");
            for method in [
                "textDocument/hover",
                "textDocument/definition",
                "textDocument/completion",
                "textDocument/documentHighlight",
            ] {
                let answer = client
                    .request_raw(
                        method,
                        json!({"textDocument": {"uri": agents_uri}, "position": at}),
                    )
                    .await;
                assert!(
                    answer.get("error").is_none(),
                    "{encoding} {method} {at}: {answer}"
                );
            }
        }
        // The agents are where they were: the edits stayed in the comment
        // and at the end.
        let hover = client
            .request(
                "textDocument/hover",
                json!({"textDocument": {"uri": agents_uri}, "position": {"line": agent_line, "character": 12}}),
            )
            .await;
        assert!(
            hover["contents"].to_string().contains("IntakeAgent"),
            "{encoding}: {hover}"
        );
        client.stop(server).await;
    }
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

/// Semantic tokens over the protocol: offered to a client that asks for the
/// relative format, decoded back to names and their legend types.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn semantic_tokens_of_the_transition_graph() {
    let dir = bundle_copy("lsp", "SupportDesk", "semantic");
    let graph = dir.join("transition_graph.yaml");
    let text = std::fs::read_to_string(&graph).unwrap();
    let (mut client, server, init) = Client::start_with(json!({"processId": null, "rootUri": null,
        "capabilities": {"general": {"positionEncodings": ["utf-16"]},
            "textDocument": {"semanticTokens": {"formats": ["relative"], "tokenTypes": [], "tokenModifiers": [],
                "requests": {"full": true}}}}}))
    .await;
    let legend = init["capabilities"]["semanticTokensProvider"]["legend"]["tokenTypes"].clone();
    client.open(&uri(&graph), 1, &text).await;
    client.diagnostics(&uri(&graph), Some(1)).await;
    let tokens = client
        .request(
            "textDocument/semanticTokens/full",
            json!({"textDocument": {"uri": uri(&graph)}}),
        )
        .await;
    let data: Vec<u64> = tokens["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_u64().unwrap())
        .collect();
    assert_eq!(data.len() % 5, 0);
    let lines: Vec<&str> = text.lines().collect();
    let (mut line, mut start) = (0usize, 0usize);
    let mut named = Vec::new();
    for token in data.chunks(5) {
        line += token[0] as usize;
        start = if token[0] == 0 {
            start + token[1] as usize
        } else {
            token[1] as usize
        };
        // SupportDesk's graph is ASCII: UTF-16 columns are byte columns.
        let name = &lines[line][start..start + token[2] as usize];
        named.push((
            name.to_string(),
            legend[token[3] as usize].as_str().unwrap().to_string(),
        ));
    }
    let has = |name: &str, kind: &str| named.iter().any(|(n, k)| n == name && k == kind);
    assert!(has("IntakeAgent", "class"), "{named:?}");
    assert!(has("user", "keyword"), "{named:?}");
    assert!(has("ticket_captured", "variable"), "{named:?}");
    assert!(has("research_status", "variable"), "{named:?}");
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

/// Semantic tokens as a delta of those last sent (applied, they equal a
/// fresh full answer) and for a range of lines (exactly the full answer's
/// tokens on those lines).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn semantic_tokens_deltas_and_ranges() {
    let dir = bundle_copy("lsp", "SupportDesk", "semantic-delta");
    let graph = dir.join("transition_graph.yaml");
    let graph_uri = uri(&graph);
    let text = std::fs::read_to_string(&graph).unwrap();
    let (mut client, server, init) = Client::start_with(json!({"processId": null, "rootUri": null,
        "capabilities": {"general": {"positionEncodings": ["utf-16"]},
            "textDocument": {"semanticTokens": {"formats": ["relative"], "tokenTypes": [], "tokenModifiers": [],
                "requests": {"full": {"delta": true}, "range": true}}}}}))
    .await;
    let provider = &init["capabilities"]["semanticTokensProvider"];
    assert_eq!(provider["full"], json!({"delta": true}));
    assert_eq!(provider["range"], true);
    client.open(&graph_uri, 1, &text).await;
    client.diagnostics(&graph_uri, Some(1)).await;
    let doc = json!({"textDocument": {"uri": graph_uri}});
    let full = client
        .request("textDocument/semanticTokens/full", doc.clone())
        .await;
    let first = numbers(&full["data"]);
    assert!(!first.is_empty());

    // Nothing changed: no edits.
    let mut delta = doc.clone();
    delta["previousResultId"] = full["resultId"].clone();
    let same = client
        .request("textDocument/semanticTokens/full/delta", delta.clone())
        .await;
    assert_eq!(same["edits"], json!([]), "{same}");

    // A target misspelt: no longer an agent's token. The delta against the
    // last answer (the same tokens as the first), applied, is the new full
    // answer.
    let line = text
        .lines()
        .position(|l| l.contains("target_agent: ClassifierAgent"))
        .unwrap();
    client
        .notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": graph_uri, "version": 2},
                   "contentChanges": [{"range": {"start": {"line": line, "character": 22}, "end": {"line": line, "character": 23}}, "text": ""}]}),
        )
        .await;
    client.diagnostics(&graph_uri, Some(2)).await;
    // Against the latest result id, as a client asks.
    delta["previousResultId"] = same["resultId"].clone();
    let changed = client
        .request("textDocument/semanticTokens/full/delta", delta)
        .await;
    let edits = changed["edits"].as_array().expect("a delta").clone();
    assert_eq!(edits.len(), 1, "{changed}");
    let mut applied = first.clone();
    let start = edits[0]["start"].as_u64().unwrap() as usize;
    let deleted = edits[0]["deleteCount"].as_u64().unwrap() as usize;
    applied.splice(start..start + deleted, numbers(&edits[0]["data"]));
    let fresh = client
        .request("textDocument/semanticTokens/full", doc.clone())
        .await;
    assert_eq!(applied, numbers(&fresh["data"]));
    assert!(
        applied.len() < first.len(),
        "the misspelt name has no token"
    );

    // A stale result id: the whole set again.
    let mut stale = doc.clone();
    stale["previousResultId"] = json!("no such id");
    let whole = client
        .request("textDocument/semanticTokens/full/delta", stale)
        .await;
    assert_eq!(numbers(&whole["data"]), numbers(&fresh["data"]));

    // A range of lines: the full answer's tokens on exactly those lines.
    let (from, to) = (line as u64, line as u64 + 6);
    let mut range = doc.clone();
    range["range"] =
        json!({"start": {"line": from, "character": 0}, "end": {"line": to, "character": 0}});
    let part = client
        .request("textDocument/semanticTokens/range", range)
        .await;
    let in_range: Vec<[u64; 5]> = absolute(&numbers(&fresh["data"]))
        .into_iter()
        .filter(|t| t[0] >= from && t[0] < to)
        .collect();
    assert!(!in_range.is_empty());
    assert_eq!(absolute(&numbers(&part["data"])), in_range);
    client.stop(server).await;
}

fn numbers(data: &Value) -> Vec<u64> {
    data.as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_u64().unwrap())
        .collect()
}

/// Relative tokens as `[line, start, length, type, modifiers]`.
fn absolute(data: &[u64]) -> Vec<[u64; 5]> {
    let (mut line, mut start) = (0, 0);
    data.chunks(5)
        .map(|t| {
            line += t[0];
            start = if t[0] == 0 { start + t[1] } else { t[1] };
            [line, start, t[2], t[3], t[4]]
        })
        .collect()
}
