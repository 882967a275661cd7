#![no_main]
//! Fuzz target: see `mzk_tests::fuzz::bundle`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| mzk_tests::fuzz::bundle(data));
