//! Which declared variables are mentioned outside the bundle's YAML: by its
//! code, UI and data files, or by the shared folders beside the bundles
//! (`_shared/`, a root-level `extended_orchestration/ui/` …). Code reads
//! context keys by name, so a name that appears nowhere is truly unused.

use std::collections::HashSet;

use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};
use std::path::Path;

use super::Bundle;
use crate::analysis::FileSystem;

/// Extensions of files that can read context keys by name.
const SCANNED: &[&str] = &["py", "js", "jsx", "ts", "tsx", "mjs", "cjs", "json"];
/// Bounds of the scan, so a huge workspace cannot make analysis slow.
const MAX_FILES: usize = 5_000;
const MAX_BYTES: usize = 64 * 1024 * 1024;
const SKIPPED_DIRS: &[&str] = &[
    "node_modules",
    "__pycache__",
    "target",
    "dist",
    "build",
    "venv",
    ".venv",
];

/// Identifiers written in the folders beside the bundles that are not bundles
/// themselves (shared code and UI). Computed once per workflows root and
/// shared by the bundles analysed under it.
#[derive(Debug, Clone, Default)]
pub struct SharedMentions {
    identifiers: HashSet<String>,
}

impl SharedMentions {
    /// Reads the non-bundle folders of `root`.
    pub fn scan(fs: &dyn FileSystem, root: &Path) -> SharedMentions {
        let mut identifiers = HashSet::new();
        let mut budget = (MAX_FILES, MAX_BYTES);
        if let Ok(entries) = fs.read_dir(root) {
            for (path, is_dir) in entries {
                if is_dir && !fs.is_file(&path.join("orchestrator.yaml")) {
                    for content in files(fs, &path, &mut budget, &HashSet::new()) {
                        for token in content.split(|b| !(b.is_ascii_alphanumeric() || *b == b'_')) {
                            if token.len() > 1 && !token[0].is_ascii_digit() {
                                if let Ok(word) = std::str::from_utf8(token) {
                                    if !identifiers.contains(word) {
                                        identifiers.insert(word.to_string());
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        SharedMentions { identifiers }
    }
}

/// Marks the `candidates` (variable names) mentioned by the bundle's own code,
/// UI and data files, or by the shared folders beside it.
pub fn scan(
    bundle: &mut Bundle,
    fs: &dyn FileSystem,
    candidates: &[String],
    shared: &SharedMentions,
) {
    let (in_shared, candidates): (Vec<&String>, Vec<&String>) = candidates
        .iter()
        .partition(|c| shared.identifiers.contains(c.as_str()));
    bundle
        .mentioned_elsewhere
        .extend(in_shared.into_iter().cloned());
    if candidates.is_empty() {
        return;
    }
    // One pass over each file for all names at once.
    // Leftmost-longest: a name inside a longer identifier is never a whole word,
    // so non-overlapping matches find every whole-word mention.
    let Ok(matcher) = AhoCorasick::builder()
        .match_kind(MatchKind::LeftmostLongest)
        .kind(Some(AhoCorasickKind::DFA))
        .build(&candidates)
    else {
        return;
    };
    let mut found: HashSet<usize> = HashSet::new();
    let mut budget = (MAX_FILES, MAX_BYTES);
    let is_word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    // Files the bundle already read (bound Python) are scanned from memory.
    let loaded: HashSet<std::path::PathBuf> = bundle
        .files
        .iter()
        .map(|f| bundle.dir.join(&f.relative))
        .collect();
    let texts = bundle
        .files
        .iter()
        .filter(|f| f.kind.is_none())
        .map(|f| f.text.as_bytes().to_vec());
    let on_disk = files(fs, &bundle.dir.clone(), &mut budget, &loaded).collect::<Vec<_>>();
    for content in texts.chain(on_disk) {
        for m in matcher.find_iter(&content) {
            // A whole identifier, not part of a longer one.
            let before = m.start().checked_sub(1).map(|i| content[i]);
            let after = content.get(m.end()).copied();
            if !before.is_some_and(is_word) && !after.is_some_and(is_word) {
                found.insert(m.pattern().as_usize());
            }
        }
    }
    bundle
        .mentioned_elsewhere
        .extend(found.into_iter().map(|i| candidates[i].clone()));
}

/// The scanned files under `dir`, read lazily within the budget.
fn files<'a>(
    fs: &'a dyn FileSystem,
    dir: &Path,
    budget: &'a mut (usize, usize),
    skip: &'a HashSet<std::path::PathBuf>,
) -> impl Iterator<Item = Vec<u8>> + 'a {
    let mut stack = vec![dir.to_path_buf()];
    let mut pending: Vec<std::path::PathBuf> = Vec::new();
    std::iter::from_fn(move || loop {
        if let Some(path) = pending.pop() {
            if budget.0 == 0 || budget.1 == 0 {
                return None;
            }
            let Ok(content) = fs.read(&path) else {
                continue;
            };
            budget.0 -= 1;
            budget.1 = budget.1.saturating_sub(content.len());
            return Some(content);
        }
        let dir = stack.pop()?;
        let Ok(entries) = fs.read_dir(&dir) else {
            continue;
        };
        for (path, is_dir) in entries {
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            if is_dir {
                if !name.starts_with('.') && !SKIPPED_DIRS.contains(&name.as_str()) {
                    stack.push(path);
                }
            } else if !skip.contains(&path)
                && SCANNED.contains(
                    &path
                        .extension()
                        .map(|e| e.to_string_lossy().to_ascii_lowercase())
                        .unwrap_or_default()
                        .as_str(),
                )
            {
                pending.push(path);
            }
        }
    })
}
