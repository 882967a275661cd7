#![no_main]
//! Fuzz target: see `mzk_tests::fuzz::yaml`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| mzk_tests::fuzz::yaml(data));
