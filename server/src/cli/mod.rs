//! The `mzk` command line.

mod check;
pub mod context;
mod fix;
mod graph;
mod markdown;
mod out;
mod paint;
mod report;
pub mod run;
pub mod schema;
mod table;
mod test;
mod watch;

use out::out;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use mzk_analyzer::rules::Rule;
use mzk_analyzer::{AnalysisHost, ConfigSource, OnConfigError};

#[derive(Parser, Debug)]
#[command(
    name = "mzk",
    version = env!("MZK_VERSION"),
    about = "Language server, checker and runner for Mozaiks workflow bundles"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Check bundles: each PATH is a bundle folder or a folder searched for bundles.
    Check(check::CheckArgs),
    /// Run the language server on stdin/stdout.
    Lsp,
    /// Show what each agent is told: its static prompt, size in characters and tokens, what it sees, writes and calls.
    Context(context::ContextArgs),
    /// Print a bundle's transition graph (Mermaid, DOT, JSON or a self-contained HTML page).
    Graph(graph::GraphArgs),
    /// Print a rule's documentation (by code, e.g. MZ101, or by name).
    Explain {
        /// The rule's code or name.
        rule: String,
        /// `text` (the page for a terminal) or `markdown` (as written); by
        /// default text on a terminal, Markdown when piped.
        #[arg(long, value_enum)]
        format: Option<RulesFormat>,
        /// Never colour the page (colour is used only on a terminal with NO_COLOR unset).
        #[arg(long)]
        no_color: bool,
    },
    /// List every rule with its code, name, default severity, group, whether it runs by default, and summary.
    Rules {
        /// `text` (a line per rule) or `markdown` (the index page docs/rules/README.md).
        #[arg(long, value_enum, default_value = "text")]
        format: RulesFormat,
    },
    /// Write a JSON Schema per bundle file kind, and the yaml-language-server settings that map them.
    Schema(schema::SchemaArgs),
    /// Run a bundle locally with mozaiks' semantics (offline: synthetic model or a scenario).
    Run(Box<run::RunArgs>),
    /// Browse the run history: `mzk runs list`, `mzk runs show ID`.
    Runs(run::RunsArgs),
    /// Run each bundle's scenarios (scenarios/*.yaml) and report transition coverage.
    Test(test::TestArgs),
}

/// Output formats of `mzk rules`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RulesFormat {
    Text,
    Markdown,
}

/// Output formats of `mzk check`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// Source snippets with the offending range underlined.
    Full,
    /// One line per diagnostic: path:line:column: severity[CODE] message.
    Concise,
    /// Machine-readable JSON (version 2; the README documents its shape).
    Json,
    /// SARIF 2.1.0 for code-scanning tools.
    Sarif,
    /// GitHub Actions workflow command annotations.
    Github,
}

pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => {
            let _ = err.print();
            return match err.kind() {
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion => {
                    ExitCode::SUCCESS
                }
                _ => ExitCode::from(2),
            };
        }
    };
    match cli.command {
        Command::Check(args) => check::run(args),
        Command::Graph(args) => graph::run(args),
        Command::Context(args) => context::run(args),
        Command::Schema(args) => schema::run(args),
        Command::Run(args) => run::run(*args),
        Command::Runs(args) => run::runs(args),
        Command::Test(args) => test::run(args),
        Command::Lsp => crate::lsp::main(),
        Command::Explain {
            rule,
            format,
            no_color,
        } => match Rule::lookup(&rule) {
            Some(rule) => {
                let terminal = std::io::IsTerminal::is_terminal(&std::io::stdout());
                let page = explain(rule);
                match format.unwrap_or(if terminal {
                    RulesFormat::Text
                } else {
                    RulesFormat::Markdown
                }) {
                    RulesFormat::Markdown => out!("{page}"),
                    RulesFormat::Text => {
                        let color = paint::colour_wanted(terminal, no_color);
                        out!("{}", markdown::render(&page, color))
                    }
                }
                ExitCode::SUCCESS
            }
            None => {
                eprintln!("mzk: unknown rule `{rule}`; `mzk rules` lists them");
                ExitCode::from(2)
            }
        },
        Command::Rules { format } => {
            out!("{}", rules_list(format));
            ExitCode::SUCCESS
        }
    }
}

/// The single-threaded runtime of `mzk run` and `mzk test` (a run is one
/// sequence of turns; batch tasks interleave on it).
pub fn current_thread_runtime() -> Result<tokio::runtime::Runtime, ExitCode> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| {
            eprintln!("mzk: {e}");
            ExitCode::from(2)
        })
}

/// Analyses the one bundle a command names (`mzk graph`, `mzk context`; with
/// `configured`, under the configuration that governs it, as `mzk run`);
/// when the folder holds no orchestrator.yaml, or its configuration cannot
/// be read, says so and gives exit code 2.
pub fn analyse_one(
    path: &std::path::Path,
    configured: bool,
) -> Result<std::sync::Arc<mzk_analyzer::Analysis>, ExitCode> {
    // Absolute and canonical: the folder name is what workflow_name must match.
    let dir = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    if !dir.join("orchestrator.yaml").is_file() {
        eprintln!(
            "mzk: {}: not a bundle (no orchestrator.yaml)",
            path.display()
        );
        return Err(ExitCode::from(2));
    }
    let mut host = AnalysisHost::new(ConfigSource::default(), OnConfigError::Refuse);
    host.analyze(&mzk_analyzer::RealFs, &dir, configured)
        .map_err(|e| {
            eprintln!("mzk: {e}");
            ExitCode::from(2)
        })
}

/// A rule's page, with its severity and configuration generated from the registry.
pub fn explain(rule: Rule) -> String {
    let info = rule.info();
    format!(
        "{}\n\n## Severity and configuration\n\nDefault severity: **{}**. Group: `{group}`, {state}. In `mzk.toml` (or `[tool.mzk]`): {toggle}, `[severity]` `{code} = \"error\"` (or `\"warning\"`, `\"info\"`) changes how loud it is, `[per-file-ignores]` turns it off in some files; `# mzk: ignore[{code}]` suppresses one place (docs/configuration.md).\n",
        info.doc.trim_end(),
        info.severity.as_str(),
        group = info.group.name(),
        state = if rule.default_enabled() {
            "on by default"
        } else {
            "opt-in (off by default)"
        },
        toggle = if rule.default_enabled() {
            format!("`ignore = [\"{}\"]` turns it off", info.code)
        } else {
            format!(
                "`extend-select = [\"{}\"]` (or the group, `[\"{}\"]`) turns it on",
                info.code,
                info.group.name()
            )
        },
        code = info.code,
    )
}

/// Every rule, as lines or as the Markdown index of docs/rules.
pub fn rules_list(format: RulesFormat) -> String {
    use mzk_analyzer::rules::Group;
    use std::fmt::Write as _;
    let state = |on: bool| if on { "on" } else { "opt-in" };
    let mut out = String::new();
    if format == RulesFormat::Markdown {
        out.push_str("# Rules\n\nEvery diagnostic mzk reports, by code. Each page says what the rule checks, why, a failing example and the fix; `mzk explain CODE` prints it with the rule's default severity and configuration. This index is generated by `mzk rules --format markdown` (a test keeps it in sync).\n\n## Groups\n\nEach rule belongs to one group. The rules of the groups marked *on* run by default; the others are opt-in: select a group by name like a code (`extend-select = [\"context-budget\"]` in `mzk.toml`, or `--extend-select context-budget`). See docs/configuration.md.\n\n| group | default | what it holds |\n|---|---|---|\n");
        for group in Group::ALL {
            let _ = writeln!(
                out,
                "| `{}` | {} | {} |",
                group.name(),
                state(group.default_enabled()),
                group.summary()
            );
        }
        out.push_str("\n## Rules\n\n| code | name | default severity | group | default | summary |\n|---|---|---|---|---|---|\n");
    } else {
        let _ = writeln!(
            out,
            "code   {:<30} {:<8} {:<15} {:<7} summary",
            "name", "severity", "group", "default"
        );
    }
    for rule in Rule::ALL {
        let info = rule.info();
        let _ = match format {
            RulesFormat::Text => writeln!(
                out,
                "{}  {:<30} {:<8} {:<15} {:<7} {}",
                info.code,
                info.name,
                info.severity.as_str(),
                info.group.name(),
                state(rule.default_enabled()),
                info.summary
            ),
            RulesFormat::Markdown => writeln!(
                out,
                "| [{code}]({code}.md) | {} | {} | {} | {} | {} |",
                info.name,
                info.severity.as_str(),
                info.group.name(),
                state(rule.default_enabled()),
                info.summary.replace('|', "\\|"),
                code = info.code
            ),
        };
    }
    out
}
