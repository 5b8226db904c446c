//! HTTP/3 (RFC 9114) as the client (`driver::h3`) and the reference server (`serve::h3`) both
//! speak it over QUIC streams: the frames ([`frame`]) and QPACK with the static table alone
//! ([`qpack`]). QUIC itself (packets, loss recovery, TLS 1.3) is quinn's.

pub mod frame;
pub mod qpack;

/// The ALPN token of HTTP/3 (RFC 9114 §3.1).
pub const ALPN: &[u8] = b"h3";

/// Appends what opens a control stream: its type, then SETTINGS. Without entries every
/// setting keeps its default: QPACK's dynamic table capacity 0 and no blocked streams
/// (RFC 9204 §5), so the peer encodes with the static table alone.
pub fn put_control_open(out: &mut Vec<u8>) {
    frame::put_varint(out, frame::CONTROL_STREAM);
    frame::put_frame(out, frame::SETTINGS, &[]);
}

/// Appends a request's or response's HEADERS frame around the field section `section`
/// (prefix included).
pub fn put_headers(out: &mut Vec<u8>, section: &[u8]) {
    frame::put_frame(out, frame::HEADERS, section);
}
