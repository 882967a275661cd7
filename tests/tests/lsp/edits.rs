//! Edits: quick fixes across files, and streams of incremental edits (in
//! order, random, with cancellations) after which the server's text is the
//! client's.

use mzk_tests::bundle_copy;
use mzk_tests::lsp_client::{uri, Client};
use serde_json::{json, Value};

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
