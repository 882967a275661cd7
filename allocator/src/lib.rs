//! The memory allocator of mzk's binaries: mimalloc instead of the system's.
//!
//! An analysis builds and drops millions of small values (YAML nodes, names,
//! validated objects); glibc's allocator spent a fifth of a large bundle's
//! check consolidating and searching its free lists. Whole `mzk check`,
//! alternating runs against glibc: the 5,000-agent bundle 558 → 486 ms and
//! 146 → 116 MiB at the peak (with the validator releasing the tree as it
//! goes, which under glibc alone cost 170 ms in fragmentation), the 15 real
//! bundles 80 → 74 ms. A binary gets it by calling `configure` first thing
//! in `main`: a crate no code names is not linked, nor is its allocator
//! (so the libraries and the fuzz targets keep the system's).

use libmimalloc_sys::{mi_option_set, mi_option_t};

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// mimalloc.h's `mi_option_purge_delay` (option ordinals are part of
/// mimalloc's interface; libmimalloc-sys names only the older ones).
const PURGE_DELAY: mi_option_t = 15;

/// The environment variable by which a user sets the purge delay, which
/// then stands.
const PURGE_DELAY_VARIABLE: &str = "MIMALLOC_PURGE_DELAY";

/// Returns freed memory to the system at once, not after mimalloc's default
/// second: a check lasts less than that, so every page it ever touched would
/// count in its peak memory (on the 5,000-agent bundle, 116 instead of
/// 150 MiB; the real corpus 35 instead of 38 MiB), and an idle language
/// server keeps only what it holds. A purge delay set in the environment
/// is left as it is.
///
/// # Safety
///
/// Call it before any other thread starts (first thing in `main`): mimalloc
/// stores options as plain integers that every thread reads.
pub unsafe fn configure() {
    if std::env::var_os(PURGE_DELAY_VARIABLE).is_none() {
        // SAFETY: the caller guarantees no other thread runs yet.
        unsafe { mi_option_set(PURGE_DELAY, 0) }
    }
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
        // has (or the environment's): the ordinal is the purge delay's.
        let set: Option<std::os::raw::c_long> = std::env::var(PURGE_DELAY_VARIABLE)
            .ok()
            .and_then(|v| v.parse().ok());
        assert_eq!(get(), set.unwrap_or(1000));
        // SAFETY: this crate's only test: no other test thread runs beside
        // it.
        unsafe { configure() };
        assert_eq!(get(), set.unwrap_or(0));
    }
}
