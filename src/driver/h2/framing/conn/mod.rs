//! One HTTP/2 connection's protocol state, without I/O: the requests in flight (each a stream
//! once the server allows another), flow control both ways, and what each frame read does.
//! Frames to send are appended to `out`; the session writes it, many streams' frames at once.

mod read;

use super::frame::{self, reason_name, Head};
use super::hpack::Decoder;
use crate::driver::{Done, Failure, Sent};
use crate::record::ErrorKind;
use bytes::Bytes;
use std::collections::VecDeque;
use std::time::Instant;

/// The receive window of each stream: how much of one body the server may send ahead.
pub(super) const STREAM_WINDOW: u32 = 4 << 20;
/// The receive window of the whole connection: at most this much is buffered unread.
pub(super) const CONNECTION_WINDOW: u32 = 8 << 20;
/// Streams assumed allowed until the server's SETTINGS say otherwise (RFC 9113 §5.1.2
/// recommends no fewer than 100); connect waits for the SETTINGS anyway.
const INITIAL_STREAMS: usize = 100;
/// The highest stream identifier (§5.1.1).
const LAST_ID: u32 = (1 << 31) - 1;
/// The largest header block (HEADERS and its CONTINUATION frames, compressed) the client
/// holds: a server that sends more without END_HEADERS fails its connection (a CONTINUATION
/// flood reached 0.8 GB in 3 s before this bound).
pub(super) const MAX_HEADER_BLOCK: usize = 1 << 20;
/// The most answers to the server's PING and SETTINGS frames that wait unwritten: a server that
/// floods them without reading the answers fails its connection (floods of PING and SETTINGS
/// reached 2.1 and 1.0 GB in 3 s before this bound; nghttp2 allows 1,000). One read of the
/// 64 KiB buffer holds at most 7,282 empty SETTINGS, each answered.
pub(super) const MAX_ACKS_QUEUED: usize = 10_000;

/// Why a frame ended the connection.
#[derive(Debug)]
enum Broke {
    /// The server broke the protocol: GOAWAY with this code.
    Code(u32),
    /// The server made the client hold more than its bounds allow.
    Flood(&'static str),
}

impl From<u32> for Broke {
    fn from(code: u32) -> Broke {
        Broke::Code(code)
    }
}

/// How a request ended on this connection.
#[derive(Debug, Clone, Copy)]
pub(super) enum End {
    /// With a reply, or an error of its own.
    Done(Done),
    /// Not processed by a server closing the connection in good order (GOAWAY NO_ERROR with
    /// a last stream below it, RFC 9113 §6.8): it may go out again on a new connection.
    Again,
}

/// A request in flight.
#[derive(Debug)]
pub(super) struct Req {
    /// The engine's number of the request (its `{seq}`, and kept to send it again).
    pub seq: u64,
    /// When it was meant to go out and did.
    pub sent: Sent,
    /// The connection's bytes read when it was queued: unchanged at its time limit means the
    /// connection has been silent all along.
    pub mark: u64,
    /// Its stream, 0 while it waits for the server to allow another.
    pub id: u32,
    /// When its response head was seen, and its status.
    pub first_byte: Option<Instant>,
    pub status: u16,
    /// The request body not yet sent (flow control holds it back), and the stream's window.
    pub body: Option<Bytes>,
    pub window: i64,
    /// Response DATA bytes not yet given back with a WINDOW_UPDATE.
    pub unacked: u32,
    /// Set once it has ended; it leaves the list at the next sweep.
    pub end: Option<End>,
}

impl Req {
    /// A request that waits for its stream.
    pub(super) fn new(seq: u64, sent: Sent, mark: u64) -> Req {
        Req {
            seq,
            sent,
            mark,
            id: 0,
            first_byte: None,
            status: 0,
            body: None,
            window: 0,
            unacked: 0,
            end: None,
        }
    }

    /// Ends it with `f`, unless it has ended already; whether it ended it.
    fn fail(&mut self, f: Failure) -> bool {
        let now = self.end.is_none();
        if now {
            self.end = Some(End::Done(Done::failed(self.sent, f)));
            self.body = None;
        }
        now
    }
}

/// The server broke the protocol: the connection ends with GOAWAY `code`.
fn broke(code: u32) -> Failure {
    Failure {
        kind: ErrorKind::Mismatch,
        what: "HTTP/2: the server broke the protocol; the client ended the stream or connection",
        code: Some(reason_name(code)),
    }
}

/// The server made the client hold more than its bounds allow: the connection ends with
/// GOAWAY ENHANCE_YOUR_CALM.
fn flood(what: &'static str) -> Failure {
    Failure {
        kind: ErrorKind::Mismatch,
        what,
        code: Some(reason_name(ENHANCE_YOUR_CALM)),
    }
}

/// ENHANCE_YOUR_CALM (§7): the peer is generating excessive load.
const ENHANCE_YOUR_CALM: u32 = 0xb;

/// The protocol state of one connection.
#[derive(Debug)]
pub(super) struct Conn {
    /// Frames to send, in order.
    pub out: Vec<u8>,
    /// Requests in flight, oldest first: those with a stream (ascending ids) before those
    /// waiting for one. A deque: replies come oldest first, and leave from its front.
    pub reqs: VecDeque<Req>,
    /// How many of `reqs` have a stream.
    pub open: usize,
    /// How many of `reqs` have ended (and wait for the sweep).
    ended: usize,
    /// Where in `reqs` the last reply was found: the next is looked for there first.
    last: usize,
    /// The server's SETTINGS came.
    pub settings: bool,
    /// The server sent GOAWAY: no new streams. With NO_ERROR, `graceful` too.
    pub gone: bool,
    pub graceful: bool,
    /// A failure of the whole connection (a GOAWAY with an error, a broken protocol).
    pub failed: Option<Failure>,
    decoder: Decoder,
    /// A header block split over CONTINUATION frames: its stream, flags and bytes so far.
    pending: Option<(u32, u8)>,
    block: Vec<u8>,
    next_id: u32,
    max_streams: usize,
    max_frame: usize,
    /// The server's initial stream window and the connection's send window.
    initial_window: i64,
    window: i64,
    /// DATA bytes not yet given back to the connection's window.
    unacked: u32,
    /// Requests with a body left to send.
    bodies: usize,
    /// Answers to PING and SETTINGS appended to `out` since it was last written out whole.
    pub acks: usize,
}

impl Conn {
    /// A connection whose preface, SETTINGS and window are in `out`, ready to be written.
    pub(super) fn new() -> Conn {
        let mut out = frame::PREFACE.to_vec();
        frame::head(&mut out, 12, frame::SETTINGS, 0, 0);
        for (id, v) in [
            (frame::SETTINGS_ENABLE_PUSH, 0),
            (frame::SETTINGS_INITIAL_WINDOW_SIZE, STREAM_WINDOW),
        ] {
            out.extend_from_slice(&id.to_be_bytes());
            out.extend_from_slice(&v.to_be_bytes());
        }
        let more = CONNECTION_WINDOW - frame::DEFAULT_WINDOW as u32;
        frame::word(&mut out, frame::WINDOW_UPDATE, 0, more);
        Conn {
            out,
            reqs: VecDeque::new(),
            open: 0,
            ended: 0,
            last: 0,
            settings: false,
            gone: false,
            graceful: false,
            failed: None,
            decoder: Decoder::new(),
            pending: None,
            block: Vec::new(),
            next_id: 1,
            max_streams: INITIAL_STREAMS,
            max_frame: frame::DEFAULT_MAX_FRAME,
            initial_window: frame::DEFAULT_WINDOW,
            window: frame::DEFAULT_WINDOW,
            unacked: 0,
            bodies: 0,
            acks: 0,
        }
    }

    /// The header block being collected (HEADERS, then CONTINUATION), in bytes.
    pub(super) fn block_len(&self) -> usize {
        self.block.len()
    }

    /// Whether the server allows another stream now.
    pub(super) fn may_open(&self) -> bool {
        !self.gone
            && self.failed.is_none()
            && self.open < self.max_streams
            && self.next_id <= LAST_ID
    }

    /// Opens a stream for the waiting request at `i` (the first waiting one) with the header
    /// block `block` and its body.
    pub(super) fn open(&mut self, i: usize, block: &[u8], body: Option<Bytes>) {
        debug_assert_eq!(i, self.open);
        let id = self.next_id;
        self.next_id += 2;
        let body = body.filter(|b| !b.is_empty());
        frame::headers(&mut self.out, id, block, body.is_none(), self.max_frame);
        let r = &mut self.reqs[i];
        (r.id, r.window) = (id, self.initial_window);
        if body.is_some() {
            r.body = body;
            self.bodies += 1;
        }
        self.open += 1;
        if self.next_id > LAST_ID {
            // Stream identifiers are spent (§5.1.1): the connection takes no new streams, and
            // those still waiting go out on a new one, as after a graceful GOAWAY.
            (self.gone, self.graceful) = (true, true);
            for r in self.reqs.range_mut(self.open..) {
                if r.end.is_none() {
                    r.end = Some(End::Again);
                    self.ended += 1;
                }
            }
        }
    }

    /// Sends as much of the request bodies as the windows allow.
    pub(super) fn send_bodies(&mut self) {
        if self.bodies == 0 {
            return;
        }
        for r in self.reqs.range_mut(..self.open) {
            let Some(b) = r.body.as_mut() else { continue };
            while !b.is_empty() && self.window > 0 && r.window > 0 {
                let n = b
                    .len()
                    .min(self.max_frame)
                    .min(self.window.min(r.window) as usize);
                let last = n == b.len();
                let flags = if last { frame::END_STREAM } else { 0 };
                frame::head(&mut self.out, n, frame::DATA, flags, r.id);
                self.out.extend_from_slice(&b.split_to(n));
                self.window -= n as i64;
                r.window -= n as i64;
            }
            if b.is_empty() {
                r.body = None;
                self.bodies -= 1;
            }
        }
    }

    /// Handles every whole frame at the start of `buf`; returns the bytes used. `now` is the
    /// time of the read; `bytes` counts response body bytes.
    pub(super) fn input(&mut self, buf: &[u8], now: Instant, bytes: &mut usize) -> usize {
        let mut at = 0;
        while self.failed.is_none() && buf.len() - at >= frame::HEADER {
            let h = Head::parse(&buf[at..]);
            if h.len > frame::DEFAULT_MAX_FRAME {
                self.fail_all(broke(0x6), 0x6); // FRAME_SIZE_ERROR
                break;
            }
            let end = at + frame::HEADER + h.len;
            if buf.len() < end {
                break;
            }
            let payload = &buf[at + frame::HEADER..end];
            at = end;
            match self.frame(&h, payload, now, bytes) {
                Ok(()) => {}
                Err(Broke::Code(code)) => self.fail_all(broke(code), code),
                Err(Broke::Flood(what)) => self.fail_all(flood(what), ENHANCE_YOUR_CALM),
            }
        }
        at
    }

    /// Ends every request with `f` and the connection with GOAWAY `code`.
    fn fail_all(&mut self, f: Failure, code: u32) {
        frame::head(&mut self.out, 8, frame::GOAWAY, 0, 0);
        self.out.extend_from_slice(&0u32.to_be_bytes());
        self.out.extend_from_slice(&code.to_be_bytes());
        self.connection_failed(f);
    }

    /// The connection is over with `f`: every request still in flight fails with it.
    pub(super) fn connection_failed(&mut self, f: Failure) {
        self.gone = true;
        self.failed.get_or_insert(f);
        for r in &mut self.reqs {
            self.ended += r.fail(f) as usize;
        }
    }

    /// The request on stream `id`, if it is still in flight.
    fn req(&mut self, id: u32) -> Option<&mut Req> {
        find(&mut self.reqs, self.open, &mut self.last, id)
    }

    /// Takes the requests that ended out of the list, in order, to `out`; resets the streams
    /// of those that ended with a body still unsent. Those at the front (replies come in
    /// order, as a rule) leave without moving the rest.
    pub(super) fn sweep(&mut self, mut out: impl FnMut(&Req, End)) {
        let (conn_out, mut open, mut bodies) = (&mut self.out, self.open, self.bodies);
        let mut gone = |r: &mut Req, end: End| {
            if r.id != 0 {
                open -= 1;
                if r.body.take().is_some() {
                    bodies -= 1;
                    frame::word(conn_out, frame::RST_STREAM, r.id, 0);
                }
            }
            out(r, end);
        };
        while self.ended > 0 {
            let Some(end) = self.reqs.front().and_then(|r| r.end) else {
                break;
            };
            if let Some(mut r) = self.reqs.pop_front() {
                gone(&mut r, end);
            }
            self.ended -= 1;
            self.last = self.last.saturating_sub(1);
        }
        if self.ended > 0 {
            self.reqs.retain_mut(|r| {
                let Some(end) = r.end else { return true };
                gone(r, end);
                false
            });
            (self.ended, self.last) = (0, 0);
        }
        (self.open, self.bodies) = (open, bodies);
    }

    /// Cancels the first `n` requests (past their time limit): RST_STREAM CANCEL for those
    /// with a stream.
    pub(super) fn cancel(&mut self, n: usize) {
        self.last = self.last.saturating_sub(n);
        for r in self.reqs.drain(..n) {
            if r.id != 0 && r.end.is_none() {
                frame::word(&mut self.out, frame::RST_STREAM, r.id, frame::CANCEL);
            }
            self.ended -= r.end.is_some() as usize;
            if r.id != 0 {
                self.open -= 1;
                self.bodies -= r.body.is_some() as usize;
            }
        }
    }
}

/// The request on stream `id` among the first `open` of `reqs` (those with a stream, in
/// ascending ids), if it is still in flight. Replies come oldest first, as a rule, so the last
/// one found (`last`: a DATA frame follows its HEADERS) and the one after it are looked at
/// before a binary search.
fn find<'a>(
    reqs: &'a mut VecDeque<Req>,
    open: usize,
    last: &mut usize,
    id: u32,
) -> Option<&'a mut Req> {
    let at = |i: usize| i < open && reqs.get(i).is_some_and(|r| r.id == id);
    let i = match (*last, *last + 1) {
        (i, _) if at(i) => i,
        (_, i) if at(i) => i,
        _ => search(reqs, open, id)?,
    };
    *last = i;
    let r = &mut reqs[i];
    r.end.is_none().then_some(r)
}

/// Where the request on stream `id` is among the first `open` of `reqs`.
fn search(reqs: &VecDeque<Req>, open: usize, id: u32) -> Option<usize> {
    let (a, b) = reqs.as_slices();
    let (a, b) = match open <= a.len() {
        true => (&a[..open], &b[..0]),
        false => (a, &b[..open - a.len()]),
    };
    match b.first() {
        Some(r) if r.id <= id => Some(a.len() + b.binary_search_by_key(&id, |r| r.id).ok()?),
        _ => a.binary_search_by_key(&id, |r| r.id).ok(),
    }
}

/// A reply complete: a plain [`Done`] (judged against `--accept` by the session).
fn finish(r: &mut Req) {
    r.end = Some(End::Done(Done {
        sent: r.sent,
        first_byte: r.first_byte,
        status: Some(r.status),
        accepted: true,
        failure: None,
        kind: 0,
    }));
}

/// The failure of a stream the server reset with `code`.
fn reset(code: u32) -> Failure {
    let name = Some(reason_name(code));
    match code {
        0x7 => Failure {
            kind: ErrorKind::Refused,
            what: "HTTP/2: the server refused the stream (RST_STREAM), which it did not process",
            code: name,
        },
        _ => Failure {
            kind: ErrorKind::Reset,
            what: "HTTP/2: the server reset the stream (RST_STREAM)",
            code: name,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A reply on `stream`: a HEADERS frame with `:status 200` that ends it, or RST_STREAM.
    fn end_frame(stream: u32, reset: bool) -> Vec<u8> {
        let mut b = Vec::new();
        if reset {
            frame::word(&mut b, frame::RST_STREAM, stream, 0x2);
        } else {
            let flags = frame::END_HEADERS | frame::END_STREAM;
            frame::head(&mut b, 1, frame::HEADERS, flags, stream);
            b.push(0x88);
        }
        b
    }

    proptest! {
        /// Streams ended in any order, some reset, a few at a time between sweeps, while new
        /// ones open behind them: each sweep hands on exactly those that ended, in the list's
        /// order, and what stays is the rest, every one with its stream.
        #[test]
        fn streams_ended_in_any_order_leave_in_order_and_the_rest_stay(
            steps in proptest::collection::vec((0usize..3, proptest::collection::vec((0usize..64, any::<bool>()), 0..4)), 1..120),
        ) {
            let mut c = Conn::new();
            let now = Instant::now();
            let sent = Sent { intended: now, at: now };
            let mut model: VecDeque<(u64, u32)> = VecDeque::new();
            let mut seq = 0;
            for (add, ends) in steps {
                for _ in 0..add {
                    c.reqs.push_back(Req::new(seq, sent, 0));
                    let i = c.open;
                    c.open(i, &[0x82], None);
                    model.push_back((seq, c.reqs[i].id));
                    seq += 1;
                }
                let mut ended = Vec::new();
                for (k, reset) in ends {
                    let live: Vec<_> = model.iter().filter(|m| !ended.contains(&m.0)).collect();
                    let Some(&&(s, id)) = live.get(k % live.len().max(1)) else { break };
                    let buf = end_frame(id, reset);
                    prop_assert_eq!(c.input(&buf, now, &mut 0), buf.len());
                    ended.push(s);
                }
                ended.sort_unstable();
                let mut out = Vec::new();
                c.sweep(|r, _| out.push(r.seq));
                prop_assert_eq!(&out, &ended);
                model.retain(|m| !ended.contains(&m.0));
                let left: Vec<_> = c.reqs.iter().map(|r| (r.seq, r.id)).collect();
                prop_assert_eq!(left, model.iter().copied().collect::<Vec<_>>());
                prop_assert_eq!(c.open, model.len());
            }
        }
    }
}
