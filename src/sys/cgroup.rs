//! Memory limits and the page cache, for disk-bound studies: the cgroup v1 memory
//! controller's `memory.limit_in_bytes` caps a group's page cache as well as its heap (pages
//! are charged to the group that reads them in), so a server confined to 64 MiB serves a
//! larger data set from the disk on a machine with gigabytes free. Also: the memory limit of
//! whichever process listens on a local port (a study records its server's), and dropping the
//! page cache (`--cache cold`).

use std::io;
use std::path::{Path, PathBuf};

/// The cgroup v1 memory controller's mount point.
const MEMORY: &str = "/sys/fs/cgroup/memory";
/// Limits at or above this are "no limit" (the kernel writes 2⁶³ rounded down to a page).
const UNLIMITED: u64 = 1 << 62;

/// Drops the clean page cache, dentries and inodes (`sync`, then 3 into
/// /proc/sys/vm/drop_caches), so the next reads of a file come from the disk. Needs root.
pub fn drop_page_cache() -> io::Result<()> {
    // SAFETY: sync(2) takes no arguments and cannot fail.
    unsafe { libc::sync() };
    std::fs::write("/proc/sys/vm/drop_caches", "3")
}

/// Whether this process runs as root (dropping the cache and making cgroups need it).
pub fn is_root() -> bool {
    // SAFETY: geteuid(2) takes no arguments and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// A memory cgroup this process moved itself into; [`Confined::release`] moves it back
/// and removes the group.
pub struct Confined {
    dir: PathBuf,
}

/// Puts this process (all its threads) into a new cgroup v1 memory group of `limit` bytes,
/// page cache included. Call it before the server reads any file it serves: pages already
/// cached stay charged to the group that read them.
pub fn confine(limit: u64) -> io::Result<Confined> {
    if !Path::new(MEMORY).join("memory.limit_in_bytes").exists() {
        return Err(io::Error::new(
            io::ErrorKind::Unsupported,
            format!("no cgroup v1 memory controller at {MEMORY}"),
        ));
    }
    let dir = Path::new(MEMORY).join(format!("wirebench-serve-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    std::fs::write(dir.join("memory.limit_in_bytes"), limit.to_string())?;
    std::fs::write(dir.join("cgroup.procs"), std::process::id().to_string())?;
    Ok(Confined { dir })
}

impl Confined {
    /// The group's limit as the kernel holds it (rounded to pages).
    pub fn limit(&self) -> Option<u64> {
        read_limit(&self.dir)
    }

    /// Moves this process back to the root group and removes its own.
    pub fn release(self) {
        let _ = std::fs::write(
            Path::new(MEMORY).join("cgroup.procs"),
            std::process::id().to_string(),
        );
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// A group's `memory.limit_in_bytes`, None when it sets none.
fn read_limit(dir: &Path) -> Option<u64> {
    let text = std::fs::read_to_string(dir.join("memory.limit_in_bytes")).ok()?;
    text.trim().parse().ok().filter(|&n| n < UNLIMITED)
}

/// The memory limit of process `pid`'s cgroup (v1's memory controller, or v2's memory.max),
/// None when it has none or it cannot be read.
pub fn memory_limit_of(pid: u32) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).ok()?;
    for line in text.lines() {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        if controllers.split(',').any(|c| c == "memory") {
            return read_limit(&Path::new(MEMORY).join(path.trim_start_matches('/')));
        }
    }
    None
}

/// The process listening on TCP `port` on this machine (its socket found in /proc/net/tcp
/// and tcp6, then among the processes' open files); None when none is found (or readable).
pub fn listener_of(port: u16) -> Option<u32> {
    let inode = ["/proc/net/tcp", "/proc/net/tcp6"]
        .iter()
        .filter_map(|f| std::fs::File::open(f).ok())
        .find_map(|f| listening_inode(io::BufReader::new(f), port))?;
    let want = format!("socket:[{inode}]");
    for p in std::fs::read_dir("/proc").ok()?.flatten() {
        let Ok(pid) = p.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(fds) = std::fs::read_dir(p.path().join("fd")) else {
            continue;
        };
        for fd in fds.flatten() {
            if std::fs::read_link(fd.path()).is_ok_and(|l| l.as_os_str() == want.as_str()) {
                return Some(pid);
            }
        }
    }
    None
}

/// The inode of the socket listening on `port` in a /proc/net/tcp table, read only as far as
/// its listening sockets go. The kernel lists every listener first (tcp_get_idx walks the
/// listening hash before the established one), then every connection, TIME_WAIT ones
/// included: up to tcp_max_tw_buckets (131,072 here) after a connection-per-request run, which
/// the kernel formats at ~3 µs a line, so reading the whole table cost a crr run ~0.4 s of
/// system time in its summary. SYN_RECV (03) lines do not end the listeners: kernels before
/// 4.4 list them among the listeners.
fn listening_inode(table: impl io::BufRead, port: u16) -> Option<u64> {
    for line in table.lines().skip(1) {
        let line = line.ok()?;
        let f: Vec<&str> = line.split_whitespace().collect();
        let state = *f.get(3)?;
        if state != "0A" {
            if state == "03" {
                continue;
            }
            return None;
        }
        let local_port = f.get(1)?.rsplit(':').next()?;
        if u16::from_str_radix(local_port, 16).ok()? == port {
            return f.get(9)?.parse().ok();
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_a_listener_and_its_limit() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        assert_eq!(listener_of(port), Some(std::process::id()));
        drop(l);
        assert_eq!(listener_of(port), None);
        let table = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 12345 1";
        assert_eq!(listening_inode(table.as_bytes(), 8080), Some(12345));
        assert_eq!(listening_inode(table.as_bytes(), 8081), None);
    }

    /// Counts the bytes a reader hands out.
    struct Counted<'a>(&'a [u8], usize);

    impl io::Read for Counted<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = self.0.read(buf)?;
            self.1 += n;
            Ok(n)
        }
    }

    #[test]
    fn reads_no_further_than_the_listeners() {
        // Two listeners, then 20,000 TIME_WAIT (06) lines, as after a connection-per-request run.
        let head = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n";
        let listen = |sl: u32, port: u16, inode: u64| {
            format!("{sl:4}: 0100007F:{port:04X} 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 {inode} 1 0000000000000000 100 0 0 10 0\n")
        };
        let mut table = format!("{head}{}{}", listen(0, 8080, 111), listen(1, 8081, 222));
        for i in 0..20_000u32 {
            table.push_str(&format!("{:4}: 0100007F:{:04X} 0100007F:1F90 06 00000000:00000000 03:00000F8B 00000000     0        0 0 3 0000000000000000\n", i + 2, 30_000 + i % 30_000));
        }
        for (port, want) in [(8081, Some(222)), (9999, None)] {
            let mut r = Counted(table.as_bytes(), 0);
            assert_eq!(listening_inode(io::BufReader::new(&mut r), port), want);
            // One buffer of the reader (8 KiB), not the table's 2 MB.
            assert!(
                r.1 <= 8192,
                "read {} bytes of {} for port {port}",
                r.1,
                table.len()
            );
        }
        // A SYN_RECV line among the listeners does not end them.
        let syn = listen(1, 8082, 0).replace(" 0A ", " 03 ");
        let t = format!(
            "{head}{}{syn}{}",
            listen(0, 8080, 111),
            listen(2, 8083, 333)
        );
        assert_eq!(listening_inode(t.as_bytes(), 8083), Some(333));
    }
}
