#![no_main]
//! Fuzz target: see `mzk_tests::fuzz::lsp` (and `record`, which keeps the
//! input being run for scripts/fuzz.py).

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    mzk_tests::fuzz::record(data);
    mzk_tests::fuzz::lsp(data)
});
