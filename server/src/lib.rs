//! mzk's outer layer: the only code that knows terminal formats and LSP
//! types. Everything it shows is computed by `mzk-analyzer`.

pub mod cli;
pub mod lsp;

use std::path::{Path, PathBuf};

/// Whether a change at `path` can change an analysis: bundle YAML, Python,
/// configuration (TOML) and the code and data files mentions are read from;
/// never inside VCS, build or dependency folders. Both file watchers (the
/// server's own and `mzk check --watch`) use it, through [`changed_paths`].
pub fn watched_path(path: &Path) -> bool {
    let extension = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    !in_ignored_folder(path)
        && matches!(
            extension,
            "yaml" | "yml" | "py" | "toml" | "json" | "js" | "jsx" | "ts" | "tsx" | "mjs" | "cjs"
        )
}

fn in_ignored_folder(path: &Path) -> bool {
    path.components().any(|c| {
        matches!(
            c.as_os_str().to_str(),
            Some(".git" | "target" | "node_modules" | "__pycache__")
        )
    })
}

/// The paths of a file-system event that matter to an analysis: changed
/// files [`watched_path`] accepts, and created folders. A watcher follows a
/// new folder only once it has reported it, so files written into it at once
/// (a `tools/` folder checked out, the `.mzk` folder `mzk test` writes its
/// coverage into) go unreported: the folder stands for them.
pub fn changed_paths(event: notify::Event) -> Vec<PathBuf> {
    use notify::event::{CreateKind, EventKind};
    if matches!(event.kind, EventKind::Access(_)) {
        return Vec::new();
    }
    let created_folder = matches!(event.kind, EventKind::Create(CreateKind::Folder));
    event
        .paths
        .into_iter()
        .filter(|p| watched_path(p) || (created_folder && !in_ignored_folder(p)))
        .collect()
}
