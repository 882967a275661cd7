//! Tests of navigation, rename, fixes, lenses and hover on the SupportDesk example.

use std::path::{Path, PathBuf};

use super::fixture::{fixture, Fixture};
use super::*;
use crate::diagnostics::Applicability;
use crate::{analyze_bundle, Analysis, FileSystem, MemoryFs};

pub(crate) fn support_desk_fs() -> MemoryFs {
    support_desk()
}

/// The SupportDesk example in memory, under /w/SupportDesk.
fn support_desk() -> MemoryFs {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("../bundles/SupportDesk");
    let mut fs = MemoryFs::new();
    let mut stack = vec![source.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let relative = path.strip_prefix(&source).unwrap();
                fs.insert(
                    PathBuf::from("/w/SupportDesk").join(relative),
                    std::fs::read(&path).unwrap(),
                );
            }
        }
    }
    fs
}

/// Renames the symbol at the first occurrence of `needle` in `file` and
/// checks that the bundle's diagnostics are unchanged and the old name is gone.
fn rename_keeps_the_bundle_clean(file: &str, needle: &str, new_name: &str, edits_at_least: usize) {
    let dir = Path::new("/w/SupportDesk");
    let mut fs = support_desk();
    let before = analyze_bundle(&fs, dir);
    let f = before.bundle.file_at(file).unwrap();
    let last = needle.split_whitespace().last().unwrap();
    let offset = (f.text.find(needle).unwrap() + needle.rfind(last).unwrap()) as u32 + 1;
    let edits = rename(&before, f.id, offset, new_name).unwrap();
    assert!(edits.len() >= edits_at_least, "{edits:?}");
    for file in &before.bundle.files {
        let mut text = file.text.to_string();
        let mut mine: Vec<&TextEdit> = edits.iter().filter(|e| e.file == file.id).collect();
        mine.sort_by_key(|e| std::cmp::Reverse(e.range.start));
        for e in mine {
            text.replace_range(e.range.start as usize..e.range.end as usize, &e.new_text);
        }
        fs.insert(before.bundle.path_of(file), text);
    }
    let after = analyze_bundle(&fs, dir);
    assert_eq!(
        after.diagnostics.len(),
        before.diagnostics.len(),
        "{:?}",
        after.diagnostics
    );
    let old = needle.split_whitespace().last().unwrap();
    assert!(
        after.symbols.definitions.iter().all(|d| d.name.text != old),
        "{old} survived"
    );
    assert!(after
        .symbols
        .definitions
        .iter()
        .any(|d| d.name.text == new_name));
}

/// Every file of an analysed bundle, by path.
fn texts(analysis: &Analysis) -> Vec<(&str, &str)> {
    let files = &analysis.bundle.files;
    files
        .iter()
        .map(|f| (f.relative.as_str(), f.text.as_ref()))
        .collect()
}

/// Applies non-overlapping edits to one file's text.
fn apply(text: &str, edits: &[TextEdit]) -> String {
    let mut edits = edits.to_vec();
    edits.sort_by_key(|e| std::cmp::Reverse(e.range.start));
    let mut text = text.to_string();
    for e in edits {
        text.replace_range(e.range.start as usize..e.range.end as usize, &e.new_text);
    }
    text
}

/// Replaces `original` with `edited` in `file` of SupportDesk and analyses.
fn edited(file: &str, original: &str, edited: &str) -> (MemoryFs, Analysis) {
    let dir = Path::new("/w/SupportDesk");
    let mut fs = support_desk();
    let path = dir.join(file);
    let text = String::from_utf8(fs.read(&path).unwrap()).unwrap();
    assert!(text.contains(original), "{original} not in {file}");
    fs.insert(&path, text.replacen(original, edited, 1));
    let analysis = analyze_bundle(&fs, dir);
    (fs, analysis)
}

/// The fix titled `title` offered by the only diagnostic of `rule`.
fn only_fix(analysis: &Analysis, rule: crate::rules::Rule, title: &str) -> FileFix {
    let with_rule: Vec<_> = analysis
        .diagnostics
        .iter()
        .filter(|d| d.rule == rule)
        .collect();
    assert_eq!(with_rule.len(), 1, "{:?}", analysis.diagnostics);
    let offered = fixes(analysis, with_rule[0]);
    offered
        .iter()
        .find(|f| f.title.contains(title))
        .unwrap_or_else(|| panic!("no fix `{title}` in {offered:?}"))
        .clone()
}

/// Writes a fix's edits into the in-memory bundle and analyses it again.
fn applied(mut fs: MemoryFs, analysis: &Analysis, fix: &FileFix) -> Analysis {
    for e in &fix.edits {
        let file = analysis.bundle.file(e.file).unwrap();
        let path = analysis.bundle.path_of(file);
        fs.insert(&path, apply(&file.text, std::slice::from_ref(e)));
    }
    analyze_bundle(&fs, &analysis.bundle.dir)
}

/// Misspells `original` in `file`, applies the first fix of every
/// diagnostic, and checks that the file is restored byte for byte.
fn fix_restores(file: &str, original: &str, misspelt: &str) {
    let (fs, broken) = edited(file, original, misspelt);
    let mut edits: Vec<TextEdit> = broken
        .diagnostics
        .iter()
        .filter_map(|d| fixes(&broken, d).into_iter().next())
        .flat_map(|f| f.edits)
        .collect();
    edits.dedup();
    assert_eq!(edits.len(), 1, "{:?}", broken.diagnostics);
    let target = broken.bundle.file(edits[0].file).unwrap();
    let original_text =
        String::from_utf8(support_desk().read(&broken.bundle.dir.join(file)).unwrap()).unwrap();
    assert_eq!(apply(&target.text, &edits), original_text);
    let fixed = applied(
        fs,
        &broken,
        &FileFix {
            title: String::new(),
            applicability: Applicability::Safe,
            edits,
        },
    );
    let clean = analyze_bundle(&support_desk(), Path::new("/w/SupportDesk"));
    assert_eq!(fixed.diagnostics, clean.diagnostics);
}

#[test]
fn fixes_restore_misspelt_names_keys_and_values() {
    fix_restores(
        "transition_graph.yaml",
        "target_agent: ClassifierAgent",
        "target_agent: ClasifierAgent",
    );
    fix_restores(
        "transition_graph.yaml",
        "condition_type: context_equals",
        "condition_type: context_equal",
    );
    fix_restores(
        "transition_graph.yaml",
        "    condition_key: ticket_captured",
        "    conditon_key: ticket_captured",
    );
    fix_restores(
        "transition_graph.yaml",
        "${research_status} in",
        "${research_stats} in",
    );
    fix_restores(
        "transition_graph.yaml",
        "condition_key: ticket_captured",
        "condition_key: ticket_capture",
    );
}

#[test]
fn no_fix_is_offered_without_a_close_candidate() {
    let (_, broken) = edited(
        "transition_graph.yaml",
        "target_agent: ClassifierAgent",
        "target_agent: Zebra",
    );
    let unknown: Vec<_> = broken
        .diagnostics
        .iter()
        .filter(|d| d.rule == crate::rules::Rule::UnknownAgent)
        .collect();
    assert_eq!(unknown.len(), 1);
    assert!(fixes(&broken, unknown[0]).is_empty());
}

#[test]
fn an_unknown_key_without_a_close_name_is_removed_with_its_lines() {
    let original = "    condition_value: true\n    transition_target: AgentTarget\n";
    let (fs, broken) = edited(
        "transition_graph.yaml",
        original,
        "    condition_value: true\n    priority_hint: # unsure\n      - 1\n      - 2\n    transition_target: AgentTarget\n",
    );
    let fix = only_fix(
        &broken,
        crate::rules::Rule::UnknownKey,
        "Remove the key `priority_hint`",
    );
    assert_eq!(fix.applicability, Applicability::Unsafe);
    let fixed = applied(fs, &broken, &fix);
    let clean = analyze_bundle(&support_desk(), Path::new("/w/SupportDesk"));
    assert_eq!(texts(&fixed), texts(&clean));
}

#[test]
fn an_undeclared_routing_variable_is_declared_with_the_compared_type() {
    let (fs, broken) = edited(
        "transition_graph.yaml",
        "condition_key: ticket_captured",
        "condition_key: escalation_flagged",
    );
    let fix = only_fix(
        &broken,
        crate::rules::Rule::UndeclaredVariable,
        "Declare `escalation_flagged` (type boolean)",
    );
    assert_eq!(fix.applicability, Applicability::Safe);
    let fixed = applied(fs, &broken, &fix);
    let declared = fixed
        .bundle
        .file_of_kind(crate::base::FileKind::ContextVariables)
        .unwrap();
    assert!(
        declared.text.contains(
            "\n  escalation_flagged:\n    type: boolean\n    description: \"Stub declared by mzk: rule `IntakeAgent -> ClassifierAgent` reads it; say what it holds.\"\n    source: {type: state, default: false}\n"
        ),
        "{}",
        declared.text
    );
    assert!(fixed
        .diagnostics
        .iter()
        .all(|d| d.rule != crate::rules::Rule::UndeclaredVariable));
    assert!(fixed
        .diagnostics
        .iter()
        .all(|d| d.rule != crate::rules::Rule::YamlSyntax));
}

#[test]
fn an_uncovered_outcome_gets_an_after_turn_fallback_in_the_file_layout() {
    let fallback = "  - source_agent: IntakeAgent\n    target_agent: user\n    transition_type: after_turn\n    transition_target: RevertToUserTarget\n";
    let (fs, broken) = edited("transition_graph.yaml", fallback, "");
    let fix = only_fix(
        &broken,
        crate::rules::Rule::NoTransitionMatched,
        "after_turn fallback from `IntakeAgent`",
    );
    assert_eq!(fix.applicability, Applicability::Unsafe);
    let fixed = applied(fs, &broken, &fix);
    let clean = analyze_bundle(&support_desk(), Path::new("/w/SupportDesk"));
    // The rule comes back exactly where it was: after IntakeAgent's last rule.
    assert_eq!(texts(&fixed), texts(&clean));
    assert_eq!(fixed.diagnostics, clean.diagnostics);
}

#[test]
fn lenses_on_the_orchestrator_and_on_each_agent() {
    let fs = support_desk();
    let analysis = analyze_bundle(&fs, Path::new("/w/SupportDesk"));
    let file = |name: &str| analysis.bundle.file_at(name).unwrap();
    let actions = |name: &str| -> Vec<LensAction> {
        code_lenses(&analysis, file(name).id)
            .into_iter()
            .map(|l| l.action)
            .collect()
    };
    assert_eq!(
        actions("orchestrator.yaml"),
        [LensAction::RunWorkflow, LensAction::ShowGraph]
    );
    let agents = file("agents.yaml");
    let lenses = code_lenses(&analysis, agents.id);
    let names: Vec<&str> = agents
        .text
        .lines()
        .filter_map(|l| l.trim().strip_prefix("- name: "))
        .collect();
    // Two lenses per agent: run from it, and the size of its prompt.
    assert_eq!(lenses.len(), 2 * names.len());
    let prompts = crate::prompt::compose(&analysis.bundle);
    for (pair, name) in lenses.chunks(2).zip(names) {
        assert_eq!(pair[0].action, LensAction::RunFromAgent(name.to_string()));
        let prompt = prompts.iter().find(|p| p.agent == name).unwrap();
        assert_eq!(
            pair[1].action,
            LensAction::PromptSize {
                agent: name.to_string(),
                tokens: crate::tokens::count(&prompt.text),
                chars: prompt.text.chars().count(),
            }
        );
        for lens in pair {
            assert_eq!(
                &agents.text[lens.range.start as usize..lens.range.end as usize],
                name
            );
        }
    }
    assert!(actions("transition_graph.yaml").is_empty());
}

/// A two-agent bundle around a transition graph: `graph` is the body of
/// transition_graph.yaml, `$0` somewhere in one of the files.
fn two_agents(graph: &str) -> Fixture {
    fixture(&format!(
        "
        //- /orchestrator.yaml
        workflow_name: Fixture
        initial_agent: IntakeAgent
        //- /agents.yaml
        agents:
          - name: IntakeAgent
            system_message: Ask what the user needs.
          - name: ReplyAgent
            system_message: Answer the user.
        //- /transition_graph.yaml
        {graph}"
    ))
}

#[test]
fn hover_on_a_key_shows_its_schema_documentation() {
    let f = fixture(
        "
        //- /transition_graph.yaml
        transition_rules:
          - source_agent: user
            target_agent: terminate
            transition_type: condition
            con$0dition_type: context_equals
        ",
    );
    let (range, text) = hover(&f.analysis, f.file, f.offset).unwrap();
    let graph = f.text("transition_graph.yaml");
    assert_eq!(
        &graph[range.start as usize..range.end as usize],
        "condition_type"
    );
    assert!(
        text.starts_with("**`condition_type`** in transition rule"),
        "{text}"
    );
    // A list item's first key.
    let at = f.find("transition_graph.yaml", "- source_agent") + 4;
    let (_, text) = hover(&f.analysis, f.file, at).unwrap();
    assert!(text.contains("**`source_agent`**"), "{text}");
    // On the value side there is no key documentation.
    let at = f.find("transition_graph.yaml", "transition_type: condition") + 19;
    assert!(hover::key_hover(&f.analysis, f.file, at).is_none());
}

#[test]
fn definition_of_an_agent_name_in_a_rule_is_its_declaration() {
    let f = two_agents(
        "
        transition_rules:
          - source_agent: IntakeAgent
            target_agent: Reply$0Agent
            transition_type: after_turn
        ",
    );
    let target = definition(&f.analysis, f.file, f.offset).unwrap();
    let agents = f.analysis.bundle.file_at("agents.yaml").unwrap();
    assert_eq!(target.file, agents.id);
    assert_eq!(
        &agents.text[target.range.start as usize..target.range.end as usize],
        "ReplyAgent"
    );
    // From the declaration, every use: the rule's target.
    let uses = references(&f.analysis, agents.id, target.range.start, false);
    assert!(
        uses.iter().any(|r| r.file == f.file),
        "no use in transition_graph.yaml: {uses:?}"
    );
}

#[test]
fn rename_refuses_reserved_duplicate_and_invalid_names() {
    let f = two_agents(
        "
        transition_rules:
          - source_agent: IntakeAgent
            target_agent: Reply$0Agent
            transition_type: after_turn
        ",
    );
    assert!(rename(&f.analysis, f.file, f.offset, "user").is_err());
    assert!(rename(&f.analysis, f.file, f.offset, "IntakeAgent").is_err());
    assert!(rename(&f.analysis, f.file, f.offset, "two words").is_err());
    // A valid name renames the declaration and the use.
    let edits = rename(&f.analysis, f.file, f.offset, "AnswerAgent").unwrap();
    let files: std::collections::BTreeSet<_> = edits.iter().map(|e| e.file).collect();
    assert_eq!(files.len(), 2, "{edits:?}");
    assert!(edits.iter().all(|e| e.new_text == "AnswerAgent"));
    // The renamed bundle reads exactly as before.
    let mut fs = f.fs;
    for file in &f.analysis.bundle.files {
        let mine: Vec<TextEdit> = edits
            .iter()
            .filter(|e| e.file == file.id)
            .cloned()
            .collect();
        fs.insert(f.analysis.bundle.path_of(file), apply(&file.text, &mine));
    }
    let after = analyze_bundle(&fs, &f.analysis.bundle.dir);
    let codes = |a: &Analysis| a.diagnostics.iter().map(|d| d.rule).collect::<Vec<_>>();
    assert_eq!(codes(&after), codes(&f.analysis));
    assert!(after.bundle.agent("AnswerAgent").is_some());
    assert!(after.bundle.agent("ReplyAgent").is_none());
}

/// Every key of every rule has its documentation, whether the list is
/// indented under `transition_rules:` or written in the same column (as
/// ThemeCapture and AppReview do), and in flow style.
#[test]
fn hover_on_keys_in_every_list_layout() {
    let indented = "transition_rules:\n  - source_agent: user\n    target_agent: IntakeAgent\n    transition_type: after_turn\n  - source_agent: IntakeAgent\n    target_agent: terminate\n    transition_type: after_turn\n    termination_reason: workflow_complete\n";
    let same_column = "# rules\ntransition_rules:\n- source_agent: user\n  target_agent: IntakeAgent\n  transition_type: after_turn\n\n- source_agent: IntakeAgent\n  target_agent: terminate\n  transition_type: after_turn\n  termination_reason: workflow_complete\n";
    let flow = "transition_rules:\n  - {source_agent: user, target_agent: IntakeAgent, transition_type: after_turn}\n";
    for (layout, text) in [
        ("indented", indented),
        ("same column", same_column),
        ("flow", flow),
    ] {
        let mut fs = support_desk();
        fs.insert("/w/SupportDesk/transition_graph.yaml", text);
        let analysis = analyze_bundle(&fs, Path::new("/w/SupportDesk"));
        let graph = analysis.bundle.file_at("transition_graph.yaml").unwrap();
        let mut hovered = 0;
        for key in [
            "source_agent",
            "target_agent",
            "transition_type",
            "termination_reason",
        ] {
            for (at, _) in text.match_indices(&format!("{key}:")) {
                let (range, doc) = hover::key_hover(&analysis, graph.id, at as u32 + 2)
                    .unwrap_or_else(|| panic!("{layout}: no hover on `{key}` at {at}"));
                assert_eq!(&text[range.start as usize..range.end as usize], key);
                assert!(
                    doc.starts_with(&format!("**`{key}`** in transition rule")),
                    "{layout}: {doc}"
                );
                hovered += 1;
            }
        }
        assert!(hovered >= 3, "{layout}");
    }
}

#[test]
fn rename_agents_variables_models_and_tools_across_files() {
    rename_keeps_the_bundle_clean("agents.yaml", "name: ClassifierAgent", "TriageAgent", 8);
    rename_keeps_the_bundle_clean(
        "context_variables.yaml",
        "  triage_outcome",
        "triage_result",
        5,
    );
    rename_keeps_the_bundle_clean("structured_outputs.yaml", "  Evidence", "Proof", 2);
    rename_keeps_the_bundle_clean("tools.yaml", "function: lookup_plan", "find_plan", 2);
}

#[test]
fn rename_refuses_derived_names() {
    let fs = support_desk();
    let analysis = analyze_bundle(&fs, Path::new("/w/SupportDesk"));
    let agents = analysis.bundle.file_at("agents.yaml").unwrap();
    let cv = analysis.bundle.file_at("context_variables.yaml").unwrap();
    let derived = cv.text.find("  research_status").unwrap() as u32 + 4;
    assert!(prepare_rename(&analysis, cv.id, derived)
        .unwrap_err()
        .contains("conveyor"));
    assert!(prepare_rename(&analysis, cv.id, 0).is_err());
    let outline = document_symbols(&analysis, agents.id);
    assert_eq!(outline.len(), 6);
    assert_eq!(outline[0].name, "IntakeAgent");
}

#[test]
fn hover_lists_a_variables_readers_and_a_tools_docstring() {
    let fs = support_desk();
    let analysis = analyze_bundle(&fs, Path::new("/w/SupportDesk"));
    let hover_at = |file: &str, needle: &str| {
        let f = analysis.bundle.file_at(file).unwrap();
        // Inside the needle's last word.
        let at = (f.text.find(needle).unwrap() + needle.trim_end_matches(':').len() - 1) as u32;
        hover(&analysis, f.id, at).unwrap().1
    };
    let variable = hover_at("context_variables.yaml", "triage_outcome:");
    assert!(
        variable.contains("Writers: deterministic_tool"),
        "{variable}"
    );
    assert!(
        variable
            .contains("- rule `ClassifierAgent -> ResearchPlannerAgent` (transition_graph.yaml:"),
        "{variable}"
    );
    let tool = hover_at("tools.yaml", "function: lookup_plan");
    assert!(
        tool.contains("async def lookup_plan(email, context_variables=…)"),
        "{tool}"
    );
    assert!(
        tool.contains("LLM-called: `email` comes from the model, `context_variables` is injected."),
        "{tool}"
    );
}

#[test]
fn hover_on_an_agent_breaks_its_prompt_down_by_part() {
    let fs = support_desk();
    let analysis = analyze_bundle(&fs, Path::new("/w/SupportDesk"));
    let agents = analysis.bundle.file_at("agents.yaml").unwrap();
    let at = agents.text.find("name: ClassifierAgent").unwrap() as u32 + 8;
    let (_, text) = hover(&analysis, agents.id, at).unwrap();
    let agent = analysis.bundle.agent("ClassifierAgent").unwrap();
    let prompt = crate::prompt::compose_one(&analysis.bundle, agent);
    let tokens = crate::tokens::count(&prompt.text);
    assert!(
        text.contains(&format!(
            "Static prompt: **{tokens} tokens** (o200k_base), {} chars",
            prompt.text.chars().count()
        )),
        "{text}"
    );
    // One line per part, each with its own count.
    assert!(!prompt.parts.is_empty());
    for part in &prompt.parts {
        let line = format!(
            "- {}: {} tokens, {} chars",
            part.label,
            crate::tokens::count(&part.text),
            part.text.chars().count()
        );
        assert!(text.contains(&line), "{line} in {text}");
    }
}

#[test]
fn offsets_inside_a_character_or_past_the_end_do_not_panic() {
    let mut fs = support_desk();
    let path = Path::new("/w/SupportDesk/agents.yaml");
    let text = String::from_utf8(fs.read(path).unwrap()).unwrap();
    fs.insert(path, text.replacen("Collects", "Collécts", 1));
    let analysis = analyze_bundle(&fs, Path::new("/w/SupportDesk"));
    let agents = analysis.bundle.file_at("agents.yaml").unwrap();
    let inside = agents.text.find('é').unwrap() as u32 + 1;
    for offset in [inside, agents.text.len() as u32 + 10] {
        let _ = hover(&analysis, agents.id, offset);
        let _ = definition(&analysis, agents.id, offset);
    }
    // Offsets at characters still answer: inside the agent's name.
    let name = agents.text.find("IntakeAgent").unwrap();
    let (range, _) = hover(&analysis, agents.id, name as u32 + 3).unwrap();
    assert_eq!(
        &agents.text[range.start as usize..range.end as usize],
        "IntakeAgent"
    );
}
