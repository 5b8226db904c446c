//! The `wirebench` binary: parse, run, exit code.
// Outside tests a panic on bad data is a bug: invariants that cannot fail say why with an
// #[allow] and its reason (issue 16).
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

/// glibc malloc, with small over-aligned blocks (tokio's per-socket state) aligned by hand.
#[global_allocator]
static ALLOCATOR: wirebench::sys::alloc::Allocator = wirebench::sys::alloc::Allocator;

fn main() -> std::process::ExitCode {
    wirebench::app::main()
}
