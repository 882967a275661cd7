//! Positions: counted in the negotiated encoding, and clamped as the protocol
//! says when they fall past a line's end, inside a character or past the
//! file's end.

use mzk_tests::bundle_copy;
use mzk_tests::lsp_client::{uri, Client};
use serde_json::{json, Value};

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
