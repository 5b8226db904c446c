//! The HTTP/1.1 response parser driven with arbitrary bytes, for the fuzz target
//! `http_response` (fuzz/). Not part of the API.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a fuzzing harness, not run by wirebench: its set-up failing is a finding too"
)]

use super::spec::{Accept, HttpSpec};
use super::{HttpSession, Pending};
use crate::driver::stream::Stream;
use crate::driver::{ReadOutcome, Sent};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

/// A connected loopback socket, opened once: a session needs a stream, which parsing never
/// touches (beyond SO_RCVLOWAT).
fn socket() -> &'static TcpStream {
    static SOCKET: OnceLock<(TcpListener, TcpStream)> = OnceLock::new();
    let (_, s) = SOCKET.get_or_init(|| {
        let l = TcpListener::bind("127.0.0.1:0").expect("a loopback listener");
        let s = TcpStream::connect(l.local_addr().expect("bound")).expect("a loopback connection");
        (l, s)
    });
    s
}

/// Feeds `wire` to a session's response parser in pieces of the given sizes (cycled) with
/// `requests` requests in flight (a set bit of `heads`: a HEAD request), then as a close.
/// Returns the responses completed; panics if an invariant breaks.
pub fn responses(wire: &[u8], pieces: &[usize], requests: usize, heads: u64) -> usize {
    let now = Instant::now();
    let s = session(requests, heads, now);
    feed(s, wire, pieces, requests, now)
}

/// A session on the shared socket with `requests` requests sent at `now` in flight (a set bit
/// of `heads`: a HEAD request).
fn session(requests: usize, heads: u64, now: Instant) -> HttpSession {
    let stream = socket().try_clone().expect("dup of a socket");
    let spec = Arc::new(HttpSpec {
        requests: Vec::new(),
        host: "fuzz".into(),
        accept: Accept::parse("2xx,3xx").expect("a valid --accept"),
        keepalive: true,
        path_text: "/".into(),
        http2: false,
        http3: false,
        seed: 0,
        mix: None,
        files: None,
    });
    let mut s = HttpSession::new(Stream::Blocking(stream), spec, 0, 1, Default::default());
    s.in_flight = (0..requests as u64)
        .map(|seq| Pending {
            seq,
            sent: Sent {
                intended: now,
                at: now,
            },
            head: heads >> (seq % 64) & 1 == 1,
            kind: 0,
        })
        .collect();
    s
}

/// Feeds the session the rest of `responses`' work.
fn feed(mut s: HttpSession, wire: &[u8], pieces: &[usize], requests: usize, now: Instant) -> usize {
    let (mut at, mut i) = (0, 0);
    while at < wire.len() {
        let size = pieces
            .get(i % pieces.len().max(1))
            .copied()
            .unwrap_or(wire.len());
        let n = size.clamp(1, s.inbuf.len()).min(wire.len() - at);
        s.inbuf[..n].copy_from_slice(&wire[at..at + n]);
        let mut out = ReadOutcome::default();
        if s.parse(n, now, &mut out).is_err() {
            return s.completed.len();
        }
        assert!(
            out.bytes <= n,
            "{} body bytes from a read of {n}",
            out.bytes
        );
        (at, i) = (at + n, i + 1);
    }
    s.end_at_close();
    assert!(
        s.completed.len() <= requests,
        "more responses than requests"
    );
    s.completed.len()
}

#[cfg(test)]
mod tests {
    use super::{responses, session};
    use crate::driver::ReadOutcome;
    use std::time::{Duration, Instant};

    /// Responses of every framing one after another on one connection, read in pieces that
    /// split heads and bodies: each completes with its own status and first-byte time (the
    /// parser starts afresh after each), and the close of the last one ends the connection's
    /// reuse.
    #[test]
    fn responses_of_every_framing_follow_each_other_on_one_connection() {
        let t0 = Instant::now();
        let mut s = session(4, 0, t0);
        let wire: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc\
            HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nxyz\r\n0\r\n\r\n\
            HTTP/1.1 204 No Content\r\n\r\n\
            HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
        // Pieces: the first response and the start of the second's head; the rest of that
        // head and part of its chunked body; the rest.
        let cuts = [50, 100, wire.len()];
        let (mut from, mut body) = (0, 0);
        for (i, &to) in cuts.iter().enumerate() {
            let now = t0 + Duration::from_millis(10 * (i as u64 + 1));
            let n = to - from;
            s.inbuf[..n].copy_from_slice(&wire[from..to]);
            let mut out = ReadOutcome::default();
            s.parse(n, now, &mut out).unwrap();
            body += out.bytes;
            from = to;
        }
        let statuses: Vec<_> = s.completed.iter().map(|d| d.status).collect();
        assert_eq!(statuses, [Some(200), Some(201), Some(204), Some(404)]);
        let accepted: Vec<_> = s.completed.iter().map(|d| d.accepted).collect();
        assert_eq!(accepted, [true, true, true, false]);
        let ms = |d: &crate::driver::Done| d.first_byte.map(|f| f.duration_since(t0).as_millis());
        let firsts: Vec<_> = s.completed.iter().map(ms).collect();
        // The second response's head began in the first piece, the others in the last.
        assert_eq!(firsts, [Some(10), Some(10), Some(30), Some(30)]);
        assert_eq!(body, 6, "abc and xyz");
        assert!(!s.reusable, "the last response said Connection: close");
        assert!(s.in_flight.is_empty());
        assert!(s.parser.body_left().is_none());
    }

    /// Found replaying the fuzz seeds: a response that switches to the big read buffer (a
    /// chunked or long body) lost the rest of the read its head came in, so a chunked body
    /// that came with its head failed with "bad chunk size".
    #[test]
    fn body_in_the_read_of_a_chunked_head_is_kept() {
        let wire =
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;x=1\r\nhello\r\n0\r\n\r\n\
            HTTP/1.1 200 OK\r\nContent-Length: 2000000\r\n\r\n";
        assert_eq!(responses(wire, &[wire.len()], 2, 0), 1);
        let mut long = wire.to_vec();
        long.resize(long.len() + 2_000_000, b'x');
        assert_eq!(responses(&long, &[100_000], 2, 0), 2);
    }
}
