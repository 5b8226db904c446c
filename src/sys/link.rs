//! What the system says about links: the interface a target is reached through, its nominal
//! speed (`/sys/class/net/IFACE/speed`), and a TCP socket's segment size (`TCP_INFO`).

use std::io;
use std::net::{IpAddr, SocketAddr, UdpSocket};
use std::os::fd::RawFd;

/// The name of the interface the kernel routes `to` through: the one holding the local address
/// a socket connected to `to` is given (a UDP `connect` sends nothing, it only routes).
pub fn interface_toward(to: SocketAddr) -> io::Result<String> {
    let bind: SocketAddr = match to {
        SocketAddr::V4(_) => SocketAddr::from((std::net::Ipv4Addr::UNSPECIFIED, 0)),
        SocketAddr::V6(_) => SocketAddr::from((std::net::Ipv6Addr::UNSPECIFIED, 0)),
    };
    let sock = UdpSocket::bind(bind)?;
    sock.connect(to)?;
    let local = sock.local_addr()?.ip();
    interface_with(local)?
        .ok_or_else(|| io::Error::other(format!("no interface holds the address {local}")))
}

/// The interface holding address `ip`, from `getifaddrs(3)`.
fn interface_with(ip: IpAddr) -> io::Result<Option<String>> {
    let mut list: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs fills `list` with a linked list we free below with freeifaddrs.
    if unsafe { libc::getifaddrs(&mut list) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let mut found = None;
    let mut at = list;
    while !at.is_null() && found.is_none() {
        // SAFETY: `at` is a node of the list getifaddrs returned, not yet freed.
        let node = unsafe { &*at };
        // SAFETY: ifa_addr, when set, points at a sockaddr of the family it names.
        if unsafe { sockaddr_ip(node.ifa_addr) } == Some(ip) {
            // SAFETY: ifa_name is a NUL-terminated string owned by the list.
            let name = unsafe { std::ffi::CStr::from_ptr(node.ifa_name) };
            found = Some(name.to_string_lossy().into_owned());
        }
        at = node.ifa_next;
    }
    // SAFETY: `list` came from getifaddrs and is freed once.
    unsafe { libc::freeifaddrs(list) };
    Ok(found)
}

/// The IP address in a `sockaddr`, for IPv4 and IPv6.
///
/// # Safety
/// `sa` is null or points at a valid sockaddr of the family it names.
unsafe fn sockaddr_ip(sa: *const libc::sockaddr) -> Option<IpAddr> {
    if sa.is_null() {
        return None;
    }
    match i32::from((*sa).sa_family) {
        libc::AF_INET => {
            let v4 = &*sa.cast::<libc::sockaddr_in>();
            Some(IpAddr::from(u32::from_be(v4.sin_addr.s_addr).to_be_bytes()))
        }
        libc::AF_INET6 => {
            let v6 = &*sa.cast::<libc::sockaddr_in6>();
            Some(IpAddr::from(v6.sin6_addr.s6_addr))
        }
        _ => None,
    }
}

/// The nominal speed of interface `name` in Mbit/s, as its driver reports it in sysfs; None
/// where it reports none (loopback, a link that is down: the file is unreadable or says -1).
pub fn speed_mbit(name: &str) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/sys/class/net/{name}/speed")).ok()?;
    text.trim()
        .parse::<i64>()
        .ok()
        .filter(|&s| s > 0)
        .map(|s| s as u64)
}

/// `TCPI_OPT_TIMESTAMPS` from linux/tcp.h: the connection carries the RFC 7323 timestamp option.
const TCPI_OPT_TIMESTAMPS: u8 = 1;

/// What `TCP_INFO` says of a connection's packets and delivery.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TcpSegment {
    /// The send MSS: payload bytes per full segment (Linux already leaves out the options it
    /// sends on every segment).
    pub mss: u32,
    /// The receive side's estimate of the peer's MSS (`tcpi_rcv_mss`).
    pub rcv_mss: u32,
    /// Every segment carries the 12-byte RFC 7323 timestamp option.
    pub timestamps: bool,
    /// Bytes the peer has acknowledged so far (`tcpi_bytes_acked`, RFC 4898's
    /// tcpEStatsAppHCThruOctetsAcked): what has crossed the link, unlike what was written.
    pub acked: u64,
}

/// A TCP socket's segment size and delivered bytes, from `TCP_INFO`.
pub fn tcp_segment(fd: RawFd) -> io::Result<TcpSegment> {
    let info = super::tcpinfo::raw(fd)?;
    Ok(TcpSegment {
        mss: info.tcpi_snd_mss,
        rcv_mss: info.tcpi_rcv_mss,
        timestamps: info.tcpi_options & TCPI_OPT_TIMESTAMPS != 0,
        acked: info.tcpi_bytes_acked,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_is_reached_through_lo_which_has_no_speed() {
        let name = interface_toward("127.0.0.1:9".parse().unwrap()).unwrap();
        assert_eq!(name, "lo");
        assert_eq!(speed_mbit(&name), None);
    }

    #[test]
    fn a_tcp_connection_has_a_segment_size() {
        use std::os::fd::AsRawFd;
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let c = std::net::TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let seg = tcp_segment(c.as_raw_fd()).unwrap();
        assert!(seg.mss > 500, "{seg:?}");
    }
}
