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

/// The host's CPU state at one instant: PSI's waiting total and `/proc/stat`'s steal and total
/// jiffies. Two of them give the machine's state over a run ([`Snapshot::since`]).
#[derive(Clone, Copy, Debug)]
pub struct Snapshot {
    at: std::time::Instant,
    waited_us: Option<u64>,
    /// (steal, all) jiffies of the `cpu` line.
    steal: Option<(u64, u64)>,
}

/// The machine's state over a span: how contended its CPUs were, apart from what wirebench did.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MachineLoad {
    /// % of the span during which at least one runnable task waited for a CPU (PSI `some`).
    pub cpu_pressure_percent: Option<f64>,
    /// % of the CPUs' time the hypervisor gave to other guests (`/proc/stat` steal).
    pub steal_percent: Option<f64>,
}

/// The `cpu` line of `/proc/stat`: (steal, the sum of every field), jiffies.
fn steal_jiffies() -> Option<(u64, u64)> {
    let text = std::fs::read_to_string("/proc/stat").ok()?;
    steal_of(text.lines().next()?)
}

/// (steal, total) from a `/proc/stat` `cpu` line: user nice system idle iowait irq softirq
/// steal guest guest_nice (guest time is already counted in user, so it is left out).
fn steal_of(line: &str) -> Option<(u64, u64)> {
    let mut f = line.split_whitespace();
    (f.next()? == "cpu").then_some(())?;
    let v: Vec<u64> = f.filter_map(|w| w.parse().ok()).collect();
    (v.len() >= 8).then(|| (v[7], v[..8].iter().sum()))
}

impl Snapshot {
    /// The state now.
    pub fn now() -> Snapshot {
        Snapshot {
            at: std::time::Instant::now(),
            waited_us: cpu_waited_us(),
            steal: steal_jiffies(),
        }
    }

    /// The machine's state from this snapshot to now.
    pub fn since(&self) -> MachineLoad {
        self.to(&Snapshot::now())
    }

    /// The machine's state from this snapshot to `later`.
    pub fn to(&self, later: &Snapshot) -> MachineLoad {
        let span_us = later.at.saturating_duration_since(self.at).as_secs_f64() * 1e6;
        let cpu_pressure_percent = self
            .waited_us
            .zip(later.waited_us)
            .map(|(b, a)| (100.0 * a.saturating_sub(b) as f64 / span_us.max(1.0)).min(100.0));
        let steal_percent = self
            .steal
            .zip(later.steal)
            .and_then(|((s0, t0), (s1, t1))| {
                let all = t1.saturating_sub(t0);
                (all > 0).then(|| 100.0 * s1.saturating_sub(s0) as f64 / all as f64)
            });
        MachineLoad {
            cpu_pressure_percent,
            steal_percent,
        }
    }
}

#[cfg(test)]
mod machine_tests {
    #[test]
    fn steal_is_read_from_the_cpu_line() {
        let line = "cpu  27778 0 4418 14642 384 0 97 212 0 0";
        assert_eq!(super::steal_of(line), Some((212, 47531)));
        assert_eq!(super::steal_of("cpu0 1 2 3 4 5 6 7 8 0 0"), None);
        assert_eq!(super::steal_of("cpu 1 2 3"), None);
        let load = super::Snapshot::now().since();
        for p in [load.cpu_pressure_percent, load.steal_percent]
            .into_iter()
            .flatten()
        {
            assert!((0.0..=100.0).contains(&p), "{load:?}");
        }
    }
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
