//! `mzk test`: runs every scenario under each bundle's `scenarios/` folder
//! that states an expected outcome, reports pass/fail with the first
//! divergence, and measures transition coverage: which rules of
//! transition_graph.yaml fired in at least one scenario.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use mzk_analyzer::model::Bundle;
use mzk_analyzer::{discover_bundles, RealFs};
use mzk_runtime::choice::EngineKind;
use mzk_runtime::compare::{differences, Difference};
use mzk_runtime::mozaiks::ENGINE_UNAVAILABLE;
use mzk_runtime::python::Worker;
use mzk_runtime::suite::{run_file, scenario_files, Coverage, ScenarioRun};
use mzk_runtime::RunOptions;
use serde_json::{json, Value};

use crate::cli::out::{out, outln};
use crate::cli::paint::Paint;

#[derive(clap::Args, Debug)]
pub struct TestArgs {
    /// Bundle folders, or folders searched for bundles.
    #[arg(default_value = ".")]
    paths: Vec<PathBuf>,
    /// How to print coverage: `text` (with the report), `json` or `lcov`
    /// (to stdout; the report then goes to stderr).
    #[arg(long, value_enum, default_value = "text")]
    coverage_format: CoverageFormat,
    /// Fail (exit 1) when a bundle's transition coverage is below this percentage.
    #[arg(long, value_name = "PERCENT")]
    min_coverage: Option<f64>,
    /// The Python interpreter for tools (default: MZK_PYTHON, the bundle's venv, else python3).
    #[arg(long)]
    python: Option<PathBuf>,
    /// The runtime: `mzk` (its own engine), `mozaiks` (the real mozaiks
    /// 0.2.0 in --python's environment) or `both`: every scenario on each,
    /// and where their runs differ.
    #[arg(long, value_enum, default_value = "mzk")]
    engine: TestEngine,
    /// With `--engine both`: write each scenario's two traces and their
    /// differences to this JSON file.
    #[arg(long, value_name = "FILE.json")]
    diff_json: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum TestEngine {
    Mzk,
    Mozaiks,
    Both,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CoverageFormat {
    Text,
    Json,
    Lcov,
}

/// A bundle's coverage with the line of each rule, for the reports.
struct BundleCoverage {
    bundle: PathBuf,
    graph_file: Option<PathBuf>,
    coverage: Coverage,
    /// The 1-based line of each rule of `coverage.rules`.
    lines: Vec<usize>,
}

fn coverage_of(bundle: &Bundle, scenarios: usize, fired: &[usize]) -> BundleCoverage {
    let graph = bundle.rules.first().and_then(|r| bundle.file(r.file));
    let lines = bundle
        .rules
        .iter()
        .map(|r| {
            bundle
                .file(r.file)
                .map_or(0, |f| f.line_index.line_of(r.range.start) as usize + 1)
        })
        .collect();
    BundleCoverage {
        bundle: bundle.dir.clone(),
        graph_file: graph.map(|f| bundle.path_of(f)),
        coverage: Coverage::of(bundle, scenarios, fired),
        lines,
    }
}

pub fn run(args: TestArgs) -> ExitCode {
    let mut dirs = Vec::new();
    for path in &args.paths {
        // Canonical, so every bundle prints relative to the current folder
        // (or absolute outside it), whichever way it was named.
        let path = std::fs::canonicalize(path).unwrap_or_else(|_| path.clone());
        let found = discover_bundles(&RealFs, &path);
        if found.is_empty() {
            eprintln!(
                "mzk: {}: no bundle (no orchestrator.yaml) here or below",
                path.display()
            );
            return ExitCode::from(2);
        }
        dirs.extend(found);
    }
    let runtime = match super::current_thread_runtime() {
        Ok(rt) => rt,
        Err(code) => return code,
    };
    // With a machine-readable coverage on stdout, the report goes to stderr.
    let to_stdout = args.coverage_format == CoverageFormat::Text;
    let paint = if to_stdout {
        Paint::for_stdout()
    } else {
        Paint::for_stderr()
    };
    let say = |line: String| {
        if to_stdout {
            outln!("{line}");
        } else {
            eprintln!("{line}");
        }
    };
    let (mut passed, mut failed, mut skipped) = (0, 0, 0);
    let mut coverages = Vec::new();
    // Each failure with where it is, for the recap at the end.
    let mut failures: Vec<String> = Vec::new();
    let started = std::time::Instant::now();
    // `--engine both`: each scenario's traces, for --diff-json.
    let mut compared: Vec<Value> = Vec::new();
    for dir in dirs {
        let analysis = match super::run::checked_bundle(&dir) {
            Ok(a) => a,
            Err(_) => {
                failed += 1;
                failures.push(format!(
                    "{}: has errors, not run (`mzk check` explains them)",
                    display(&dir)
                ));
                continue;
            }
        };
        let bundle = &analysis.bundle;
        let python = args
            .python
            .clone()
            .unwrap_or_else(|| Worker::default_python(&bundle.dir));
        let mut fired = Vec::new();
        let mut scenarios = 0;
        let files = scenario_files(&bundle.dir);
        if files.is_empty() {
            say(format!(
                "{}: no scenarios (write one under scenarios/, see docs/runtime.md)",
                display(&bundle.dir)
            ));
        } else {
            say(format!(
                "{} ({} scenario{})",
                display(&bundle.dir),
                files.len(),
                if files.len() == 1 { "" } else { "s" }
            ));
        }
        for file in files {
            let name = file
                .file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
            let options = RunOptions::new(format!("test-{name}"), python.clone());
            let clock = std::time::Instant::now();
            let outcome = runtime.block_on(run_engines(bundle, &file, options, args.engine));
            let took = format!("({:.2} s)", clock.elapsed().as_secs_f64());
            // No mozaiks to run on: say what to install, once, and stop.
            if let Some(error) = outcome.as_ref().ok().and_then(EngineRuns::unavailable) {
                eprintln!("mzk: {error}");
                return ExitCode::from(2);
            }
            match outcome {
                Err(e) => {
                    failed += 1;
                    say(format!("  {} {name}: {e} {took}", paint.bad("FAIL")));
                    failures.push(format!("{}: {e}", display(&file)));
                }
                Ok(runs) if runs.expected_nothing() && runs.differences.is_none() => {
                    skipped += 1;
                    say(format!(
                        "  {} {name}: states no expected outcome",
                        paint.warn("skip")
                    ));
                }
                Ok(runs) => {
                    scenarios += 1;
                    fired.extend(runs.first().state.rules.iter().copied());
                    if let Some(record) = runs.record(&display(&file)) {
                        compared.push(record);
                    }
                    match runs.verdict() {
                        None => {
                            passed += 1;
                            say(format!("  {}   {name} {took}", paint.good("ok")));
                        }
                        Some(d) => {
                            failed += 1;
                            say(format!("  {} {name}: {d} {took}", paint.bad("FAIL")));
                            for line in runs.difference_lines() {
                                say(format!("         {line}"));
                            }
                            failures.push(format!("{}: {d}", display(&file)));
                        }
                    }
                }
            }
        }
        let coverage = coverage_of(bundle, scenarios, &fired);
        // Kept for the language server's hints; a bundle without a scenario
        // that ran has nothing to show.
        if scenarios > 0 {
            if let Err(e) = coverage.coverage.save(&bundle.dir) {
                eprintln!("mzk: warning: {e}");
            }
        }
        coverages.push(coverage);
    }
    let mut below = false;
    for c in &coverages {
        if c.coverage.scenarios == 0 {
            // Nothing ran (its line above says why): listing every rule as
            // never fired would say nothing more.
            below |= args.min_coverage.is_some();
            continue;
        }
        say(format!(
            "coverage {}: {}/{} rules ({:.1}%)",
            display(&c.bundle),
            c.coverage.covered(),
            c.coverage.rules.len(),
            c.coverage.percent()
        ));
        for (r, line) in c.coverage.rules.iter().zip(&c.lines) {
            if r.hits > 0 {
                continue;
            }
            let file = c.graph_file.as_deref().map_or_else(String::new, display);
            say(format!(
                "  never fired: rule {} at {file}:{line}: {}",
                r.index, r.rule
            ));
        }
        if args
            .min_coverage
            .is_some_and(|min| c.coverage.percent() < min)
        {
            below = true;
        }
    }
    if !failures.is_empty() {
        say(paint.bad("failures:"));
        for f in &failures {
            say(format!("  {f}"));
        }
    }
    let (passed_text, failed_text) = (format!("{passed} passed"), format!("{failed} failed"));
    say(format!(
        "{}, {}, {skipped} skipped in {:.2} s",
        if passed > 0 && failed == 0 {
            paint.good(&passed_text)
        } else {
            passed_text
        },
        if failed > 0 {
            paint.bad(&failed_text)
        } else {
            failed_text
        },
        started.elapsed().as_secs_f64()
    ));
    match args.coverage_format {
        CoverageFormat::Text => {}
        CoverageFormat::Json => outln!(
            "{}",
            serde_json::to_string_pretty(&coverage_json(&coverages)).unwrap_or_default()
        ),
        CoverageFormat::Lcov => out!("{}", lcov(&coverages)),
    }
    if let Some(path) = &args.diff_json {
        let report = json!({"version": 1, "scenarios": compared});
        let text = serde_json::to_string_pretty(&report).unwrap_or_default();
        if let Err(e) = std::fs::write(path, text + "\n") {
            eprintln!("mzk: {}: {e}", path.display());
            return ExitCode::from(2);
        }
    }
    if let (true, Some(min)) = (below, args.min_coverage) {
        eprintln!("mzk: transition coverage is below --min-coverage {min}%");
    }
    if failed > 0 || below {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// A scenario's runs: on one engine, or on both with their differences.
struct EngineRuns {
    runs: Vec<(EngineKind, ScenarioRun)>,
    /// `--engine both`: where mozaiks' run differs from mzk's.
    differences: Option<Vec<Difference>>,
}

async fn run_engines(
    bundle: &Bundle,
    file: &Path,
    options: RunOptions,
    engine: TestEngine,
) -> Result<EngineRuns, mzk_runtime::Error> {
    let engines: &[EngineKind] = match engine {
        TestEngine::Mzk => &[EngineKind::Mzk],
        TestEngine::Mozaiks => &[EngineKind::Mozaiks],
        TestEngine::Both => &[EngineKind::Mzk, EngineKind::Mozaiks],
    };
    let mut runs = Vec::new();
    for &kind in engines {
        runs.push((kind, run_file(bundle, file, options.clone(), kind).await?));
    }
    let differences = match runs.as_slice() {
        [(_, mzk), (_, mozaiks)] => Some(differences(&mzk.trace(), &mozaiks.trace())),
        _ => None,
    };
    Ok(EngineRuns { runs, differences })
}

impl EngineRuns {
    fn first(&self) -> &ScenarioRun {
        &self.runs[0].1
    }

    /// Why the mozaiks engine could not run at all, if it could not.
    fn unavailable(&self) -> Option<&str> {
        self.runs
            .iter()
            .map(|(_, run)| &run.state)
            .find(|state| state.reason == ENGINE_UNAVAILABLE)
            .and_then(|state| state.error.as_deref())
    }

    fn expected_nothing(&self) -> bool {
        self.first().scenario.expect.is_none()
    }

    /// Why the scenario fails: an engine missing its expected outcome, or
    /// the engines parting ways.
    fn verdict(&self) -> Option<String> {
        let missed: Vec<String> = self
            .runs
            .iter()
            .filter_map(|(kind, run)| {
                let d = run.divergence.as_ref()?;
                Some(match self.runs.len() {
                    1 => d.clone(),
                    _ => format!("{} engine: {d}", kind.name()),
                })
            })
            .collect();
        if !missed.is_empty() {
            return Some(missed.join("; "));
        }
        match self.differences.as_deref() {
            Some([]) | None => None,
            Some(found) => Some(format!(
                "the engines differ in {}",
                found
                    .iter()
                    .map(|d| d.aspect)
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        }
    }

    fn difference_lines(&self) -> Vec<String> {
        self.differences
            .iter()
            .flatten()
            .map(ToString::to_string)
            .collect()
    }

    /// The scenario's entry in --diff-json.
    fn record(&self, file: &str) -> Option<Value> {
        let differences = self.differences.as_ref()?;
        let traces: serde_json::Map<String, Value> = self
            .runs
            .iter()
            .map(|(kind, run)| {
                (
                    kind.name().to_string(),
                    json!({
                        "trace": run.trace(),
                        "divergence": run.divergence,
                    }),
                )
            })
            .collect();
        Some(json!({
            "scenario": file,
            "differences": differences,
            "engines": traces,
        }))
    }
}

fn display(path: &Path) -> String {
    let cwd = std::env::current_dir().unwrap_or_default();
    super::report::display_path(path, &cwd)
}

fn coverage_json(coverages: &[BundleCoverage]) -> Value {
    json!({
        "version": 1,
        "bundles": coverages.iter().map(|c| json!({
            "bundle": display(&c.bundle),
            "file": c.graph_file.as_deref().map(display),
            "covered": c.coverage.covered(),
            "total": c.coverage.rules.len(),
            "percent": (c.coverage.percent() * 10.0).round() / 10.0,
            "rules": c.coverage.rules.iter().zip(&c.lines).map(|(r, line)| json!({
                "index": r.index,
                "line": line,
                "rule": r.rule,
                "hits": r.hits,
            })).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
    })
}

/// LCOV: each rule is a line of transition_graph.yaml, hit when it fired.
fn lcov(coverages: &[BundleCoverage]) -> String {
    let mut out = String::new();
    for c in coverages {
        let Some(file) = &c.graph_file else { continue };
        out.push_str("TN:mzk\n");
        out.push_str(&format!("SF:{}\n", file.display()));
        for (r, line) in c.coverage.rules.iter().zip(&c.lines) {
            out.push_str(&format!("DA:{line},{}\n", r.hits));
        }
        out.push_str(&format!("LF:{}\n", c.coverage.rules.len()));
        out.push_str(&format!("LH:{}\n", c.coverage.covered()));
        out.push_str("end_of_record\n");
    }
    out
}
