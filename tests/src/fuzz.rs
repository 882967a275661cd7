//! The entry points of the fuzz targets (`fuzz/`), here so that the inputs
//! the fuzzer found crashing are replayed by `cargo test` as regression tests
//! (`tests/tests/fuzz_regressions.rs`). Each takes arbitrary bytes and must
//! return without panicking, whatever they hold.

use std::path::{Path, PathBuf};

use mzk_analyzer::base::FileId;
use mzk_analyzer::{analyze, Analysis, AnalysisCache, Config, MemoryFs};

/// Keeps the input about to run in the file `MZK_FUZZ_LAST_INPUT` names (an
/// 8-byte little-endian length, then the bytes), written in one call before
/// each run. A death that no handler survives (a stack overflow, SIGKILL)
/// leaves no libFuzzer artifact, but this file still holds its input, which
/// scripts/fuzz.py then keeps as the reproducer.
pub fn record(data: &[u8]) {
    use std::os::unix::fs::FileExt;
    static FILE: std::sync::OnceLock<Option<std::fs::File>> = std::sync::OnceLock::new();
    let file = FILE.get_or_init(|| {
        let path = std::env::var_os("MZK_FUZZ_LAST_INPUT")?;
        std::fs::File::create(path).ok()
    });
    if let Some(file) = file {
        let mut record = Vec::with_capacity(8 + data.len());
        record.extend_from_slice(&(data.len() as u64).to_le_bytes());
        record.extend_from_slice(data);
        let _ = file.write_all_at(&record, 0);
    }
}

/// The YAML syntax layer: the spanned tree with YAML 1.1 resolution.
pub fn yaml(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let mut diagnostics = Vec::new();
    let _ = mzk_analyzer::syntax::parse(&text, FileId(0), &mut diagnostics);
}

/// The `context_expression` grammar.
pub fn expression(data: &[u8]) {
    let _ = mzk_analyzer::syntax::expression::parse(&String::from_utf8_lossy(data));
}

/// Where the chunks of a bundle input go, in order (chunks are separated by
/// NUL bytes; missing chunks are missing files).
pub const BUNDLE_FILES: &[&str] = &[
    "orchestrator.yaml",
    "agents.yaml",
    "transition_graph.yaml",
    "context_variables.yaml",
    "tools.yaml",
    "structured_outputs.yaml",
    "middleware.yaml",
    "ui_config.yaml",
    "extended_orchestration/task_batches.yaml",
    "tools/a.py",
    "tools/b.py",
];

/// Joins files into a bundle input (for seeds and regression files).
pub fn bundle_input(files: &[&[u8]]) -> Vec<u8> {
    files.join(&0u8)
}

/// The whole analysis of a bundle assembled from the input, with the default
/// configuration applied (the prompt checks run then), every fix computed,
/// and the editor features asked at a spread of offsets.
pub fn bundle(data: &[u8]) {
    let analysis = bundle_analysis(data);
    for d in &analysis.diagnostics {
        let _ = mzk_analyzer::ide::fixes(&analysis, d);
    }
    for file in &analysis.bundle.files {
        let len = file.text.len() as u32;
        for offset in (0..=len).step_by((len as usize / 16).max(1)) {
            let _ = mzk_analyzer::ide::hover(&analysis, file.id, offset);
            let _ = mzk_analyzer::ide::definition(&analysis, file.id, offset);
        }
    }
}

/// The analysis of the bundle a `bundle` input describes.
pub fn bundle_analysis(data: &[u8]) -> Analysis {
    let dir = Path::new("/w/Fuzz");
    let mut fs = MemoryFs::new();
    for (chunk, path) in data.split(|b| *b == 0).zip(BUNDLE_FILES) {
        fs.insert(PathBuf::from(dir).join(path), chunk.to_vec());
    }
    let config = Config::defaults(dir);
    analyze(&fs, dir, Some(&config), &mut AnalysisCache::new())
}

/// The language server's message handling: the bytes are the whole input
/// stream of a session (frames or garbage); the server must answer and end
/// when the stream ends, within a few seconds.
pub fn lsp(data: &[u8]) {
    use tokio::io::AsyncWriteExt;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let (mut client, server_end) = tokio::io::duplex(1 << 16);
        let (server_read, server_write) = tokio::io::split(server_end);
        let server = tokio::spawn(mzk_server::lsp::serve(server_read, server_write));
        let data = data.to_vec();
        let (mut client_read, mut client_write) = tokio::io::split(&mut client);
        let write = async {
            let _ = client_write.write_all(&data).await;
            let _ = client_write.shutdown().await;
        };
        // Whatever the server answers is read and dropped.
        let mut sink = tokio::io::sink();
        let read = tokio::io::copy(&mut client_read, &mut sink);
        let session = async {
            let _ = tokio::join!(write, read);
        };
        let ended = tokio::time::timeout(std::time::Duration::from_secs(5), async {
            tokio::select! {
                _ = session => {}
                _ = server => {}
            }
        })
        .await;
        assert!(
            ended.is_ok(),
            "the server did not end within 5 s of its input ending"
        );
    });
}
