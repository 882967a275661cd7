//! Where the analyzer reads files from: the disk, or texts held in memory
//! (tests, and the language server's unsaved buffers layered over the disk).
//! The lowest layer every other one may read through.

use std::io;
use std::path::{Path, PathBuf};

/// Where the analyzer reads files from.
pub trait FileSystem {
    /// The file's bytes; `ErrorKind::NotFound` when it does not exist.
    fn read(&self, path: &Path) -> io::Result<Vec<u8>>;
    /// Entries of a folder: (path, is_dir). Symlinked folders are not followed.
    fn read_dir(&self, path: &Path) -> io::Result<Vec<(PathBuf, bool)>>;
    fn is_file(&self, path: &Path) -> bool;
    /// What identifies the file's content without reading it, when the file
    /// system can tell (modification time and size on disk; `None` for
    /// in-memory text, which is then compared byte for byte).
    fn stamp(&self, _path: &Path) -> Option<FileStamp> {
        None
    }
}

/// A file's modification time and size: equal stamps mean unchanged
/// content, as build tools and ruff's cache assume.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileStamp {
    pub modified: std::time::SystemTime,
    pub len: u64,
}

/// The real file system.
pub struct RealFs;

impl FileSystem for RealFs {
    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        let meta = std::fs::metadata(path)?;
        if !meta.is_file() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "not a regular file",
            ));
        }
        if meta.len() > (crate::base::limits::MAX_FILE_BYTES as u64) * 4 {
            // Do not load huge files just to refuse them: keep the size only.
            return Err(io::Error::new(
                io::ErrorKind::FileTooLarge,
                format!("{} bytes", meta.len()),
            ));
        }
        std::fs::read(path)
    }

    fn read_dir(&self, path: &Path) -> io::Result<Vec<(PathBuf, bool)>> {
        let mut entries = Vec::new();
        for entry in std::fs::read_dir(path)? {
            let entry = entry?;
            let is_dir = entry.file_type().map(|t| t.is_dir()).unwrap_or(false);
            entries.push((entry.path(), is_dir));
        }
        entries.sort();
        Ok(entries)
    }

    fn is_file(&self, path: &Path) -> bool {
        path.is_file()
    }

    fn stamp(&self, path: &Path) -> Option<FileStamp> {
        let meta = std::fs::metadata(path).ok()?;
        Some(FileStamp {
            modified: meta.modified().ok()?,
            len: meta.len(),
        })
    }
}

/// Files held in memory (tests, and editor buffers layered over the disk).
#[derive(Debug, Clone, Default)]
pub struct MemoryFs {
    files: std::collections::BTreeMap<PathBuf, Vec<u8>>,
}

impl MemoryFs {
    pub fn new() -> MemoryFs {
        MemoryFs::default()
    }

    /// Adds (or replaces) a file.
    pub fn insert(&mut self, path: impl Into<PathBuf>, content: impl Into<Vec<u8>>) {
        self.files.insert(path.into(), content.into());
    }
}

impl FileSystem for MemoryFs {
    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        self.files
            .get(path)
            .cloned()
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "not in memory"))
    }

    fn read_dir(&self, path: &Path) -> io::Result<Vec<(PathBuf, bool)>> {
        let mut entries: Vec<(PathBuf, bool)> = Vec::new();
        for file in self.files.keys() {
            let Ok(rest) = file.strip_prefix(path) else {
                continue;
            };
            let mut components = rest.components();
            let Some(first) = components.next() else {
                continue;
            };
            let child = path.join(first);
            let is_dir = components.next().is_some();
            if !entries.iter().any(|(p, _)| *p == child) {
                entries.push((child, is_dir));
            }
        }
        Ok(entries)
    }

    fn is_file(&self, path: &Path) -> bool {
        self.files.contains_key(path)
    }
}
/// Normalises `a/b/../c` lexically (no file system access, symlinks are not followed).
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}
