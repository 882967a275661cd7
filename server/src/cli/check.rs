//! `mzk check`: discover bundles, analyse them, report.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use mzk_analyzer::diagnostics::Severity;
use mzk_analyzer::{analyze_bundles, discover_bundles, Analysis, RealFs};

use super::fix;
use super::report::{self, Located};
use super::OutputFormat;

#[derive(clap::Args, Debug)]
pub struct CheckArgs {
    /// Bundle folders, or folders searched recursively for bundles (default: the current folder).
    paths: Vec<PathBuf>,
    /// How to print diagnostics.
    #[arg(long, value_enum, default_value = "full")]
    output_format: OutputFormat,
    /// Never colour the output (colour is used only when stdout is a terminal and NO_COLOR is unset).
    #[arg(long)]
    no_color: bool,
    /// Apply the safe fixes (misspelt names, keys and enum values; declarations of undeclared variables) to the files, then report what remains.
    #[arg(long)]
    fix: bool,
    /// With --fix, also apply the unsafe fixes: removing unknown keys, adding after_turn fallbacks to the user.
    #[arg(long, requires = "fix")]
    unsafe_fixes: bool,
}

pub fn run(args: CheckArgs) -> ExitCode {
    let cwd = std::env::current_dir().unwrap_or_default();
    let paths = if args.paths.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        args.paths
    };
    let mut bundles: Vec<PathBuf> = Vec::new();
    for path in &paths {
        if !path.exists() {
            eprintln!("mzk: {}: no such file or folder", path.display());
            return ExitCode::from(2);
        }
        // Absolute, canonical paths: the folder name is what workflow_name must match.
        let path = std::fs::canonicalize(path).unwrap_or_else(|_| path.clone());
        let found = discover_bundles(&RealFs, &path);
        if found.is_empty() {
            eprintln!(
                "mzk: {}: no bundle found (a bundle is a folder holding orchestrator.yaml)",
                path.display()
            );
            return ExitCode::from(2);
        }
        for bundle in found {
            if !bundles.contains(&bundle) {
                bundles.push(bundle);
            }
        }
    }
    let mut analyses: Vec<Analysis> = analyze_bundles(&RealFs, &bundles);
    if args.fix {
        // A pass leaves out edits that collide with another; the next pass,
        // on a fresh analysis, picks them up. The bound stops a fix that
        // would keep re-offering itself.
        let mut fixed = fix::Fixed::default();
        for _ in 0..fix::MAX_PASSES {
            if fix::apply(&analyses, args.unsafe_fixes, &mut fixed) == 0 {
                break;
            }
            analyses = analyze_bundles(&RealFs, &bundles);
        }
        eprintln!("{fixed}");
    }
    let mut located = Vec::new();
    let mut files = 0;
    for analysis in &analyses {
        files += analysis.bundle.files.len();
        for diagnostic in &analysis.diagnostics {
            located.push(Located::new(analysis, diagnostic, &cwd));
        }
    }
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
    };
    let color = !args.no_color
        && std::env::var_os("NO_COLOR").is_none()
        && std::io::IsTerminal::is_terminal(&std::io::stdout());
    let text = match args.output_format {
        OutputFormat::Full => report::full(&located, &summary, color),
        OutputFormat::Concise => report::concise(&located, &summary),
        OutputFormat::Json => report::json(&located, &summary),
        OutputFormat::Sarif => report::sarif(&located),
        OutputFormat::Github => report::github(&located),
    };
    print!("{text}");
    if errors > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// A path for display: relative to the current folder when it lies below it.
pub fn display_path(path: &Path, cwd: &Path) -> String {
    let shown = if path.is_absolute() {
        path.strip_prefix(cwd).unwrap_or(path)
    } else {
        path.strip_prefix("./").unwrap_or(path)
    };
    shown.to_string_lossy().replace('\\', "/")
}
