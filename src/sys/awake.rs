//! Keeping a CPU ready to run a timer's thread on time: the reference servers' `--delay`.
//!
//! A timer that expires on an idle CPU first has to wake that CPU. On a KVM guest whose idle
//! vCPUs halt (no guest halt-polling, as on the 2-vCPU VM this was measured on), that wake-up
//! goes through the host and came 30–60 µs late at p50 and 1–4 ms at p99 beside other builds
//! (a C loop on a timerfd, pinned: bench/results/delay.txt). With a machine-wide CPU latency
//! request of 0 µs (PM QoS, `/dev/cpu_dma_latency`, as tuned's latency-performance profile
//! sets), cpuidle picks its polling state instead of halting, and the same loop's p99 fell to
//! 0.1–0.6 ms under the same load. The request lasts while its descriptor is open: the kernel
//! drops it when the process exits, however it exits. It costs power (an idle CPU spins
//! instead of sleeping) and is machine-wide, so a server takes it only with `--delay`.
//!
//! SCHED_FIFO ([`realtime`]) lets the woken thread run before the ordinary (CFS) threads that
//! share its CPU instead of waiting for their slice to end.

use std::fs::File;
use std::io::{self, Write};

/// The PM QoS device: a 32-bit latency in µs written to an open descriptor holds the request.
const CPU_DMA_LATENCY: &str = "/dev/cpu_dma_latency";

/// A held request that no CPU sleeps deeper than it can leave at once; dropped, it is released.
#[derive(Debug)]
pub struct CpuAwake {
    _file: File,
}

impl CpuAwake {
    /// Asks every CPU to poll rather than sleep while idle, as long as the result lives. Needs
    /// root (the device is mode 0600) and a kernel with PM QoS; the error says why not.
    pub fn hold() -> io::Result<CpuAwake> {
        let mut file = File::options().write(true).open(CPU_DMA_LATENCY)?;
        file.write_all(&0i32.to_ne_bytes())?;
        Ok(CpuAwake { _file: file })
    }
}

/// Priority of the server threads under `--realtime`: above every CFS thread, below the
/// kernel's own real-time threads (which use 50 and up) and anything an admin set higher.
pub const REALTIME_PRIORITY: i32 = 10;

/// Runs the calling thread, and every thread it starts from now on, under SCHED_FIFO at
/// [`REALTIME_PRIORITY`]. Needs root (CAP_SYS_NICE) or an RLIMIT_RTPRIO. The kernel's real-time
/// throttling (by default 95% of each second) still leaves the CPU to others if a thread spins.
pub fn realtime() -> io::Result<()> {
    let param = libc::sched_param {
        sched_priority: REALTIME_PRIORITY,
    };
    // SAFETY: `param` is a valid sched_param for the duration of the call; pid 0 is this thread.
    if unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hold_works_as_root_or_says_why_not() {
        match CpuAwake::hold() {
            Ok(held) => drop(held),
            Err(e) => assert!(
                matches!(
                    e.kind(),
                    io::ErrorKind::PermissionDenied | io::ErrorKind::NotFound
                ),
                "{e}"
            ),
        }
    }
}
