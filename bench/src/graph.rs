//! Routing analysis on synthetic bundles of 50, 500 and 5,000 agents with
//! about ten rules each (condition rules on a boolean and on a string
//! variable, an expression, a fallback), analysed from memory.
//!
//! Prints, per size, the whole analysis and the graph checks alone (median of
//! --iterations runs), and the growth between sizes next to n log n.
//! `--write DIR AGENTS` writes a bundle as files instead.

use std::fmt::Write as _;
use std::path::Path;
use std::time::Instant;

use mzk_analyzer::{analyze_bundle, MemoryFs};

/// A deterministic pseudo-random sequence (xorshift), so every run builds the same bundles.
struct Rng(u64);

impl Rng {
    fn next(&mut self, bound: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % bound as u64) as usize
    }
}

/// The files of the synthetic bundle of `agents` agents, by name.
fn bundle_files(agents: usize) -> Vec<(&'static str, String)> {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ agents as u64);
    let name = |i: usize| format!("Agent{i:05}");
    let mut files = vec![(
        "orchestrator.yaml",
        format!(
            "schema_version: mozaiks.orchestrator.v1\nworkflow_name: Synthetic\nworkflow_startup_mode: AgentDriven\nmax_turns: 500\ninitial_agent: {}\n",
            name(0)
        ),
    )];
    let mut agents_yaml = String::from("agents:\n");
    let mut rules = String::from("transition_rules:\n");
    let mut variables = String::from("definitions:\n");
    let variable_count = agents / 10 + 1;
    for v in 0..variable_count {
        let _ = writeln!(
            variables,
            "  flag_{v}: {{type: boolean, authority_class: closed_writer_routing_state, writer_ids: [deterministic_tool], source: {{type: state, default: false}}}}\n  stage_{v}: {{type: string, authority_class: closed_writer_routing_state, writer_ids: [deterministic_tool], source: {{type: state, default: draft}}}}"
        );
    }
    for i in 0..agents {
        let _ = writeln!(agents_yaml, "  - {{name: {}, system_message: Work on step {i}., structured_outputs_required: false}}", name(i));
        // The next agent keeps everything reachable; the last one can finish.
        let next = if i + 1 < agents {
            name(i + 1)
        } else {
            "terminate".to_string()
        };
        let v = i % variable_count;
        let _ = writeln!(rules, "  - {{source_agent: {}, target_agent: {next}, transition_type: condition, condition_type: context_equals, condition_key: flag_{v}, condition_value: true}}", name(i));
        for k in 0..7 {
            let target = name(rng.next(agents));
            let _ = writeln!(rules, "  - {{source_agent: {}, target_agent: {target}, transition_type: condition, condition_type: context_equals, condition_key: stage_{v}, condition_value: s{k}}}", name(i));
        }
        let target = name(rng.next(agents));
        let _ = writeln!(rules, "  - {{source_agent: {}, target_agent: {target}, transition_type: condition, condition_type: context_expression, context_expression: \"${{flag_{v}}} and ${{stage_{v}}} in ['a', 'b']\"}}", name(i));
        let _ = writeln!(rules, "  - {{source_agent: {}, target_agent: terminate, transition_type: after_turn, termination_reason: workflow_complete}}", name(i));
    }
    files.push(("agents.yaml", agents_yaml));
    files.push(("transition_graph.yaml", rules));
    files.push(("context_variables.yaml", variables));
    files
}

fn bundle(agents: usize) -> MemoryFs {
    let mut fs = MemoryFs::new();
    for (name, text) in bundle_files(agents) {
        fs.insert(format!("/w/Synthetic/{name}"), text);
    }
    fs
}

/// `--write DIR AGENTS`: the bundle as files in DIR/Synthetic, for timing a
/// whole `mzk check` on it (`bench/synthetic.py`).
fn write(dir: &Path, agents: usize) -> std::io::Result<()> {
    let folder = dir.join("Synthetic");
    std::fs::create_dir_all(&folder)?;
    for (name, text) in bundle_files(agents) {
        std::fs::write(folder.join(name), text)?;
    }
    Ok(())
}

fn median(mut times: Vec<f64>) -> f64 {
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

fn main() {
    // SAFETY: the first statement of main; no other thread exists yet.
    unsafe { mzk_allocator::configure() };
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("--write") {
        let (Some(dir), Some(agents)) = (args.get(2), args.get(3).and_then(|n| n.parse().ok()))
        else {
            eprintln!("usage: mzk-graph-bench --write DIR AGENTS");
            std::process::exit(2);
        };
        if let Err(e) = write(Path::new(dir), agents) {
            eprintln!("cannot write the bundle into {dir}: {e}");
            std::process::exit(1);
        }
        return;
    }
    let iterations: usize = std::env::args()
        .nth(2)
        .and_then(|n| n.parse().ok())
        .unwrap_or(5);
    let mut rows: Vec<(usize, f64, f64)> = Vec::new();
    for agents in [50usize, 500, 5_000] {
        let fs = bundle(agents);
        let dir = Path::new("/w/Synthetic");
        let first = analyze_bundle(&fs, dir);
        assert_eq!(first.bundle.agents.len(), agents);
        assert!(
            first
                .diagnostics
                .iter()
                .all(|d| d.severity != mzk_analyzer::base::Severity::Error),
            "{:?}",
            first.diagnostics.first()
        );
        let whole = median(
            (0..iterations)
                .map(|_| {
                    let start = Instant::now();
                    let a = analyze_bundle(&fs, dir);
                    let ms = start.elapsed().as_secs_f64() * 1000.0;
                    assert_eq!(a.bundle.rules.len(), first.bundle.rules.len());
                    ms
                })
                .collect(),
        );
        let graph = median(
            (0..iterations)
                .map(|_| {
                    let start = Instant::now();
                    let findings = mzk_analyzer::checks::graph_findings(&first.bundle);
                    let ms = start.elapsed().as_secs_f64() * 1000.0;
                    std::hint::black_box(findings);
                    ms
                })
                .collect(),
        );
        println!(
            "{agents:>5} agents, {:>6} rules: whole analysis {whole:>8.2} ms, graph checks {graph:>7.2} ms",
            first.bundle.rules.len()
        );
        rows.push((agents, whole, graph));
    }
    for pair in rows.windows(2) {
        let (n0, w0, g0) = pair[0];
        let (n1, w1, g1) = pair[1];
        let nlogn = (n1 as f64 * (n1 as f64).ln()) / (n0 as f64 * (n0 as f64).ln());
        println!(
            "{n0} -> {n1} agents: whole analysis x{:.1}, graph checks x{:.1} (n log n predicts x{nlogn:.1})",
            w1 / w0,
            g1 / g0
        );
    }
}
