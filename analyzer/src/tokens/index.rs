//! Where a token's bytes sit in the vocabulary's hash index: shared by
//! build.rs, which writes the index, and the tokenizer, which reads it, so
//! the two cannot disagree.

/// The index has 2^19 slots for o200k_base's ~200,000 tokens: under 40%
/// full, so a lookup probes 1.3 slots on average.
pub const INDEX_BITS: u32 = 19;

pub const INDEX_SLOTS: usize = 1 << INDEX_BITS;

/// The first slot to probe for `bytes`: FNV-1a, then MurmurHash3's final
/// mix, whose top bits are taken (FNV's own top bits cluster on short
/// tokens: runs of 8,000 full slots). The table is fixed: no seed.
pub fn first_slot(bytes: &[u8]) -> usize {
    let mut hash = fnv1a(bytes);
    hash ^= hash >> 33;
    hash = hash.wrapping_mul(0xff51_afd7_ed55_8ccd);
    hash ^= hash >> 33;
    hash = hash.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    hash ^= hash >> 33;
    (hash >> (64 - INDEX_BITS)) as usize
}

/// The slot probed after `slot` (linear probing).
pub fn next_slot(slot: usize) -> usize {
    (slot + 1) & (INDEX_SLOTS - 1)
}

/// FNV-1a, 64 bits: also what decides where token counts are cut into chunks.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        hash = (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    hash
}
