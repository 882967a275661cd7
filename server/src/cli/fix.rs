//! `mzk check --fix`: writes the fixes the analyzer is sure of back to disk.

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;

use mzk_analyzer::diagnostics::FileId;
use mzk_analyzer::{ide, Analysis};

/// What `apply` did.
#[derive(Debug, Default)]
pub struct Fixed {
    pub edits: usize,
    pub files: usize,
    /// Files left untouched, and why.
    pub skipped: Vec<(PathBuf, String)>,
}

impl fmt::Display for Fixed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "mzk: fixed {} problem{} in {} file{}",
            self.edits,
            if self.edits == 1 { "" } else { "s" },
            self.files,
            if self.files == 1 { "" } else { "s" }
        )?;
        for (path, why) in &self.skipped {
            write!(f, "\nmzk: {}: not fixed: {why}", path.display())?;
        }
        Ok(())
    }
}

/// Applies every fix of every analysis, one pass, file by file.
pub fn apply(analyses: &[Analysis]) -> Fixed {
    let mut fixed = Fixed::default();
    for analysis in analyses {
        let mut per_file: BTreeMap<FileId, Vec<ide::TextEdit>> = BTreeMap::new();
        for d in &analysis.diagnostics {
            if let Some(edit) = ide::fix_edit(analysis, d) {
                per_file.entry(edit.file).or_default().push(edit);
            }
        }
        for (file, mut edits) in per_file {
            let Some(f) = analysis.bundle.file(file) else {
                continue;
            };
            let path = analysis.bundle.dir.join(&f.relative);
            // Offsets are into the text as analysed; if the file changed since,
            // or was not plain UTF-8 (a BOM, another encoding), writing would
            // corrupt it.
            match std::fs::read(&path) {
                Ok(bytes) if bytes == f.text.as_bytes() => {}
                Ok(_) => {
                    fixed.skipped.push((
                        path,
                        "its bytes differ from the analysed text (changed meanwhile, or not plain UTF-8)".into(),
                    ));
                    continue;
                }
                Err(e) => {
                    fixed.skipped.push((path, e.to_string()));
                    continue;
                }
            }
            // Two rules can offer the same fix for one name: apply it once, and
            // never two edits that overlap.
            edits.sort_by_key(|e| (e.range.start, e.range.end));
            edits.dedup_by(|b, a| a.range == b.range && a.new_text == b.new_text);
            let mut text = f.text.clone();
            let mut applied = 0;
            let mut floor = u32::MAX;
            for e in edits.iter().rev() {
                if e.range.end > floor {
                    continue;
                }
                text.replace_range(e.range.start as usize..e.range.end as usize, &e.new_text);
                floor = e.range.start;
                applied += 1;
            }
            match std::fs::write(&path, text) {
                Ok(()) => {
                    fixed.edits += applied;
                    fixed.files += 1;
                }
                Err(e) => fixed.skipped.push((path, e.to_string())),
            }
        }
    }
    fixed
}
