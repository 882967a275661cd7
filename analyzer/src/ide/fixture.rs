//! Inline multi-file fixtures for the IDE tests, after rust-analyzer's: one
//! string states a whole bundle and where the cursor is, so a test of hover,
//! completion, definition or rename shows its entire input in a few lines.
//!
//! ```text
//! //- /agents.yaml
//! agents:
//!   - name: Greeter$0Agent
//! //- /orchestrator.yaml
//! workflow_name: Fixture
//! ```
//!
//! `//- /<path>` starts a file (relative to the bundle folder); `$0` marks the
//! cursor, at most once. The common indentation of the fixture is removed, so
//! it may be indented with the test's code.

use std::path::Path;

use crate::base::FileId;
use crate::{analyze_bundle, Analysis, MemoryFs};

/// Where a fixture's bundle lives in memory; its folder name is the workflow
/// name a fixture's orchestrator.yaml should use to stay clean.
pub(crate) const BUNDLE_DIR: &str = "/w/Fixture";

const CURSOR: &str = "$0";
const FILE_MARKER: &str = "//- /";

/// A fixture's files and cursor, before analysis.
#[derive(Debug, PartialEq)]
pub(crate) struct Parsed {
    /// (path relative to the bundle, text), in the order written.
    pub files: Vec<(String, String)>,
    /// The file holding `$0` and the byte offset of the cursor in its text.
    pub cursor: Option<(String, u32)>,
}

/// An analysed fixture.
pub(crate) struct Fixture {
    pub fs: MemoryFs,
    pub analysis: Analysis,
    /// The file and offset of `$0`.
    pub file: FileId,
    pub offset: u32,
}

impl Fixture {
    /// The text of the file at `relative`.
    pub fn text(&self, relative: &str) -> &str {
        &self.analysis.bundle.file_at(relative).unwrap().text
    }

    /// The byte offset of the first `needle` in the file at `relative`.
    pub fn find(&self, relative: &str, needle: &str) -> u32 {
        let text = self.text(relative);
        text.find(needle)
            .unwrap_or_else(|| panic!("`{needle}` is not in {relative}")) as u32
    }
}

/// Splits a fixture into files and finds the cursor.
pub(crate) fn parse(fixture: &str) -> Parsed {
    let fixture = dedent(fixture);
    let mut files: Vec<(String, String)> = Vec::new();
    for line in fixture.split_inclusive('\n') {
        if let Some(path) = line.strip_prefix(FILE_MARKER) {
            files.push((path.trim().to_string(), String::new()));
            continue;
        }
        match files.last_mut() {
            Some((_, text)) => text.push_str(line),
            None => assert!(
                line.trim().is_empty(),
                "fixture text before the first `//- /path` line: {line:?}"
            ),
        }
    }
    let mut cursor = None;
    for (path, text) in &mut files {
        if let Some(at) = text.find(CURSOR) {
            assert!(cursor.is_none(), "more than one `$0` in the fixture");
            text.replace_range(at..at + CURSOR.len(), "");
            assert!(!text.contains(CURSOR), "more than one `$0` in {path}");
            cursor = Some((path.clone(), at as u32));
        }
    }
    Parsed { files, cursor }
}

/// Builds the fixture's bundle in memory under [`BUNDLE_DIR`] and analyses
/// it; the fixture must hold `$0`.
pub(crate) fn fixture(fixture: &str) -> Fixture {
    let parsed = parse(fixture);
    let (cursor_path, offset) = parsed.cursor.clone().expect("the fixture has no `$0`");
    let mut fs = MemoryFs::new();
    for (path, text) in &parsed.files {
        fs.insert(Path::new(BUNDLE_DIR).join(path), text.as_str());
    }
    let analysis = analyze_bundle(&fs, Path::new(BUNDLE_DIR));
    let file = analysis
        .bundle
        .file_at(&cursor_path)
        .unwrap_or_else(|| panic!("{cursor_path} is not a file of the bundle"))
        .id;
    Fixture {
        fs,
        analysis,
        file,
        offset,
    }
}

/// Removes the indentation every non-blank line shares.
fn dedent(text: &str) -> String {
    let text = text.strip_prefix('\n').unwrap_or(text);
    let indent = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start_matches(' ').len())
        .min()
        .unwrap_or(0);
    text.split_inclusive('\n')
        .map(|l| l.get(indent..).unwrap_or(l.trim_start_matches(' ')))
        .collect()
}

#[test]
fn a_fixture_splits_into_files_and_finds_its_cursor() {
    let parsed = parse(
        "
        //- /agents.yaml
        agents:
          - name: Gree$0ter
        //- /orchestrator.yaml
        workflow_name: Fixture
        ",
    );
    assert_eq!(
        parsed.files,
        [
            (
                "agents.yaml".to_string(),
                "agents:\n  - name: Greeter\n".to_string()
            ),
            (
                "orchestrator.yaml".to_string(),
                "workflow_name: Fixture\n".to_string()
            ),
        ]
    );
    assert_eq!(parsed.cursor, Some(("agents.yaml".to_string(), 22)));
    assert_eq!(&parsed.files[0].1[22..], "ter\n");
}

#[test]
fn a_second_cursor_is_refused() {
    let message = crate::base::quiet_panic::panic_message(|| {
        parse("//- /a.yaml\na: $0\n//- /b.yaml\nb: $0\n");
    });
    assert!(message.is_some_and(|m| m.contains("more than one `$0`")));
}
