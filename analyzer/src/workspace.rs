//! Which folders and files of a workspace can matter to an analysis: one
//! decision, shared by bundle discovery, the scan of shared folders, the
//! language server's watch registration and both file watchers.

use std::path::Path;

/// Folders of dependencies, build output, caches and virtual environments:
/// never a bundle, never code a bundle reads context keys from.
const SKIPPED_FOLDERS: &[&str] = &[
    "node_modules",
    "__pycache__",
    "target",
    "dist",
    "build",
    "venv",
];

/// The folder mzk keeps a bundle's own state in (run history, the coverage
/// of the last `mzk test`): hidden, but watched for the coverage hints.
pub const STATE_FOLDER: &str = ".mzk";

/// Whether a folder named `name` is passed over: hidden folders (`.git`,
/// `.venv`, editors' state) and [`SKIPPED_FOLDERS`].
pub fn is_skipped_folder(name: &str) -> bool {
    name.starts_with('.') || SKIPPED_FOLDERS.contains(&name)
}

/// Extensions of files whose text can read context keys by name: the scan of
/// shared folders reads them for mentions.
pub const MENTION_EXTENSIONS: &[&str] = &["py", "js", "jsx", "ts", "tsx", "mjs", "cjs", "json"];

/// Extensions of the bundle files and configuration an analysis reads.
const ANALYSED_EXTENSIONS: &[&str] = &["yaml", "yml", "toml"];

/// Extensions of every file whose change can change an analysis.
pub fn watched_extensions() -> impl Iterator<Item = &'static str> {
    ANALYSED_EXTENSIONS
        .iter()
        .chain(MENTION_EXTENSIONS)
        .copied()
}

/// Whether a file's extension is one of [`watched_extensions`].
pub fn has_watched_extension(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| watched_extensions().any(|w| w.eq_ignore_ascii_case(e)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hidden_and_dependency_folders_are_skipped() {
        for name in [".git", ".venv", ".mzk", "node_modules", "venv", "dist"] {
            assert!(is_skipped_folder(name), "{name}");
        }
        for name in ["tools", "_shared", "SupportDesk", "ui"] {
            assert!(!is_skipped_folder(name), "{name}");
        }
        assert!(has_watched_extension(Path::new("/w/B/agents.yaml")));
        assert!(has_watched_extension(Path::new("/w/B/tools/a.py")));
        assert!(has_watched_extension(Path::new("/w/mzk.toml")));
        assert!(!has_watched_extension(Path::new("/w/B/notes.md")));
    }
}
