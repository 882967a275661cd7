//! Folding, selection ranges and document links on every list layout (a list
//! indented under its key, a list at its key's column, flow style) and on
//! the SupportDesk example.

use std::path::Path;

use super::tests::support_desk_fs;
use super::*;
use crate::{analyze_bundle, Analysis, MemoryFs};

const INDENTED: &str = "transition_rules:\n  - source_agent: user\n    target_agent: IntakeAgent\n    transition_type: after_turn\n  - source_agent: IntakeAgent\n    target_agent: terminate\n    transition_type: after_turn\n    termination_reason: workflow_complete\n";
const SAME_COLUMN: &str = "# rules\ntransition_rules:\n- source_agent: user\n  target_agent: IntakeAgent\n  transition_type: after_turn\n\n- source_agent: IntakeAgent\n  target_agent: terminate\n  transition_type: after_turn\n  termination_reason: workflow_complete\n";
const FLOW: &str = "transition_rules:\n  - {source_agent: user, target_agent: IntakeAgent,\n     transition_type: after_turn}\n  - {source_agent: IntakeAgent, target_agent: terminate,\n     transition_type: after_turn, termination_reason: workflow_complete}\n";

/// Each layout with its name, for the messages.
const LAYOUTS: [(&str, &str); 3] = [
    ("indented", INDENTED),
    ("same column", SAME_COLUMN),
    ("flow", FLOW),
];

fn with_graph(text: &str) -> Analysis {
    let mut fs: MemoryFs = support_desk_fs();
    fs.insert("/w/SupportDesk/transition_graph.yaml", text);
    analyze_bundle(&fs, Path::new("/w/SupportDesk"))
}

fn line_of(text: &str, needle: &str, nth: usize) -> u32 {
    let at = text.match_indices(needle).nth(nth).unwrap().0;
    text[..at].matches('\n').count() as u32
}

#[test]
fn rules_and_the_list_fold_in_every_layout() {
    for (layout, text) in LAYOUTS {
        let analysis = with_graph(text);
        let graph = analysis.bundle.file_at("transition_graph.yaml").unwrap();
        let folds = folding_ranges(&analysis, graph.id);
        let list = Fold {
            start_line: line_of(text, "transition_rules", 0),
            end_line: line_of(text, "workflow_complete", 0),
        };
        let first = Fold {
            start_line: line_of(text, "source_agent: user", 0),
            end_line: line_of(text, "after_turn", 0),
        };
        let second = Fold {
            start_line: line_of(text, "source_agent: IntakeAgent", 0),
            end_line: line_of(text, "workflow_complete", 0),
        };
        assert_eq!(folds, [list, first, second], "{layout}");
    }
}

#[test]
fn agents_sections_and_block_scalars_fold_on_the_example() {
    let analysis = analyze_bundle(&support_desk_fs(), Path::new("/w/SupportDesk"));
    let agents = analysis.bundle.file_at("agents.yaml").unwrap();
    let text = &agents.text;
    let folds = folding_ranges(&analysis, agents.id);
    let lines: Vec<&str> = text.lines().collect();
    // Every agent folds from its `- name:` line.
    for (i, line) in lines.iter().enumerate() {
        if line.trim_start().starts_with("- name:") && line.starts_with("  - ") {
            assert!(
                folds
                    .iter()
                    .any(|f| f.start_line == i as u32 && f.end_line > i as u32),
                "agent at line {i} does not fold: {folds:?}"
            );
        }
    }
    // A block scalar (`>-` here) folds from its key to its last line of text.
    let block = lines
        .iter()
        .position(|l| l.trim_end().ends_with(": >-"))
        .expect("a block scalar");
    let fold = folds
        .iter()
        .find(|f| f.start_line == block as u32)
        .expect("the block folds");
    let last = &lines[fold.end_line as usize];
    assert!(!last.trim().is_empty(), "{fold:?} ends on a blank line");
    assert!(!last.contains(':'), "{fold:?} ends past the text: {last}");
    // A section of the prompt folds too (`- id: role` to its content's end).
    let section = lines.iter().position(|l| l.contains("- id: role")).unwrap() as u32;
    assert!(
        folds
            .iter()
            .any(|f| f.start_line == section && f.end_line == section + 6),
        "{folds:?}"
    );
    assert!(folds.windows(2).all(|w| w[0] < w[1]), "sorted, each once");
}

#[test]
fn selection_grows_from_key_to_entry_to_list_to_file() {
    for (layout, text) in LAYOUTS {
        let analysis = with_graph(text);
        let graph = analysis.bundle.file_at("transition_graph.yaml").unwrap();
        let at = text.find("target_agent: terminate").unwrap() as u32 + 2;
        let ranges = selection_ranges(&analysis, graph.id, at);
        let shown: Vec<&str> = ranges
            .iter()
            .map(|r| &text[r.start as usize..r.end as usize])
            .collect();
        assert_eq!(shown[0], "target_agent", "{layout}: {shown:?}");
        assert_eq!(shown[1], "target_agent: terminate", "{layout}: {shown:?}");
        // The rule (the list item), then the list, then its entry.
        assert!(
            shown[2].starts_with("source_agent: IntakeAgent")
                || shown[2].starts_with("{source_agent: IntakeAgent"),
            "{layout}: {shown:?}"
        );
        assert!(
            shown[2].contains("workflow_complete"),
            "{layout}: {shown:?}"
        );
        assert!(
            shown[3].contains("source_agent: user") && shown[3].contains("workflow_complete"),
            "{layout}: {shown:?}"
        );
        assert!(
            shown.iter().any(|s| s.starts_with("transition_rules:")),
            "{layout}: {shown:?}"
        );
        assert_eq!(
            *ranges.last().unwrap(),
            crate::base::TextRange::new(0, text.len() as u32),
            "{layout}"
        );
        assert!(
            ranges
                .windows(2)
                .all(|w| w[1].start <= w[0].start && w[0].end <= w[1].end && w[0] != w[1]),
            "{layout}: each range holds the one before: {ranges:?}"
        );
    }
}

#[test]
fn selection_on_a_value_starts_at_the_value() {
    let analysis = with_graph(INDENTED);
    let graph = analysis.bundle.file_at("transition_graph.yaml").unwrap();
    let at = INDENTED.find("IntakeAgent").unwrap() as u32 + 3;
    let ranges = selection_ranges(&analysis, graph.id, at);
    let first = ranges[0];
    assert_eq!(
        &INDENTED[first.start as usize..first.end as usize],
        "IntakeAgent"
    );
    // Past the text's end: the whole file, nothing else to grow from.
    let past = selection_ranges(&analysis, graph.id, 10_000);
    assert_eq!(
        past.last(),
        Some(&crate::base::TextRange::new(0, INDENTED.len() as u32))
    );
}

#[test]
fn tool_lifecycle_and_middleware_files_link_to_their_python() {
    let mut fs = support_desk_fs();
    // A tool whose file lives in the workflows root's _shared folder.
    fs.insert(
        "/w/_shared/common.py",
        "def lookup_plan(email):\n    return {}\n",
    );
    let tools_path = "/w/SupportDesk/tools.yaml";
    let tools =
        String::from_utf8(crate::FileSystem::read(&fs, Path::new(tools_path)).unwrap()).unwrap();
    fs.insert(
        tools_path,
        tools.replacen("file: lookup_plan.py", "file: ../_shared/common.py", 1),
    );
    let analysis = analyze_bundle(&fs, Path::new("/w/SupportDesk"));
    let relative = |id| analysis.bundle.file(id).unwrap().relative.clone();
    let tools = analysis.bundle.file_at("tools.yaml").unwrap();
    let links: Vec<(String, String)> = document_links(&analysis, tools.id)
        .into_iter()
        .map(|l| {
            (
                tools.text[l.range.start as usize..l.range.end as usize].to_string(),
                relative(l.target),
            )
        })
        .collect();
    assert!(
        links.contains(&("capture_ticket.py".into(), "tools/capture_ticket.py".into())),
        "{links:?}"
    );
    assert!(
        links.contains(&("../_shared/common.py".into(), "../_shared/common.py".into())),
        "{links:?}"
    );
    assert!(
        links.contains(&("lifecycle.py".into(), "tools/lifecycle.py".into())),
        "{links:?}"
    );
    let middleware = analysis.bundle.file_at("middleware.yaml").unwrap();
    let links = document_links(&analysis, middleware.id);
    assert_eq!(links.len(), 1, "{links:?}");
    assert!(relative(links[0].target).ends_with("reply_context.py"));
}

#[test]
fn semantic_tokens_name_agents_reserved_words_and_variables() {
    let with_expression = "transition_rules:\n- source_agent: user\n  target_agent: IntakeAgent\n  transition_type: after_turn\n- source_agent: IntakeAgent\n  target_agent: terminate\n  transition_type: condition\n  condition_type: context_expression\n  context_expression: ${ticket_captured} == True\n  termination_reason: workflow_complete\n";
    for (layout, text) in LAYOUTS.into_iter().chain([("expression", with_expression)]) {
        let analysis = with_graph(text);
        let graph = analysis.bundle.file_at("transition_graph.yaml").unwrap();
        let tokens = semantic_tokens(&analysis, graph.id);
        let named: Vec<(&str, TokenKind)> = tokens
            .iter()
            .map(|t| (&text[t.range.start as usize..t.range.end as usize], t.kind))
            .collect();
        assert!(
            named.contains(&("user", TokenKind::Reserved)),
            "{layout}: {named:?}"
        );
        assert!(
            named.contains(&("terminate", TokenKind::Reserved)),
            "{layout}: {named:?}"
        );
        assert_eq!(
            named
                .iter()
                .filter(|n| **n == ("IntakeAgent", TokenKind::Agent))
                .count(),
            2,
            "{layout}: {named:?}"
        );
        if layout == "expression" {
            assert!(
                named.contains(&("ticket_captured", TokenKind::Variable)),
                "{named:?}"
            );
        }
        assert!(
            tokens
                .windows(2)
                .all(|w| w[0].range.end <= w[1].range.start),
            "{layout}: sorted, no overlap"
        );
    }
    // Declarations carry the modifier.
    let analysis = analyze_bundle(&support_desk_fs(), Path::new("/w/SupportDesk"));
    let agents = analysis.bundle.file_at("agents.yaml").unwrap();
    let intake = agents.text.find("IntakeAgent").unwrap() as u32;
    let tokens = semantic_tokens(&analysis, agents.id);
    let declared = tokens.iter().find(|t| t.range.start == intake).unwrap();
    assert_eq!(
        (declared.kind, declared.declaration),
        (TokenKind::Agent, true)
    );
}

#[test]
fn call_hierarchy_follows_the_rules_in_every_layout() {
    for (layout, text) in LAYOUTS {
        let analysis = with_graph(text);
        let graph = analysis.bundle.file_at("transition_graph.yaml").unwrap();
        let agents = analysis.bundle.file_at("agents.yaml").unwrap();
        let target_of = |nth: usize| {
            let needle = "target_agent: ";
            let at = text.match_indices(needle).nth(nth).unwrap().0 + needle.len();
            at as u32
        };
        // On a rule's target: the agent, at the first rule that names it
        // (calls' ranges are read in their item's file).
        let item = prepare_call_hierarchy(&analysis, graph.id, target_of(0) + 2).unwrap();
        assert_eq!(
            item.node,
            crate::graph::Node::Agent("IntakeAgent".into()),
            "{layout}"
        );
        assert_eq!(item.name.file, graph.id, "{layout}");
        assert_eq!(item.name.range.start, target_of(0), "{layout}");
        // From its definition in agents.yaml: the same item.
        let definition = agents.text.find("IntakeAgent").unwrap() as u32;
        assert_eq!(
            prepare_call_hierarchy(&analysis, agents.id, definition).as_ref(),
            Some(&item),
            "{layout}"
        );

        // Incoming: the one rule from `user`, its target_agent value the range.
        let incoming = incoming_calls(&analysis, &item.node);
        assert_eq!(incoming.len(), 1, "{layout}: {incoming:?}");
        assert_eq!(incoming[0].item.node, crate::graph::Node::User, "{layout}");
        assert_eq!(incoming[0].item.name.file, graph.id, "{layout}");
        let start = target_of(0);
        assert_eq!(
            incoming[0].ranges,
            [FileRange {
                file: graph.id,
                range: TextRange::new(start, start + "IntakeAgent".len() as u32),
            }],
            "{layout}"
        );

        // Outgoing: `terminate`, located at the rule that ends the run.
        let outgoing = outgoing_calls(&analysis, &item.node);
        assert_eq!(outgoing.len(), 1, "{layout}: {outgoing:?}");
        assert_eq!(outgoing[0].item.node, crate::graph::Node::Terminate);
        let start = target_of(1);
        let terminate = TextRange::new(start, start + "terminate".len() as u32);
        assert_eq!(outgoing[0].item.name.range, terminate, "{layout}");
        assert_eq!(outgoing[0].ranges[0].range, terminate, "{layout}");

        // On `terminate` itself: its callers.
        let item = prepare_call_hierarchy(&analysis, graph.id, start).unwrap();
        assert_eq!(item.node, crate::graph::Node::Terminate, "{layout}");
        let callers = incoming_calls(&analysis, &item.node);
        assert_eq!(callers.len(), 1, "{layout}");
        assert_eq!(
            callers[0].item.node,
            crate::graph::Node::Agent("IntakeAgent".into())
        );
        assert!(outgoing_calls(&analysis, &item.node).is_empty(), "{layout}");
    }
}

#[test]
fn call_hierarchy_from_agents_yaml_and_nowhere_else() {
    let analysis = analyze_bundle(&support_desk_fs(), Path::new("/w/SupportDesk"));
    let agents = analysis.bundle.file_at("agents.yaml").unwrap();
    let at = agents.text.find("IntakeAgent").unwrap() as u32;
    let item = prepare_call_hierarchy(&analysis, agents.id, at).unwrap();
    assert_eq!(item.node, crate::graph::Node::Agent("IntakeAgent".into()));
    assert!(item.range.range.start <= item.name.range.start);
    assert!(item.range.range.end > item.name.range.end);
    // A key is no node; an offset past the file's end is no panic.
    assert_eq!(prepare_call_hierarchy(&analysis, agents.id, 0), None);
    assert_eq!(prepare_call_hierarchy(&analysis, agents.id, u32::MAX), None);
}
