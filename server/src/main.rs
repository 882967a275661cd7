use std::process::ExitCode;

fn main() -> ExitCode {
    // SAFETY: the first statement of main; no other thread exists yet.
    unsafe { mzk_allocator::configure() };
    mzk_server::cli::main()
}
