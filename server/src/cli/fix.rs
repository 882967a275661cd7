//! `mzk check --fix`: writes the fixes the analyzer is sure of back to disk.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::PathBuf;

use mzk_analyzer::diagnostics::{Applicability, FileId};
use mzk_analyzer::{ide, Analysis};

/// How many times `mzk check --fix` applies fixes and analyses again at most.
pub const MAX_PASSES: usize = 10;

/// What `apply` did.
#[derive(Debug, Default)]
pub struct Fixed {
    pub edits: usize,
    /// The files written, over every pass.
    pub files: BTreeSet<PathBuf>,
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
            self.files.len(),
            if self.files.len() == 1 { "" } else { "s" }
        )?;
        for (path, why) in &self.skipped {
            write!(f, "\nmzk: {}: not fixed: {why}", path.display())?;
        }
        Ok(())
    }
}

/// Applies, file by file, the first fix of each diagnostic that `unsafe_fixes`
/// allows (safe ones only by default), in one pass, and returns how many
/// edits it wrote. Edits that overlap one already chosen wait for the next
/// pass, on a fresh analysis.
pub fn apply(analyses: &[Analysis], unsafe_fixes: bool, fixed: &mut Fixed) -> usize {
    let before = fixed.edits;
    for analysis in analyses {
        let chosen = analysis.diagnostics.iter().filter_map(|d| {
            ide::fixes(analysis, d)
                .into_iter()
                .find(|f| unsafe_fixes || f.applicability == Applicability::Safe)
        });
        let mut per_file: BTreeMap<FileId, Vec<ide::TextEdit>> = BTreeMap::new();
        for edit in ide::non_overlapping(chosen.flat_map(|f| f.edits)) {
            per_file.entry(edit.file).or_default().push(edit);
        }
        for (file, edits) in per_file {
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
            let mut text = f.text.clone();
            for e in edits.iter().rev() {
                text.replace_range(e.range.start as usize..e.range.end as usize, &e.new_text);
            }
            match std::fs::write(&path, text) {
                Ok(()) => {
                    fixed.edits += edits.len();
                    fixed.files.insert(path);
                }
                Err(e) => fixed.skipped.push((path, e.to_string())),
            }
        }
    }
    fixed.edits - before
}
