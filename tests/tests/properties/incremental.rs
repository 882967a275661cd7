//! Incremental analysis equals a cold one (issue 19, item 4): the language
//! server keeps one `AnalysisCache` per bundle across keystrokes (parsed
//! files, mentions, shared-folder mentions, memos of token counts, prompt
//! word runs and built Python names), and any staleness in it would be a
//! wrong diagnostic in the editor. Random sequences of edits across the
//! files of two bundles and a shared folder are analysed, after each edit,
//! with persistent caches as the server keeps them, and compared with an
//! analysis of the same texts with fresh caches.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use mzk_analyzer::model::mentions::SharedMentions;
use mzk_analyzer::{analyze, Analysis, AnalysisCache, Config, MemoryFs, Memos};
use mzk_tests::repo;
use proptest::prelude::*;

use super::{apply_edits, edit, Edit};

const ROOT: &str = "/w";
const BUNDLES: [&str; 2] = ["SupportDesk", "Hello"];

/// Settings that make every rule run and the prompt checks fire near the
/// example's sizes, so that small edits cross their thresholds.
const SETTINGS: &str = "select = [\"ALL\"]\n\n[context]\nmax-prompt-tokens = 90\n\
                        duplicate-min-chars = 40\nnear-duplicate-similarity = 0.5\n";

/// A variable nothing names in YAML: only what code builds or mentions
/// keeps it from being unused, so edits to non-YAML files show.
const EXTRA_VARIABLE: &str = "  escalation_level:\n    type: integer\n    description: \
                              Set by code only.\n    source: {type: state, default: 0}\n";

/// Code that builds the extra variable's name, beside the bound tools.
const BUILDER: &str = "from typing import Any\n\n\ndef escalate(kind: str, \
                       context_variables: Any = None) -> None:\n    \
                       context_variables.set(f\"escalation_{kind}\", 1)\n";

/// The starting files: both example bundles under one workflows root, a
/// shared folder and a UI file of the bundle's own, by absolute path.
fn initial() -> BTreeMap<PathBuf, Vec<u8>> {
    let mut files = BTreeMap::new();
    for bundle in BUNDLES {
        for (relative, bytes) in mzk_tests::files_under(&repo().join("bundles").join(bundle)) {
            files.insert(Path::new(ROOT).join(bundle).join(relative), bytes);
        }
    }
    let variables = Path::new(ROOT).join("SupportDesk/context_variables.yaml");
    let text = String::from_utf8(files[&variables].clone()).unwrap();
    let text = text.replacen(
        "definitions:\n",
        &format!("definitions:\n{EXTRA_VARIABLE}"),
        1,
    );
    files.insert(variables, text.into_bytes());
    let at = |p: &str| Path::new(ROOT).join(p);
    files.insert(at("mzk.toml"), SETTINGS.into());
    files.insert(at("SupportDesk/tools/escalate.py"), BUILDER.into());
    files.insert(
        at("SupportDesk/ui/card.js"),
        "export const keys = [\"research_status\"];\n".into(),
    );
    files.insert(
        at("shared/helpers.py"),
        "def note(ctx):\n    return ctx.get(\"desk_mode\")\n".into(),
    );
    files
}

/// What the language server publishes and shows of an analysis, comparable:
/// every diagnostic whole (rule, severity, range, message, related
/// information, fixes), the files read and their texts, the files that
/// could not be read, the opt-in findings left off, and the variables
/// mentioned outside YAML.
fn outcome(a: &Analysis) -> String {
    let mut out = String::new();
    for d in &a.diagnostics {
        out.push_str(&format!("{d:?}\n"));
    }
    for f in &a.bundle.files {
        out.push_str(&format!("file {} {:?}\n", f.relative, f.text));
    }
    out.push_str(&format!(
        "incomplete {:?}\nhidden {:?}\nmentioned {:?}\n",
        a.incomplete, a.opt_in_hidden, a.bundle.mentioned_elsewhere
    ));
    out
}

fn memory(files: &BTreeMap<PathBuf, Vec<u8>>) -> MemoryFs {
    let mut fs = MemoryFs::new();
    for (path, bytes) in files {
        fs.insert(path.clone(), bytes.clone());
    }
    fs
}

/// The caches the language server keeps: one per bundle, one `Memos` for
/// all, and what the shared folders mention, dropped when one of their
/// files changes (`scheduling.rs`).
struct Warm {
    caches: Vec<AnalysisCache>,
    shared: Option<Arc<SharedMentions>>,
}

impl Warm {
    fn new() -> Warm {
        let memos = Arc::new(Memos::default());
        Warm {
            caches: BUNDLES
                .iter()
                .map(|_| AnalysisCache::sharing(memos.clone()))
                .collect(),
            shared: None,
        }
    }

    /// Analyses both bundles as the server does, and checks each against
    /// an analysis with fresh caches; `step` names the edits made so far.
    /// Returns SupportDesk's outcome.
    fn check(&mut self, files: &BTreeMap<PathBuf, Vec<u8>>, step: &str) -> String {
        let mut first = None;
        let fs = memory(files);
        let root = Path::new(ROOT);
        for (bundle, cache) in BUNDLES.iter().zip(&mut self.caches) {
            let dir = root.join(bundle);
            let config = Config::discover(&fs, &dir).unwrap_or_else(|_| Config::defaults(&dir));
            cache.use_shared(root, self.shared.clone());
            self.shared = Some(cache.shared(root));
            let warm = analyze(&fs, &dir, Some(&config), cache);
            let cold = analyze(&fs, &dir, Some(&config), &mut AnalysisCache::new());
            let (warm, cold) = (outcome(&warm), outcome(&cold));
            if warm != cold {
                let diff = warm
                    .lines()
                    .zip(cold.lines())
                    .find(|(w, c)| w != c)
                    .map(|(w, c)| format!("warm: {w}\ncold: {c}"))
                    .unwrap_or_else(|| "one is a prefix of the other".into());
                panic!("{bundle}: cached analysis differs from a fresh one after {step}\n{diff}");
            }
            first.get_or_insert(warm);
        }
        first.unwrap()
    }
}

/// One change of the files, as an author (or an editor's keystrokes) makes it.
#[derive(Debug, Clone)]
enum Change {
    /// Renames a context variable in every file of SupportDesk (YAML, code,
    /// and the upper-case form prompts use).
    RenameVariable(usize, usize),
    /// Sets a transition condition's value to another.
    ConditionValue(usize, usize),
    /// Appends a sentence naming a variable to a prompt line.
    PromptSentence(usize, usize),
    /// Adds a `context_variables.set` line to a tool's body.
    InsertSet(usize, usize),
    /// Deletes a tool's first `context_variables.set` line.
    DeleteSet(usize),
    /// Renames a tool's function (bound in tools.yaml).
    RenameFunction(usize),
    /// Changes what the builder's f-string holds.
    BuiltKey(usize),
    /// Breaks a Python file's syntax.
    BreakPython(usize),
    /// Deletes a file, or puts it back as it first was.
    Toggle(usize),
    /// Random byte-level edits of one file.
    Bytes(usize, Vec<Edit>),
}

const VARIABLES: &[&str] = &[
    "ticket_summary",
    "customer_plan",
    "research_status",
    "triage_outcome",
    "escalation_level",
    "desk_mode",
];
const NEW_NAMES: &[&str] = &["ticket_text", "plan_name", "escalation_level", "x"];
const CONDITION_VALUES: &[&str] = &["true", "false", "routed", "rejected", "\"routed\"", "7"];
const TOOLS: &[&str] = &[
    "capture_ticket.py",
    "lookup_plan.py",
    "classify_ticket.py",
    "lifecycle.py",
    "escalate.py",
];
/// What the builder's f-string holds. The first two are of one length and
/// both could build `escalation_level` (a piece is its prefix), but only the
/// first does: a memo kept by less than the whole text would mix them up.
const BUILT_KEYS: &[&str] = &[
    "escalation_{kind}",
    "escalation{kind}_",
    "escalatio_{kind}",
    "ticket_{kind}",
    "{kind}",
    "escalation_le{kind}",
];
/// Files that come and go: bound tools, unbound code, a UI file, a shared
/// file, a whole YAML file.
const TOGGLED: &[&str] = &[
    "SupportDesk/tools/lookup_plan.py",
    "SupportDesk/tools/escalate.py",
    "SupportDesk/ui/card.js",
    "shared/helpers.py",
    "SupportDesk/structured_outputs.yaml",
    "SupportDesk/extended_orchestration/task_batches.yaml",
];

fn change() -> impl Strategy<Value = Change> {
    prop_oneof![
        (0..VARIABLES.len(), 0..NEW_NAMES.len()).prop_map(|(a, b)| Change::RenameVariable(a, b)),
        (0usize..8, 0..CONDITION_VALUES.len()).prop_map(|(a, b)| Change::ConditionValue(a, b)),
        (0usize..64, 0..VARIABLES.len()).prop_map(|(a, b)| Change::PromptSentence(a, b)),
        (0..TOOLS.len(), 0..VARIABLES.len()).prop_map(|(a, b)| Change::InsertSet(a, b)),
        (0..TOOLS.len()).prop_map(Change::DeleteSet),
        (0..TOOLS.len()).prop_map(Change::RenameFunction),
        (0..BUILT_KEYS.len()).prop_map(Change::BuiltKey),
        (0..TOOLS.len()).prop_map(Change::BreakPython),
        (0..TOGGLED.len()).prop_map(Change::Toggle),
        (any::<usize>(), prop::collection::vec(edit(), 1..4))
            .prop_map(|(a, e)| Change::Bytes(a, e)),
    ]
}

/// Replaces the text of `p`, when it exists, by `f` of it.
fn edit_file(files: &mut BTreeMap<PathBuf, Vec<u8>>, p: PathBuf, f: &dyn Fn(String) -> String) {
    if let Some(bytes) = files.get(&p) {
        let text = String::from_utf8_lossy(bytes).into_owned();
        files.insert(p, f(text).into_bytes());
    }
}

/// Applies `change` to `files`; returns whether a shared-folder file changed.
fn apply(
    change: &Change,
    files: &mut BTreeMap<PathBuf, Vec<u8>>,
    first: &BTreeMap<PathBuf, Vec<u8>>,
) -> bool {
    let at = |p: &str| Path::new(ROOT).join(p);
    match change {
        Change::RenameVariable(from, to) => {
            let (from, to) = (VARIABLES[*from], NEW_NAMES[*to]);
            let bundle = at("SupportDesk");
            let paths: Vec<PathBuf> = files
                .keys()
                .filter(|p| p.starts_with(&bundle))
                .cloned()
                .collect();
            for p in paths {
                edit_file(files, p, &|t| {
                    t.replace(from, to)
                        .replace(&from.to_uppercase(), &to.to_uppercase())
                });
            }
        }
        Change::ConditionValue(which, value) => {
            edit_file(files, at("SupportDesk/transition_graph.yaml"), &|t| {
                let mut lines: Vec<String> = t.lines().map(str::to_string).collect();
                let found: Vec<usize> = (0..lines.len())
                    .filter(|i| lines[*i].trim_start().starts_with("condition_value:"))
                    .collect();
                if let Some(&i) = found.get(which % found.len().max(1)) {
                    let indent = lines[i].len() - lines[i].trim_start().len();
                    lines[i] = format!(
                        "{}condition_value: {}",
                        " ".repeat(indent),
                        CONDITION_VALUES[*value]
                    );
                }
                lines.join("\n") + "\n"
            });
        }
        Change::PromptSentence(which, variable) => {
            let name = VARIABLES[*variable].to_uppercase();
            edit_file(files, at("SupportDesk/agents.yaml"), &|t| {
                // Lines of block scalars: indented past the keys, no key of their own.
                let mut lines: Vec<String> = t.lines().map(str::to_string).collect();
                let prose: Vec<usize> = (0..lines.len())
                    .filter(|i| lines[*i].starts_with("      ") && !lines[*i].contains(": "))
                    .collect();
                if let Some(&i) = prose.get(which % prose.len().max(1)) {
                    lines[i].push_str(&format!(" Always read {name} first."));
                }
                lines.join("\n") + "\n"
            });
        }
        Change::InsertSet(tool, variable) => {
            let key = VARIABLES[*variable];
            edit_file(
                files,
                at(&format!("SupportDesk/tools/{}", TOOLS[*tool])),
                &|t| {
                    // Before the function body's first line, at its indentation.
                    match t.find("\n    ") {
                        Some(i) => {
                            let mut t = t.clone();
                            t.insert_str(
                                i + 1,
                                &format!("    context_variables.set(\"{key}\", 1)\n"),
                            );
                            t
                        }
                        None => t,
                    }
                },
            );
        }
        Change::DeleteSet(tool) => {
            edit_file(
                files,
                at(&format!("SupportDesk/tools/{}", TOOLS[*tool])),
                &|t| {
                    let mut done = false;
                    let mut out = String::new();
                    for line in t.split_inclusive('\n') {
                        if !done && line.contains("context_variables.set(") {
                            done = true;
                        } else {
                            out.push_str(line);
                        }
                    }
                    out
                },
            );
        }
        Change::RenameFunction(tool) => {
            let name = TOOLS[*tool].trim_end_matches(".py");
            edit_file(
                files,
                at(&format!("SupportDesk/tools/{}", TOOLS[*tool])),
                &|t| {
                    let (from, to) = (format!("def {name}("), format!("def {name}_v2("));
                    if t.contains(&from) {
                        t.replacen(&from, &to, 1)
                    } else {
                        t.replacen(&to, &from, 1)
                    }
                },
            );
        }
        Change::BuiltKey(key) => {
            edit_file(files, at("SupportDesk/tools/escalate.py"), &|t| {
                let Some(open) = t.find("f\"").map(|i| i + 2) else {
                    return t;
                };
                match t[open..].find('"') {
                    Some(close) => {
                        let mut t = t.clone();
                        t.replace_range(open..open + close, BUILT_KEYS[*key]);
                        t
                    }
                    None => t,
                }
            });
        }
        Change::BreakPython(tool) => {
            edit_file(
                files,
                at(&format!("SupportDesk/tools/{}", TOOLS[*tool])),
                &|t| t.replacen("):", ")", 1),
            );
        }
        Change::Toggle(which) => {
            let p = at(TOGGLED[*which]);
            if files.remove(&p).is_none() {
                if let Some(original) = first.get(&p) {
                    files.insert(p, original.clone());
                }
            }
            return TOGGLED[*which].starts_with("shared/");
        }
        Change::Bytes(which, edits) => {
            let paths: Vec<PathBuf> = files.keys().cloned().collect();
            let p = paths[which % paths.len()].clone();
            let shared = p.starts_with(at("shared"));
            edit_file(files, p, &|t| apply_edits(&t, edits));
            return shared;
        }
    }
    false
}

/// Runs `changes` from the starting files, checking after each; returns
/// what SupportDesk's analysis reported at each step.
fn run(changes: &[Change]) -> Vec<String> {
    let first = initial();
    let mut files = first.clone();
    let mut warm = Warm::new();
    let mut outcomes = vec![warm.check(&files, "no edit")];
    for (i, change) in changes.iter().enumerate() {
        if apply(change, &mut files, &first) {
            // The server drops what the shared folders mention when one of
            // their files changes.
            warm.shared = None;
        }
        outcomes.push(warm.check(&files, &format!("edit {i}: {change:?}")));
    }
    outcomes
}

proptest! {
    #![proptest_config(super::config(256))]

    #[test]
    fn cached_analyses_equal_cold_ones_over_random_edits(
        changes in prop::collection::vec(change(), 1..10),
    ) {
        run(&changes);
    }
}

/// One edit per kept result, each alone, must change what is reported (so
/// that a stale entry would show): a Python file's built names (an f-string
/// key), a prompt's token count, a mention in a non-YAML file.
#[test]
fn each_cache_follows_an_edit_of_what_it_keeps() {
    let card = Path::new(ROOT).join("SupportDesk/ui/card.js");
    let card = initial().keys().position(|p| *p == card).unwrap();
    let mention = Edit {
        at: 1.0,
        delete: 0,
        insert: "// escalation_level\n".into(),
    };
    let cases = [
        // The f-string no longer builds `escalation_level`'s name, then does.
        vec![Change::BuiltKey(1), Change::BuiltKey(0)],
        // One sentence more in a prompt: its token count alone changes.
        vec![Change::PromptSentence(0, 5), Change::PromptSentence(7, 5)],
        // The UI file mentions the variable the code no longer builds.
        vec![Change::BuiltKey(1), Change::Bytes(card, vec![mention])],
    ];
    for changes in cases {
        let outcomes = run(&changes);
        for pair in outcomes.windows(2) {
            assert_ne!(pair[0], pair[1], "{changes:?} changes nothing reported");
        }
    }
}
