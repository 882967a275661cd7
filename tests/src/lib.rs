//! Helpers shared by the end-to-end tests.

use std::path::{Path, PathBuf};

pub mod fuzz;
pub mod lsp_client;

use mzk_analyzer::base::FileId;
use mzk_analyzer::diagnostics::Diagnostic;
use mzk_analyzer::syntax::ColumnUnit;
use mzk_analyzer::{analyze, discover_bundles, Analysis, RealFs};

/// Says that the reference (mozaiks 0.2.0 from PyPI) could not be had:
/// outside the test command this skips the test with `why` printed; the test
/// command sets `MZK_REQUIRE_REFERENCE=1`, and there it fails the test, so a
/// green run always means the comparison with the reference was made.
pub fn reference_missing(why: &str) {
    if std::env::var_os("MZK_REQUIRE_REFERENCE").is_some() {
        panic!("{why}, and MZK_REQUIRE_REFERENCE is set: the test command needs the reference");
    }
    println!("SKIP: {why}");
}

/// SupportDesk's transition_graph.yaml text with its first rule's target
/// misspelt (`ClasifierAgent`): an unknown agent (MZ201, a near miss that
/// `--fix` corrects), the mistake several tests plant.
pub fn misspelt_target(graph_text: &str) -> String {
    graph_text.replacen(
        "target_agent: ClassifierAgent",
        "target_agent: ClasifierAgent",
        1,
    )
}

/// What `tests/conformance/run.py FLAG` answers (`--print-corpus`,
/// `--print-python`): the one path its stdout holds, which must exist. The
/// script installs the reference from PyPI on first use (cached under
/// `MZK_CACHE`, default ~/.cache/mzk) and logs to stderr only, so stdout is
/// the answer alone; anything else there is an error, reported with the
/// exit status and both streams.
/// `cache` overrides `MZK_CACHE` (a fresh folder proves the first-run path).
pub fn reference_answer(flag: &str, cache: Option<&Path>) -> Result<PathBuf, ReferenceError> {
    let mut command = std::process::Command::new("python3");
    command
        .arg(repo().join("tests/conformance/run.py"))
        .arg(flag);
    if let Some(cache) = cache {
        command.env("MZK_CACHE", cache);
    }
    let output = command
        .output()
        .map_err(|e| ReferenceError::Broken(format!("python3 could not be run: {e}")))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let shown = || {
        format!(
            "tests/conformance/run.py {flag} exited with {}\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
            output.status
        )
    };
    // run.py's status for "PyPI unreachable and nothing cached".
    if output.status.code() == Some(3) {
        return Err(ReferenceError::Unreachable(shown()));
    }
    let answer = stdout.strip_suffix('\n').unwrap_or(&stdout);
    if !output.status.success() || answer.is_empty() || answer.contains('\n') {
        return Err(ReferenceError::Broken(format!(
            "expected exactly one line, a path, on stdout: {}",
            shown()
        )));
    }
    let path = PathBuf::from(answer);
    if !path.exists() {
        return Err(ReferenceError::Broken(format!(
            "stdout names no existing path: {}",
            shown()
        )));
    }
    Ok(path)
}

/// Why [`reference_answer`] has no path.
#[derive(Debug, Clone)]
pub enum ReferenceError {
    /// PyPI could not be reached and nothing was cached: a skip outside the
    /// test command, a failure inside it ([`reference_missing`]).
    Unreachable(String),
    /// The script answered something other than one existing path: always a
    /// failure, since it is a defect of the harness, not of the network.
    Broken(String),
}

/// The reference's answer to `flag`, memoised per test process: `None` after
/// [`reference_missing`] when PyPI is unreachable; a panic when the harness
/// answered wrongly.
fn reference_once(
    cell: &'static std::sync::OnceLock<Result<PathBuf, ReferenceError>>,
    flag: &str,
) -> Option<PathBuf> {
    match cell.get_or_init(|| reference_answer(flag, None)) {
        Ok(path) => Some(path.clone()),
        Err(ReferenceError::Unreachable(why)) => {
            reference_missing(&format!(
                "mozaiks 0.2.0 could not be installed from PyPI for `{flag}`: {why}"
            ));
            None
        }
        Err(ReferenceError::Broken(why)) => panic!("{why}"),
    }
}

/// The real bundles of mozaiks 0.2.0 (its workflows folder), fetched as the
/// conformance suite fetches them (`tests/conformance/run.py --print-corpus`:
/// from PyPI, cached under ~/.cache/mzk).
pub fn corpus() -> Option<PathBuf> {
    static CORPUS: std::sync::OnceLock<Result<PathBuf, ReferenceError>> =
        std::sync::OnceLock::new();
    reference_once(&CORPUS, "--print-corpus")
}

/// The Python of the reference's virtualenv (mozaiks 0.2.0 and PyYAML
/// installed), from `tests/conformance/run.py --print-python`.
pub fn reference_python() -> Option<PathBuf> {
    static PYTHON: std::sync::OnceLock<Result<PathBuf, ReferenceError>> =
        std::sync::OnceLock::new();
    reference_once(&PYTHON, "--print-python")
}

/// Every file under `root` (folders walked with an explicit stack), by its
/// path relative to `root`, sorted.
pub fn files_under(root: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let relative = path.strip_prefix(root).unwrap().to_path_buf();
                out.push((relative, std::fs::read(&path).unwrap()));
            }
        }
    }
    out.sort();
    out
}

/// A copy of the real bundle `name` (with the corpus's `_shared/`) in a
/// scratch folder of its own: the scratch root, and the bundle's folder.
pub fn corpus_copy(corpus: &Path, name: &str, label: &str) -> (Scratch, PathBuf) {
    let scratch = Scratch::new(label);
    copy_dir(&corpus.join(name), &scratch.root().join(name));
    if corpus.join("_shared").is_dir() {
        copy_dir(&corpus.join("_shared"), &scratch.root().join("_shared"));
    }
    let bundle = scratch.root().join(name);
    (scratch, bundle)
}

/// The repository root.
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// A folder of a test's own under the system's temporary directory, removed
/// when the value is dropped (when the test fails too), so that test runs
/// leave nothing behind. It derefs to its path: the folder itself, or the
/// bundle copied into it by [`bundle_copy`].
pub struct Scratch {
    dir: tempfile::TempDir,
    path: PathBuf,
}

impl Scratch {
    /// A new empty folder named `mzk-<label>-<random>`.
    pub fn new(label: &str) -> Scratch {
        let dir = tempfile::Builder::new()
            .prefix(&format!("mzk-{label}-"))
            .tempdir()
            .expect("a temporary folder");
        let path = dir.path().to_path_buf();
        Scratch { dir, path }
    }

    /// The scratch folder itself (the parent of a copied bundle).
    pub fn root(&self) -> &Path {
        self.dir.path()
    }
}

impl std::ops::Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.path
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        &self.path
    }
}

/// A private copy of the example bundle `bundles/<name>`, for tests that edit
/// files; derefs to `<scratch>/<name>`.
pub fn bundle_copy(suite: &str, name: &str, test: &str) -> Scratch {
    let mut scratch = Scratch::new(&format!("{suite}-{test}"));
    scratch.path = scratch.root().join(name);
    copy_dir(&repo().join("bundles").join(name), &scratch.path);
    scratch
}

/// Copies a folder tree, without what runs leave in it (`.mzk/` histories
/// and coverage, `__pycache__/`), so a copy is the bundle as committed.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        if path
            .file_name()
            .is_some_and(|n| n == ".mzk" || n == "__pycache__")
        {
            continue;
        }
        let target = to.join(path.file_name().unwrap());
        if path.is_dir() {
            copy_dir(&path, &target);
        } else {
            std::fs::copy(&path, &target).unwrap();
        }
    }
}

/// One line per diagnostic, `path:line:col: severity[CODE] message`, with the
/// path relative to `root`, plus related locations indented below it.
pub fn render(root: &Path, analysis: &Analysis) -> String {
    let mut out = String::new();
    for d in &analysis.diagnostics {
        out.push_str(&line(root, analysis, d));
    }
    out
}

fn line(root: &Path, analysis: &Analysis, d: &Diagnostic) -> String {
    let place = |file, range: mzk_analyzer::base::TextRange| {
        let f = analysis
            .bundle
            .file(file)
            .expect("diagnostic names a bundle file");
        let start = f
            .line_index
            .position(&f.text, range.start, ColumnUnit::Char);
        let end = f.line_index.position(&f.text, range.end, ColumnUnit::Char);
        let path = analysis.bundle.dir.join(&f.relative);
        let path = path
            .strip_prefix(root)
            .unwrap_or(&path)
            .display()
            .to_string();
        format!(
            "{path}:{}:{}-{}:{}",
            start.line + 1,
            start.col + 1,
            end.line + 1,
            end.col + 1
        )
    };
    let mut s = format!(
        "{}: {}[{}] {}\n",
        place(d.file, d.range),
        d.severity.as_str(),
        d.rule.code(),
        d.message
    );
    for r in &d.related {
        s.push_str(&format!(
            "    related {}: {}\n",
            place(r.file, r.range),
            r.message
        ));
    }
    s
}

/// Analyses every bundle below `root`, rendered in discovery order.
/// Every bundle under `root`, analysed with the configuration found above it
/// and its suppression comments applied, as `mzk check` does.
pub fn render_all(root: &Path) -> String {
    discover_bundles(&RealFs, root)
        .iter()
        .map(|dir| {
            let config = mzk_analyzer::Config::discover(&RealFs, dir)
                .expect("the fixture's configuration is valid");
            let mut cache = mzk_analyzer::AnalysisCache::new();
            let analysis = analyze(&RealFs, dir, Some(&config), &mut cache);
            render(root, &analysis)
        })
        .collect()
}

/// A YAML file as JSON, read with mozaiks' YAML 1.1 rules (what the JSON
/// Schema export is checked against); `None` when it does not parse.
pub fn yaml_as_json(text: &str) -> Option<serde_json::Value> {
    let mut diagnostics = Vec::new();
    let document = mzk_analyzer::syntax::parse(text, FileId(0), &mut diagnostics);
    if document.failed {
        return None;
    }
    // The runner's conversion: one reading of YAML as data in the project.
    Some(
        document
            .root
            .as_ref()
            .map_or(serde_json::json!({}), mzk_runtime::value::yaml_to_json),
    )
}

#[cfg(test)]
mod tests {
    /// Under the test command a missing reference is a failure, not a skip.
    #[test]
    fn a_missing_reference_fails_when_it_is_required() {
        std::env::remove_var("MZK_REQUIRE_REFERENCE");
        super::reference_missing("no network");
        std::env::set_var("MZK_REQUIRE_REFERENCE", "1");
        // The panic is the point: keep its message out of the test output.
        let hook = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        let outcome = std::panic::catch_unwind(|| super::reference_missing("no network"));
        std::panic::set_hook(hook);
        std::env::remove_var("MZK_REQUIRE_REFERENCE");
        assert!(outcome.is_err());
    }
}
