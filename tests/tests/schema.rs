//! `mzk schema`: the exported JSON Schemas, checked with an independent
//! validator (the jsonschema crate) against the files mozaiks 0.2.0 accepts:
//! the example bundles and the 15 real bundles its wheel ships.

use std::path::{Path, PathBuf};
use std::process::Command;

use mzk_analyzer::base::FILE_KINDS;
use mzk_tests::{repo, yaml_as_json};
use serde_json::{json, Value};

fn mzk() -> Command {
    Command::new(env!("CARGO_BIN_EXE_mzk-e2e"))
}

/// Runs `mzk schema --out` into a scratch folder; reads a schema it wrote.
fn exported_schemas(label: &str) -> impl Fn(&str) -> Value {
    let out = mzk_tests::Scratch::new(label);
    assert!(mzk()
        .args(["schema", "--out"])
        .arg(&*out)
        .status()
        .unwrap()
        .success());
    move |name: &str| -> Value {
        serde_json::from_str(&std::fs::read_to_string(out.join(name)).unwrap()).unwrap()
    }
}

fn bundles_in(root: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(root)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("orchestrator.yaml").is_file())
        .collect();
    found.sort();
    found
}

#[test]
fn exported_schemas_accept_every_file_mozaiks_accepts() {
    let out = mzk_tests::Scratch::new("schemas");
    let status = mzk().args(["schema", "--out"]).arg(&*out).status().unwrap();
    assert!(status.success());
    let settings: Value = serde_json::from_str(
        &std::fs::read_to_string(out.join("yaml-language-server.settings.json")).unwrap(),
    )
    .unwrap();
    let mapping = settings["yaml.schemas"].as_object().unwrap();
    assert_eq!(mapping.len(), FILE_KINDS.len());

    let mut bundles = bundles_in(&repo().join("bundles"));
    let corpus = mzk_tests::corpus();
    if let Some(corpus) = &corpus {
        bundles.extend(bundles_in(corpus));
    }
    let mut checked = 0;
    let mut failures = Vec::new();
    for (name, globs) in mapping {
        let schema: Value =
            serde_json::from_str(&std::fs::read_to_string(out.join(name)).unwrap()).unwrap();
        let validator = jsonschema::draft7::new(&schema)
            .unwrap_or_else(|e| panic!("{name} is not a valid draft-07 schema: {e}"));
        let relative = globs[0].as_str().unwrap().trim_start_matches("**/");
        for bundle in &bundles {
            let Ok(text) = std::fs::read_to_string(bundle.join(relative)) else {
                continue;
            };
            let instance = yaml_as_json(&text).expect("the file parses");
            for error in validator.iter_errors(&instance) {
                failures.push(format!("{}/{relative}: {error}", bundle.display()));
            }
            checked += 1;
        }
    }
    let _ = std::fs::remove_dir_all(&out);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // Every kind of file appears in the examples and real bundles.
    assert!(
        checked >= 2 * FILE_KINDS.len(),
        "only {checked} files checked"
    );
    if corpus.is_some() {
        assert!(checked > 100, "only {checked} files checked");
    }
}

#[test]
fn exported_schemas_reject_what_the_schema_description_forbids() {
    let load = exported_schemas("schemas-neg");
    let graph = jsonschema::draft7::new(&load("transition_graph.schema.json")).unwrap();
    let rule = json!({"source_agent": "A", "target_agent": "B", "transition_type": "after_turn"});
    assert!(graph.is_valid(&json!({"transition_rules": [rule]})));
    // An unknown key, a value outside the enum, a missing required key.
    let mut unknown = rule.clone();
    unknown["conditon_key"] = json!("x");
    assert!(!graph.is_valid(&json!({"transition_rules": [unknown]})));
    let mut bad_enum = rule.clone();
    bad_enum["transition_type"] = json!("sometimes");
    assert!(!graph.is_valid(&json!({"transition_rules": [bad_enum]})));
    let mut missing = rule.clone();
    missing.as_object_mut().unwrap().remove("source_agent");
    assert!(!graph.is_valid(&json!({"transition_rules": [missing]})));
    let agents = jsonschema::draft7::new(&load("agents.schema.json")).unwrap();
    assert!(
        !agents.is_valid(&json!({"agents": [{"name": "A", "max_consecutive_auto_reply": "many"}]}))
    );
}

/// What a value names comes from the schema description's `Refers`, the
/// same that completion offers: the exported schemas say it in the field's
/// description, so yaml-language-server's hover tells it too.
#[test]
fn exported_schemas_say_what_each_value_names() {
    let load = exported_schemas("schemas-refers");
    let graph = load("transition_graph.schema.json");
    let rule = &graph["definitions"]["transition_rule"]["properties"];
    let described = |field: &str| rule[field]["description"].as_str().unwrap().to_string();
    assert!(
        described("target_agent")
            .ends_with("Names an agent of agents.yaml, `user` or `terminate`."),
        "{}",
        described("target_agent")
    );
    assert!(
        described("source_agent").ends_with("Names an agent of agents.yaml or `user`."),
        "{}",
        described("source_agent")
    );
    assert!(
        described("condition_key").ends_with("Names a context variable of context_variables.yaml."),
        "{}",
        described("condition_key")
    );
    // A field that names nothing says nothing of the kind.
    assert!(!described("transition_type").contains("Names"));
}

/// Lowering and the cross-field rules read validated objects by key name; a key
/// that drifted from the schema description (renamed, misspelt, an alias)
/// would read as absent without a word. `Obj::field` debug-asserts every key
/// it is asked for, so analysing every bundle we have (the examples, each
/// fixture, the real corpus) runs each read against the schema.
#[test]
#[cfg_attr(
    not(debug_assertions),
    ignore = "the key check is a debug assertion: run this test in a debug build"
)]
fn every_key_lowering_reads_is_in_the_schema() {
    let mut roots = vec![repo().join("bundles")];
    roots.extend(
        std::fs::read_dir(repo().join("tests/fixtures"))
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.is_dir()),
    );
    roots.extend(mzk_tests::corpus());
    let fs = mzk_analyzer::RealFs;
    let mut analysed = 0;
    for root in &roots {
        for dir in mzk_analyzer::discover_bundles(&fs, root) {
            let analysis = mzk_analyzer::analyze_bundle(&fs, &dir);
            assert!(!analysis.bundle.files.is_empty(), "{}", dir.display());
            analysed += 1;
        }
    }
    assert!(analysed >= 20, "only {analysed} bundles were analysed");
}
