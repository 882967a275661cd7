//! Replays the inputs kept in fuzz/regressions/<target>/ through the fuzz
//! targets' entry points (`mzk_tests::fuzz`): each once crashed, hung or was
//! otherwise worth keeping; each must now pass.

use mzk_tests::{fuzz, repo};

/// A fuzz target's entry point.
type Target = fn(&[u8]);

#[test]
fn kept_fuzz_inputs_pass() {
    let targets: [(&str, Target); 4] = [
        ("yaml", fuzz::yaml),
        ("bundle", fuzz::bundle),
        ("expression", fuzz::expression),
        ("lsp", fuzz::lsp),
    ];
    let mut replayed = 0;
    for (target, run) in targets {
        let dir = repo().join("fuzz/regressions").join(target);
        let mut inputs: Vec<_> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.unwrap().path())
            .filter(|p| p.is_file())
            .collect();
        inputs.sort();
        for input in inputs {
            let data = std::fs::read(&input).unwrap();
            let outcome = std::panic::catch_unwind(|| run(&data));
            assert!(outcome.is_ok(), "{} fails again", input.display());
            replayed += 1;
        }
    }
    assert!(
        replayed >= 6,
        "the kept inputs are missing ({replayed} found)"
    );
}

/// The entry points reach what they claim to: a bundle input is analysed
/// (its mistakes reported), not dropped on the floor.
#[test]
fn the_bundle_target_analyses_what_it_is_given() {
    let input = fuzz::bundle_input(&[
        b"schema_version: mozaiks.orchestrator.v1\nworkflow_name: Fuzz\nworkflow_startup_mode: AgentDriven\ninitial_agent: Nobody\n",
        b"agents:\n  - name: A\n    system_message: Hi.\n    structured_outputs_required: false\n",
    ]);
    let analysis = fuzz::bundle_analysis(&input);
    assert!(analysis
        .diagnostics
        .iter()
        .any(|d| d.message.contains("Nobody")));
    fuzz::bundle(&input);
}
