//! Wire formats shared by the client and the reference servers: the one-line preamble that
//! tells a server request and reply sizes ([`framing`]), the wirebench UDP datagram header
//! ([`datagram`]) and the receiver-side accounting of a flow of such datagrams ([`flow`]).

pub mod datagram;
pub mod flow;
pub mod framing;
