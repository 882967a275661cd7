//! Positions: counted in the negotiated encoding, and clamped as the protocol
//! says when they fall past a line's end, inside a character or past the
//! file's end.

use std::path::Path;

use mzk_analyzer::syntax::ColumnUnit;
use mzk_tests::bundle_copy;
use mzk_tests::lsp_client::{uri, Client};
use proptest::prelude::*;
use serde_json::{json, Value};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn positions_are_counted_in_the_negotiated_encoding() {
    // `  - {source_agent: "😀", target_agent: ` is 38 characters; the emoji is
    // 2 UTF-16 units and 4 UTF-8 bytes, so `Nobody` starts at 39, 41 or 38.
    for (encodings, expected_character) in [
        (vec!["utf-16"], 39u64),
        (vec!["utf-8", "utf-16"], 41),
        (vec!["utf-32", "utf-16"], 38),
    ] {
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
        assert_eq!(encoding, offered[0]);
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

/// The encodings a client may negotiate, with the unit each counts in.
const ENCODINGS: [(&str, ColumnUnit); 3] = [
    ("utf-8", ColumnUnit::Utf8),
    ("utf-16", ColumnUnit::Utf16),
    ("utf-32", ColumnUnit::Char),
];

/// Lines put before SupportDesk's agents.yaml: an unknown key whose name the
/// diagnostics quote (so an edit that lands elsewhere shows), a surrogate
/// pair, multi-byte characters, a CRLF and a lone CR.
const HOSTILE_HEAD: &str = "k😀é日本b:\r\n# a😀\r# é日\r\n";

/// The client's lines as the protocol defines them (`\n`, `\r\n` and `\r`
/// end a line, nothing else): the char range of each line's content.
fn model_lines(text: &[char]) -> Vec<(usize, usize)> {
    let mut lines = Vec::new();
    let (mut start, mut i) = (0, 0);
    while i < text.len() {
        if text[i] == '\n' || text[i] == '\r' {
            lines.push((start, i));
            if text[i] == '\r' && text.get(i + 1) == Some(&'\n') {
                i += 1;
            }
            start = i + 1;
        }
        i += 1;
    }
    lines.push((start, text.len()));
    lines
}

fn width(c: char, unit: ColumnUnit) -> usize {
    match unit {
        ColumnUnit::Utf8 => c.len_utf8(),
        ColumnUnit::Utf16 => c.len_utf16(),
        ColumnUnit::Char => 1,
    }
}

/// The reference clamping rule, as a char index: a line past the last means
/// the text's end, a character past its line's end means the line's end
/// (before its line break), and a position inside a character (a surrogate
/// pair, a UTF-8 sequence) means that character's start.
fn model_index(text: &[char], line: u32, character: u32, unit: ColumnUnit) -> usize {
    let Some(&(start, end)) = model_lines(text).get(line as usize) else {
        return text.len();
    };
    let mut col = 0;
    for (i, c) in text.iter().enumerate().take(end).skip(start) {
        col += width(*c, unit);
        if col > character as usize {
            return i;
        }
    }
    end
}

/// A line a hostile client may name: any line, one of the first (where the
/// hostile characters are), one past the last, or `u32::MAX`.
#[derive(Debug, Clone)]
enum LineChoice {
    Any(prop::sample::Index),
    Head(usize),
    Past(u32),
    Max,
}

/// A character on that line: anywhere up to two past its end, inside a
/// character or between a CR and its LF (one past the end), far past the
/// end, or `u32::MAX`.
#[derive(Debug, Clone)]
enum ColumnChoice {
    Any(prop::sample::Index),
    Inside(prop::sample::Index),
    Far,
    Max,
}

#[derive(Debug, Clone)]
struct Spot {
    line: LineChoice,
    column: ColumnChoice,
}

/// One `didChange`: a range (or an insertion point) and its new text.
#[derive(Debug, Clone)]
struct Change {
    start: Spot,
    end: Option<Spot>,
    text: &'static str,
}

fn spot() -> impl Strategy<Value = Spot> {
    let line = prop_oneof![
        3 => any::<prop::sample::Index>().prop_map(LineChoice::Any),
        4 => (0usize..4).prop_map(LineChoice::Head),
        1 => prop_oneof![Just(1u32), Just(2), Just(100_000)].prop_map(LineChoice::Past),
        1 => Just(LineChoice::Max),
    ];
    let column = prop_oneof![
        4 => any::<prop::sample::Index>().prop_map(ColumnChoice::Any),
        4 => any::<prop::sample::Index>().prop_map(ColumnChoice::Inside),
        1 => Just(ColumnChoice::Far),
        1 => Just(ColumnChoice::Max),
    ];
    (line, column).prop_map(|(line, column)| Spot { line, column })
}

fn change() -> impl Strategy<Value = Change> {
    // Line breaks of every kind, including U+2028, which the protocol does
    // not count as one (a client's line numbers go on across it).
    let text = prop::sample::select(vec![
        "", "x", "é", "😀", "日本", ": ", "#", "\n", "\r\n", "\r", "\u{2028}", "\u{85}",
    ]);
    (spot(), prop::option::of(spot()), text).prop_map(|(start, end, text)| Change {
        start,
        end,
        text,
    })
}

/// The protocol position a spot names in the client's current text.
fn resolve(text: &[char], spot: &Spot, unit: ColumnUnit) -> (u32, u32) {
    let lines = model_lines(text);
    let line = match &spot.line {
        LineChoice::Any(i) => i.index(lines.len()) as u32,
        LineChoice::Head(k) => (*k).min(lines.len() - 1) as u32,
        LineChoice::Past(k) => lines.len() as u32 - 1 + k,
        LineChoice::Max => u32::MAX,
    };
    let widths: Vec<usize> = match lines.get(line as usize) {
        Some(&(start, end)) => text[start..end].iter().map(|c| width(*c, unit)).collect(),
        None => Vec::new(),
    };
    let total: usize = widths.iter().sum();
    let character = match &spot.column {
        ColumnChoice::Any(i) => i.index(total + 3),
        ColumnChoice::Inside(i) => {
            let mut inside = vec![total + 1];
            let mut col = 0;
            for w in widths {
                inside.extend(col + 1..col + w);
                col += w;
            }
            inside[i.index(inside.len())]
        }
        ColumnChoice::Far => total + 1_000,
        ColumnChoice::Max => u32::MAX as usize,
    };
    (line, character.min(u32::MAX as usize) as u32)
}

/// A diagnostic as compared: code, range ends, and the message's first line
/// without the notes the editor adds while a file cannot be read.
type Seen = (String, [u64; 4], String);

fn core(message: &str) -> String {
    let first = message.split('\n').next().unwrap_or("");
    [" (until ", " (meanwhile mzk checks"]
        .iter()
        .filter_map(|note| first.find(note))
        .min()
        .map_or(first, |at| &first[..at])
        .to_string()
}

/// One client session: open the hostile text, send `changes` at the
/// positions they name, ask for what a position can be asked after each;
/// returns the diagnostics published for the last version, and the text
/// the reference rule gives.
async fn hostile_session(
    dir: &Path,
    encoding: usize,
    changes: &[Change],
) -> Result<(Vec<Seen>, String), TestCaseError> {
    let (name, unit) = ENCODINGS[encoding];
    let agents_uri = uri(&dir.join("agents.yaml"));
    let original = std::fs::read_to_string(dir.join("agents.yaml")).unwrap();
    let start = format!(
        "{HOSTILE_HEAD}{}",
        original.replacen("agents:\n", "agents:\r\n", 1)
    );
    let mut text: Vec<char> = start.chars().collect();
    let (mut client, server, init) = Client::start(&[name]).await;
    prop_assert_eq!(&init["capabilities"]["positionEncoding"], name);
    // Every message is kept: diagnostics may arrive while an answer is awaited.
    client.seen = Some(Vec::new());
    client.open(&agents_uri, 1, &start).await;
    let mut version = 1;
    for change in changes {
        let (line, character) = resolve(&text, &change.start, unit);
        let (end_line, end_character) = change
            .end
            .as_ref()
            .map_or((line, character), |end| resolve(&text, end, unit));
        let from = model_index(&text, line, character, unit);
        let to = model_index(&text, end_line, end_character, unit).max(from);
        text.splice(from..to, change.text.chars());
        version += 1;
        let at = json!({"line": line, "character": character});
        client
            .notify(
                "textDocument/didChange",
                json!({"textDocument": {"uri": agents_uri, "version": version},
                       "contentChanges": [{"range": {"start": at, "end": {"line": end_line, "character": end_character}},
                                           "text": change.text}]}),
            )
            .await;
        let document = json!({"uri": agents_uri});
        for (method, params) in [
            (
                "textDocument/hover",
                json!({"textDocument": document, "position": at}),
            ),
            (
                "textDocument/definition",
                json!({"textDocument": document, "position": at}),
            ),
            (
                "textDocument/completion",
                json!({"textDocument": document, "position": at}),
            ),
            (
                "textDocument/documentHighlight",
                json!({"textDocument": document, "position": at}),
            ),
            (
                "textDocument/selectionRange",
                json!({"textDocument": document, "positions": [at]}),
            ),
            (
                "textDocument/foldingRange",
                json!({"textDocument": document}),
            ),
            (
                "textDocument/documentLink",
                json!({"textDocument": document}),
            ),
        ] {
            let answer = client.request_raw(method, params).await;
            prop_assert!(
                answer.get("error").is_none(),
                "{} {} {}: {}",
                name,
                method,
                at,
                answer
            );
        }
    }
    let is_last = |m: &Value| {
        m["method"] == "textDocument/publishDiagnostics"
            && m["params"]["uri"] == agents_uri.as_str()
            && m["params"]["version"] == version
    };
    let last = match client.seen.as_ref().unwrap().iter().find(|m| is_last(m)) {
        Some(m) => m["params"]["diagnostics"].as_array().unwrap().clone(),
        None => client.diagnostics(&agents_uri, Some(version)).await,
    };
    client.stop(server).await;
    let number = |v: &Value| v.as_u64().unwrap();
    let published = last
        .iter()
        .map(|d| {
            let r = &d["range"];
            (
                d["code"].as_str().unwrap().to_string(),
                [
                    number(&r["start"]["line"]),
                    number(&r["start"]["character"]),
                    number(&r["end"]["line"]),
                    number(&r["end"]["character"]),
                ],
                core(d["message"].as_str().unwrap()),
            )
        })
        .collect();
    Ok((published, text.iter().collect()))
}

/// What `mzk check` reports in agents.yaml holding `text`, as the editor
/// would show it in `unit`.
fn checked(dir: &Path, text: &str, unit: ColumnUnit) -> Vec<Seen> {
    std::fs::write(dir.join("agents.yaml"), text).unwrap();
    let config = mzk_analyzer::Config::discover(&mzk_analyzer::RealFs, dir).unwrap();
    let analysis = mzk_analyzer::analyze(
        &mzk_analyzer::RealFs,
        dir,
        Some(&config),
        &mut mzk_analyzer::AnalysisCache::new(),
    );
    let agents = analysis.bundle.file_at("agents.yaml").unwrap();
    analysis
        .diagnostics
        .iter()
        .filter(|d| d.file == agents.id)
        .map(|d| {
            let at = |offset| agents.line_index.position(&agents.text, offset, unit);
            let (start, end) = (at(d.range.start), at(d.range.end));
            (
                d.rule.code().to_string(),
                [start.line, start.col, end.line, end.col].map(u64::from),
                core(&d.message),
            )
        })
        .collect()
}

/// Failures are kept beside this file (positions.proptest-regressions),
/// where proptest replays them first.
fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        failure_persistence: Some(Box::new(
            proptest::test_runner::FileFailurePersistence::WithSource("proptest-regressions"),
        )),
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config(48))]

    /// Random `didChange` ranges at hostile positions — past line ends, past
    /// the file's end, inside surrogate pairs and UTF-8 sequences, between CR
    /// and LF, at `u32::MAX` — in each negotiated encoding: every later
    /// request is answered without an error, and the diagnostics of the last
    /// version are those of the text the protocol's clamping rule gives
    /// (the unknown key on the first line quotes that line's text).
    #[test]
    fn hostile_edits_follow_the_clamping_rule(
        encoding in 0usize..3,
        changes in prop::collection::vec(change(), 1..8),
    ) {
        let dir = bundle_copy("lsp", "SupportDesk", "hostile-property");
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let (mut published, text) = runtime.block_on(hostile_session(&dir, encoding, &changes))?;
        let mut expected = checked(&dir, &text, ENCODINGS[encoding].1);
        published.sort();
        expected.sort();
        prop_assert_eq!(published, expected, "{} text {:?}", ENCODINGS[encoding].0, text);
    }
}

#[test]
fn the_reference_rule_clamps_as_the_protocol_says() {
    let text: Vec<char> = "a😀b\r\ncd\re".chars().collect();
    assert_eq!(model_lines(&text), vec![(0, 3), (5, 7), (8, 9)]);
    for unit in [ColumnUnit::Utf8, ColumnUnit::Utf16, ColumnUnit::Char] {
        assert_eq!(model_index(&text, 0, 1_000, unit), 3, "{unit:?}");
        assert_eq!(model_index(&text, 1, 3, unit), 7, "{unit:?}");
        assert_eq!(model_index(&text, 3, 0, unit), text.len(), "{unit:?}");
    }
    // Inside the emoji: the emoji's start.
    assert_eq!(model_index(&text, 0, 2, ColumnUnit::Utf16), 1);
    assert_eq!(model_index(&text, 0, 3, ColumnUnit::Utf8), 1);
    assert_eq!(model_index(&text, 0, 3, ColumnUnit::Utf16), 2);
    assert_eq!(model_index(&text, 0, 5, ColumnUnit::Utf8), 2);
}
