//! The client's handling of frames as a server sends them, for the fuzz target `h2_response`
//! (fuzz/): the protocol state without a socket.

use super::conn::{Conn, End, Req, MAX_ACKS_QUEUED, MAX_HEADER_BLOCK};
use super::frame;
use crate::driver::Sent;
use std::time::Instant;

/// Feeds `wire` (frames from a server) to a connection with `streams` requests open, `piece`
/// bytes at a time (at least 1); what the client would write is taken away after every other
/// piece, as if written. Returns how many requests ended; panics if a bound or an invariant
/// breaks: the buffered output, the header block, every request ending once.
pub(in crate::driver::h2) fn responses(wire: &[u8], piece: usize, streams: usize) -> usize {
    let mut c = Conn::new();
    c.settings = true;
    let now = Instant::now();
    let sent = Sent {
        intended: now,
        at: now,
    };
    for seq in 0..streams as u64 {
        c.reqs.push_back(Req::new(seq, sent, 0));
        if c.may_open() {
            let i = c.open;
            c.open(i, &[0x82, 0x84], None);
        }
    }
    c.out.clear();
    let (mut ended, mut unused, mut bytes) = (0, Vec::new(), 0usize);
    let (mut fed, mut opened) = (0usize, 0usize);
    for (n, chunk) in wire.chunks(piece.max(1)).enumerate() {
        unused.extend_from_slice(chunk);
        let used = c.input(&unused, now, &mut bytes);
        assert!(used <= unused.len(), "used more than it was given");
        unused.drain(..used);
        // What stays unread is less than one frame: the largest the client accepts.
        assert!(unused.len() < frame::HEADER + frame::DEFAULT_MAX_FRAME || c.failed.is_some());
        // Between writes the answers to PING and SETTINGS are bounded, and so is the rest:
        // per frame read at most two WINDOW_UPDATEs or a RST_STREAM, per stream opened its
        // HEADERS, and one GOAWAY.
        fed += used;
        assert!(c.acks <= MAX_ACKS_QUEUED + 1, "{} answers queued", c.acks);
        let bound = 17 * (MAX_ACKS_QUEUED + 1) + 26 * (fed / frame::HEADER + 1) + 11 * opened + 17;
        assert!(
            c.out.len() <= bound,
            "{} bytes to write, bound {bound}",
            c.out.len()
        );
        assert!(
            c.block_len() <= MAX_HEADER_BLOCK,
            "header block {}",
            c.block_len()
        );
        let before = c.reqs.len();
        let mut seen = 0;
        c.sweep(|_, end| {
            seen += 1;
            if let End::Done(d) = end {
                assert!(
                    d.failure.is_some() || d.status.is_some(),
                    "a reply without a status"
                );
            }
        });
        assert_eq!(
            before - c.reqs.len(),
            seen,
            "each ended request leaves once"
        );
        ended += seen;
        while c.open < c.reqs.len() && c.may_open() {
            let i = c.open;
            c.open(i, &[0x82, 0x84], None);
            opened += 1;
        }
        c.send_bodies();
        if n % 2 == 1 {
            c.out.clear();
            (c.acks, fed, opened) = (0, 0, 0);
        }
        if c.failed.is_some() {
            break;
        }
    }
    ended
}
