//! A seeded pseudo-random stream (xorshift64) for the tests' generated
//! inputs: the same texts on every run, so a failure reproduces.

pub(crate) fn xorshift(mut state: u64) -> impl FnMut() -> u64 {
    move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    }
}
