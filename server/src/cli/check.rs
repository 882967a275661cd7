//! `mzk check`: discover bundles, analyse them, report.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use mzk_analyzer::base::Severity;
use mzk_analyzer::diagnostics::Applicability;
use mzk_analyzer::{
    discover_bundles, Analysis, AnalysisHost, Config, ConfigSource, OnConfigError, Overrides,
    RealFs,
};

use super::report::{self, Located};
use super::{fix, OutputFormat};
use crate::cli::out::out;

#[derive(clap::Args, Debug)]
pub struct CheckArgs {
    /// Bundle folders, folders searched recursively for bundles, or files of a bundle (its bundle is analysed, and only the named files reported) (default: the current folder).
    paths: Vec<PathBuf>,
    /// How to print diagnostics.
    #[arg(long, value_enum, default_value = "full")]
    output_format: OutputFormat,
    /// Never colour the output (colour is used only when stdout is a terminal and NO_COLOR is unset).
    #[arg(long)]
    no_color: bool,
    /// Apply the safe fixes (misspelt names, keys and enum values; declarations of undeclared variables; unused suppressions) to the files, then report what remains.
    #[arg(long)]
    fix: bool,
    /// With --fix, also apply the unsafe fixes: removing unknown keys, adding after_turn fallbacks to the user.
    #[arg(long)]
    unsafe_fixes: bool,
    /// Print the fixes as a unified diff instead of writing them (implies --fix; nothing is written).
    #[arg(long)]
    diff: bool,
    /// Use this configuration file (mzk.toml, or a pyproject.toml with [tool.mzk]) instead of the one found above each bundle.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Only these rules: codes, prefixes or groups (`mzk rules` lists them), comma-separated (replaces the configuration's `select`; `ALL` for every rule, `default` for the rules on by default).
    #[arg(long, value_delimiter = ',', value_name = "CODES")]
    select: Option<Vec<String>>,
    /// Also these rules: codes, prefixes or groups, e.g. `context-budget` (adds to `select`).
    #[arg(long, value_delimiter = ',', value_name = "CODES")]
    extend_select: Vec<String>,
    /// Print a count of findings per rule instead of the findings (with `--output-format json`, as JSON).
    #[arg(long)]
    statistics: bool,
    /// Not these rules (adds to the configuration's `ignore`).
    #[arg(long, value_delimiter = ',', value_name = "CODES")]
    ignore: Vec<String>,
    /// Check again whenever a file under the paths changes; print what changed each time.
    #[arg(long)]
    watch: bool,
}

/// The bundles to check and the configuration of each.
struct Plan {
    bundles: Vec<PathBuf>,
    configs: Vec<Config>,
    /// For each bundle, the files to report (canonical paths), when files
    /// rather than the bundle were named; `None` reports the whole bundle.
    only: Vec<Option<Vec<PathBuf>>>,
}

/// Where the bundles' configuration comes from: `--config` or the file above
/// each bundle, with the command line's selections over it.
fn config_source(args: &CheckArgs) -> Result<ConfigSource, (String, u8)> {
    let overrides = Overrides {
        select: args.select.clone(),
        extend_select: args.extend_select.clone(),
        ignore: args.ignore.clone(),
    };
    let explicit = match &args.config {
        Some(file) => {
            let text = std::fs::read_to_string(file)
                .map_err(|e| (format!("{}: {e}", file.display()), 2))?;
            let in_pyproject = file.file_name().is_some_and(|n| n == "pyproject.toml");
            let file = std::fs::canonicalize(file).unwrap_or_else(|_| file.clone());
            Some(Config::parse(&file, &text, in_pyproject).map_err(|e| (e.to_string(), 2))?)
        }
        None => None,
    };
    Ok(ConfigSource {
        explicit,
        overrides,
    })
}

/// Finds the bundles under the paths and the configuration of each; on a
/// usage or configuration error, the message and exit code.
fn make_plan(args: &CheckArgs, host: &AnalysisHost) -> Result<Plan, (String, u8)> {
    let paths = if args.paths.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        args.paths.clone()
    };
    let mut plan = Plan {
        bundles: Vec::new(),
        configs: Vec::new(),
        only: Vec::new(),
    };
    for path in &paths {
        if !path.exists() {
            return Err((format!("{}: no such file or folder", path.display()), 2));
        }
        // Absolute, canonical paths: the folder name is what workflow_name must match.
        let path = std::fs::canonicalize(path).unwrap_or_else(|_| path.clone());
        if path.is_file() {
            let Some(bundle) = mzk_analyzer::workspace::bundle_of(&path, Path::is_file) else {
                return Err((
                    format!(
                        "{}: not a file of a bundle (no folder holding orchestrator.yaml contains it)",
                        path.display()
                    ),
                    2,
                ));
            };
            match plan.bundles.iter().position(|b| *b == bundle) {
                Some(i) => {
                    if let Some(files) = &mut plan.only[i] {
                        files.push(path.clone());
                    }
                }
                None => {
                    let config = host
                        .configure(&RealFs, &bundle)
                        .map_err(|e| (e.to_string(), 2))?;
                    plan.bundles.push(bundle);
                    plan.configs.push(config);
                    plan.only.push(Some(vec![path.clone()]));
                }
            }
            continue;
        }
        let found = discover_bundles(&RealFs, &path);
        if found.is_empty() {
            return Err((
                format!(
                    "{}: no bundle found (a bundle is a folder holding orchestrator.yaml)",
                    path.display()
                ),
                2,
            ));
        }
        for bundle in found {
            if let Some(i) = plan.bundles.iter().position(|b| *b == bundle) {
                // Named as a folder too: report all of it.
                plan.only[i] = None;
                continue;
            }
            let config = host
                .configure(&RealFs, &bundle)
                .map_err(|e| (e.to_string(), 2))?;
            // A bundle named on the command line is checked even when excluded.
            if bundle != path && config.excludes(&bundle) {
                continue;
            }
            plan.bundles.push(bundle);
            plan.configs.push(config);
            plan.only.push(None);
        }
    }
    Ok(plan)
}

/// Analyses every planned bundle under its configuration.
fn analyse(host: &AnalysisHost, plan: &Plan) -> Vec<Analysis> {
    let mut analyses = host.analyze_all(&RealFs, &plan.bundles, &plan.configs);
    for (analysis, only) in analyses.iter_mut().zip(&plan.only) {
        if let Some(files) = only {
            keep_files(analysis, files);
        }
    }
    analyses
}

/// Keeps the diagnostics of the named files (so `--fix` also touches only
/// those).
fn keep_files(analysis: &mut Analysis, files: &[PathBuf]) {
    let bundle = &analysis.bundle;
    let named = |id| {
        bundle.file(id).is_some_and(|f| {
            let path = bundle.path_of(f);
            let path = std::fs::canonicalize(&path).unwrap_or(path);
            files.contains(&path)
        })
    };
    analysis.diagnostics.retain(|d| named(d.file));
}

pub fn run(args: CheckArgs) -> ExitCode {
    let host = match config_source(&args) {
        Ok(source) => AnalysisHost::new(source, OnConfigError::Refuse),
        Err((message, code)) => {
            eprintln!("mzk: {message}");
            return ExitCode::from(code);
        }
    };
    let plan = match make_plan(&args, &host) {
        Ok(plan) => plan,
        Err((message, code)) => {
            eprintln!("mzk: {message}");
            return ExitCode::from(code);
        }
    };
    if args.watch {
        let roots: Vec<PathBuf> = if args.paths.is_empty() {
            vec![PathBuf::from(".")]
        } else {
            args.paths.clone()
        };
        return super::watch::run(&roots, || {
            // Planned again each round: a new bundle or a changed
            // configuration (`--config`'s file included) counts.
            let source = config_source(&args).map_err(|(message, _)| message)?;
            let host = AnalysisHost::new(source, OnConfigError::Refuse);
            let plan = make_plan(&args, &host).map_err(|(message, _)| message)?;
            let analyses = analyse(&host, &plan);
            let cwd = std::env::current_dir().unwrap_or_default();
            let located: Vec<Located> = analyses
                .iter()
                .flat_map(|a| a.diagnostics.iter().map(move |d| (a, d)))
                .map(|(a, d)| Located::new(a, d, &cwd))
                .collect();
            Ok(report::concise_lines(&located))
        });
    }
    let mut analyses = analyse(&host, &plan);
    if args.diff {
        let planned = fix::plan(&analyses, args.unsafe_fixes);
        out!(
            "{}",
            fix::unified_diff(&planned, &std::env::current_dir().unwrap_or_default())
        );
        return if planned.is_empty() {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(1)
        };
    }
    if args.fix || args.unsafe_fixes {
        // A pass leaves out edits that collide with another; the next pass,
        // on a fresh analysis, picks them up. The bound stops a fix that
        // would keep re-offering itself.
        let mut fixed = fix::Fixed::default();
        for _ in 0..fix::MAX_PASSES {
            if fix::apply(&analyses, args.unsafe_fixes, &mut fixed) == 0 {
                break;
            }
            analyses = analyse(&host, &plan);
        }
        eprintln!("{fixed}");
    }
    let (text, errors) = report_of(&args, &analyses);
    out!("{text}");
    if errors > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// The report in the chosen format, and the number of errors in it.
fn report_of(args: &CheckArgs, analyses: &[Analysis]) -> (String, usize) {
    let cwd = std::env::current_dir().unwrap_or_default();
    let mut located = Vec::new();
    let mut files = 0;
    let mut opt_in_hidden = std::collections::BTreeMap::new();
    let mut per_bundle = Vec::new();
    let (mut fixable, mut unsafe_fixable) = (0, 0);
    for analysis in analyses {
        files += analysis.bundle.files.len();
        let count = |severity| {
            analysis
                .diagnostics
                .iter()
                .filter(|d| d.severity == severity)
                .count()
        };
        per_bundle.push(report::BundleCount {
            path: report::display_path(&analysis.bundle.dir, &cwd),
            errors: count(Severity::Error),
            warnings: count(Severity::Warning),
        });
        // As `--fix` chooses: a finding with a safe fix is fixed by it, one
        // with only unsafe fixes needs `--unsafe-fixes`.
        for d in &analysis.diagnostics {
            let fixes = mzk_analyzer::ide::fixes(analysis, d);
            if fixes.iter().any(|f| f.applicability == Applicability::Safe) {
                fixable += 1;
            } else if !fixes.is_empty() {
                unsafe_fixable += 1;
            }
        }
        for (rule, n) in &analysis.opt_in_hidden {
            *opt_in_hidden.entry(*rule).or_default() += n;
        }
        // Errors first: what fails a run is read before the warnings it may
        // cause (an unknown target before the agent it leaves unreachable).
        let mut diagnostics: Vec<&mzk_analyzer::diagnostics::Diagnostic> =
            analysis.diagnostics.iter().collect();
        diagnostics.sort_by_key(|d| d.severity);
        for diagnostic in diagnostics {
            located.push(Located::new(analysis, diagnostic, &cwd));
        }
    }
    // Across bundles too: one bundle's errors are not buried under the
    // warnings of the bundles before it.
    located.sort_by_key(|l| l.diagnostic.severity);
    let errors = located
        .iter()
        .filter(|l| l.diagnostic.severity == Severity::Error)
        .count();
    let summary = report::Summary {
        bundles: analyses.len(),
        files,
        errors,
        warnings: located
            .iter()
            .filter(|l| l.diagnostic.severity == Severity::Warning)
            .count(),
        info: located
            .iter()
            .filter(|l| l.diagnostic.severity == Severity::Info)
            .count(),
        opt_in_hidden,
        per_bundle,
        fixable,
        unsafe_fixable,
    };
    let color = crate::cli::paint::colour_wanted(
        std::io::IsTerminal::is_terminal(&std::io::stdout()),
        args.no_color,
    );
    let text = match args.output_format {
        _ if args.statistics => {
            report::statistics(&located, &summary, args.output_format == OutputFormat::Json)
        }
        OutputFormat::Full => report::full(&located, &summary, color),
        OutputFormat::Concise => report::concise(&located, &summary),
        OutputFormat::Json => report::json(&located, &summary),
        OutputFormat::Sarif => report::sarif(&located),
        OutputFormat::Github => report::github(&located),
    };
    (text, errors)
}
