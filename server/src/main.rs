use std::process::ExitCode;

fn main() -> ExitCode {
    mzk_allocator::configure();
    mzk_server::cli::main()
}
