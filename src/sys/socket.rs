//! Socket options that client and servers alike set on their sockets.

/// Socket options for the client's (or server's) sockets.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SocketOptions {
    /// TCP_NODELAY on (true) or off.
    pub nodelay: bool,
    /// SO_SNDBUF, if set.
    pub sndbuf: Option<usize>,
    /// SO_RCVBUF, if set.
    pub rcvbuf: Option<usize>,
}

/// Whether `s`, connected to `peer`, is bound to `peer` itself: a socket connected to its own
/// address, which a local target nobody holds the port of can give (the kernel picked that
/// port as the source port). What it sends comes back to it as if answered.
pub fn connected_to_itself(s: socket2::SockRef<'_>, peer: std::net::SocketAddr) -> bool {
    let local = s.local_addr().ok().and_then(|l| l.as_socket());
    local.is_some_and(|l| l.ip() == peer.ip() && l.port() == peer.port())
}
