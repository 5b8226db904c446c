//! The kernel's TCP counters and tables that `wirebench diagnose` reads as evidence:
//! `/proc/net/netstat` (TcpExt: DelayedACKs …), the TIME_WAIT sockets of `/proc/net/tcp{,6}`
//! and the ephemeral port range. All are per network namespace, and host-wide within it, so
//! a diagnosis compares their change over a run with what the run itself did.

use std::net::SocketAddr;

/// One `TcpExt` counter of `/proc/net/netstat` (e.g. `DelayedACKs`), if the kernel has it.
pub fn tcp_ext(name: &str) -> Option<u64> {
    tcp_ext_in(&std::fs::read_to_string("/proc/net/netstat").ok()?, name)
}

/// The counter `name` in the text of `/proc/net/netstat`: a line of names, then a line of
/// values, per section.
fn tcp_ext_in(text: &str, name: &str) -> Option<u64> {
    let mut lines = text.lines().filter(|l| l.starts_with("TcpExt:"));
    let (names, values) = (lines.next()?, lines.next()?);
    let at = names.split_whitespace().position(|n| n == name)?;
    values.split_whitespace().nth(at)?.parse().ok()
}

/// `net.ipv4.ip_local_port_range`: the first and last ephemeral port.
pub fn port_range() -> Option<(u16, u16)> {
    let t = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range").ok()?;
    let mut it = t.split_whitespace().filter_map(|w| w.parse().ok());
    Some((it.next()?, it.next()?))
}

/// `net.ipv4.tcp_rmem`'s middle value: the receive buffer a TCP socket starts with, from which
/// auto-tuning grows it; a window that never exceeds it comes from a buffer set smaller.
pub fn rmem_default() -> Option<u32> {
    let t = std::fs::read_to_string("/proc/sys/net/ipv4/tcp_rmem").ok()?;
    t.split_whitespace().nth(1)?.parse().ok()
}

/// `net.ipv4.tcp_tw_reuse`: 0 off, 1 on, 2 on for loopback only (Linux's default).
pub fn tw_reuse() -> Option<u8> {
    std::fs::read_to_string("/proc/sys/net/ipv4/tcp_tw_reuse")
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// Sockets in TIME_WAIT whose remote end is `to` (the connections a client closed to it).
pub fn time_wait_to(to: SocketAddr) -> usize {
    let port = format!(":{:04X}", to.port());
    ["/proc/net/tcp", "/proc/net/tcp6"]
        .iter()
        .filter_map(|p| std::fs::read_to_string(p).ok())
        .map(|t| {
            t.lines()
                .skip(1)
                .filter(|l| {
                    let f: Vec<&str> = l.split_whitespace().collect();
                    // rem_address is field 2, st field 3; 06 is TCP_TIME_WAIT.
                    f.len() > 3 && f[3] == "06" && f[2].ends_with(&port)
                })
                .count()
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_counter_is_found_by_name() {
        let text = "TcpExt: SyncookiesSent DelayedACKs\nTcpExt: 3 41\nIpExt: A\nIpExt: 1\n";
        assert_eq!(tcp_ext_in(text, "DelayedACKs"), Some(41));
        assert_eq!(tcp_ext_in(text, "Nope"), None);
        assert!(
            tcp_ext("DelayedACKs").is_some(),
            "this kernel counts delayed ACKs"
        );
        let (lo, hi) = port_range().unwrap();
        assert!(lo <= hi);
    }
}
