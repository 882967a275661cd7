//! Memo of the per-file work that depends only on a file's bytes, kept
//! between analyses of one bundle: the language server keeps one per bundle,
//! so after an edit every file is read again (cheap) but only the changed
//! ones are parsed, validated and scanned again. Entries are keyed by path
//! and checked against the exact bytes, so a stale entry is never used; the
//! entries of files an analysis did not read are dropped after it.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::base::fs::{FileStamp, FileSystem};
use crate::base::hash::{HashMap, HashSet};
use crate::base::FileId;
use crate::diagnostics::Diagnostic;
use crate::schema::Obj;
use crate::syntax::python::Module;
use crate::syntax::LineIndex;

/// A YAML file decoded, parsed and validated.
#[derive(Debug, Clone)]
pub(crate) struct YamlMemo {
    /// Shared with the bundle's `SourceFile` (one copy of a file's text).
    pub text: Arc<str>,
    pub line_index: LineIndex,
    /// The file's own diagnostics (encoding, syntax, schema), with `file` as
    /// it was when computed.
    pub diagnostics: Vec<Diagnostic>,
    pub file: FileId,
    /// The validated root, when the file could be parsed and validated.
    pub root: Option<Obj>,
    /// Whether the whole file was read: decoded and parsed to its end (an
    /// empty file is complete; a syntax error or bad encoding is not).
    pub complete: bool,
}

impl YamlMemo {
    /// The diagnostics, addressed to `file`.
    pub fn diagnostics_for(&self, file: FileId) -> impl Iterator<Item = Diagnostic> + '_ {
        let from = self.file;
        self.diagnostics.iter().cloned().map(move |mut d| {
            d.file = file;
            for r in &mut d.related {
                if r.file == from {
                    r.file = file;
                }
            }
            d
        })
    }
}

/// A text file as read, with its line index.
#[derive(Debug, Clone)]
pub(crate) struct TextMemo {
    pub text: Arc<str>,
    pub line_index: LineIndex,
}

/// How an entry knows its file is unchanged: by stamp when the file system
/// gives one (no read needed), else by the bytes themselves.
#[derive(Debug, PartialEq)]
enum Seen {
    Stamp(FileStamp),
    Bytes(Vec<u8>),
}

/// A stamp younger than this is not trusted: the file may change again
/// within the file system's timestamp granularity without its stamp changing
/// (git's "racily clean" entries). Such files are compared byte for byte.
const RACY: std::time::Duration = std::time::Duration::from_secs(2);

impl Seen {
    /// Whether the file at `path` is still what `self` saw; `bytes` receives
    /// the content when it had to be read.
    fn still(
        &self,
        fs: &dyn FileSystem,
        path: &Path,
        stamp: Option<FileStamp>,
        bytes: &mut Option<Vec<u8>>,
    ) -> bool {
        match self {
            Seen::Stamp(seen) => stamp == Some(*seen),
            Seen::Bytes(seen) => {
                *bytes = fs.read(path).ok();
                bytes.as_deref() == Some(seen.as_slice())
            }
        }
    }

    fn of(stamp: Option<FileStamp>, bytes: &[u8]) -> Seen {
        let settled = |s: &FileStamp| s.modified.elapsed().is_ok_and(|age| age >= RACY);
        match stamp.filter(settled) {
            Some(stamp) => Seen::Stamp(stamp),
            None => Seen::Bytes(bytes.to_vec()),
        }
    }
}

/// What a scan of a file for names looks for (`model::mentions`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum MentionScan {
    /// The names written out, as whole identifiers.
    Written,
    /// The names its Python code builds.
    Built,
}

/// A scan's result: what was seen, the names looked for, those found.
type Mentioned = (Seen, Vec<String>, Vec<String>);

#[derive(Debug, Default)]
pub struct FileCache {
    /// With the file's bytes when they are not the memo's text (a file
    /// that is not UTF-8): valid UTF-8 is compared with the text itself.
    yaml: HashMap<PathBuf, (Option<Vec<u8>>, YamlMemo)>,
    texts: HashMap<PathBuf, (Seen, TextMemo)>,
    python: HashMap<PathBuf, (Arc<str>, Vec<String>, Module)>,
    /// Per scanned file and scan.
    mentions: HashMap<(PathBuf, MentionScan), Mentioned>,
    used: HashSet<PathBuf>,
}

impl FileCache {
    pub fn new() -> FileCache {
        FileCache::default()
    }

    /// Forgets the entries of files the last analysis did not read.
    pub(crate) fn finish(&mut self) {
        let used = std::mem::take(&mut self.used);
        self.yaml.retain(|p, _| used.contains(p));
        self.texts.retain(|p, _| used.contains(p));
        self.python.retain(|p, _| used.contains(p));
        self.mentions.retain(|(p, _), _| used.contains(p));
    }

    /// `compute` gets the bytes and gives them back when its text is not
    /// exactly them.
    pub(crate) fn yaml(
        &mut self,
        path: &Path,
        bytes: Vec<u8>,
        compute: impl FnOnce(Vec<u8>) -> (YamlMemo, Option<Vec<u8>>),
    ) -> &YamlMemo {
        self.used.insert(path.to_path_buf());
        let fresh = self.yaml.get(path).is_some_and(|(undecoded, memo)| {
            undecoded.as_deref().unwrap_or(memo.text.as_bytes()) == bytes
        });
        if !fresh {
            let (memo, undecoded) = compute(bytes);
            self.yaml.insert(path.to_path_buf(), (undecoded, memo));
        }
        &self.yaml[path].1
    }

    /// A bound Python module read for `wanted` names: kept while its text and
    /// the names stay; `compute` is handed the module of the same text read
    /// for other names, whose whole-module verdict it can keep.
    pub(crate) fn python(
        &mut self,
        path: &Path,
        text: &Arc<str>,
        wanted: &[&str],
        compute: impl FnOnce(Option<&Module>) -> Module,
    ) -> Module {
        self.used.insert(path.to_path_buf());
        let same_text = match self.python.get(path) {
            Some((t, w, module)) if t == text => {
                if w.iter().map(String::as_str).eq(wanted.iter().copied()) {
                    return module.clone();
                }
                Some(module)
            }
            _ => None,
        };
        let module = compute(same_text);
        let wanted = wanted.iter().map(|w| w.to_string()).collect();
        self.python.insert(
            path.to_path_buf(),
            (Arc::clone(text), wanted, module.clone()),
        );
        module
    }

    /// A text file (a bound Python file), read lossily as UTF-8.
    pub(crate) fn text(&mut self, fs: &dyn FileSystem, path: &Path) -> std::io::Result<TextMemo> {
        self.used.insert(path.to_path_buf());
        let stamp = fs.stamp(path);
        let mut bytes = None;
        if let Some((seen, memo)) = self.texts.get(path) {
            if seen.still(fs, path, stamp, &mut bytes) {
                return Ok(memo.clone());
            }
        }
        let bytes = match bytes {
            Some(bytes) => bytes,
            None => fs.read(path)?,
        };
        let text: Arc<str> = String::from_utf8_lossy(&bytes).into();
        let memo = TextMemo {
            line_index: LineIndex::new(&text),
            text,
        };
        self.texts
            .insert(path.to_path_buf(), (Seen::of(stamp, &bytes), memo.clone()));
        Ok(memo)
    }

    /// The `names` the file at `path` mentions, as `scan` finds them in its
    /// bytes; `None` when it cannot be read. `budget` is charged the bytes
    /// actually scanned.
    pub(crate) fn mentions(
        &mut self,
        fs: &dyn FileSystem,
        path: &Path,
        kind: MentionScan,
        names: &[&String],
        budget: &mut usize,
        scan: impl FnOnce(&[u8]) -> Vec<String>,
    ) -> Option<&[String]> {
        self.used.insert(path.to_path_buf());
        let key = (path.to_path_buf(), kind);
        let stamp = fs.stamp(path);
        let mut bytes = None;
        let fresh = self.mentions.get(&key).is_some_and(|(seen, n, _)| {
            n.iter().eq(names.iter().copied()) && seen.still(fs, path, stamp, &mut bytes)
        });
        if !fresh {
            let bytes = match bytes {
                Some(bytes) => bytes,
                None => fs.read(path).ok()?,
            };
            if *budget == 0 {
                return None;
            }
            *budget = budget.saturating_sub(bytes.len());
            let found = scan(&bytes);
            let names = names.iter().map(|n| n.to_string()).collect();
            self.mentions
                .insert(key.clone(), (Seen::of(stamp, &bytes), names, found));
        }
        self.mentions
            .get(&key)
            .map(|(_, _, found)| found.as_slice())
    }
}
