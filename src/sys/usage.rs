//! The generator's own resource use (getrusage), to tell whether the client was the bottleneck.

use std::time::Duration;

/// CPU time spent, user and system.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CpuTimes {
    /// User time.
    pub user: Duration,
    /// System time.
    pub sys: Duration,
}

impl std::ops::Sub for CpuTimes {
    type Output = CpuTimes;
    fn sub(self, o: CpuTimes) -> CpuTimes {
        CpuTimes {
            user: self.user.saturating_sub(o.user),
            sys: self.sys.saturating_sub(o.sys),
        }
    }
}

impl std::ops::AddAssign for CpuTimes {
    fn add_assign(&mut self, o: CpuTimes) {
        self.user += o.user;
        self.sys += o.sys;
    }
}

fn rusage(who: libc::c_int) -> libc::rusage {
    // SAFETY: getrusage writes into the zeroed struct we own; it cannot fail for these `who`.
    unsafe {
        let mut u: libc::rusage = std::mem::zeroed();
        libc::getrusage(who, &mut u);
        u
    }
}

fn tv(t: libc::timeval) -> Duration {
    Duration::new(t.tv_sec as u64, (t.tv_usec as u32) * 1000)
}

/// CPU time used so far by the calling thread.
pub fn thread_cpu() -> CpuTimes {
    let u = rusage(libc::RUSAGE_THREAD);
    CpuTimes {
        user: tv(u.ru_utime),
        sys: tv(u.ru_stime),
    }
}

/// CPU time used so far by the whole process.
pub fn process_cpu() -> CpuTimes {
    let u = rusage(libc::RUSAGE_SELF);
    CpuTimes {
        user: tv(u.ru_utime),
        sys: tv(u.ru_stime),
    }
}

/// Peak resident set size of the process, KiB: VmHWM, this program's own peak. (getrusage's
/// ru_maxrss would do but for one thing: Linux carries it across fork and exec, so a wirebench
/// started by a large process reports that process's peak.)
pub fn peak_rss_kib() -> u64 {
    let hwm = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| vm_hwm_kib(&s));
    hwm.unwrap_or_else(|| rusage(libc::RUSAGE_SELF).ru_maxrss.max(0) as u64)
}

/// The `VmHWM:   1234 kB` line of /proc/PID/status, in KiB.
fn vm_hwm_kib(status: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Raises the soft limit on open files so `needed` descriptors fit (10,000 connections need
/// more than the usual 1,024); says how to lift the hard limit when that is what stands in the
/// way.
pub fn ensure_fd_limit(needed: u64) -> Result<(), crate::error::UsageError> {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes into the struct we own.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 || lim.rlim_cur >= needed {
        return Ok(());
    }
    if lim.rlim_max < needed {
        return Err(crate::error::UsageError::new(format!(
            "{needed} open files are needed but the hard limit (ulimit -Hn) is {}: raise it (e.g. ulimit -n {needed} as root, or LimitNOFILE in a systemd unit), or use fewer connections",
            lim.rlim_max
        )));
    }
    lim.rlim_cur = needed.max(lim.rlim_cur);
    // SAFETY: setrlimit reads the struct we own; raising the soft limit up to the hard one is allowed.
    if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &lim) } != 0 {
        return Err(crate::error::UsageError::new(format!(
            "cannot raise the open-file limit to {needed}: {}; run ulimit -n {needed} first",
            std::io::Error::last_os_error()
        )));
    }
    Ok(())
}

/// Raises the soft open-file limit to the hard limit (servers: as many clients as allowed).
pub fn raise_fd_limit() {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit read and write the struct we own.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) == 0 && lim.rlim_cur < lim.rlim_max {
            lim.rlim_cur = lim.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peak_rss_is_this_process_own() {
        assert_eq!(
            vm_hwm_kib("Name:\tx\nVmHWM:\t   1234 kB\nVmRSS:\t 99 kB\n"),
            Some(1234)
        );
        assert_eq!(vm_hwm_kib("Name:\tx\n"), None);
        assert!(peak_rss_kib() > 0);
    }
}
