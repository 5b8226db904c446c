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

/// Peak resident set size of the process, KiB.
pub fn peak_rss_kib() -> u64 {
    rusage(libc::RUSAGE_SELF).ru_maxrss.max(0) as u64
}
