//! The capability matrix: the `initialize` capabilities of real clients,
//! recorded in `tests/clients/*.json`, drive the same scripted session over a
//! real bundle each (the repository's SupportDesk, and the bundles of
//! mozaiks 0.2.0 when present). The test fails on any message the client did
//! not declare support for, on any request left unanswered (the test client
//! waits 20 s at most) and on any panic the server reports.

use std::path::{Path, PathBuf};

use mzk_tests::lsp_client::{uri, Client};
use mzk_tests::repo;
use serde_json::{json, Value};

/// A recorded client.
struct Recorded {
    name: String,
    capabilities: Value,
}

fn clients() -> Vec<Recorded> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(repo().join("tests/clients"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    found.sort();
    found
        .into_iter()
        .map(|path| {
            let recorded: Value =
                serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            Recorded {
                name: path.file_stem().unwrap().to_string_lossy().into_owned(),
                capabilities: recorded["capabilities"].clone(),
            }
        })
        .collect()
}

/// The value at a `/`-separated path of the capabilities (`at_caps` where
/// a local `at` shadows it).
fn at_caps<'a>(caps: &'a Value, path: &str) -> &'a Value {
    at(caps, path)
}

/// The value at a `/`-separated path of the capabilities.
fn at<'a>(caps: &'a Value, path: &str) -> &'a Value {
    path.split('/').fold(caps, |v, key| &v[key])
}

fn declared(caps: &Value, path: &str) -> bool {
    at(caps, path) == &Value::Bool(true)
}

/// Whether `value` is in the list at `path`; `default` when the list is absent.
fn listed(caps: &Value, path: &str, value: &Value, default: bool) -> bool {
    match at(caps, path).as_array() {
        Some(list) => list.contains(value),
        None => default,
    }
}

/// A kind number the client knows: in its value set, or in the protocol's
/// initial set (`1..=initial`) when it sent none.
fn known_kind(caps: &Value, path: &str, kind: &Value, initial: i64) -> bool {
    match at(caps, path).as_array() {
        Some(set) => set.contains(kind),
        None => kind.as_i64().is_some_and(|k| (1..=initial).contains(&k)),
    }
}

/// What the server sent on its own (notifications and requests) that the
/// client did not declare it can take.
fn unsupported_message(caps: &Value, message: &Value) -> Vec<String> {
    let method = message["method"].as_str().unwrap_or("");
    let mut wrong = Vec::new();
    let mut require = |ok: bool, what: String| {
        if !ok {
            wrong.push(what);
        }
    };
    match method {
        "textDocument/publishDiagnostics" => {
            for d in message["params"]["diagnostics"]
                .as_array()
                .into_iter()
                .flatten()
            {
                let p = "textDocument/publishDiagnostics";
                require(
                    d.get("relatedInformation").is_none()
                        || declared(caps, &format!("{p}/relatedInformation")),
                    format!("relatedInformation: {d}"),
                );
                require(
                    d.get("codeDescription").is_none()
                        || declared(caps, &format!("{p}/codeDescriptionSupport")),
                    format!("codeDescription: {d}"),
                );
                require(
                    d.get("tags").is_none() || at(caps, &format!("{p}/tagSupport")).is_object(),
                    format!("tags: {d}"),
                );
                require(
                    d.get("data").is_none() || declared(caps, &format!("{p}/dataSupport")),
                    format!("data: {d}"),
                );
            }
        }
        "window/logMessage" | "window/showMessage" => {
            let text = message["params"]["message"].as_str().unwrap_or("");
            require(!text.contains("internal error"), format!("a panic: {text}"));
        }
        "$/progress" => require(
            declared(caps, "window/workDoneProgress"),
            "$/progress without window.workDoneProgress".into(),
        ),
        "client/registerCapability" => {
            for r in message["params"]["registrations"]
                .as_array()
                .into_iter()
                .flatten()
            {
                let registered = r["method"].as_str().unwrap_or("");
                let path = match registered {
                    "workspace/didChangeWatchedFiles" => {
                        "workspace/didChangeWatchedFiles/dynamicRegistration".to_string()
                    }
                    other => format!(
                        "textDocument/{}/dynamicRegistration",
                        other.trim_start_matches("textDocument/")
                    ),
                };
                require(
                    declared(caps, &path),
                    format!("registration of {registered}"),
                );
            }
        }
        "workspace/inlayHint/refresh" => require(
            declared(caps, "workspace/inlayHint/refreshSupport"),
            method.into(),
        ),
        "workspace/codeLens/refresh" => require(
            declared(caps, "workspace/codeLens/refreshSupport"),
            method.into(),
        ),
        "workspace/semanticTokens/refresh" => require(
            declared(caps, "workspace/semanticTokens/refreshSupport"),
            method.into(),
        ),
        "workspace/diagnostic/refresh" => require(
            declared(caps, "workspace/diagnostics/refreshSupport"),
            method.into(),
        ),
        "window/workDoneProgress/create" => {
            require(declared(caps, "window/workDoneProgress"), method.into())
        }
        "workspace/applyEdit" => require(declared(caps, "workspace/applyEdit"), method.into()),
        "workspace/configuration" => {
            require(declared(caps, "workspace/configuration"), method.into())
        }
        "window/showMessageRequest" | "window/showDocument" => {}
        other => require(
            false,
            format!("a message the protocol does not define: {other}"),
        ),
    }
    wrong
}

/// What an answer holds that the client did not declare it can take.
fn unsupported_answer(caps: &Value, method: &str, answer: &Value) -> Vec<String> {
    let mut wrong = Vec::new();
    if let Some(error) = answer.get("error") {
        // Refusals (a position that names nothing to rename) are answers;
        // an internal error is a panic.
        if error["code"] == -32603 {
            wrong.push(format!("{method}: internal error {error}"));
        }
        return wrong;
    }
    let result = &answer["result"];
    let mut require = |ok: bool, what: String| {
        if !ok {
            wrong.push(format!("{method}: {what}"));
        }
    };
    match method {
        "textDocument/hover" if result.is_object() => {
            let kind = &result["contents"]["kind"];
            // Without a declared format, plain text is what a client reads.
            let ok = match at(caps, "textDocument/hover/contentFormat").as_array() {
                Some(formats) => formats.contains(kind),
                None => kind == "plaintext",
            };
            require(ok, format!("hover as {kind}"));
        }
        "textDocument/completion" => {
            let items = result
                .as_array()
                .or_else(|| result["items"].as_array())
                .cloned()
                .unwrap_or_default();
            let item_caps = "textDocument/completion/completionItem";
            for item in &items {
                require(
                    item["insertTextFormat"] != 2
                        || declared(caps, &format!("{item_caps}/snippetSupport")),
                    format!("a snippet: {item}"),
                );
                if let Some(kind) = item["documentation"].get("kind") {
                    require(
                        listed(
                            caps,
                            &format!("{item_caps}/documentationFormat"),
                            kind,
                            kind == "plaintext",
                        ),
                        format!("documentation as {kind}"),
                    );
                }
                require(
                    item.get("labelDetails").is_none()
                        || declared(caps, &format!("{item_caps}/labelDetailsSupport")),
                    format!("labelDetails: {item}"),
                );
                require(
                    item["textEdit"].get("insert").is_none()
                        || declared(caps, &format!("{item_caps}/insertReplaceSupport")),
                    format!("an insert/replace edit: {item}"),
                );
                require(
                    item.get("commitCharacters").is_none()
                        || declared(caps, &format!("{item_caps}/commitCharactersSupport")),
                    format!("commitCharacters: {item}"),
                );
                if let Some(kind) = item.get("kind") {
                    require(
                        known_kind(
                            caps,
                            "textDocument/completion/completionItemKind/valueSet",
                            kind,
                            18,
                        ),
                        format!("completion kind {kind}"),
                    );
                }
            }
        }
        "textDocument/documentSymbol" => {
            for symbol in result.as_array().into_iter().flatten() {
                require(
                    symbol.get("selectionRange").is_none()
                        || declared(
                            caps,
                            "textDocument/documentSymbol/hierarchicalDocumentSymbolSupport",
                        ),
                    "nested symbols".into(),
                );
                require(
                    known_kind(
                        caps,
                        "textDocument/documentSymbol/symbolKind/valueSet",
                        &symbol["kind"],
                        18,
                    ),
                    format!("symbol kind {}", symbol["kind"]),
                );
            }
        }
        "workspace/symbol" => {
            for symbol in result.as_array().into_iter().flatten() {
                require(
                    known_kind(
                        caps,
                        "workspace/symbol/symbolKind/valueSet",
                        &symbol["kind"],
                        18,
                    ),
                    format!("symbol kind {}", symbol["kind"]),
                );
            }
        }
        "textDocument/foldingRange" => {
            let folding = "textDocument/foldingRange";
            for fold in result.as_array().into_iter().flatten() {
                require(
                    !declared(caps, &format!("{folding}/lineFoldingOnly"))
                        || (fold.get("startCharacter").is_none()
                            && fold.get("endCharacter").is_none()),
                    format!("characters in a line-only fold: {fold}"),
                );
                if let Some(kind) = fold.get("kind") {
                    require(
                        listed(
                            caps,
                            &format!("{folding}/foldingRangeKind/valueSet"),
                            kind,
                            false,
                        ),
                        format!("fold kind {kind}"),
                    );
                }
                require(
                    fold.get("collapsedText").is_none()
                        || declared(caps, &format!("{folding}/foldingRange/collapsedText")),
                    format!("collapsedText: {fold}"),
                );
            }
        }
        "textDocument/documentLink" => {
            for link in result.as_array().into_iter().flatten() {
                require(
                    link.get("tooltip").is_none()
                        || declared(caps, "textDocument/documentLink/tooltipSupport"),
                    format!("a tooltip: {link}"),
                );
            }
        }
        "textDocument/diagnostic" => {
            // The pulled items obey what pushed ones do.
            let pushed = json!({"method": "textDocument/publishDiagnostics",
                                "params": {"diagnostics": result["items"].clone()}});
            for what in unsupported_message(caps, &pushed) {
                require(false, what);
            }
        }
        "workspace/diagnostic" => {
            for report in result["items"].as_array().into_iter().flatten() {
                let pushed = json!({"method": "textDocument/publishDiagnostics",
                                    "params": {"diagnostics": report["items"].clone()}});
                for what in unsupported_message(caps, &pushed) {
                    require(false, what);
                }
            }
        }
        "textDocument/codeAction" => {
            let literals = at(caps, "textDocument/codeAction/codeActionLiteralSupport").is_object();
            for action in result.as_array().into_iter().flatten() {
                let literal = !action["command"].is_string();
                require(
                    !literal || literals,
                    format!("a code action literal: {action}"),
                );
                require(
                    action.get("isPreferred").is_none()
                        || declared(caps, "textDocument/codeAction/isPreferredSupport"),
                    "isPreferred".into(),
                );
                require(
                    action.get("disabled").is_none()
                        || declared(caps, "textDocument/codeAction/disabledSupport"),
                    "disabled".into(),
                );
            }
        }
        _ => {}
    }
    wrong
}

/// What one session found.
#[derive(Default)]
struct Session {
    wrong: Vec<String>,
    hovers: usize,
    diagnostics: Vec<Value>,
}

/// Lines of `text` to ask about: spread over the file, at most `most`.
fn sample_lines(text: &str, most: usize) -> Vec<(u32, u32, u32)> {
    let lines: Vec<&str> = text.lines().collect();
    let step = (lines.len() / most).max(1);
    (0..lines.len())
        .step_by(step)
        .map(|i| {
            let line = lines[i];
            let indent = line.len() - line.trim_start().len();
            let value = line.find(": ").map(|c| c + 2).unwrap_or(indent);
            (i as u32, indent as u32, value.min(line.len()) as u32)
        })
        .collect()
}

/// A session under way: the client, what it found, what it declared.
struct Script<'a> {
    client: Client,
    found: Session,
    caps: &'a Value,
}

impl Script<'_> {
    /// Sends a request; its answer is checked against the capabilities.
    async fn ask(&mut self, method: &str, params: Value) -> Value {
        let answer = self.client.request_raw(method, params).await;
        self.found
            .wrong
            .extend(unsupported_answer(self.caps, method, &answer));
        answer
    }
}

/// The scripted session: open every YAML file of `bundle` (in a workflows
/// root `root`), ask for everything at sampled positions, edit, save, report
/// a watched file, close and shut down.
async fn session(
    recorded: &Recorded,
    root: &Path,
    bundle: &Path,
    texts: &[(PathBuf, String)],
) -> Session {
    let caps = &recorded.capabilities;
    let (mut client, server, init) = Client::start_exactly(json!({
        "processId": null,
        "capabilities": caps,
        "workspaceFolders": [{"uri": uri(root), "name": "w"}],
    }))
    .await;
    client.seen = Some(Vec::new());
    let mut script = Script {
        client,
        found: Session::default(),
        caps,
    };
    let encoding = &init["capabilities"]["positionEncoding"];
    if !listed(
        caps,
        "general/positionEncodings",
        encoding,
        encoding == "utf-16",
    ) {
        script
            .found
            .wrong
            .push(format!("position encoding {encoding} not offered"));
    }
    for (i, (path, text)) in texts.iter().enumerate() {
        script.client.open(&uri(path), 1, text).await;
        if i + 1 == texts.len() {
            script.client.diagnostics(&uri(path), Some(1)).await;
        }
    }
    // An answer means every didOpen before it was handled: from here on,
    // every file of the session is open. (Before, an analysis may publish a
    // file the script has not opened yet, rightly.)
    script.ask("workspace/symbol", json!({"query": "x"})).await;
    let all_open = script.client.seen.as_ref().map_or(0, Vec::len);
    for (path, text) in texts {
        let file = json!({"uri": uri(path)});
        for method in ["textDocument/documentSymbol", "textDocument/codeLens"] {
            script.ask(method, json!({"textDocument": file})).await;
        }
        // What a client asks only when it declares the feature.
        for (feature, method) in [
            ("foldingRange", "textDocument/foldingRange"),
            ("documentLink", "textDocument/documentLink"),
        ] {
            if at(caps, &format!("textDocument/{feature}")).is_object() {
                script.ask(method, json!({"textDocument": file})).await;
            }
        }
        let tokens = "textDocument/semanticTokens";
        if listed(
            caps,
            &format!("{tokens}/formats"),
            &json!("relative"),
            false,
        ) {
            let answer = script
                .ask(&format!("{tokens}/full"), json!({"textDocument": file}))
                .await;
            let whole = answer["result"]["data"]
                .as_array()
                .is_some_and(|data| data.len() % 5 == 0);
            if !whole {
                script
                    .found
                    .wrong
                    .push(format!("semantic tokens: {answer}"));
            }
            // Deltas and ranges, of clients that ask for them.
            if at(caps, &format!("{tokens}/requests/full/delta")) == &json!(true) {
                let params =
                    json!({"textDocument": file, "previousResultId": answer["result"]["resultId"]});
                let delta = script.ask(&format!("{tokens}/full/delta"), params).await;
                if delta["result"]["edits"] != json!([]) {
                    script
                        .found
                        .wrong
                        .push(format!("a delta of unchanged tokens: {delta}"));
                }
            }
            if at(caps, &format!("{tokens}/requests/range")) == &json!(true) {
                let range = json!({"start": {"line": 0, "character": 0}, "end": {"line": 20, "character": 0}});
                script
                    .ask(
                        &format!("{tokens}/range"),
                        json!({"textDocument": file, "range": range}),
                    )
                    .await;
            }
        }
        if at(caps, "textDocument/selectionRange").is_object() {
            let positions: Vec<Value> = sample_lines(text, 8)
                .into_iter()
                .map(|(line, _, value)| json!({"line": line, "character": value}))
                .collect();
            script
                .ask(
                    "textDocument/selectionRange",
                    json!({"textDocument": file, "positions": positions}),
                )
                .await;
        }
        let end = json!({"line": text.lines().count(), "character": 0});
        let whole = json!({"start": {"line": 0, "character": 0}, "end": end});
        script
            .ask(
                "textDocument/inlayHint",
                json!({"textDocument": file, "range": whole}),
            )
            .await;
        script
            .ask(
                "textDocument/codeAction",
                json!({"textDocument": file, "range": whole, "context": {"diagnostics": []}}),
            )
            .await;
        for (line, key, value) in sample_lines(text, 8) {
            for character in [key, value] {
                let at = json!({"textDocument": file, "position": {"line": line, "character": character}});
                let hover = script.ask("textDocument/hover", at.clone()).await;
                script.found.hovers += usize::from(hover["result"].is_object());
                for method in [
                    "textDocument/definition",
                    "textDocument/documentHighlight",
                    "textDocument/completion",
                ] {
                    script.ask(method, at.clone()).await;
                }
                let mut references = at.clone();
                references["context"] = json!({"includeDeclaration": true});
                script.ask("textDocument/references", references).await;
                if declared(caps, "textDocument/rename/prepareSupport") {
                    script.ask("textDocument/prepareRename", at.clone()).await;
                }
                if at_caps(caps, "textDocument/callHierarchy").is_object() {
                    let items = script
                        .ask("textDocument/prepareCallHierarchy", at.clone())
                        .await;
                    for item in items["result"].as_array().into_iter().flatten() {
                        for method in ["callHierarchy/incomingCalls", "callHierarchy/outgoingCalls"]
                        {
                            script.ask(method, json!({"item": item})).await;
                        }
                    }
                }
            }
        }
    }
    script.ask("workspace/symbol", json!({"query": ""})).await;
    // A client that pulls diagnostics asks for each open file; asked again
    // with the result id, nothing changed.
    let pulls = at(caps, "textDocument/diagnostic").is_object();
    if pulls {
        for (path, _) in texts {
            let params = json!({"textDocument": {"uri": uri(path)}});
            let report = script.ask("textDocument/diagnostic", params.clone()).await;
            let items = report["result"]["items"].as_array().cloned();
            script.found.diagnostics.extend(items.unwrap_or_default());
            let mut again = params;
            again["previousResultId"] = report["result"]["resultId"].clone();
            let second = script.ask("textDocument/diagnostic", again).await;
            if second["result"]["kind"] != "unchanged" {
                script
                    .found
                    .wrong
                    .push(format!("a second pull changed: {second}"));
            }
        }
    }
    // And the whole workspace, twice: the second time every report is
    // unchanged.
    if pulls {
        let first = script
            .ask("workspace/diagnostic", json!({"previousResultIds": []}))
            .await;
        let previous: Vec<Value> = first["result"]["items"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|r| json!({"uri": r["uri"], "value": r["resultId"]}))
            .collect();
        let second = script
            .ask(
                "workspace/diagnostic",
                json!({"previousResultIds": previous}),
            )
            .await;
        let reports = second["result"]["items"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        if reports.is_empty() || reports.iter().any(|r| r["kind"] != "unchanged") {
            script
                .found
                .wrong
                .push(format!("a second workspace pull changed: {second}"));
        }
    }
    // Edit, save, a watched file changed (the coverage `mzk test` writes).
    let (first, _) = &texts[0];
    script
        .client
        .notify("textDocument/didChange", json!({"textDocument": {"uri": uri(first), "version": 2},
            "contentChanges": [{"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}, "text": "# edited\n"}]}))
        .await;
    script.client.diagnostics(&uri(first), Some(2)).await;
    script
        .client
        .notify(
            "textDocument/didSave",
            json!({"textDocument": {"uri": uri(first)}}),
        )
        .await;
    let coverage = bundle.join(".mzk/coverage.json");
    script
        .client
        .notify(
            "workspace/didChangeWatchedFiles",
            json!({"changes": [{"uri": uri(&coverage), "type": 1}]}),
        )
        .await;
    let closing = script.client.seen.as_ref().map_or(0, Vec::len);
    for (path, _) in texts {
        script
            .client
            .notify(
                "textDocument/didClose",
                json!({"textDocument": {"uri": uri(path)}}),
            )
            .await;
    }
    // A last request answered means every message before it was handled.
    script.ask("workspace/symbol", json!({"query": "x"})).await;
    let seen = script.client.seen.take().unwrap_or_default();
    // While the files are open, a client that pulls gets no pushed
    // findings for them: it would show both.
    let open: Vec<String> = texts.iter().map(|(p, _)| uri(p)).collect();
    for message in seen.iter().take(closing).skip(all_open) {
        let pushed = message["method"] == "textDocument/publishDiagnostics"
            && open.iter().any(|u| message["params"]["uri"] == u.as_str())
            && message["params"]["diagnostics"]
                .as_array()
                .is_some_and(|d| !d.is_empty());
        if pulls && pushed {
            script
                .found
                .wrong
                .push(format!("pushed to a client that pulls: {message}"));
        }
    }
    for message in &seen {
        if message.get("method").is_some() {
            script
                .found
                .wrong
                .extend(unsupported_message(caps, message));
        }
        if message["method"] == "textDocument/publishDiagnostics" {
            script.found.diagnostics.extend(
                message["params"]["diagnostics"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default(),
            );
        }
    }
    let Script { client, found, .. } = script;
    client.stop(server).await;
    found
}

/// The YAML files of a bundle, with their texts.
fn yaml_files(bundle: &Path) -> Vec<(PathBuf, String)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(bundle)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            (p, text)
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_recorded_client_gets_only_what_it_declared() {
    let clients = clients();
    let names: Vec<&str> = clients.iter().map(|c| c.name.as_str()).collect();
    for wanted in ["eglot", "helix", "neovim", "vscode", "zed"] {
        assert!(
            names.contains(&wanted),
            "no recorded {wanted} client: {names:?}"
        );
    }
    for recorded in &clients {
        let scratch = mzk_tests::bundle_copy("capabilities", "SupportDesk", &recorded.name);
        let bundle: &Path = &scratch;
        let mut texts = yaml_files(bundle);
        // A misspelt target: a finding with related locations and a fix.
        for (path, text) in &mut texts {
            if path.ends_with("transition_graph.yaml") {
                *text = mzk_tests::misspelt_target(text);
            }
        }
        let found = session(recorded, scratch.root(), bundle, &texts).await;
        assert!(
            found.wrong.is_empty(),
            "{}: {:#?}",
            recorded.name,
            found.wrong
        );
        assert!(
            found.hovers > 10,
            "{}: only {} hovers answered",
            recorded.name,
            found.hovers
        );
        let typo = found
            .diagnostics
            .iter()
            .find(|d| d["code"] == "MZ201")
            .unwrap_or_else(|| panic!("{}: the typo is reported", recorded.name));
        // Where related locations cannot be shown, they are in the message.
        let related = declared(
            &recorded.capabilities,
            "textDocument/publishDiagnostics/relatedInformation",
        );
        assert_eq!(
            typo["message"]
                .as_str()
                .unwrap_or("")
                .contains("agents.yaml:"),
            !related,
            "{}: {typo}",
            recorded.name
        );
    }
}

/// The same sessions over the real bundles of mozaiks 0.2.0 (fetched from
/// PyPI; their absence fails the test command).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_recorded_client_on_the_real_bundles() {
    let Some(corpus) = mzk_tests::corpus() else {
        return;
    };
    // Both list layouts: ThemeCapture writes lists at their key's
    // indentation, AppGenerator indents them.
    for name in ["ThemeCapture", "AppGenerator"] {
        let (scratch, bundle) =
            mzk_tests::corpus_copy(&corpus, name, &format!("capabilities-corpus-{name}"));
        let texts = yaml_files(&bundle);
        for recorded in &clients() {
            let found = session(recorded, scratch.root(), &bundle, &texts).await;
            assert!(
                found.wrong.is_empty(),
                "{name}, {}: {:#?}",
                recorded.name,
                found.wrong
            );
            assert!(
                found.hovers > 10,
                "{name}, {}: only {} hovers answered",
                recorded.name,
                found.hovers
            );
        }
    }
}
