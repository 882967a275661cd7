//! Writes `$OUT_DIR/o200k_base.bpe.zst`: the o200k_base byte-pair encoding
//! (its token table and search automata, as bpe-openai builds them),
//! serialized and zstd-compressed. bpe-openai embeds the same data
//! uncompressed, 32 MB of a 45 MB binary; compressed it is about 13 MB, and
//! decompressing it on first use costs some 40 ms (src/tokens.rs).

use std::io::Write;
use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let tokenizer = bpe_openai::o200k_base();
    let serialized = rmp_serde::to_vec(&tokenizer.bpe).expect("serialize the o200k_base encoding");
    // The smallest output for what ships; a quick level for debug builds,
    // whose binaries are never distributed.
    let level = if std::env::var("PROFILE").as_deref() == Ok("release") {
        19
    } else {
        3
    };
    let mut encoder = zstd::stream::Encoder::new(Vec::new(), level).expect("zstd encoder");
    encoder
        .long_distance_matching(true)
        .expect("zstd long distance matching");
    encoder
        .write_all(&serialized)
        .expect("compress the encoding");
    let compressed = encoder.finish().expect("finish compressing the encoding");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR is set for build scripts"));
    std::fs::write(out.join("o200k_base.bpe.zst"), compressed)
        .expect("write the compressed encoding");
    std::fs::write(out.join("o200k_base.bpe.len"), serialized.len().to_string())
        .expect("write the encoding's length");
}
