//! In-process timings over a folder of bundles, printed as JSON:
//! - `parse_only`: saphyr-parser's event stream over every YAML file (the floor
//!   any YAML-based checker pays);
//! - `syntax`: mzk's spanned tree with YAML 1.1 resolution;
//! - `analysis`: mzk's whole analysis (discovery, read, parse, validate, lower,
//!   checks, Python bindings), one bundle after the other;
//! - `analysis_parallel`: the same as `mzk check` runs it, bundles spread over the cores;
//! - `prompt_checks`: the MZ8xx checks alone with the default limits, on the
//!   analysed bundles (part of `analysis`; the language server runs them on
//!   every change);
//! - `prompt_tokens`: composing every agent's prompt and counting its tokens
//!   and its parts' (what `mzk context` does), with the tokenizer loaded.
//!
//! `analysis` and `analysis_parallel` apply the default configuration, which
//! runs the prompt checks, as `mzk check` does.
//!
//! Each is run `--iterations` times after a warm-up; median and minimum are
//! reported in milliseconds.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use mzk_analyzer::base::FileId;
use mzk_analyzer::model::mentions::SharedMentions;
use mzk_analyzer::prompt::{compose, PromptLimits};
use mzk_analyzer::{
    analyze, analyze_bundles, discover_bundles, AnalysisCache, Config, Memos, RealFs,
};

fn yaml_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            yaml_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "yaml") {
            out.push(path);
        }
    }
}

fn measure(iterations: usize, mut f: impl FnMut() -> usize) -> (f64, f64, usize) {
    let check = f(); // warm-up, and a value the optimiser cannot drop
    let mut times: Vec<f64> = (0..iterations)
        .map(|_| {
            let start = Instant::now();
            assert_eq!(f(), check);
            start.elapsed().as_secs_f64() * 1000.0
        })
        .collect();
    times.sort_by(f64::total_cmp);
    (times[times.len() / 2], times[0], check)
}

fn main() {
    // SAFETY: the first statement of main; no other thread exists yet.
    unsafe { mzk_allocator::configure() };
    let mut args = std::env::args().skip(1);
    let root = PathBuf::from(
        args.next()
            .expect("usage: mzk-bench FOLDER [--iterations N] [--phase syntax|parse_only]"),
    );
    let mut iterations = 30;
    let mut phase = None;
    while let Some(flag) = args.next() {
        let value = args.next().expect("a value after the flag");
        match flag.as_str() {
            "--iterations" => iterations = value.parse().expect("a number"),
            "--phase" => phase = Some(value),
            _ => panic!("unknown flag {flag}"),
        }
    }
    let bundles = discover_bundles(&RealFs, &root);
    let mut files = Vec::new();
    for bundle in &bundles {
        yaml_files(bundle, &mut files);
    }
    let texts: Vec<String> = files
        .iter()
        .map(|f| std::fs::read_to_string(f).unwrap())
        .collect();
    let bytes: usize = texts.iter().map(String::len).sum();

    // One phase alone (`--phase syntax|parse_only`), for `perf stat`: the
    // instructions it retires are steadier than time on a shared machine.
    let yaml_events = |texts: &[String]| -> usize {
        texts
            .iter()
            .map(|t| {
                saphyr_parser::Parser::new_from_str(t)
                    .take_while(Result::is_ok)
                    .count()
            })
            .sum()
    };
    let yaml_tree = |texts: &[String]| -> usize {
        texts
            .iter()
            .map(|t| {
                let mut diagnostics = Vec::new();
                let doc = mzk_analyzer::syntax::parse(t, FileId(0), &mut diagnostics);
                doc.root.is_some() as usize + diagnostics.len()
            })
            .sum()
    };
    if let Some(phase) = phase {
        let (median, min, _) = match phase.as_str() {
            "syntax" => measure(iterations, || yaml_tree(&texts)),
            "parse_only" => measure(iterations, || yaml_events(&texts)),
            _ => panic!("--phase syntax or parse_only"),
        };
        println!("{{\"phase\": \"{phase}\", \"median_ms\": {median:.3}, \"min_ms\": {min:.3}}}");
        return;
    }
    let parse_only = measure(iterations, || yaml_events(&texts));
    let syntax = measure(iterations, || yaml_tree(&texts));
    // Each run starts with empty memos, as each `mzk check` process does.
    let analysis = measure(iterations, || {
        let memos = Arc::new(Memos::default());
        let shared = Arc::new(SharedMentions::of(&root));
        discover_bundles(&RealFs, &root)
            .iter()
            .map(|b| {
                let mut cache = AnalysisCache::sharing(memos.clone());
                cache.use_shared(b.parent().unwrap_or(b), Some(shared.clone()));
                let config = Config::defaults(b);
                let analysis = analyze(&RealFs, b, Some(&config), &mut cache);
                analysis.diagnostics.len() + 1
            })
            .sum()
    });
    // What `mzk check` runs: the same analysis, bundles spread over the cores.
    let analysis_parallel = measure(iterations, || {
        let memos = Arc::new(Memos::default());
        let dirs = discover_bundles(&RealFs, &root);
        let configs: Vec<Config> = dirs.iter().map(|d| Config::defaults(d)).collect();
        let analyses = analyze_bundles(&RealFs, &dirs, &configs, &memos);
        analyses.iter().map(|a| a.diagnostics.len() + 1).sum()
    });
    // Without settings: the prompt checks are timed alone below.
    let analyses = analyze_bundles(&RealFs, &bundles, &[], &Arc::new(Memos::default()));
    let limits = PromptLimits::default();
    let prompt_memos = mzk_analyzer::checks::PromptMemos::default();
    let token_counts = mzk_analyzer::tokens::TokenCounts::default();
    let prompt_checks = measure(iterations, || {
        analyses
            .iter()
            .map(|a| {
                let mut out = Vec::new();
                mzk_analyzer::checks::prompt_findings(
                    &a.bundle,
                    &limits,
                    true,
                    &prompt_memos,
                    &token_counts,
                    &mut out,
                );
                out.len() + 1
            })
            .sum()
    });
    let prompt_chars: usize = analyses
        .iter()
        .flat_map(|a| compose(&a.bundle))
        .map(|p| p.text.len())
        .sum();
    // Unmemoized: each iteration tokenizes every text again.
    let count = |text: &str| mzk_analyzer::tokens::count(text);
    // The bundle with the most prompt text (AppGenerator in the real corpus):
    // its prompts tokenized once each, as `mzk context` sizes them.
    let largest = analyses
        .iter()
        .max_by_key(|a| {
            compose(&a.bundle)
                .iter()
                .map(|p| p.text.len())
                .sum::<usize>()
        })
        .expect("a bundle");
    let largest_prompts = compose(&largest.bundle);
    let largest_bytes: usize = largest_prompts.iter().map(|p| p.text.len()).sum();
    let largest_tokens = measure(iterations, || {
        largest_prompts.iter().map(|p| count(&p.text)).sum()
    });
    let prompt_tokens = measure(iterations, || {
        analyses
            .iter()
            .flat_map(|a| compose(&a.bundle))
            .map(|p| count(&p.text) + p.parts.iter().map(|part| count(&part.text)).sum::<usize>())
            .sum()
    });
    let row = |(median, min, _): (f64, f64, usize)| {
        format!("{{\"median_ms\": {median:.3}, \"min_ms\": {min:.3}}}")
    };
    println!(
        "{{\"bundles\": {}, \"yaml_files\": {}, \"yaml_bytes\": {bytes}, \"iterations\": {iterations}, \"parse_only\": {}, \"syntax\": {}, \"analysis\": {}, \"analysis_parallel\": {}, \"prompt_checks\": {}, \"prompt_tokens\": {}, \"prompt_bytes\": {prompt_chars}, \"largest_prompts\": {{\"bundle\": \"{}\", \"bytes\": {largest_bytes}, \"tokens\": {}, \"tokenize\": {}}}, \"threads\": {}}}",
        bundles.len(),
        files.len(),
        row(parse_only),
        row(syntax),
        row(analysis),
        row(analysis_parallel),
        row(prompt_checks),
        row(prompt_tokens),
        largest.bundle.folder_name,
        largest_tokens.2,
        row(largest_tokens),
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
}
