//! mzk's outer layer: the only code that knows terminal formats and LSP
//! types. Everything it shows is computed by `mzk-analyzer`.

pub mod cli;
pub mod lsp;

use std::path::Path;

/// Whether a change at `path` can change an analysis: bundle YAML, Python,
/// configuration (TOML) and the code and data files mentions are read from;
/// never inside VCS, build or dependency folders. Both file watchers (the
/// server's own and `mzk check --watch`) use it.
pub fn watched_path(path: &Path) -> bool {
    let skipped = path.components().any(|c| {
        matches!(
            c.as_os_str().to_str(),
            Some(".git" | "target" | "node_modules" | "__pycache__")
        )
    });
    let extension = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    !skipped
        && matches!(
            extension,
            "yaml" | "yml" | "py" | "toml" | "json" | "js" | "jsx" | "ts" | "tsx" | "mjs" | "cjs"
        )
}
