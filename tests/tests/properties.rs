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

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use mzk_analyzer::diagnostics::FileId;
use mzk_analyzer::ide::fixes;
use mzk_analyzer::rules::Rule;
use mzk_analyzer::syntax::{ColumnUnit, TextRange};
use mzk_analyzer::{analyze_bundle, Analysis, Config, MemoryFs};
use mzk_tests::repo;
use proptest::prelude::*;

const DIR: &str = "/w/SupportDesk";

/// The example's files, relative path and bytes, read once.
fn files() -> &'static Vec<(String, Vec<u8>)> {
    static FILES: OnceLock<Vec<(String, Vec<u8>)>> = OnceLock::new();
    FILES.get_or_init(|| {
        let root = repo().join("bundles/SupportDesk");
        let mut out = Vec::new();
        let mut stack = vec![root.clone()];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    stack.push(path);
                } else {
                    let relative = path
                        .strip_prefix(&root)
                        .unwrap()
                        .to_string_lossy()
                        .into_owned();
                    out.push((relative, std::fs::read(&path).unwrap()));
                }
            }
        }
        out.sort();
        out
    })
}

fn analyse(fs: &MemoryFs) -> Analysis {
    let dir = Path::new(DIR);
    let mut analysis = analyze_bundle(fs, dir);
    Config::defaults(dir).apply(&mut analysis);
    analysis
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

proptest! {
    #![proptest_config(ProptestConfig { cases: 160, ..ProptestConfig::default() })]

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
        let analysis = analyse(&fs);
        // Deterministic: a second analysis says the same, in the same order.
        let again = analyse(&fs);
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
                    let mut text = f.text.clone();
                    for e in mine {
                        text.replace_range(e.range.start as usize..e.range.end as usize, &e.new_text);
                    }
                    prop_assert!(parses(&text), "`{}` broke {}:\n{}", fix.title, f.relative, text);
                }
            }
        }
    }
}
