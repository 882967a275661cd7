//! Writes `$OUT_DIR/o200k_base.vocab`: the o200k_base vocabulary as a table
//! `src/tokens` reads in place (no decoding, no allocation): every token's
//! bytes sorted, with its rank (its id, the merge priority of byte-pair
//! encoding), and a hash index over them (`src/tokens/index.rs`), so a token
//! is found in one or two probes. About 5.5 MB, where bpe-openai embeds 32 MB
//! of prebuilt search automata for the same encoding.
//!
//! Layout, all integers u32 little-endian: the token count N; N + 1 offsets
//! of each token's bytes in the byte area (sorted by bytes); N ranks in the
//! same order; the index's slots, each 0 (empty) or 1 + a token's position
//! in the sorted order; then the byte area.

use std::path::PathBuf;

#[path = "src/tokens/index.rs"]
mod index;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=src/tokens/index.rs");
    let bpe = &bpe_openai::o200k_base().bpe;
    let count = bpe.num_tokens();
    let mut tokens: Vec<(&[u8], u32)> = (0..count as u32)
        .map(|rank| (bpe.token_bytes(rank), rank))
        .collect();
    tokens.sort_unstable();
    assert!(
        tokens.windows(2).all(|w| w[0].0 != w[1].0),
        "o200k_base has no duplicate tokens"
    );
    let mut table = Vec::new();
    let put = |table: &mut Vec<u8>, n: usize| {
        table.extend_from_slice(&u32::try_from(n).expect("fits u32").to_le_bytes())
    };
    put(&mut table, count);
    let mut offset = 0;
    for (bytes, _) in &tokens {
        put(&mut table, offset);
        offset += bytes.len();
    }
    put(&mut table, offset);
    for (_, rank) in &tokens {
        put(&mut table, *rank as usize);
    }
    let mut slots = vec![0usize; index::INDEX_SLOTS];
    for (position, (bytes, _)) in tokens.iter().enumerate() {
        let mut slot = index::first_slot(bytes);
        while slots[slot] != 0 {
            slot = index::next_slot(slot);
        }
        slots[slot] = position + 1;
    }
    for entry in slots {
        put(&mut table, entry);
    }
    for (bytes, _) in &tokens {
        table.extend_from_slice(bytes);
    }
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR is set for build scripts"));
    std::fs::write(out.join("o200k_base.vocab"), table).expect("write the vocabulary");
}
