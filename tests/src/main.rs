fn main() -> std::process::ExitCode {
    mzk_server::cli::main()
}
