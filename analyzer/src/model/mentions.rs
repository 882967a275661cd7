//! Which declared variables and models are mentioned outside the bundle's
//! YAML: by its code, UI and data files, or by the shared folders beside the
//! bundles (`_shared/`, a root-level `extended_orchestration/ui/` …). Code
//! reads context keys and models by name, written out or built
//! (`"bundle_repair_" + suffix`, f-strings, `str.format`: see
//! `syntax::python_keys`), so a name that appears nowhere and that no Python
//! file can build is truly unused.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::file_cache::{FileCache, MentionScan};
use super::Bundle;
use crate::base::fs::FileSystem;
use crate::base::hash::HashSet;
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
    identifiers: HashSet<String>,
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

impl SharedRead {
    /// Reads the non-bundle folders of `root`.
    fn scan(fs: &dyn FileSystem, root: &Path) -> SharedRead {
        let mut identifiers: HashSet<String> = HashSet::default();
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
                        for token in content.split(|&b| !is_word_byte(b)) {
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
///
/// Names written out are looked for first, in every file: reading which
/// names Python code builds takes an excerpt and a parse of the file, so it
/// is done only for the names no file writes, and only in the files whose
/// string literals could start or end one of them.
pub fn scan(
    bundle: &Bundle,
    fs: &dyn FileSystem,
    candidates: &[String],
    shared: &SharedMentions,
    cache: &mut FileCache,
) -> BTreeSet<String> {
    if candidates.is_empty() {
        return BTreeSet::new();
    }
    let shared = shared.read(fs);
    let (in_shared, candidates): (Vec<&String>, Vec<&String>) = candidates
        .iter()
        .partition(|c| shared.identifiers.contains(c.as_str()));
    let mut mentioned: BTreeSet<String> = in_shared.into_iter().cloned().collect();
    if candidates.is_empty() {
        return mentioned;
    }
    let (mut files, mut bytes) = (MAX_FILES, MAX_BYTES);
    // Files the bundle already read (bound Python) are scanned from memory.
    let loaded: HashSet<PathBuf> = bundle.files.iter().map(|f| bundle.path_of(f)).collect();
    // The bound Python files first (they may live outside the bundle
    // folder), then every scanned file of the folder.
    let bound: Vec<PathBuf> = bundle
        .files
        .iter()
        .filter(|f| f.kind.is_none())
        .map(|f| bundle.path_of(f))
        .collect();
    let walked = scanned_files(fs, &bundle.dir, &mut files, &loaded);
    let mut python: Vec<PathBuf> = Vec::new();
    let mut written: HashSet<String> = HashSet::default();
    let matcher = NameSet::new(&candidates);
    for path in bound.into_iter().chain(walked) {
        let in_file = cache.mentions(
            fs,
            &path,
            MentionScan::Written,
            &candidates,
            &mut bytes,
            |content| {
                let mut here = HashSet::default();
                matcher.scan(content, &mut here);
                let mut names: Vec<String> =
                    here.into_iter().map(|i| candidates[i].clone()).collect();
                names.sort();
                names
            },
        );
        let Some(in_file) = in_file else {
            continue;
        };
        written.extend(in_file.iter().cloned());
        if written.len() == candidates.len() {
            break;
        }
        if is_python(&path) {
            python.push(path);
        }
    }
    let memo = bundle.built.clone();
    let (built_in_shared, missing): (Vec<&String>, Vec<&String>) = candidates
        .into_iter()
        .filter(|c| !written.contains(c.as_str()))
        .partition(|c| shared.builds(c, &memo));
    mentioned.extend(written);
    mentioned.extend(built_in_shared.into_iter().cloned());
    if missing.is_empty() {
        return mentioned;
    }
    // The files were scanned above, within the bounds.
    let mut unbounded = usize::MAX;
    let missing_ends = AnyNameEnds::of(&missing);
    let mut built: HashSet<String> = HashSet::default();
    for path in python {
        let in_file = cache.mentions(
            fs,
            &path,
            MentionScan::Built,
            &missing,
            &mut unbounded,
            |content| built_in(content, &missing, &missing_ends, &memo),
        );
        built.extend(in_file.unwrap_or_default().iter().cloned());
        if built.len() == missing.len() {
            break;
        }
    }
    mentioned.extend(built);
    mentioned
}

/// The `names` a Python file's code builds (see `python_keys`), sorted;
/// `ends` are theirs.
fn built_in(
    content: &[u8],
    names: &[&String],
    ends: &AnyNameEnds,
    memo: &BuiltMemo,
) -> Vec<String> {
    // The excerpt's lines are the file's own lines, cut short, so its
    // quoted pieces are among the file's: when the file's own cannot start
    // or end a name, the excerpt's cannot either.
    if !ends.could_build_in(content) {
        return Vec::new();
    }
    let source = String::from_utf8_lossy(content);
    let buildable = python_keys::buildable(&source);
    let ends = QuotedEnds::of(buildable.text.as_bytes());
    if !names.iter().any(|n| could_build(&ends, n)) {
        return Vec::new();
    }
    let built = memo.scan_buildable(&source, &buildable);
    let mut out: Vec<String> = names
        .iter()
        .filter(|n| built.builds(n))
        .map(|n| n.to_string())
        .collect();
    out.sort();
    out
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

/// The heads and tails of three or more bytes of `name`: a file can build
/// it only if a piece of its string literals is one of them (see
/// [`could_build`]); `None` for a name of three bytes or fewer, which any
/// file may build.
fn name_ends(name: &str) -> Option<impl Iterator<Item = &[u8]>> {
    let name = name.as_bytes();
    (name.len() > 3)
        .then(|| (3..=name.len()).flat_map(move |n| [&name[..n], &name[name.len() - n..]]))
}

/// [`could_build`] for any of some names, read straight off the quoted
/// pieces of a file (no set of them is built): their ends, gathered once
/// for all the files.
struct AnyNameEnds<'n> {
    /// `None`: some name is short enough for any file to build.
    ends: Option<HashSet<&'n [u8]>>,
}

impl<'n> AnyNameEnds<'n> {
    fn of(names: &[&'n String]) -> AnyNameEnds<'n> {
        let ends = names.iter().try_fold(HashSet::default(), |mut ends, name| {
            ends.extend(name_ends(name)?);
            Some(ends)
        });
        AnyNameEnds { ends }
    }

    fn could_build_in(&self, content: &[u8]) -> bool {
        match &self.ends {
            Some(ends) => quoted_pieces(content, |piece| ends.contains(piece)),
            None => true,
        }
    }
}

/// Whether a file could build `name` (see `python_keys`): every built name
/// starts or ends with a piece of a string literal of three or more
/// characters (a pattern's known head or tail, the value a loop adds, the
/// literal a constant holds), so a file without such a piece is not parsed.
fn could_build(ends: &QuotedEnds, name: &str) -> bool {
    name_ends(name)
        .is_none_or(|mut heads_and_tails| heads_and_tails.any(|piece| ends.pieces.contains(piece)))
}

/// Whole-identifier lookup of a few names in a lot of text: identifiers are
/// cut at non-word bytes, and only those whose length and first byte some
/// name has are hashed.
struct NameSet<'n> {
    names: crate::base::hash::HashMap<&'n str, usize>,
    lengths: [bool; 256],
    first_bytes: [bool; 256],
}

impl<'n> NameSet<'n> {
    fn new(names: &[&'n String]) -> NameSet<'n> {
        let mut set = NameSet {
            names: crate::base::hash::HashMap::default(),
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The Python files of the repository's bundles and fixtures, and
    /// sources written to trip the claim: escaped quotes, clauses rewritten
    /// as `if`, decorators, trailing comments, strings over several lines.
    fn sources() -> Vec<String> {
        let mut out: Vec<String> = [
            "x = \"it\\\"s\"; y = 'abcd' + z\n",
            "if a:\n    pass\nelif f'{k}_total' in d:\n    v = 'lane_' + k\n",
            "@register('tool_' + name)\ndef f():\n    return \"x\" # 'comment_key' + k\n",
            "k = ('first_part'\n     + suffix + \"_tail\"  # 'not_code'\n)\n",
            "s = '''multi\n'line_' + x\n''' + 'end_key'\n",
            "for t in ('aaa', 'bbb'):\n    c.get('tab_' + t)\n",
            "m = \"%s_value\" % n; q = '{}_done'.format(n)\n",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut stack = vec![repo.join("bundles"), repo.join("tests").join("fixtures")];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    stack.push(path);
                } else if is_python(&path) {
                    if let Ok(text) = std::fs::read_to_string(&path) {
                        out.push(text);
                    }
                }
            }
        }
        assert!(
            out.len() > 20,
            "the repository's Python files were not read"
        );
        out
    }

    /// What lets `built_in` skip a file on its own quoted pieces: every
    /// piece of the excerpt it would parse is a piece of the file.
    #[test]
    fn the_excerpts_quoted_pieces_are_the_files_own() {
        for src in sources() {
            let excerpt = QuotedEnds::of(python_keys::buildable(&src).text.as_bytes());
            let own = QuotedEnds::of(src.as_bytes());
            for piece in &excerpt.pieces {
                assert!(
                    own.pieces.contains(piece),
                    "{:?} is quoted in the excerpt of {src:?} only",
                    String::from_utf8_lossy(piece)
                );
            }
        }
    }

    #[test]
    fn the_quick_test_agrees_with_the_set_of_pieces() {
        let names: Vec<String> = ["lane_alpha", "tab_orders", "OldSummary", "abc", "end_key"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        for src in sources() {
            let own = QuotedEnds::of(src.as_bytes());
            for name in &names {
                assert_eq!(
                    AnyNameEnds::of(&[name]).could_build_in(src.as_bytes()),
                    could_build(&own, name),
                    "{name} in {src:?}"
                );
            }
        }
    }
}
