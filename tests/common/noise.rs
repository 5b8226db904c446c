//! An induced noise source for the tests of verdicts (issue 17): a CPU hog pinned beside the
//! reference servers, started and stopped (by its PID) by the test. The servers and the hog
//! share one CPU and the client has the other, so the servers' service time is disturbed the
//! way a noisy neighbour disturbs a cloud VM, and the client measures it without being the
//! bottleneck. On a machine with a single CPU everything shares it.
//!
//! The tests run few trials in CI; `WIREBENCH_NOISE=full` runs the counts (40
//! comparisons, 10 searches per protocol and step), as bench/noise_verdicts.sh does.

use super::{bin_via, run_bounded_with, ServerProcess};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

/// A busy loop pinned to the servers' CPU, killed when dropped.
pub struct Hog {
    child: Child,
}

impl Hog {
    /// Starts the hog on [`server_cpu`].
    pub fn beside_the_servers() -> Hog {
        let child = Command::new("taskset")
            .args([
                "-c",
                &server_cpu().to_string(),
                "sh",
                "-c",
                "while :; do :; done",
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start the CPU hog (taskset, from util-linux)");
        Hog { child }
    }
}

impl Drop for Hog {
    fn drop(&mut self) {
        // Our own child, by its PID (taskset execs the shell, so the PID is the loop's).
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The CPU of the servers and the hog: the second, when there are two.
pub fn server_cpu() -> usize {
    usize::from(cpus() >= 2)
}

/// The client's CPU: the first.
pub fn client_cpu() -> usize {
    0
}

/// The binary pinned to `cpu` (`taskset -c CPU wirebench`).
pub fn pinned(cpu: usize) -> Command {
    let cpu = cpu.to_string();
    bin_via(&["taskset", "-c", &cpu])
}

/// `wirebench serve tcp ARGS` on the servers' CPU.
pub fn server(args: &[&str]) -> ServerProcess {
    ServerProcess::start_with(pinned(server_cpu()), args)
}

/// `wirebench ARGS` on the client's CPU, bounded by `limit`.
pub fn client(args: &[&str], limit: Duration) -> Output {
    run_bounded_with(pinned(client_cpu()), args, limit).0
}

/// Whether the full counts were asked for (`WIREBENCH_NOISE=full`).
pub fn full() -> bool {
    std::env::var("WIREBENCH_NOISE").is_ok_and(|v| v == "full")
}

/// `ci` trials in CI, `full` with `WIREBENCH_NOISE=full`.
pub fn trials(ci: usize, full_count: usize) -> usize {
    if full() {
        full_count
    } else {
        ci
    }
}
