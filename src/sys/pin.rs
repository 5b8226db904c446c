//! Where the demo's threads run. A one-connection ping-pong's rate is set by its wake-ups: on a
//! small virtual machine, a reply that wakes the other end on another CPU costs tens of µs (an
//! inter-processor interrupt, and a halted vCPU to wake), on the same CPU a context switch of a
//! few µs. Left to the scheduler, the two ends move between those cases from run to run, and the
//! rate with them (2× and more; docs/method.md, "Comparing fairly"). So the demo pins its
//! threads, and says how.

use std::io;

/// Where the server's and the client's threads run. Threads inherit the affinity of the thread
/// that starts them, so setting the calling thread's affinity before a server or an engine
/// starts places all of its threads.
///
/// Together on one CPU is the steadiest on the 2-vCPU KVM guest this was measured on, with
/// other builds running: two demo runs each (500 ms runs, medians of 3) gave 50,840 and 50,450
/// request/response messages/s at 4 B with both ends on one CPU, 7,786 and 14,930 with client
/// and server on different CPUs, 51,412 and 12,300 unpinned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Placement {
    /// Client and server share this CPU.
    Together(usize),
    /// Not pinned, and why.
    Unpinned(String),
}

impl Placement {
    /// Client and server together on the last CPU this process may use (CPU 0 takes more of
    /// the machine's interrupts); unpinned when the allowed CPUs cannot be read.
    pub fn choose() -> Placement {
        match allowed_cpus() {
            Ok(c) if !c.is_empty() => Placement::Together(c[c.len() - 1]),
            Ok(_) => Placement::Unpinned("no CPU allowed".into()),
            Err(e) => Placement::Unpinned(format!("sched_getaffinity failed: {e}")),
        }
    }

    /// Says where the threads ran, for the method line.
    pub fn describe(&self) -> String {
        match self {
            Placement::Together(cpu) => format!(
                "client and server threads pinned together to CPU {cpu} (sched_setaffinity), \
                 so no message waits for a wake-up on another CPU"
            ),
            Placement::Unpinned(why) => format!(
                "threads not pinned ({why}): figures move with where the scheduler puts them"
            ),
        }
    }

    /// Places the calling thread, and so the threads it starts next; for the server and the
    /// client alike, as they share the CPU.
    pub fn apply(&self) -> io::Result<()> {
        match self {
            Placement::Together(cpu) => pin_to(*cpu),
            Placement::Unpinned(_) => Ok(()),
        }
    }
}

/// Puts the calling thread's affinity back as it was when made, when dropped: the demo leaves
/// its caller (a test, say) unpinned.
pub struct Restore(libc::cpu_set_t);

impl Restore {
    /// Remembers the calling thread's affinity.
    pub fn current() -> io::Result<Restore> {
        get().map(Restore)
    }
}

impl Drop for Restore {
    fn drop(&mut self) {
        let _ = set(&self.0);
    }
}

/// The CPUs the calling thread may run on, in order.
pub fn allowed_cpus() -> io::Result<Vec<usize>> {
    let set = get()?;
    // SAFETY: CPU_ISSET reads a bit of the set, for CPU numbers below CPU_SETSIZE.
    Ok((0..libc::CPU_SETSIZE as usize)
        .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
        .collect())
}

/// Lets the calling thread run on `cpu` only.
pub fn pin_to(cpu: usize) -> io::Result<()> {
    // SAFETY: cpu_set_t is plain bits; zeroed is the empty set, and CPU_SET writes a bit within
    // it (CPU numbers come from allowed_cpus, below CPU_SETSIZE).
    let mut one: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    unsafe { libc::CPU_SET(cpu, &mut one) };
    set(&one)
}

fn get() -> io::Result<libc::cpu_set_t> {
    // SAFETY: as in pin_to; sched_getaffinity writes at most size_of::<cpu_set_t>() bytes, and
    // pid 0 is the calling thread.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    let size = std::mem::size_of::<libc::cpu_set_t>();
    match unsafe { libc::sched_getaffinity(0, size, &mut set) } {
        0 => Ok(set),
        _ => Err(io::Error::last_os_error()),
    }
}

fn set(set: &libc::cpu_set_t) -> io::Result<()> {
    let size = std::mem::size_of::<libc::cpu_set_t>();
    // SAFETY: reads size bytes of a valid set; pid 0 is the calling thread.
    match unsafe { libc::sched_setaffinity(0, size, set) } {
        0 => Ok(()),
        _ => Err(io::Error::last_os_error()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pins_this_thread_and_restores_it() {
        let before = allowed_cpus().unwrap();
        let cpu = *before.last().unwrap();
        {
            let _restore = Restore::current().unwrap();
            Placement::Together(cpu).apply().unwrap();
            assert_eq!(allowed_cpus().unwrap(), [cpu]);
            // A thread started now inherits the pin.
            let inherited = std::thread::spawn(|| allowed_cpus().unwrap())
                .join()
                .unwrap();
            assert_eq!(inherited, [cpu]);
        }
        assert_eq!(allowed_cpus().unwrap(), before);
    }
}
