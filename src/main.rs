//! The `wirebench` binary: parse, run, exit code.

fn main() -> std::process::ExitCode {
    wirebench::app::main()
}
