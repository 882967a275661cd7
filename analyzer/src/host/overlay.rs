//! The editor's buffers over the disk: what the editor shows wins.

use std::io;
use std::path::{Path, PathBuf};

use crate::base::fs::{FileStamp, FileSystem, RealFs};
use crate::base::hash::HashMap;

/// Open documents' texts by path, read instead of the disk.
#[derive(Debug, Default)]
pub struct Overlay {
    open: HashMap<PathBuf, String>,
}

impl Overlay {
    pub fn new(open: HashMap<PathBuf, String>) -> Overlay {
        Overlay { open }
    }

    /// The same buffers and `more` over them.
    pub fn with(mut self, more: impl IntoIterator<Item = (PathBuf, String)>) -> Overlay {
        self.open.extend(more);
        self
    }
}

impl FileSystem for Overlay {
    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        match self.open.get(path) {
            Some(text) => Ok(text.clone().into_bytes()),
            None => RealFs.read(path),
        }
    }

    fn read_dir(&self, path: &Path) -> io::Result<Vec<(PathBuf, bool)>> {
        RealFs.read_dir(path)
    }

    fn is_file(&self, path: &Path) -> bool {
        self.open.contains_key(path) || RealFs.is_file(path)
    }

    /// Open documents have no stamp: the editor's text is compared instead.
    fn stamp(&self, path: &Path) -> Option<FileStamp> {
        match self.open.contains_key(path) {
            true => None,
            false => RealFs.stamp(path),
        }
    }
}
