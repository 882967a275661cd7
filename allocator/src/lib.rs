//! The memory allocator of mzk's binaries: mimalloc instead of the system's.
//!
//! An analysis builds and drops millions of small values (YAML nodes, names,
//! validated objects); glibc's allocator spent a fifth of a large bundle's
//! check consolidating and searching its free lists. Whole `mzk check`,
//! alternating runs against glibc: the 5,000-agent bundle 558 → 486 ms and
//! 146 → 116 MiB at the peak (with the validator releasing the tree as it
//! goes, which under glibc alone cost 170 ms in fragmentation), the 15 real
//! bundles 80 → 74 ms. Linking this crate installs it; `configure` is called
//! first thing in `main`.

use libmimalloc_sys::{mi_option_set, mi_option_t};

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// mimalloc.h's `mi_option_purge_delay` (option ordinals are part of
/// mimalloc's interface; libmimalloc-sys names only the older ones).
const PURGE_DELAY: mi_option_t = 15;

/// Returns freed memory to the system at once, not after mimalloc's default
/// second: a check lasts less than that, so every page it ever touched would
/// count in its peak memory (on the 5,000-agent bundle, 116 instead of
/// 150 MiB; the real corpus 35 instead of 38 MiB), and an idle language server keeps only what it holds.
pub fn configure() {
    // SAFETY: sets a plain integer option; mimalloc reads options at each
    // use, so this takes effect for all memory freed from now on.
    unsafe { mi_option_set(PURGE_DELAY, 0) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use libmimalloc_sys::mi_option_get;

    #[test]
    fn configure_sets_the_purge_delay() {
        // SAFETY: reads a plain integer option.
        let get = || unsafe { mi_option_get(PURGE_DELAY) };
        // mimalloc 3's default purge delay, a value no neighbouring option
        // has: the ordinal is the purge delay's.
        assert_eq!(get(), 1000);
        configure();
        assert_eq!(get(), 0);
    }
}
