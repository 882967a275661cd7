//! mzk's outer layer: the only code that knows terminal formats and LSP
//! types. Everything it shows is computed by `mzk-analyzer`.

pub mod cli;
pub mod graph_page;
pub mod lsp;

use std::path::{Path, PathBuf};

use mzk_analyzer::workspace;

/// Whether a change at `path` can change what the editor shows: a file
/// with one of the analysis' watched extensions outside skipped folders
/// (`mzk_analyzer::workspace`), the bundle's state folder included (the last
/// `mzk test`'s coverage). Only the folders below the watched root that holds
/// the path are judged: a workspace may itself live in a hidden folder.
/// Both file watchers (the server's own and `mzk check --watch`) use it,
/// through [`changed_paths`], and the language server filters what the
/// client's watcher reports with it.
pub fn watched_path(path: &Path, roots: &[PathBuf]) -> bool {
    workspace::has_watched_extension(path)
        && !path
            .parent()
            .is_some_and(|folder| in_ignored_folder(folder, roots))
}

/// Whether `path` lies in a skipped folder below the deepest root holding it.
fn in_ignored_folder(path: &Path, roots: &[PathBuf]) -> bool {
    let below = roots
        .iter()
        .filter_map(|root| path.strip_prefix(root).ok())
        .min_by_key(|rest| rest.components().count())
        .unwrap_or(path);
    below.components().any(|c| {
        c.as_os_str().to_str().is_some_and(|name| {
            name != workspace::STATE_FOLDER && workspace::is_skipped_folder(name)
        })
    })
}

/// The paths of a file-system event under `roots` that matter to an
/// analysis: changed files [`watched_path`] accepts, and created folders. A
/// watcher follows a new folder only once it has reported it, so files
/// written into it at once (a `tools/` folder checked out, the `.mzk` folder
/// `mzk test` writes its coverage into) go unreported: the folder stands
/// for them.
pub fn changed_paths(event: notify::Event, roots: &[PathBuf]) -> Vec<PathBuf> {
    use notify::event::{CreateKind, EventKind};
    if matches!(event.kind, EventKind::Access(_)) {
        return Vec::new();
    }
    let created_folder = matches!(event.kind, EventKind::Create(CreateKind::Folder));
    event
        .paths
        .into_iter()
        .filter(|p| watched_path(p, roots) || (created_folder && !in_ignored_folder(p, roots)))
        .collect()
}
