//! Which folders and files of a workspace can matter to an analysis: one
//! decision, shared by bundle discovery, the scan of shared folders, the
//! language server's watch registration and both file watchers.

use std::path::{Path, PathBuf};

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

/// How far above a file its bundle folder may be. A bundle's files sit a
/// few folders deep at most (`extended_orchestration/…`, `tools/…/x.py`);
/// the walk up stops here, so a file outside any bundle costs a bounded
/// number of lookups.
pub const MAX_BUNDLE_DEPTH: usize = 8;

/// The bundle a file belongs to: the nearest folder above it holding
/// orchestrator.yaml, at most [`MAX_BUNDLE_DEPTH`] levels up, as `is_file`
/// sees files (the language server counts its unsaved buffers). One answer
/// for `mzk check FILE`, the language server and its file watcher.
pub fn bundle_of(file: &Path, is_file: impl Fn(&Path) -> bool) -> Option<PathBuf> {
    file.ancestors()
        .skip(1)
        .take(MAX_BUNDLE_DEPTH)
        .find(|dir| is_file(&dir.join("orchestrator.yaml")))
        .map(Path::to_path_buf)
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

    #[test]
    fn a_file_belongs_to_the_nearest_bundle_within_reach() {
        let bundles = [
            Path::new("/w/Outer/orchestrator.yaml"),
            Path::new("/w/Outer/Inner/orchestrator.yaml"),
        ];
        let is_file = |p: &Path| bundles.contains(&p);
        assert_eq!(
            bundle_of(Path::new("/w/Outer/Inner/tools/x.py"), is_file),
            Some(PathBuf::from("/w/Outer/Inner"))
        );
        assert_eq!(
            bundle_of(Path::new("/w/Outer/agents.yaml"), is_file),
            Some(PathBuf::from("/w/Outer"))
        );
        assert_eq!(bundle_of(Path::new("/w/other/agents.yaml"), is_file), None);
        // Past the reach, a file is not the bundle's (a bounded walk up).
        let deep = format!("/w/Outer/{}x.py", "d/".repeat(MAX_BUNDLE_DEPTH));
        assert_eq!(bundle_of(Path::new(&deep), is_file), None);
        let within = format!("/w/Outer/{}x.py", "d/".repeat(MAX_BUNDLE_DEPTH - 1));
        assert_eq!(
            bundle_of(Path::new(&within), is_file),
            Some(PathBuf::from("/w/Outer"))
        );
    }
}
