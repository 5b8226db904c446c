//! `TCP_INFO` of this process's own connections to a peer, read from outside the code that
//! owns them: the load generator's sockets are descriptors of this process, so a sampler
//! thread finds them in `/proc/self/fd`, keeps those whose peer is the target, and asks the
//! kernel about each (`getsockopt(TCP_INFO)`), while the run goes on untouched.
//!
//! A descriptor may close (and its number be reused) between the listing and the call; the
//! peer check then fails or finds another socket to the same peer, either of which is harmless.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::os::fd::RawFd;

/// The most sockets one sample reads; a run with more connections is sampled, not swept.
const MAX_SOCKETS: usize = 256;

/// What one socket's `TCP_INFO` says (times in µs, as the kernel gives them).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TcpInfo {
    /// Smoothed round-trip time.
    pub rtt_us: u32,
    /// The delayed-ACK timeout the receiver is using now (`tcpi_ato`); Linux's minimum is 40 ms.
    pub ato_us: u32,
    /// Segments sent and not yet acknowledged.
    pub unacked: u32,
    /// Time spent sending, µs (`tcpi_busy_time`), and of it the time limited by the peer's
    /// receive window (`tcpi_rwnd_limited`) and by this socket's send buffer.
    pub busy_us: u64,
    /// See `busy_us`.
    pub rwnd_limited_us: u64,
    /// See `busy_us`.
    pub sndbuf_limited_us: u64,
    /// The window the peer advertised, bytes (`tcpi_snd_wnd`).
    pub snd_wnd: u32,
}

/// The kernel's whole `TCP_INFO` of one socket (`getsockopt(2)`, `tcp(7)`).
pub fn raw(fd: RawFd) -> std::io::Result<libc::tcp_info> {
    // SAFETY: tcp_info is plain old data; zeroes are a valid value.
    let mut i: libc::tcp_info = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::tcp_info>() as libc::socklen_t;
    // SAFETY: `i` is writable for `len` bytes, and the kernel writes at most that.
    let rc = unsafe {
        libc::getsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            (&mut i as *mut libc::tcp_info).cast(),
            &mut len,
        )
    };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(i)
}

/// `TCP_INFO` of one socket.
pub fn of(fd: RawFd) -> std::io::Result<TcpInfo> {
    let i = raw(fd)?;
    Ok(TcpInfo {
        rtt_us: i.tcpi_rtt,
        ato_us: i.tcpi_ato,
        unacked: i.tcpi_unacked,
        busy_us: i.tcpi_busy_time,
        rwnd_limited_us: i.tcpi_rwnd_limited,
        sndbuf_limited_us: i.tcpi_sndbuf_limited,
        snd_wnd: i.tcpi_snd_wnd,
    })
}

/// The peer of a connected socket, if `fd` is one.
fn peer(fd: RawFd) -> Option<SocketAddr> {
    // SAFETY: the descriptor is only used for getpeername during this call; if it closed
    // meanwhile, the call fails with EBADF, which is handled.
    let fd = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) };
    socket2::SockRef::from(&fd).peer_addr().ok()?.as_socket()
}

/// `TCP_INFO` of each of this process's TCP connections to `peer`, by socket inode (so a
/// reused descriptor number is told apart from the socket it once was).
pub fn sockets_to(peer_addr: SocketAddr) -> HashMap<u64, TcpInfo> {
    let mut found = HashMap::new();
    let Ok(dir) = std::fs::read_dir("/proc/self/fd") else {
        return found;
    };
    for entry in dir.flatten() {
        if found.len() >= MAX_SOCKETS {
            break;
        }
        let Ok(link) = std::fs::read_link(entry.path()) else {
            continue;
        };
        // A socket's link reads "socket:[INODE]".
        let Some(inode) = link
            .to_str()
            .and_then(|l| l.strip_prefix("socket:["))
            .and_then(|l| l.strip_suffix(']'))
            .and_then(|l| l.parse::<u64>().ok())
        else {
            continue;
        };
        let Some(fd) = entry.file_name().to_str().and_then(|n| n.parse().ok()) else {
            continue;
        };
        if peer(fd) == Some(peer_addr) {
            if let Ok(info) = of(fd) {
                found.insert(inode, info);
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    #[test]
    fn this_process_finds_its_own_connection() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let mut c = std::net::TcpStream::connect(addr).unwrap();
        let (mut s, _) = listener.accept().unwrap();
        c.write_all(b"ping").unwrap();
        let mut buf = [0; 4];
        s.read_exact(&mut buf).unwrap();
        let found = sockets_to(addr);
        assert_eq!(found.len(), 1, "{found:?}");
        let info = found.values().next().unwrap();
        assert!(info.rtt_us > 0, "{info:?}");
    }
}
