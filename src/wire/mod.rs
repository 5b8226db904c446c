//! Wire formats shared by the client and the reference servers: the one-line preamble that
//! tells a server request and reply sizes ([`framing`]), the wirebench UDP datagram header
//! with its receiver-side accounting ([`datagram`], [`flow`]), and the search for the delimiter
//! that ends a request or reply in a byte stream ([`delimiter`]); HTTP/3's frames and QPACK
//! ([`h3`]) with the Huffman code HPACK and QPACK share ([`huffman`]).

pub mod datagram;
pub mod delimiter;
pub mod flow;
pub mod framing;
pub mod grpc;
pub mod h3;
pub mod huffman;
