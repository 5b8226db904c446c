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
