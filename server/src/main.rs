use std::process::ExitCode;

fn main() -> ExitCode {
    mzk_server::cli::main()
}
