//! `mzk` as a process: output formats, exit codes, explain and rules.

use std::path::Path;
use std::process::{Command, Output};

use mzk_tests::{bundle_copy, repo};
use serde_json::Value;

mod commands;
mod fixes;
mod output;
mod server_process;

pub(crate) fn mzk(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mzk-e2e"))
        .args(args)
        .current_dir(cwd)
        .env("NO_COLOR", "1")
        .output()
        .expect("mzk runs")
}

pub(crate) fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).unwrap()
}
