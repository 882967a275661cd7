//! Properties of the analysis over random edits of a real bundle (the
//! SupportDesk example: every file kind, Python tools, task batches). Each
//! case applies a few random edits — deletions and insertions of YAML's
//! structural characters, tabs, quotes, multi-byte text — to one file, then
//! checks what must hold whatever the input:
//!
//! - the analysis (with the default configuration applied) finishes, and is
//!   deterministic: the same input gives the same diagnostics in the same order;
//! - every range (diagnostic and related) lies within its file, on character
//!   boundaries, start before end;
//! - converting each range's ends to UTF-16 positions and back is the identity;
//! - applying any offered fix never makes a YAML file that parsed stop parsing.
//!
//! `incremental` checks that analyses with kept caches equal fresh ones.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use mzk_analyzer::base::{FileId, Severity, TextRange};
use mzk_analyzer::ide::fixes;
use mzk_analyzer::rules::Rule;
use mzk_analyzer::syntax::ColumnUnit;
use mzk_analyzer::{analyze_bundle, Analysis, Config, MemoryFs};
use mzk_tests::repo;
use proptest::prelude::*;

// A folder of its own: a file beside this one would be a test target.
#[path = "properties/incremental.rs"]
mod incremental;

const DIR: &str = "/w/SupportDesk";

/// The example's files, relative path and bytes, read once.
fn files() -> &'static Vec<(String, Vec<u8>)> {
    static FILES: OnceLock<Vec<(String, Vec<u8>)>> = OnceLock::new();
    FILES.get_or_init(|| {
        mzk_tests::files_under(&repo().join("bundles/SupportDesk"))
            .into_iter()
            .map(|(relative, bytes)| (relative.to_string_lossy().into_owned(), bytes))
            .collect()
    })
}

fn analyse_at(fs: &MemoryFs, dir: &Path) -> Analysis {
    let config = Config::defaults(dir);
    mzk_analyzer::analyze(
        fs,
        dir,
        Some(&config),
        &mut mzk_analyzer::AnalysisCache::new(),
    )
}

/// One edit: at a fraction of the text, delete some characters, insert some.
#[derive(Debug, Clone)]
struct Edit {
    at: f64,
    delete: usize,
    insert: String,
}

fn edit() -> impl Strategy<Value = Edit> {
    let pieces = prop::sample::select(vec![
        ":", ": ", "-", "- ", " ", "  ", "\n", "\n  ", "\t", "\"", "'", "[", "]", "{", "}", ",",
        "&a ", "*a", "#", "|", ">", "!!str ", "~", "null", "true", "0x1F", "1e3", "é", "日本",
        "😀", "\u{200b}", "\r\n", "name", "agent", "_", "${x}", "%",
    ]);
    (
        0.0..1.0f64,
        0usize..24,
        prop::collection::vec(pieces, 0..6).prop_map(|p| p.concat()),
    )
        .prop_map(|(at, delete, insert)| Edit { at, delete, insert })
}

/// Applies `edits` to `text`, each at a character boundary.
fn apply_edits(text: &str, edits: &[Edit]) -> String {
    let mut text = text.to_string();
    for e in edits {
        let mut at = ((text.len() as f64) * e.at) as usize;
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        let mut end = at;
        for _ in 0..e.delete {
            match text[end..].chars().next() {
                Some(c) => end += c.len_utf8(),
                None => break,
            }
        }
        text.replace_range(at..end, &e.insert);
    }
    text
}

fn check_range(analysis: &Analysis, file: FileId, range: TextRange, what: &str) {
    let Some(f) = analysis.bundle.file(file) else {
        panic!("{what}: no file {file:?}");
    };
    let (start, end) = (range.start as usize, range.end as usize);
    assert!(
        start <= end && end <= f.text.len(),
        "{what}: {range:?} outside {} ({} bytes)",
        f.relative,
        f.text.len()
    );
    assert!(
        f.text.is_char_boundary(start) && f.text.is_char_boundary(end),
        "{what}: {range:?} splits a character in {}",
        f.relative
    );
    for offset in [range.start, range.end] {
        let position = f.line_index.position(&f.text, offset, ColumnUnit::Utf16);
        let back = f.line_index.offset(&f.text, position, ColumnUnit::Utf16);
        assert_eq!(back, offset, "{what}: UTF-16 round trip in {}", f.relative);
    }
}

/// Whether a YAML text parses (no YAML syntax error).
fn parses(text: &str) -> bool {
    let mut diagnostics = Vec::new();
    mzk_analyzer::syntax::parse(text, FileId(0), &mut diagnostics);
    !diagnostics.iter().any(|d| d.rule == Rule::YamlSyntax)
}

/// What must hold for any input: a deterministic analysis, every range
/// inside its file on character boundaries with a UTF-16 round trip, and
/// fixes that keep a parsing YAML file parsing.
fn holds_invariants(fs: &MemoryFs) -> Result<(), TestCaseError> {
    holds_invariants_at(fs, Path::new(DIR))
}

fn holds_invariants_at(fs: &MemoryFs, dir: &Path) -> Result<(), TestCaseError> {
    let analysis = analyse_at(fs, dir);
    // Deterministic: a second analysis says the same, in the same order.
    let again = analyse_at(fs, dir);
    prop_assert_eq!(&analysis.diagnostics, &again.diagnostics);
    for d in &analysis.diagnostics {
        let what = format!("{} {}", d.rule.code(), d.message);
        check_range(&analysis, d.file, d.range, &what);
        for r in &d.related {
            check_range(&analysis, r.file, r.range, &what);
        }
        for fix in fixes(&analysis, d) {
            for e in &fix.edits {
                check_range(&analysis, e.file, e.range, &fix.title);
            }
            let mut touched: Vec<FileId> = fix.edits.iter().map(|e| e.file).collect();
            touched.dedup();
            for file in touched {
                let f = analysis.bundle.file(file).unwrap();
                if !f.relative.ends_with(".yaml") || !parses(&f.text) {
                    continue;
                }
                let mut mine: Vec<_> = fix.edits.iter().filter(|e| e.file == file).collect();
                mine.sort_by_key(|e| std::cmp::Reverse(e.range.start));
                let mut text = f.text.to_string();
                for e in mine {
                    text.replace_range(e.range.start as usize..e.range.end as usize, &e.new_text);
                }
                prop_assert!(
                    parses(&text),
                    "`{}` broke {}:\n{}",
                    fix.title,
                    f.relative,
                    text
                );
            }
        }
    }
    Ok(())
}

/// `cases` per run; failures are kept beside this file
/// (properties.proptest-regressions), where proptest replays them first.
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
    #![proptest_config(config(160))]

    #[test]
    fn analysis_of_edited_bundles_holds_its_invariants(
        which in 0usize..64,
        edits in prop::collection::vec(edit(), 1..6),
    ) {
        let files = files();
        let (target, _) = &files[which % files.len()];
        let mut fs = MemoryFs::new();
        for (relative, bytes) in files {
            let bytes = if relative == target {
                apply_edits(&String::from_utf8_lossy(bytes), &edits).into_bytes()
            } else {
                bytes.clone()
            };
            fs.insert(PathBuf::from(DIR).join(relative), bytes);
        }
        holds_invariants(&fs)?;
    }
}

/// What YAML reads specially — indicators, the tags whose constructors
/// parse text (`!!int`, `!!binary`, …), numbers' prefixes, merge keys,
/// anchors, line breaks PyYAML counts, tabs, non-ASCII — to be put in any
/// order: the constructors' Python semantics (`int(s, base)`, base64,
/// timestamps) are where a byte offset can land inside a character.
const YAML_PIECES: &[&str] = &[
    "!!int ",
    "!!float ",
    "!!binary ",
    "!!timestamp ",
    "!!bool ",
    "!!str ",
    "!!seq ",
    "!!map ",
    "!!null ",
    "!x ",
    "<<: ",
    "&a ",
    "*a ",
    "? ",
    ": ",
    "- ",
    "[",
    "]",
    "{",
    "}",
    ",",
    "#",
    "|",
    ">",
    "'",
    "\"",
    "%",
    "`",
    "0",
    "0b",
    "0x",
    "0o",
    "1:2",
    "1_0",
    ".5",
    "e5",
    "-",
    "+",
    "é",
    "日",
    "😀",
    "\u{2028}",
    "\u{85}",
    "\u{feff}",
    "\t",
    " ",
    "\n",
    "\r\n",
    "2001-1-1",
    "2001-12-14 21:59:43.10 -5",
    "=",
    "~",
    "null",
    "yes",
    "key",
    "a",
    "\\",
    "\\x41",
];

proptest! {
    #![proptest_config(config(20000))]

    /// The YAML reader answers any arrangement of those pieces with a
    /// tree or an error (a refused text always says why), never a panic.
    #[test]
    fn the_yaml_reader_answers_any_arrangement_of_yaml_pieces(
        pieces in prop::collection::vec(0..YAML_PIECES.len(), 1..30),
    ) {
        let text: String = pieces.iter().map(|&i| YAML_PIECES[i]).collect();
        let mut diagnostics = Vec::new();
        let document = mzk_analyzer::syntax::parse(&text, FileId(0), &mut diagnostics);
        prop_assert!(
            !document.failed || diagnostics.iter().any(|d| d.severity == Severity::Error),
            "{text:?} failed without an error"
        );
    }
}

/// Builds bundles from the schema description itself: every file kind, each
/// field drawn from its `Kind` (mostly valid values, sometimes a wrong type,
/// a missing required key or an unknown key), names drawn from a small pool
/// so that references between files connect. The files are written as JSON,
/// which YAML reads as flow collections.
mod generated {
    use mzk_analyzer::base::FILE_KINDS;
    use mzk_analyzer::schema::{file_schema, Kind, ListKind, Object, TextKind};
    use serde_json::{json, Map, Value};

    pub struct Gen(u64);

    const NAMES: &[&str] = &[
        "A",
        "B",
        "C",
        "user",
        "terminate",
        "route",
        "done",
        "plan",
        "x",
        "Plan",
        "Out",
        " padded ",
        "",
    ];

    impl Gen {
        pub fn new(seed: u64) -> Gen {
            Gen(seed | 1)
        }
        fn next(&mut self) -> u64 {
            // xorshift64*
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n.max(1) as u64) as usize
        }
        fn chance(&mut self, percent: u64) -> bool {
            self.next() % 100 < percent
        }
        fn pick<'a>(&mut self, items: &'a [&'a str]) -> &'a str {
            items[self.below(items.len())]
        }
        fn name(&mut self) -> Value {
            json!(self.pick(NAMES))
        }
        /// A value of some other type, for the invalid cases.
        fn wrong(&mut self) -> Value {
            match self.below(6) {
                0 => json!(null),
                1 => json!(true),
                2 => json!(-7),
                3 => json!([1, "two"]),
                4 => json!({"k": "v"}),
                _ => json!("surprise"),
            }
        }

        pub fn object(&mut self, shape: &'static Object, depth: usize) -> Value {
            let mut map = Map::new();
            for field in shape.fields {
                let include = if field.required {
                    !self.chance(3)
                } else {
                    self.chance(60)
                };
                if include {
                    let value = if self.chance(4) {
                        self.wrong()
                    } else {
                        self.value(&field.kind, depth)
                    };
                    map.insert(field.name.to_string(), value);
                }
            }
            if self.chance(3) {
                map.insert("unknown_key".into(), json!(1));
            }
            Value::Object(map)
        }

        fn value(&mut self, kind: &Kind, depth: usize) -> Value {
            if depth > 4 {
                return json!(null);
            }
            match kind {
                Kind::Text(TextKind::Optional) if self.chance(20) => json!(null),
                Kind::Text(_) => self.name(),
                Kind::Enum { values, .. }
                | Kind::LowerEnum { values }
                | Kind::Catalog { values } => {
                    if self.chance(10) || values.is_empty() {
                        json!("not_a_value")
                    } else {
                        json!(self.pick(values))
                    }
                }
                Kind::ToolType { .. } => json!(self.pick(&[
                    "Agent_Tool",
                    "UI_Tool",
                    "ui-surface",
                    "agent_tool",
                    "Bogus"
                ])),
                Kind::VersionOne => {
                    json!(*[json!(1), json!("1"), json!(2)].get(self.below(3)).unwrap())
                }
                Kind::Bool { .. } => {
                    json!(*[json!(true), json!(false), json!("yes"), json!("maybe")]
                        .get(self.below(4))
                        .unwrap())
                }
                Kind::Int { min, max, .. } => {
                    let lo = min.unwrap_or(-5);
                    let hi = max.unwrap_or(lo + 600);
                    match self.below(5) {
                        0 => json!(lo - 1),
                        1 => json!(hi + 1),
                        2 => json!("20"),
                        _ => json!(lo + (self.next() % ((hi - lo + 1).max(1) as u64)) as i64),
                    }
                }
                Kind::Float { min } => json!(min + (self.below(100) as f64) / 3.0),
                Kind::List(ListKind::Any { .. }) => json!([self.name(), 1, null]),
                Kind::List(_) => Value::Array((0..self.below(4)).map(|_| self.name()).collect()),
                Kind::EnumList { values, .. } => Value::Array(
                    (0..self.below(3))
                        .map(|_| {
                            json!(if values.is_empty() {
                                "w"
                            } else {
                                self.pick(values)
                            })
                        })
                        .collect(),
                ),
                Kind::StrOrList => {
                    if self.chance(50) {
                        self.name()
                    } else {
                        Value::Array((0..self.below(3)).map(|_| self.name()).collect())
                    }
                }
                Kind::Dict { .. } | Kind::DictOrDefault => json!({"a": 1, "b": [true]}),
                Kind::Any => self.wrong(),
                Kind::Object { shape, .. } => self.object(shape, depth + 1),
                Kind::ObjectList(shape) => Value::Array(
                    (0..self.below(4))
                        .map(|_| self.object(shape, depth + 1))
                        .collect(),
                ),
                Kind::ObjectMap { shape, .. } => {
                    let mut map = Map::new();
                    for _ in 0..self.below(4) {
                        let key = self.pick(NAMES).to_string();
                        map.insert(key, self.object(shape, depth + 1));
                    }
                    Value::Object(map)
                }
                Kind::Registry => {
                    let mut map = Map::new();
                    for _ in 0..self.below(3) {
                        let key = self.pick(&["A", "B", "C"]).to_string();
                        let model = if self.chance(30) {
                            json!(null)
                        } else {
                            json!(self.pick(&["Plan", "Out", "Missing"]))
                        };
                        map.insert(key, model);
                    }
                    Value::Object(map)
                }
                Kind::ModelDefinitions => {
                    let types = [
                        "str",
                        "int",
                        "bool",
                        "float",
                        "dict",
                        "List",
                        "optional_str",
                        "Plan",
                        "Out",
                        "list[Out]",
                        "boolean",
                    ];
                    let mut map = Map::new();
                    for name in ["Plan", "Out", "Choice"] {
                        if self.chance(30) {
                            continue;
                        }
                        let def = match (name, self.below(5)) {
                            ("Choice", _) => json!({"type": "literal", "values": ["a", "b"]}),
                            (_, 0) => json!({"type": "union", "variants": ["Out", "null"]}),
                            _ => {
                                let mut fields = Map::new();
                                for f in 0..self.below(4) + 1 {
                                    let t = types[self.below(types.len())];
                                    let mut field = json!({"type": t});
                                    if t == "List" && self.chance(50) {
                                        field = json!({"type": "list", "items": "str"});
                                    }
                                    if self.chance(20) {
                                        field["default"] = json!(null);
                                    }
                                    fields.insert(format!("f{f}"), field);
                                }
                                json!({"type": "model", "fields": fields})
                            }
                        };
                        map.insert(name.to_string(), def);
                    }
                    Value::Object(map)
                }
            }
        }
    }

    /// The files of one generated bundle: (relative path, text).
    pub fn bundle(seed: u64) -> Vec<(String, String)> {
        let mut g = Gen::new(seed);
        let mut out = Vec::new();
        for kind in FILE_KINDS {
            let schema = file_schema(*kind);
            // Optional files are sometimes absent; orchestrator.yaml never.
            if schema.kind.path() != "orchestrator.yaml" && g.chance(15) {
                continue;
            }
            let mut root = g.object(schema.root, 0);
            if schema.kind.path() == "orchestrator.yaml" && g.chance(80) {
                root["workflow_name"] = json!("Gen");
            }
            out.push((
                schema.kind.path().to_string(),
                serde_json::to_string_pretty(&root).unwrap(),
            ));
        }
        out.push((
            "tools/x.py".into(),
            "def A(context_variables=None):\n    context_variables.set('route', 'x')\n\nasync def plan(x: str, y=1):\n    return {'status': 'ok'}\n".into(),
        ));
        out
    }
}

proptest! {
    #![proptest_config(config(400))]

    /// Bundles generated from the schema description never make the
    /// analysis panic, and hold every invariant above.
    #[test]
    fn bundles_generated_from_the_schema_hold_the_invariants(seed in any::<u64>()) {
        let mut fs = MemoryFs::new();
        for (relative, text) in generated::bundle(seed) {
            fs.insert(Path::new("/w/Gen").join(relative), text.into_bytes());
        }
        let dir = Path::new("/w/Gen");
        let analysis = analyze_bundle(&fs, dir);
        // The generator must reach deep into the model, not stop at the YAML.
        prop_assert!(analysis.bundle.files.len() >= 2);
        holds_invariants_at(&fs, dir)?;
    }
}

#[test]
fn the_schema_generator_reaches_every_file_kind_and_the_cross_file_checks() {
    let mut kinds = std::collections::HashSet::new();
    let mut codes = std::collections::HashSet::new();
    for seed in 0..200u64 {
        let mut fs = MemoryFs::new();
        for (relative, text) in generated::bundle(seed) {
            kinds.insert(relative.clone());
            fs.insert(Path::new("/w/Gen").join(relative), text.into_bytes());
        }
        let analysis = analyze_bundle(&fs, Path::new("/w/Gen"));
        for d in &analysis.diagnostics {
            codes.insert(d.rule.code().chars().take(3).collect::<String>());
        }
    }
    assert_eq!(
        kinds.len(),
        mzk_analyzer::base::FILE_KINDS.len() + 1,
        "{kinds:?}"
    );
    // Schema (MZ1), references (MZ2) and later families are all reached.
    for family in ["MZ1", "MZ2", "MZ3"] {
        assert!(codes.contains(family), "{family} never reported: {codes:?}");
    }
}

/// One broken line reports the syntax error alone: a tab in place of the
/// indentation of any line of any YAML file of the example (which is clean)
/// gives no finding outside that file, and inside it only the syntax error
/// or findings of rules that read that file alone, without fixes.
#[test]
fn one_broken_line_reports_the_syntax_error_alone() {
    let mut broken = 0;
    for (relative, bytes) in files() {
        if !relative.ends_with(".yaml") {
            continue;
        }
        let text = String::from_utf8(bytes.clone()).unwrap();
        let lines: Vec<&str> = text.split('\n').collect();
        for (i, line) in lines.iter().enumerate() {
            if !line.starts_with("  ") || line.trim().is_empty() {
                continue;
            }
            let mut mutated = lines.clone();
            let tabbed = format!("\t{}", &line[2..]);
            mutated[i] = &tabbed;
            let mut fs = MemoryFs::new();
            for (other, bytes) in files() {
                fs.insert(Path::new(DIR).join(other), bytes.clone());
            }
            fs.insert(Path::new(DIR).join(relative), mutated.join("\n"));
            let analysis = analyse_at(&fs, Path::new(DIR));
            // Scenarios are not bundle files.
            let Some(file) = analysis.bundle.file_at(relative).map(|f| f.id) else {
                break;
            };
            if !analysis.incomplete.contains(&file) {
                continue; // a tab inside block text is text
            }
            broken += 1;
            for d in &analysis.diagnostics {
                assert!(
                    d.file == file && d.rule.reads_only_its_file() && d.fixes.is_empty(),
                    "{relative}:{}: {} {}",
                    i + 1,
                    d.rule.code(),
                    d.message
                );
            }
            // A tab where a token starts is PyYAML's scanner error, which
            // mzk names MZ006 (tab-character) wherever the tab is.
            assert!(analysis
                .diagnostics
                .iter()
                .any(|d| matches!(d.rule, Rule::YamlSyntax | Rule::TabCharacter)));
        }
    }
    assert!(broken > 100, "only {broken} edits broke their file");
}

/// Statements of a tool function, each a complete block at the body's
/// indentation: guards, writes, helpers, aliases, loops, handlers and
/// escapes of the bridge, and a few that Python refuses.
const PYTHON_STATEMENTS: &[&str] = &[
    "    context_variables.set('verdict', verdict)\n",
    "    if context_variables is not None:\n        context_variables.set('verdict', 'reject')\n",
    "    if context_variables is None:\n        return {}\n",
    "    if not context_variables or not hasattr(context_variables, 'set'):\n        return None\n",
    "    ctx = context_variables or {}\n",
    "    ctx = context_variables\n",
    "    ctx.set('verdict', _pick(verdict))\n",
    "    _store(context_variables, verdict)\n",
    "    _store(cv=context_variables, v=_pick(verdict))\n",
    "    for k in ('verdict', ' verdict '):\n        context_variables[k] = verdict\n",
    "    verdict = verdict.lower()\n",
    "    verdict = TABLE.get(verdict, 'revise')\n",
    "    verdict = TABLE[verdict]\n",
    "    match verdict:\n        case 'a':\n            verdict = 'publish'\n        case _:\n            pass\n",
    "    try:\n        verdict = str(verdict)\n    except Exception:\n        verdict = None\n",
    "    setter = getattr(context_variables, 'set', None)\n",
    "    setter('verdict', 'x')\n",
    "    data = getattr(context_variables, 'data', None)\n",
    "    if isinstance(data, dict):\n        data['verdict'] = 1\n",
    "    while verdict:\n        verdict = verdict[1:]\n",
    "    return {'verdict': verdict}\n",
    "    x = [context_variables]\n",
    "    cb = lambda: context_variables.set('verdict', 1)\n",
    "    assert context_variables\n",
    "    context_variables.pop('verdict')\n",
    "    verdict = Verdict.PUBLISH if verdict else Verdict.REVISE.value\n",
    "    with open('f') as fh:\n        context_variables.set('verdict', fh.read())\n",
    "    del verdict\n",
    "    verdict = f'{verdict}_x'\n",
    "    context_variables.set(verdict, 1)\n",
    "    'unclosed\n",
    "    ) \n",
];

const PYTHON_MODULE_HEAD: &str = "from enum import Enum\n\nclass Verdict(str, Enum):\n    PUBLISH = 'publish'\n    REVISE = 'revise'\n\nTABLE = {'a': 'publish', 'b': Verdict.REVISE}\n\ndef _pick(v):\n    if v:\n        return 'publish'\n    return _pick(not v)\n\ndef _store(cv, v):\n    if cv is None:\n        return\n    cv.set('verdict', v)\n\ndef record_verdict(verdict: str, context_variables=None):\n";

/// The MZ307 rule fixture's files.
fn judge_files() -> &'static Vec<(String, Vec<u8>)> {
    static FILES: OnceLock<Vec<(String, Vec<u8>)>> = OnceLock::new();
    FILES.get_or_init(|| {
        mzk_tests::files_under(&repo().join("tests/fixtures/rules/MZ307"))
            .into_iter()
            .map(|(relative, bytes)| (relative.to_string_lossy().into_owned(), bytes))
            .collect()
    })
}

proptest! {
    #![proptest_config(config(300))]

    /// Tool code assembled from those statements never makes the analysis
    /// panic or hang, and holds every invariant above; what it writes gives
    /// the routing variable a domain or a reason it has none.
    #[test]
    fn tool_code_of_any_shape_is_read_safely(
        statements in prop::collection::vec(0..PYTHON_STATEMENTS.len(), 0..12),
    ) {
        let mut record = PYTHON_MODULE_HEAD.to_string();
        for &i in &statements {
            record.push_str(PYTHON_STATEMENTS[i]);
        }
        record.push_str("    return {'status': 'ok'}\n");
        let dir = Path::new("/w/MZ307");
        let mut fs = MemoryFs::new();
        for (relative, bytes) in judge_files() {
            fs.insert(dir.join(relative), bytes.clone());
        }
        fs.insert(dir.join("tools/record.py"), record.clone().into_bytes());
        let analysis = analyse_at(&fs, dir);
        prop_assert!(
            analysis.bundle.domains().of("verdict").is_some(),
            "no domain answer for:\n{record}"
        );
        holds_invariants_at(&fs, dir)?;
    }
}
