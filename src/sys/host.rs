//! What machine a study ran on, for its methodology: the kernel, the CPU, pinning and the date.

use std::time::{SystemTime, UNIX_EPOCH};

/// The kernel as `uname -srv` prints it, from /proc/sys/kernel (ostype, osrelease, version).
pub fn kernel() -> String {
    let read = |f: &str| {
        std::fs::read_to_string(format!("/proc/sys/kernel/{f}"))
            .map(|s| s.trim().to_string())
            .unwrap_or_else(|_| "?".into())
    };
    format!(
        "{} {} {}",
        read("ostype"),
        read("osrelease"),
        read("version")
    )
}

/// The CPU model and the number of logical CPUs, from /proc/cpuinfo.
pub fn cpu() -> (String, usize) {
    let text = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = text
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            (k.trim() == "model name").then(|| v.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into());
    let count = text
        .lines()
        .filter(|l| l.split(':').next().map(str::trim) == Some("processor"))
        .count();
    (model, count)
}

/// Whether this process is pinned, in words: the CPUs it may run on (`Cpus_allowed_list` of
/// /proc/self/status, as taskset, numactl or a cgroup left it); wirebench itself pins nothing.
pub fn pinning(cpus: usize) -> String {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let allowed = status.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        (k == "Cpus_allowed_list").then(|| v.trim().to_string())
    });
    let Some(list) = allowed else {
        return "unknown (no Cpus_allowed_list in /proc/self/status)".into();
    };
    let count: usize = list
        .split(',')
        .map(|r| match r.split_once('-') {
            Some((a, b)) => b.parse::<usize>().unwrap_or(0) + 1 - a.parse::<usize>().unwrap_or(0),
            None => 1,
        })
        .sum();
    match count < cpus {
        true => format!("the generator was pinned to CPUs {list} (of {cpus}) by its caller; wirebench pins no thread itself"),
        false => format!("none: the generator's threads may run on any CPU ({list}); wirebench pins no thread"),
    }
}

/// Now, as `YYYY-MM-DD HH:MM:SS UTC`.
pub fn utc_now() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    utc(secs)
}

/// Seconds since the Unix epoch as `YYYY-MM-DD HH:MM:SS UTC` (proleptic Gregorian calendar;
/// the days-to-civil algorithm of Howard Hinnant, "chrono-Compatible Low-Level Date
/// Algorithms").
pub fn utc(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02} UTC",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// The host's name, from /proc/sys/kernel/hostname.
pub fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "?".into())
}

/// The host's name as a shard records it: the hostname, and the network namespace's name when
/// the process runs in one of `ip netns`'s (`ip netns exec NS`: every namespace of one machine
/// answers to one hostname, and before issue 38 a merge of shards in namespaces named every
/// one "vm"). A namespace named as the host is (a node given its own hostname) adds nothing.
pub fn label() -> String {
    let name = hostname();
    match netns() {
        Some(ns) if ns != name => format!("{name} (netns {ns})"),
        _ => name,
    }
}

/// The network namespace this process runs in, when it is not the machine's: its name under
/// /run/netns (as `ip netns` names it); else, when pid 1's namespace can be read and differs,
/// its inode. None in the machine's own, or in a UTS namespace of its own (a container: its
/// hostname is its own name).
fn netns() -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let link = |p: &str| std::fs::read_link(p).ok();
    let own = link("/proc/self/ns/net")?;
    // pid 1's namespaces, where they can be read (a sandbox may hide them even from root).
    let init = link("/proc/1/ns/net");
    if init.as_ref() == Some(&own) {
        return None;
    }
    if let (Some(a), Some(b)) = (link("/proc/self/ns/uts"), link("/proc/1/ns/uts")) {
        if a != b {
            return None;
        }
    }
    let me = std::fs::metadata("/proc/self/ns/net").ok()?;
    let named = std::fs::read_dir("/run/netns").ok().and_then(|dir| {
        dir.flatten().find_map(|e| {
            let m = std::fs::metadata(e.path()).ok()?;
            (m.ino() == me.ino() && m.dev() == me.dev())
                .then(|| e.file_name().to_string_lossy().into_owned())
        })
    });
    named.or_else(|| init.map(|_| own.to_string_lossy().into_owned()))
}

#[cfg(test)]
mod tests {
    #[test]
    fn dates_are_civil() {
        for (secs, text) in [
            (0, "1970-01-01 00:00:00 UTC"),
            (951_782_400, "2000-02-29 00:00:00 UTC"),
            (1_795_462_087, "2026-11-23 19:28:07 UTC"),
        ] {
            assert_eq!(super::utc(secs), text);
        }
    }
}
