use std::path::{Path, PathBuf};

use super::{AnalysisHost, ConfigSource, OnConfigError, Overlay};
use crate::base::fs::FileSystem;
use crate::base::hash::HashMap;
use crate::rules::Rule;

/// The example bundle shipped with the repository, on disk (the overlay
/// reads the disk under the editor's buffers).
fn support_desk() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../bundles/SupportDesk")
        .canonicalize()
        .expect("bundles/SupportDesk")
}

fn overlay(edits: &[(&Path, &str)]) -> Overlay {
    let open: HashMap<PathBuf, String> = edits
        .iter()
        .map(|(p, t)| (p.to_path_buf(), t.to_string()))
        .collect();
    Overlay::new(open)
}

fn editor_host() -> AnalysisHost {
    AnalysisHost::new(ConfigSource::default(), OnConfigError::UseDefaults)
}

#[test]
fn a_job_overtaken_by_a_newer_change_is_dropped() {
    let dir = support_desk();
    let mut host = editor_host();
    let first = host.schedule(&dir, overlay(&[]));
    let second = host.schedule(&dir, overlay(&[]));
    assert!(!host.is_current(&first));
    assert!(host.is_current(&second));
    let stale = first.run();
    assert!(host.finish(stale, |_| false).is_none());
    assert!(host.analysis(&dir).is_none());
    let kept = host.finish(second.run(), |_| false);
    assert!(matches!(kept, Some(Ok(_))));
    assert!(host.analysis(&dir).is_some());
}

#[test]
fn the_editors_text_wins_and_its_last_readable_version_stands_in() {
    let dir = support_desk();
    let agents = dir.join("agents.yaml");
    let graph = dir.join("transition_graph.yaml");
    let read = |p: &Path| String::from_utf8(crate::RealFs.read(p).unwrap()).unwrap();
    let agents_text = read(&agents);
    // An unsaved edit in the editor: a target agents.yaml does not define.
    let misspelt = read(&graph).replacen(
        "target_agent: ClassifierAgent",
        "target_agent: ClasifierAgent",
        1,
    );
    let unknown = |analysis: &crate::Analysis| {
        analysis
            .diagnostics
            .iter()
            .filter(|d| d.rule == Rule::UnknownAgent)
            .count()
    };
    let mut host = editor_host();
    let is_open = |p: &Path| p == agents || p == graph;
    let job = host.schedule(
        &dir,
        overlay(&[(&agents, &agents_text), (&graph, &misspelt)]),
    );
    let done = host.finish(job.run(), is_open).unwrap().unwrap();
    assert_eq!(unknown(&done.analysis), 1, "the buffer, not the disk");
    // agents.yaml cannot be read to its end while the author types: the
    // graph is still checked, against the last agents.yaml that could be.
    let broken = format!("{agents_text}\n  - [unclosed\n");
    let job = host.schedule(&dir, overlay(&[(&agents, &broken), (&graph, &misspelt)]));
    let done = host.finish(job.run(), is_open).unwrap().unwrap();
    assert!(done
        .analysis
        .diagnostics
        .iter()
        .any(|d| d.rule == Rule::YamlSyntax));
    assert_eq!(
        unknown(&done.analysis),
        1,
        "checked against the last readable agents"
    );
    // Closed, it has no last readable text: the finding is held back.
    host.closed(&agents);
    let job = host.schedule(&dir, overlay(&[(&agents, &broken), (&graph, &misspelt)]));
    let done = host.finish(job.run(), |p| p == graph).unwrap().unwrap();
    assert_eq!(unknown(&done.analysis), 0);
}

#[test]
fn a_broken_configuration_is_refused_on_the_command_line_and_reported_once_in_the_editor() {
    let dir = support_desk();
    let config = dir.join("mzk.toml");
    assert!(!config.exists(), "the example has no mzk.toml");
    let broken = || overlay(&[(&config, "select = [\"NOPE\"]\n")]);
    let mut editor = editor_host();
    let job = editor.schedule(&dir, broken());
    let first = editor.finish(job.run(), |_| false).unwrap().unwrap();
    assert!(first.new_config_error.is_some(), "reported");
    assert!(
        !first.analysis.bundle.agents.is_empty(),
        "analysed under the defaults"
    );
    let job = editor.schedule(&dir, broken());
    let again = editor.finish(job.run(), |_| false).unwrap().unwrap();
    assert!(again.new_config_error.is_none(), "not reported twice");

    let mut command_line = AnalysisHost::new(ConfigSource::default(), OnConfigError::Refuse);
    assert!(command_line.configure(&broken(), &dir).is_err());
    let job = command_line.schedule(&dir, broken());
    assert!(matches!(
        command_line.finish(job.run(), |_| false),
        Some(Err(_))
    ));
    assert!(command_line.analysis(&dir).is_none());
}

#[test]
fn a_removed_bundle_is_forgotten_whole() {
    let dir = support_desk();
    let mut host = editor_host();
    let job = host.schedule(&dir, overlay(&[]));
    host.finish(job.run(), |_| false).unwrap().unwrap();
    assert_eq!(host.bundles().count(), 1);
    assert!(host.analysis_of(&dir.join("agents.yaml")).is_some());
    host.remove_bundle(&dir);
    assert_eq!(host.bundles().count(), 0);
    assert!(host.analysis_of(&dir.join("agents.yaml")).is_none());
}

#[test]
fn a_job_from_before_a_bundle_was_removed_stays_stale_after_it_is_added_again() {
    let dir = support_desk();
    let mut host = editor_host();
    let before = host.schedule(&dir, overlay(&[]));
    host.remove_bundle(&dir);
    let after = host.schedule(&dir, overlay(&[]));
    assert!(!host.is_current(&before));
    assert!(host.finish(before.run(), |_| false).is_none());
    assert!(matches!(host.finish(after.run(), |_| false), Some(Ok(_))));
}

#[test]
fn analysing_now_keeps_the_analysis() {
    let dir = support_desk();
    let mut host = AnalysisHost::new(ConfigSource::default(), OnConfigError::Refuse);
    let analysis = host.analyze(&crate::RealFs, &dir, true).unwrap();
    assert_eq!(host.analysis(&dir).unwrap().bundle.dir, analysis.bundle.dir);
    assert!(!analysis.bundle.agents.is_empty());
}
