//! Semantic tokens: the full answer, deltas and ranges.

use mzk_tests::bundle_copy;
use mzk_tests::lsp_client::{uri, Client};
use serde_json::{json, Value};

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
