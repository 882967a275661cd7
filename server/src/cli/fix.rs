//! `mzk check --fix`: writes the fixes the analyzer is sure of back to disk.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::PathBuf;

use mzk_analyzer::base::FileId;
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

/// A file with the fixes of one pass applied, not yet written.
pub struct PlannedFile {
    pub path: PathBuf,
    pub before: String,
    pub after: String,
    pub edits: usize,
}

/// The first fix of each diagnostic that `unsafe_fixes` allows (safe ones
/// only by default), applied in memory, file by file, in one pass. Edits
/// that overlap one already chosen wait for the next pass.
pub fn plan(analyses: &[Analysis], unsafe_fixes: bool) -> Vec<PlannedFile> {
    let mut planned = Vec::new();
    for analysis in analyses {
        let chosen = ide::fix_all(analysis, &analysis.diagnostics, unsafe_fixes);
        let mut per_file: BTreeMap<FileId, Vec<ide::TextEdit>> = BTreeMap::new();
        for edit in chosen.edits {
            per_file.entry(edit.file).or_default().push(edit);
        }
        for (file, edits) in per_file {
            let Some(f) = analysis.bundle.file(file) else {
                continue;
            };
            let mut after = f.text.to_string();
            for e in edits.iter().rev() {
                after.replace_range(e.range.start as usize..e.range.end as usize, &e.new_text);
            }
            planned.push(PlannedFile {
                path: analysis.bundle.path_of(f),
                before: f.text.to_string(),
                after,
                edits: edits.len(),
            });
        }
    }
    planned
}

/// Writes one pass of fixes and returns how many edits it wrote.
pub fn apply(analyses: &[Analysis], unsafe_fixes: bool, fixed: &mut Fixed) -> usize {
    let before = fixed.edits;
    for file in plan(analyses, unsafe_fixes) {
        // Offsets are into the text as analysed; if the file changed since,
        // or was not plain UTF-8 (a BOM, another encoding), writing would
        // corrupt it.
        match std::fs::read(&file.path) {
            Ok(bytes) if bytes == file.before.as_bytes() => {}
            Ok(_) => {
                fixed.skipped.push((
                    file.path,
                    "its bytes differ from the analysed text (changed meanwhile, or not plain UTF-8)".into(),
                ));
                continue;
            }
            Err(e) => {
                fixed.skipped.push((file.path, e.to_string()));
                continue;
            }
        }
        match std::fs::write(&file.path, &file.after) {
            Ok(()) => {
                fixed.edits += file.edits;
                fixed.files.insert(file.path);
            }
            Err(e) => fixed.skipped.push((file.path, e.to_string())),
        }
    }
    fixed.edits - before
}

/// The planned fixes as a unified diff, paths relative to `cwd`.
pub fn unified_diff(planned: &[PlannedFile], cwd: &std::path::Path) -> String {
    let mut out = String::new();
    for file in planned {
        let shown = super::report::display_path(&file.path, cwd);
        let diff = similar::TextDiff::from_lines(&file.before, &file.after);
        out.push_str(
            &diff
                .unified_diff()
                .context_radius(3)
                .header(&format!("a/{shown}"), &format!("b/{shown}"))
                .to_string(),
        );
    }
    out
}
