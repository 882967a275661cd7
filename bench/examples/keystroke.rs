//! Where one keystroke's re-analysis goes on the largest real bundle, as
//! the language server does it (file cache warm, configuration applied):
//! `cargo run --release -p mzk-bench --example keystroke -- DIR`.
use std::time::Instant;

use std::sync::Arc;

use mzk_analyzer::model::mentions::SharedMentions;
use mzk_analyzer::{analyze, AnalysisCache, Config, MemoryFs, RealFs};

fn main() {
    // SAFETY: the first statement of main; no other thread exists yet.
    unsafe { mzk_allocator::configure() };
    let dir = std::path::PathBuf::from(std::env::args().nth(1).expect("bundle dir"));
    let mut fs = MemoryFs::new();
    let mut stack = vec![dir.clone()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                fs.insert(p.clone(), std::fs::read(&p).unwrap());
            }
        }
    }
    let agents = dir.join("agents.yaml");
    let text = String::from_utf8(std::fs::read(&agents).unwrap()).unwrap();
    let mut cache = AnalysisCache::new();
    cache.use_shared(
        dir.parent().unwrap_or(&dir),
        Some(Arc::new(SharedMentions::default())),
    );
    let config = Config::discover(&RealFs, &dir).unwrap();
    let prompt_memos = mzk_analyzer::checks::PromptMemos::default();
    let token_counts = mzk_analyzer::tokens::TokenCounts::default();
    for k in 0..8 {
        fs.insert(
            agents.clone(),
            text.replacen("description:", &format!("description: v{k}"), 1)
                .into_bytes(),
        );
        let t = Instant::now();
        let analysis = analyze(&fs, &dir, Some(&config), &mut cache);
        let analysed = t.elapsed();
        let t2 = Instant::now();
        let mut out = Vec::new();
        mzk_analyzer::checks::prompt_findings(
            &analysis.bundle,
            &mzk_analyzer::prompt::PromptLimits::default(),
            true,
            &prompt_memos,
            &token_counts,
            &mut out,
        );
        let prompts = t2.elapsed();
        println!("edit {k}: analysis with configuration {analysed:?}, prompt checks alone again {prompts:?}");
    }
}
