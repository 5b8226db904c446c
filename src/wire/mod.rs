//! Wire formats shared by the client and the reference servers: the one-line preamble that
//! tells a server request and reply sizes ([`framing`]) and the wirebench UDP datagram header
//! with its receiver-side accounting ([`datagram`]).

pub mod datagram;
pub mod framing;
