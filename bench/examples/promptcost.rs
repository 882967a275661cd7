//! Where a keystroke's analysis time goes on the largest real bundle:
//! `cargo run --release -p mzk-bench --example promptcost -- DIR`.
use std::time::Instant;

fn main() {
    let dir = std::path::PathBuf::from(std::env::args().nth(1).expect("bundle dir"));
    mzk_analyzer::tokens::preload();
    let limits = mzk_analyzer::prompt::PromptLimits::default();
    for round in 0..5 {
        let t = Instant::now();
        let analysis = mzk_analyzer::analyze_bundle(&mzk_analyzer::RealFs, &dir);
        let analyse = t.elapsed();
        let t = Instant::now();
        let mut out = Vec::new();
        mzk_analyzer::checks::prompt_findings(&analysis.bundle, &limits, &mut out);
        let prompts = t.elapsed();
        println!(
            "round {round}: analysis {analyse:?}, prompt checks {prompts:?} ({} findings)",
            out.len()
        );
    }
}
