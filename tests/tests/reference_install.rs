//! The first run on a fresh machine: with an empty cache, the conformance
//! harness installs mozaiks 0.2.0 from PyPI and unpacks its bundles, and
//! `--print-corpus` / `--print-python` still print exactly one existing path
//! on stdout — the contract every test that needs the reference relies on.
//! (Every later run reads the cache, so without this test a harness that
//! logs to stdout while installing passes on every machine that has run the
//! tests before, and fails on every new one.)

use mzk_tests::{reference_answer, reference_missing, ReferenceError, Scratch};

#[test]
fn an_empty_cache_installs_the_reference_and_prints_only_its_paths() {
    let cache = Scratch::new("fresh-cache");
    // Corpus first: on an empty cache it installs the venv and unpacks the
    // wheel's bundles, the path that printed progress into the answer.
    let corpus = match reference_answer("--print-corpus", Some(cache.root())) {
        Ok(path) => path,
        Err(ReferenceError::Unreachable(why)) => return reference_missing(&why),
        Err(ReferenceError::Broken(why)) => panic!("{why}"),
    };
    assert!(
        corpus.starts_with(cache.root()),
        "{corpus:?} is not under the fresh cache"
    );
    assert!(
        corpus.join("AppGenerator/orchestrator.yaml").is_file(),
        "{corpus:?} does not hold the real bundles"
    );
    let python =
        reference_answer("--print-python", Some(cache.root())).expect("the venv just installed");
    assert!(
        python.starts_with(cache.root()),
        "{python:?} is not under the fresh cache"
    );
    let imports = std::process::Command::new(&python)
        .args(["-c", "import mozaiksai, yaml, mongomock_motor"])
        .status()
        .expect("the reference's python runs");
    assert!(
        imports.success(),
        "{python:?} cannot import mozaiks, PyYAML and mongomock-motor"
    );
}
