// The binary the end-to-end tests run: `mzk` itself, allocator included.
fn main() -> std::process::ExitCode {
    // SAFETY: the first statement of main; no other thread exists yet.
    unsafe { mzk_allocator::configure() };
    mzk_server::cli::main()
}
