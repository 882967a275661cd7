//! The `mzk` command line.

mod check;
mod fix;
mod graph;
mod report;
pub mod schema;
mod watch;

use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use mzk_analyzer::rules::Rule;

#[derive(Parser, Debug)]
#[command(
    name = "mzk",
    version,
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
    /// Print a bundle's transition graph (Mermaid, DOT or JSON).
    Graph(graph::GraphArgs),
    /// Print a rule's documentation (by code, e.g. MZ101, or by name).
    Explain {
        /// The rule's code or name.
        rule: String,
    },
    /// List every rule with its code, name, default severity and summary.
    Rules,
    /// Write a JSON Schema per bundle file kind, and the yaml-language-server settings that map them.
    Schema(schema::SchemaArgs),
}

/// Output formats of `mzk check`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// Source snippets with the offending range underlined.
    Full,
    /// One line per diagnostic: path:line:column: severity[CODE] message.
    Concise,
    /// Machine-readable JSON (version 1).
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
        Command::Schema(args) => schema::run(args),
        Command::Lsp => crate::lsp::main(),
        Command::Explain { rule } => match Rule::lookup(&rule) {
            Some(rule) => {
                print!("{}", rule.info().doc);
                ExitCode::SUCCESS
            }
            None => {
                eprintln!("mzk: unknown rule `{rule}`; `mzk rules` lists them");
                ExitCode::from(2)
            }
        },
        Command::Rules => {
            for rule in Rule::ALL {
                let info = rule.info();
                println!(
                    "{}  {:<30} {:<8} {}",
                    info.code,
                    info.name,
                    info.severity.as_str(),
                    info.summary
                );
            }
            ExitCode::SUCCESS
        }
    }
}
