//! The `wirebench` binary: parse, run, exit code.
// Outside tests a panic on bad data is a bug: invariants that cannot fail say why with an
// #[allow] and its reason (issue 16).
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

fn main() -> std::process::ExitCode {
    wirebench::app::main()
}
