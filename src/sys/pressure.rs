//! CPU pressure (Linux PSI, `/proc/pressure/cpu`): how long runnable tasks waited for a CPU;
//! and per thread, how long it ran and waited to run (schedstat). A diagnosis reads them over a
//! run, so that a tail the machine made (a loaded host taking the CPU from the client or the
//! server for milliseconds) is not blamed on the target, and a generator that never idles is
//! seen as saturated even when a contended host gave it only part of a CPU.

/// The `some` line's `total`: µs during which at least one task waited for a CPU.
pub fn cpu_waited_us() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/pressure/cpu").ok()?;
    let some = text.lines().find(|l| l.starts_with("some "))?;
    some.split_whitespace()
        .find_map(|w| w.strip_prefix("total="))?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_total_only_grows() {
        let Some(a) = super::cpu_waited_us() else {
            return; // a kernel without PSI: nothing to read, nothing to assert
        };
        assert!(super::cpu_waited_us().unwrap() >= a);
    }
}

/// Time a thread spent on a CPU and waiting in a run queue for one, ns
/// (`/proc/self/task/TID/schedstat`): together, the time it could have run. A thread whose
/// sum grows as fast as the clock never slept: it was CPU-bound, even on a host so contended
/// that it got a CPU only part of that time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ThreadTimes {
    /// On a CPU, ns.
    pub run_ns: u64,
    /// Runnable, waiting for a CPU, ns.
    pub wait_ns: u64,
    /// Times it gave up the CPU itself, to wait for something (`voluntary_ctxt_switches`): a
    /// thread that always has work has next to none, however often it is preempted.
    pub sleeps: u64,
}

/// The [`ThreadTimes`] of this process's threads whose name starts with `prefix`, by thread id.
pub fn threads_named(prefix: &str) -> Vec<(u32, ThreadTimes)> {
    let Ok(dir) = std::fs::read_dir("/proc/self/task") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| {
            let tid = e.file_name().to_str()?.parse().ok()?;
            let comm = std::fs::read_to_string(e.path().join("comm")).ok()?;
            if !comm.starts_with(prefix) {
                return None;
            }
            let stat = std::fs::read_to_string(e.path().join("schedstat")).ok()?;
            let mut f = stat.split_whitespace().filter_map(|w| w.parse().ok());
            let status = std::fs::read_to_string(e.path().join("status")).ok()?;
            let sleeps = status
                .lines()
                .find_map(|l| l.strip_prefix("voluntary_ctxt_switches:"))?
                .trim()
                .parse()
                .ok()?;
            Some((
                tid,
                ThreadTimes {
                    run_ns: f.next()?,
                    wait_ns: f.next()?,
                    sleeps,
                },
            ))
        })
        .collect()
}

#[cfg(test)]
mod thread_tests {
    #[test]
    fn a_spinning_thread_could_always_run() {
        let t = std::thread::Builder::new()
            .name("wbtest-spin".into())
            .spawn(|| {
                let end = std::time::Instant::now() + std::time::Duration::from_millis(300);
                while std::time::Instant::now() < end {
                    std::hint::spin_loop();
                }
            })
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(50));
        let a = super::threads_named("wbtest-spin");
        std::thread::sleep(std::time::Duration::from_millis(100));
        let b = super::threads_named("wbtest-spin");
        t.join().unwrap();
        if a.is_empty() {
            return; // no schedstat on this kernel
        }
        let (x, y) = (a[0].1, b[0].1);
        let grew = (y.run_ns + y.wait_ns) - (x.run_ns + x.wait_ns);
        assert!(
            grew >= 60_000_000,
            "a spinning thread could run {grew} ns of 100 ms"
        );
        assert!(
            y.sleeps - x.sleeps < 5,
            "a spinning thread does not sleep: {x:?} {y:?}"
        );
    }
}
