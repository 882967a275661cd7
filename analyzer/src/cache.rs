//! What analyses keep for later ones, owned by the caller: the language
//! server keeps one [`AnalysisCache`] per bundle across keystrokes, `mzk
//! check` one per bundle for a run, and both share one [`Memos`] between
//! all of them (and between threads). Nothing is kept anywhere else: the
//! analyzer has no process-wide state but read-only tables built from
//! constants (see ARCHITECTURE.md).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::base::memo::Memo;
use crate::checks::PromptMemos;
use crate::model::file_cache::FileCache;
use crate::model::mentions::SharedMentions;
use crate::syntax::python_keys::BuiltMemo;
use crate::syntax::YamlDocument;
use crate::tokens::TokenCounts;

/// Results derived from texts alone (token counts, prompt word runs and
/// prose, quoted and built names), kept by a hash of the text (see
/// `memo`). Bounded, and safe to share between threads.
#[derive(Debug, Default)]
pub struct Memos {
    pub tokens: TokenCounts,
    pub(crate) prompts: PromptMemos,
    pub(crate) built: Arc<BuiltMemo>,
    pub(crate) fix_trees: FixTrees,
}

/// Trees of bundle files parsed again for fixes (the model keeps no trees),
/// by text: a report asks for the fixes of every finding, and the fixes of
/// a bundle's findings edit the same few files.
#[derive(Debug)]
pub(crate) struct FixTrees(pub(crate) Memo<YamlDocument>);

impl Default for FixTrees {
    fn default() -> FixTrees {
        FixTrees(Memo::new(64))
    }
}

/// One bundle's cache: the per-file work of its earlier analyses (files are
/// parsed, validated and scanned again only when their bytes changed), what
/// the shared folders beside it mention, and the [`Memos`].
#[derive(Debug, Default)]
pub struct AnalysisCache {
    pub(crate) files: FileCache,
    /// The workflows root the mentions were read under, and them.
    shared: Option<(PathBuf, Arc<SharedMentions>)>,
    memos: Arc<Memos>,
}

impl AnalysisCache {
    /// An empty cache with memos of its own.
    pub fn new() -> AnalysisCache {
        AnalysisCache::default()
    }

    /// An empty cache sharing `memos` with other caches.
    pub fn sharing(memos: Arc<Memos>) -> AnalysisCache {
        AnalysisCache {
            memos,
            ..AnalysisCache::default()
        }
    }

    pub fn memos(&self) -> &Arc<Memos> {
        &self.memos
    }

    /// Uses `shared` as what the shared folders of the workflows root `root`
    /// mention (read once for all the bundles beside each other); `None`
    /// forgets what was kept (a shared file changed), so the next analysis
    /// reads them again.
    pub fn use_shared(&mut self, root: &Path, shared: Option<Arc<SharedMentions>>) {
        self.shared = shared.map(|s| (root.to_path_buf(), s));
    }

    /// What the shared folders of `root` mention, as kept, or new (read by
    /// the first analysis that needs it).
    pub fn shared(&mut self, root: &Path) -> Arc<SharedMentions> {
        match &self.shared {
            Some((kept, shared)) if kept == root => shared.clone(),
            _ => {
                let shared = Arc::new(SharedMentions::of(root));
                self.shared = Some((root.to_path_buf(), shared.clone()));
                shared
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::sync::Arc;

    use super::AnalysisCache;
    use crate::model::mentions::SharedMentions;
    use crate::{analyze, analyze_bundle, FileSystem, RealFs};

    /// What an analysis says, in a comparable form.
    fn outcome(analysis: &crate::Analysis) -> (Vec<String>, Vec<(String, String)>) {
        let diagnostics = analysis
            .diagnostics
            .iter()
            .map(|d| format!("{:?} {:?} {:?} {}", d.rule, d.file, d.range, d.message))
            .collect();
        let files = analysis
            .bundle
            .files
            .iter()
            .map(|f| (f.relative.clone(), f.text.to_string()))
            .collect();
        (diagnostics, files)
    }

    /// A sequence of edits to several files: the cached analysis must equal a
    /// fresh one after each.
    #[test]
    fn cached_analyses_equal_fresh_ones_across_edits() {
        let dir = Path::new("/w/SupportDesk");
        let mut fs = crate::ide::tests::support_desk_fs();
        let mut cache = AnalysisCache::new();
        cache.use_shared(Path::new("/w"), Some(Arc::new(SharedMentions::default())));
        let config = crate::Config::defaults(dir);
        let mut configured = AnalysisCache::new();
        let edits: &[(&str, &str, &str)] = &[
            ("agents.yaml", "name: IntakeAgent", "name: IntakeAgnt"),
            ("tools/lookup_plan.py", "def lookup_plan(", "def find_plan("),
            (
                "transition_graph.yaml",
                "target_agent: ClassifierAgent",
                "target_agent: Nobody",
            ),
            ("agents.yaml", "name: IntakeAgnt", "name: IntakeAgent"),
            ("tools/lookup_plan.py", "def find_plan(", "def lookup_plan("),
            (
                "context_variables.yaml",
                "  ticket_summary:",
                "  ticket_summry:",
            ),
        ];
        let first = analyze(&fs, dir, None, &mut cache);
        assert_eq!(outcome(&first), outcome(&analyze_bundle(&fs, dir)));
        for (file, from, to) in edits {
            let path = dir.join(file);
            let text = String::from_utf8(fs.read(&path).unwrap()).unwrap();
            assert!(text.contains(from), "{from} not in {file}");
            fs.insert(&path, text.replacen(from, to, 1));
            let cached = analyze(&fs, dir, None, &mut cache);
            let fresh = analyze_bundle(&fs, dir);
            assert_eq!(outcome(&cached), outcome(&fresh), "after editing {file}");
            // With settings the prompt checks run too, on the kept memos.
            let cached = analyze(&fs, dir, Some(&config), &mut configured);
            let fresh = analyze(&fs, dir, Some(&config), &mut AnalysisCache::new());
            assert_eq!(outcome(&cached), outcome(&fresh), "after editing {file}");
        }
    }

    /// Bundles analysed together on several threads, sharing one set of
    /// memos, are analysed as each alone.
    #[test]
    fn bundles_analysed_together_equal_each_alone() {
        let dirs = ["/w/SupportDesk", "/w/Second"].map(std::path::PathBuf::from);
        let mut fs = crate::ide::tests::support_desk_fs();
        // A copy of SupportDesk beside it (its folder name mismatches, so
        // the two differ).
        let first = Path::new("/w/SupportDesk");
        let mut stack = vec![first.to_path_buf()];
        while let Some(folder) = stack.pop() {
            for (path, is_dir) in fs.read_dir(&folder).unwrap() {
                if is_dir {
                    stack.push(path);
                } else if let Ok(bytes) = fs.read(&path) {
                    fs.insert(dirs[1].join(path.strip_prefix(first).unwrap()), bytes);
                }
            }
        }
        let configs = dirs.clone().map(|d| crate::Config::defaults(&d));
        let memos = Arc::new(super::Memos::default());
        let together = crate::analyze_bundles(&fs, &dirs, &configs, &memos);
        assert_eq!(together.len(), 2);
        for ((dir, config), analysis) in dirs.iter().zip(&configs).zip(&together) {
            let alone = analyze(&fs, dir, Some(config), &mut AnalysisCache::new());
            assert_eq!(outcome(analysis), outcome(&alone), "{}", dir.display());
        }
    }

    /// A file that is not UTF-8 is kept by its bytes, not by its text (a bad
    /// byte reads as the replacement character): the cache must see it
    /// replaced by another bad byte, or by that character written out.
    #[test]
    fn a_file_that_is_not_utf8_is_kept_by_its_bytes() {
        let dir = Path::new("/w/SupportDesk");
        let mut fs = crate::ide::tests::support_desk_fs();
        let path = dir.join("context_variables.yaml");
        let text = fs.read(&path).unwrap();
        let with = |bad: &[u8]| {
            let mut bytes = b"# ".to_vec();
            bytes.extend_from_slice(bad);
            bytes.push(b'\n');
            bytes.extend_from_slice(&text);
            bytes
        };
        let mut cache = AnalysisCache::new();
        cache.use_shared(Path::new("/w"), Some(Arc::new(SharedMentions::default())));
        fs.insert(path.clone(), with(&[0xFF]));
        let first = analyze(&fs, dir, None, &mut cache);
        fs.insert(path.clone(), with(&[0xFE]));
        let second = analyze(&fs, dir, None, &mut cache);
        let message = |a: &crate::Analysis| {
            a.diagnostics
                .iter()
                .find(|d| d.rule == crate::rules::Rule::InvalidEncoding)
                .map(|d| d.message.clone())
                .unwrap()
        };
        assert!(message(&first).contains("byte 0xff"), "{}", message(&first));
        assert!(
            message(&second).contains("byte 0xfe"),
            "{}",
            message(&second)
        );
        assert_eq!(outcome(&second), outcome(&analyze_bundle(&fs, dir)));
        // The text the bad byte was read as, now written: valid UTF-8.
        fs.insert(path.clone(), with("\u{FFFD}".as_bytes()));
        let third = analyze(&fs, dir, None, &mut cache);
        assert_eq!(outcome(&third), outcome(&analyze_bundle(&fs, dir)));
        assert!(third
            .diagnostics
            .iter()
            .all(|d| d.rule != crate::rules::Rule::InvalidEncoding));
    }

    /// On disk a file rewritten at once with the same length keeps its size
    /// and, within the timestamp granularity, its time: the cache must still
    /// see the change.
    #[test]
    fn a_file_rewritten_within_the_timestamp_granularity_is_seen() {
        let root = std::env::temp_dir().join(format!("mzk-cache-{}", std::process::id()));
        let dir = root.join("SupportDesk");
        let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("../bundles/SupportDesk");
        let mut stack = vec![source.clone()];
        while let Some(from) = stack.pop() {
            for entry in std::fs::read_dir(&from).unwrap() {
                let path = entry.unwrap().path();
                let to = dir.join(path.strip_prefix(&source).unwrap());
                if path.is_dir() {
                    std::fs::create_dir_all(&to).unwrap();
                    stack.push(path);
                } else {
                    std::fs::create_dir_all(to.parent().unwrap()).unwrap();
                    std::fs::copy(&path, &to).unwrap();
                }
            }
        }
        let python = dir.join("tools/lookup_plan.py");
        let original = std::fs::read_to_string(&python).unwrap();
        let mut cache = AnalysisCache::new();
        cache.use_shared(&root, Some(Arc::new(SharedMentions::default())));
        let before = analyze(&RealFs, &dir, None, &mut cache);
        // Same length: `lookup_plan` -> `lookup_plen`.
        std::fs::write(
            &python,
            original.replacen("def lookup_plan(", "def lookup_plen(", 1),
        )
        .unwrap();
        let after = analyze(&RealFs, &dir, None, &mut cache);
        let fresh = analyze_bundle(&RealFs, &dir);
        let _ = std::fs::remove_dir_all(&root);
        assert_ne!(outcome(&before), outcome(&after));
        assert_eq!(outcome(&after), outcome(&fresh));
    }
}
