//! Which declared variables and models are mentioned outside the bundle's
//! YAML: by its code, UI and data files, or by the shared folders beside the
//! bundles (`_shared/`, a root-level `extended_orchestration/ui/` …). Code
//! reads context keys and models by name, written out or built
//! (`"bundle_repair_" + suffix`, f-strings, `str.format`: see
//! `syntax::python_keys`), so a name that appears nowhere and that no Python
//! file can build is truly unused.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::file_cache::FileCache;
use super::Bundle;
use crate::fs::FileSystem;
use crate::hash::HashSet;
use crate::syntax::python_keys::{self, BuiltMemo, BuiltNames};

/// Whether a scanned file is Python (the only code whose built names are read).
fn is_python(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("py"))
}

/// Bounds of the scan, so a huge workspace cannot make analysis slow.
const MAX_FILES: usize = 5_000;
const MAX_BYTES: usize = 64 * 1024 * 1024;

/// Identifiers written in the folders beside the bundles that are not bundles
/// themselves (shared code and UI). Read once per workflows root, when the
/// first bundle analysed under it asks for a name its own files do not
/// mention (a bundle that leaves nothing unreferenced never waits for it),
/// and shared by the bundles analysed under it.
#[derive(Debug, Default)]
pub struct SharedMentions {
    /// The workflows root; `None`: no shared folders.
    root: Option<PathBuf>,
    read: std::sync::OnceLock<SharedRead>,
}

/// What the shared folders hold.
#[derive(Debug, Default)]
struct SharedRead {
    identifiers: std::collections::HashSet<String, Fnv>,
    /// The shared Python files, whose built names are read when a bundle
    /// asks for a name they could build (parsing every file up front would
    /// cost more than the rest of the scan).
    python: Vec<SharedPython>,
}

#[derive(Debug, Default)]
struct SharedPython {
    content: Vec<u8>,
    /// The file's buildable text (`python_keys::buildable`) and its string
    /// pieces, cut once for both the prefilter and the parse.
    cut: std::sync::OnceLock<std::sync::Arc<(python_keys::Buildable<'static>, QuotedEnds)>>,
    built: std::sync::OnceLock<std::sync::Arc<BuiltNames>>,
}

impl SharedMentions {
    /// The shared folders of the workflows root `root`, read when first
    /// needed.
    pub fn of(root: &Path) -> SharedMentions {
        SharedMentions {
            root: Some(root.to_path_buf()),
            read: Default::default(),
        }
    }

    /// What the folders hold, read now with `fs` if not read before.
    fn read(&self, fs: &dyn FileSystem) -> &SharedRead {
        self.read.get_or_init(|| match &self.root {
            Some(root) => SharedRead::scan(fs, root),
            None => SharedRead::default(),
        })
    }
}

impl SharedRead {
    /// Whether some shared Python file builds `name`.
    fn builds(&self, name: &str, memo: &BuiltMemo) -> bool {
        self.python.iter().any(|file| {
            let cut = file.cut.get_or_init(|| {
                let content = String::from_utf8_lossy(&file.content);
                let buildable = python_keys::buildable(&content).into_owned();
                let ends = QuotedEnds::of(buildable.text.as_bytes());
                std::sync::Arc::new((buildable, ends))
            });
            could_build(&cut.1, name)
                && file
                    .built
                    .get_or_init(|| {
                        memo.scan_buildable(&String::from_utf8_lossy(&file.content), &cut.0)
                    })
                    .builds(name)
        })
    }
}

/// FNV-1a: identifiers are short, and SipHash's DoS resistance buys nothing here.
#[derive(Debug, Clone, Copy, Default)]
struct Fnv;

impl std::hash::BuildHasher for Fnv {
    type Hasher = FnvHasher;
    fn build_hasher(&self) -> FnvHasher {
        FnvHasher(0xcbf2_9ce4_8422_2325)
    }
}

struct FnvHasher(u64);

impl std::hash::Hasher for FnvHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ b as u64).wrapping_mul(0x0100_0000_01b3);
        }
    }
}

impl SharedRead {
    /// Reads the non-bundle folders of `root`.
    fn scan(fs: &dyn FileSystem, root: &Path) -> SharedRead {
        let mut identifiers: std::collections::HashSet<String, Fnv> = Default::default();
        let mut python = Vec::new();
        let (mut files, mut bytes) = (MAX_FILES, MAX_BYTES);
        let nothing_skipped = HashSet::default();
        if let Ok(entries) = fs.read_dir(root) {
            for (path, is_dir) in entries {
                if is_dir && !fs.is_file(&path.join("orchestrator.yaml")) {
                    let contents = scanned_files(fs, &path, &mut files, &nothing_skipped)
                        .filter_map(|p| fs.read(&p).ok().map(|c| (is_python(&p), c)));
                    for (is_py, content) in contents {
                        if bytes == 0 {
                            break;
                        }
                        bytes = bytes.saturating_sub(content.len());
                        for token in content.split(|b| !(b.is_ascii_alphanumeric() || *b == b'_')) {
                            if token.len() > 1 && !token[0].is_ascii_digit() {
                                if let Ok(word) = std::str::from_utf8(token) {
                                    if !identifiers.contains(word) {
                                        identifiers.insert(word.to_string());
                                    }
                                }
                            }
                        }
                        if is_py {
                            python.push(SharedPython {
                                content,
                                cut: Default::default(),
                                built: Default::default(),
                            });
                        }
                    }
                }
            }
        }
        SharedRead {
            identifiers,
            python,
        }
    }
}

/// The `candidates` (variable and model names) mentioned, or built, by the
/// bundle's own code, UI and data files, or by the shared folders beside it.
pub fn scan(
    bundle: &Bundle,
    fs: &dyn FileSystem,
    candidates: &[String],
    shared: &SharedMentions,
    cache: &mut FileCache,
) -> BTreeSet<String> {
    let memo = bundle.built.clone();
    if candidates.is_empty() {
        return BTreeSet::new();
    }
    let shared = shared.read(fs);
    let (in_shared, candidates): (Vec<&String>, Vec<&String>) = candidates
        .iter()
        .partition(|c| shared.identifiers.contains(c.as_str()) || shared.builds(c, &memo));
    let mut mentioned: BTreeSet<String> = in_shared.into_iter().cloned().collect();
    if candidates.is_empty() {
        return mentioned;
    }
    let matcher = NameSet::new(&candidates);
    let mut found: HashSet<usize> = HashSet::default();
    let (mut files, mut bytes) = (MAX_FILES, MAX_BYTES);
    // Files the bundle already read (bound Python) are scanned from memory.
    let loaded: HashSet<std::path::PathBuf> = bundle
        .files
        .iter()
        .map(|f| bundle.dir.join(&f.relative))
        .collect();

    let index: crate::hash::HashMap<&str, usize> = candidates
        .iter()
        .enumerate()
        .map(|(i, c)| (c.as_str(), i))
        .collect();
    // The bound Python files first (they may live outside the bundle
    // folder), then every scanned file of the folder.
    let bound: Vec<std::path::PathBuf> = bundle
        .files
        .iter()
        .filter(|f| f.kind.is_none())
        .map(|f| bundle.dir.join(&f.relative))
        .collect();
    let walked = scanned_files(fs, &bundle.dir, &mut files, &loaded);
    for path in bound.into_iter().chain(walked) {
        let python = is_python(&path);
        let in_file = cache.mentions(fs, &path, &candidates, &mut bytes, |content| {
            let mut here = HashSet::default();
            matcher.scan(content, &mut here);
            // Parsing a whole file is far slower than the scan: only a file
            // that could build a name not found in it is parsed.
            let missing: Vec<usize> = (0..candidates.len())
                .filter(|i| !here.contains(i))
                .collect();
            if python && !missing.is_empty() {
                let source = String::from_utf8_lossy(content);
                let buildable = python_keys::buildable(&source);
                let ends = QuotedEnds::of(buildable.text.as_bytes());
                if missing.iter().any(|&i| could_build(&ends, candidates[i])) {
                    let built = memo.scan_buildable(&source, &buildable);
                    here.extend(missing.into_iter().filter(|&i| built.builds(candidates[i])));
                }
            }
            let mut names: Vec<String> = here.into_iter().map(|i| candidates[i].clone()).collect();
            names.sort();
            names
        });
        found.extend(
            in_file
                .unwrap_or_default()
                .iter()
                .filter_map(|name| index.get(name.as_str())),
        );
        if found.len() == candidates.len() {
            break;
        }
    }
    mentioned.extend(found.into_iter().map(|i| candidates[i].clone()));
    mentioned
}

/// The pieces of text a file's string literals hold: each quoted run on a
/// line, cut at `{`, `}` and `%` (the fields of f-strings and templates),
/// keeping the pieces of three or more word characters. Read in one pass,
/// over the lines that can build names (`python_keys::buildable`).
#[derive(Debug)]
struct QuotedEnds {
    pieces: HashSet<Vec<u8>>,
}

impl QuotedEnds {
    fn of(content: &[u8]) -> QuotedEnds {
        let mut pieces = HashSet::default();
        quoted_pieces(content, |piece| {
            pieces.insert(piece.to_vec());
            false
        });
        QuotedEnds { pieces }
    }
}

/// Calls `found` with each quoted piece of `content` (see [`QuotedEnds`])
/// until it returns true; whether it did.
fn quoted_pieces(content: &[u8], mut found: impl FnMut(&[u8]) -> bool) -> bool {
    for line in content.split(|&b| b == b'\n') {
        let mut rest = line;
        while let Some(open) = memchr::memchr2(b'"', b'\'', rest) {
            let quote = rest[open];
            let after = &rest[open + 1..];
            let Some(close) = memchr::memchr(quote, after) else {
                break;
            };
            for piece in after[..close].split(|&b| matches!(b, b'{' | b'}' | b'%')) {
                if piece.len() >= 3 && piece.iter().all(|&b| is_word_byte(b)) && found(piece) {
                    return true;
                }
            }
            rest = &after[close + 1..];
        }
    }
    false
}

/// Whether a file could build `name` (see `python_keys`): every built name
/// starts or ends with a piece of a string literal of three or more
/// characters (a pattern's known head or tail, the value a loop adds, the
/// literal a constant holds), so a file without such a piece is not parsed.
fn could_build(ends: &QuotedEnds, name: &str) -> bool {
    let name = name.as_bytes();
    if name.len() <= 3 {
        return true;
    }
    (3..=name.len())
        .any(|n| ends.pieces.contains(&name[..n]) || ends.pieces.contains(&name[name.len() - n..]))
}

/// Whole-identifier lookup of a few names in a lot of text: identifiers are
/// cut at non-word bytes, and only those whose length and first byte some
/// name has are hashed.
struct NameSet<'n> {
    names: std::collections::HashMap<&'n str, usize, Fnv>,
    lengths: [bool; 256],
    first_bytes: [bool; 256],
}

impl<'n> NameSet<'n> {
    fn new(names: &[&'n String]) -> NameSet<'n> {
        let mut set = NameSet {
            names: std::collections::HashMap::default(),
            lengths: [false; 256],
            first_bytes: [false; 256],
        };
        for (i, name) in names.iter().enumerate() {
            set.names.insert(name.as_str(), i);
            set.lengths[name.len().min(255)] = true;
            if let Some(&b) = name.as_bytes().first() {
                set.first_bytes[b as usize] = true;
            }
        }
        set
    }

    fn scan(&self, content: &[u8], found: &mut HashSet<usize>) {
        let mut at = 0;
        while at < content.len() {
            // The next identifier: a run of word bytes, found by table.
            while at < content.len() && !is_word_byte(content[at]) {
                at += 1;
            }
            let start = at;
            while at < content.len() && is_word_byte(content[at]) {
                at += 1;
            }
            let token = &content[start..at];
            if token.is_empty()
                || !self.lengths[token.len().min(255)]
                || !self.first_bytes[token[0] as usize]
            {
                continue;
            }
            // Word bytes are ASCII.
            if let Some(&i) = std::str::from_utf8(token)
                .ok()
                .and_then(|t| self.names.get(t))
            {
                found.insert(i);
            }
        }
    }
}

/// ASCII letters, digits and `_`: the bytes of the identifiers scanned for.
fn is_word_byte(b: u8) -> bool {
    WORD_BYTES[b as usize]
}

const WORD_BYTES: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        table[b] = (b as u8).is_ascii_alphanumeric() || b == b'_' as usize;
        b += 1;
    }
    table
};

/// The paths of the scanned files under `dir`, at most `budget` of them.
fn scanned_files<'a>(
    fs: &'a dyn FileSystem,
    dir: &Path,
    budget: &'a mut usize,
    skip: &'a HashSet<std::path::PathBuf>,
) -> impl Iterator<Item = std::path::PathBuf> + 'a {
    let mut stack = vec![dir.to_path_buf()];
    let mut pending: Vec<std::path::PathBuf> = Vec::new();
    std::iter::from_fn(move || loop {
        if let Some(path) = pending.pop() {
            if *budget == 0 {
                return None;
            }
            *budget -= 1;
            return Some(path);
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
                if !crate::workspace::is_skipped_folder(&name) {
                    stack.push(path);
                }
            } else if !skip.contains(&path)
                && crate::workspace::MENTION_EXTENSIONS.contains(
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
