//! `mzk check --watch`: checks, then checks again whenever a file under the
//! paths changes, printing only what changed since the previous round —
//! `+` for a new diagnostic, `-` for one that went away — and a summary.

use crate::cli::out::outln;
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::mpsc;
use std::time::Duration;

use notify::Watcher;

/// How long to wait for more events before checking again (a save can
/// touch several files, an editor can write then rename).
const QUIET: Duration = Duration::from_millis(200);

/// What changed between two rounds, as printed.
pub fn changes(previous: &BTreeSet<String>, now: &BTreeSet<String>) -> Vec<String> {
    let gone = previous.difference(now).map(|l| format!("- {l}"));
    let new = now.difference(previous).map(|l| format!("+ {l}"));
    gone.chain(new).collect()
}

/// Runs `check` now and after every relevant change under `roots`, until
/// interrupted. `check` gives one line per diagnostic, or an error message.
pub fn run(roots: &[PathBuf], mut check: impl FnMut() -> Result<Vec<String>, String>) -> ExitCode {
    let (tx, rx) = mpsc::channel::<PathBuf>();
    let watched = roots.to_vec();
    let watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        if let Ok(event) = event {
            for path in crate::changed_paths(event, &watched) {
                let _ = tx.send(path);
            }
        }
    });
    let mut watcher = match watcher {
        Ok(watcher) => watcher,
        Err(e) => {
            eprintln!("mzk: cannot watch files: {e}");
            return ExitCode::from(2);
        }
    };
    for root in roots {
        if let Err(e) = watcher.watch(root, notify::RecursiveMode::Recursive) {
            eprintln!("mzk: cannot watch {}: {e}", root.display());
            return ExitCode::from(2);
        }
    }
    let mut previous: BTreeSet<String> = BTreeSet::new();
    let mut round = 0;
    loop {
        match check() {
            Ok(lines) => {
                let now: BTreeSet<String> = lines.into_iter().collect();
                let changed = changes(&previous, &now);
                if round == 0 {
                    for line in &now {
                        outln!("{line}");
                    }
                } else {
                    for line in &changed {
                        outln!("{line}");
                    }
                }
                let errors = now.iter().filter(|l| l.contains(": error[")).count();
                outln!(
                    "mzk: {} diagnostic{} ({errors} error{}){}; watching for changes (Ctrl-C to stop)",
                    now.len(),
                    if now.len() == 1 { "" } else { "s" },
                    if errors == 1 { "" } else { "s" },
                    if round == 0 {
                        String::new()
                    } else {
                        format!(", {} changed", changed.len())
                    }
                );
                previous = now;
            }
            Err(message) => outln!("mzk: {message}; watching for changes (Ctrl-C to stop)"),
        }
        round += 1;
        // Block for the next change, then let the burst settle.
        if rx.recv().is_err() {
            return ExitCode::SUCCESS;
        }
        while rx.recv_timeout(QUIET).is_ok() {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn only_what_changed_is_printed() {
        let a: BTreeSet<String> = ["x:1:1: error[MZ101] a", "y:2:1: warning[MZ301] b"]
            .map(String::from)
            .into();
        let b: BTreeSet<String> = ["y:2:1: warning[MZ301] b", "z:3:1: error[MZ201] c"]
            .map(String::from)
            .into();
        assert_eq!(
            changes(&a, &b),
            ["- x:1:1: error[MZ101] a", "+ z:3:1: error[MZ201] c"]
        );
        let roots = [PathBuf::from("/w")];
        assert!(crate::watched_path(Path::new("/w/B/agents.yaml"), &roots));
        assert!(crate::watched_path(Path::new("/w/mzk.toml"), &roots));
        assert!(!crate::watched_path(Path::new("/w/.git/index"), &roots));
        assert!(!crate::watched_path(
            Path::new("/w/B/node_modules/x/a.js"),
            &roots
        ));
        assert!(!crate::watched_path(Path::new("/w/B/notes.txt"), &roots));
        // A workspace in a hidden folder is watched; the state folder too.
        let hidden = [PathBuf::from("/home/u/.cache/w")];
        assert!(crate::watched_path(
            Path::new("/home/u/.cache/w/B/agents.yaml"),
            &hidden
        ));
        assert!(crate::watched_path(
            Path::new("/w/B/.mzk/coverage.json"),
            &roots
        ));
        assert!(!crate::watched_path(
            Path::new("/w/B/.venv/lib/x.py"),
            &roots
        ));
    }

    #[test]
    fn created_folders_stand_for_the_files_written_into_them() {
        use notify::event::{AccessKind, CreateKind, EventKind, ModifyKind};
        let event = |kind, path: &str| notify::Event::new(kind).add_path(path.into());
        let roots = [PathBuf::from("/w")];
        let folder = EventKind::Create(CreateKind::Folder);
        assert_eq!(
            crate::changed_paths(event(folder, "/w/B/tools"), &roots),
            [Path::new("/w/B/tools")]
        );
        assert!(crate::changed_paths(event(folder, "/w/B/node_modules/x"), &roots).is_empty());
        let modified = EventKind::Modify(ModifyKind::Any);
        assert!(crate::changed_paths(event(modified, "/w/B/tools"), &roots).is_empty());
        assert_eq!(
            crate::changed_paths(event(modified, "/w/B/agents.yaml"), &roots),
            [Path::new("/w/B/agents.yaml")]
        );
        let read = EventKind::Access(AccessKind::Any);
        assert!(crate::changed_paths(event(read, "/w/B/agents.yaml"), &roots).is_empty());
    }
}
