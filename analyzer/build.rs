//! Writes `$OUT_DIR/o200k_base.vocab`: the o200k_base vocabulary as a table
//! `src/tokens` reads in place (no decoding, no allocation): a hash index
//! (`src/tokens/index.rs`) whose slots hold each token's place in a byte
//! area and its rank (its id, the merge priority of byte-pair encoding), so
//! a lookup reads one slot and compares one run of bytes. About 5.6 MB,
//! where bpe-openai embeds 32 MB of prebuilt search automata for the same
//! encoding.
//!
//! Layout, all integers u32 little-endian: the token count N; the index's
//! slots, two words each, 0 and 0 when empty, else the token's offset in
//! the byte area shifted left by 8 with its length in the low byte, then
//! its rank; then the byte area (the tokens in sorted order).

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
    let mut slots = vec![(0usize, 0usize); index::INDEX_SLOTS];
    let mut offset = 0;
    for (bytes, rank) in &tokens {
        assert!(
            (1..256).contains(&bytes.len()) && offset < 1 << 24,
            "a token's length fits the slot's low byte and its offset the other three"
        );
        let mut slot = index::first_slot(bytes);
        while slots[slot] != (0, 0) {
            slot = index::next_slot(slot);
        }
        slots[slot] = (offset << 8 | bytes.len(), *rank as usize);
        offset += bytes.len();
    }
    for (place, rank) in slots {
        put(&mut table, place);
        put(&mut table, rank);
    }
    for (bytes, _) in &tokens {
        table.extend_from_slice(bytes);
    }
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR is set for build scripts"));
    std::fs::write(out.join("o200k_base.vocab"), table).expect("write the vocabulary");
}
