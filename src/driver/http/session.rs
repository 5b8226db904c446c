//! What one open HTTP/1.1 connection ([`HttpSession`]) does for the engine: requests rendered
//! into its buffer (or sent from the worker's shared copy when every request is the same),
//! written, their responses read as they stream in (parsed in [`super::response`]), its read
//! buffer sized to what arrives.

use super::request::render_request;
use super::response::Parser;
use super::reuse::{self, Reuse};
use super::spec::HttpSpec;
use super::template::{Rng, Vars};
use super::{HttpSession, Pending, BIG_READ, BODY_LOWAT, SMALL_READ};
use crate::driver::stream::Stream;
use crate::driver::{Done, Expiry, ReadOutcome, Sent, Session};
use crate::record::{ErrorKind, OpError};
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The `{seq}` of the engine's request `seq` (connection k's n-th request is `k << 40 | n`):
/// dense and unique over the run without shared state, in a run of `connections` connections.
pub(crate) fn unique_seq(seq: u64, connections: u64) -> u64 {
    (seq & ((1 << 40) - 1)) * connections + (seq >> 40)
}

impl HttpSession {
    /// A session on a connected stream, with nothing in flight yet.
    pub(super) fn new(
        stream: Stream,
        spec: Arc<HttpSpec>,
        worker: usize,
        connections: u64,
        reuse: Rc<Reuse>,
    ) -> Self {
        let q = reuse.queues();
        HttpSession {
            stream,
            spec,
            worker,
            connections,
            out: q.out,
            out_pos: 0,
            sent_now: 0,
            body: Vec::new(),
            body_queued: 0,
            inbuf: reuse.buffer(),
            in_flight: q.in_flight,
            parser: Parser::default(),
            reuse,
            completed: q.completed,
            reusable: true,
            lowat: 1,
            fixed: None,
            fixed_unsent: false,
        }
    }

    /// Renders request `seq` into the output buffer; returns its kind in the mix (0: none).
    fn render(&mut self, seq: u64) -> u8 {
        let unique = unique_seq(seq, self.connections);
        let spec = &*self.spec;
        // The request's own draws: its keys depend on the seed and its number alone.
        // (A local generator: seeding one per connection from the kernel cost a getrandom(2)
        // per connection, and was never drawn from.)
        let mut rng = Rng::nth(spec.seed, unique);
        let mut vars = Vars {
            seq: unique,
            worker: self.worker,
            rng: &mut rng,
        };
        let (kind, body) = render_request(spec, &mut vars, &mut self.out, &mut self.body);
        self.body_queued += body;
        kind
    }

    /// Puts the fixed request that [`Session::flush_now`] was to send from the shared copy into
    /// `out` (for a stream that only sends by awaiting, or one pipelined behind it).
    fn copy_unsent(&mut self) {
        if std::mem::take(&mut self.fixed_unsent) {
            self.copy_fixed();
        }
    }

    /// Appends the fixed request to `out`.
    fn copy_fixed(&mut self) {
        if let Some(f) = &self.fixed {
            self.out.extend_from_slice(&f.bytes);
        }
    }

    /// Within a long Content-Length body, a blocking read waits for [`BODY_LOWAT`] bytes; two
    /// setsockopt calls per body. The mark is raised only while at least twice that much of
    /// the body is still to come, and is back at 1 for the rest: a blocking recv(2) that has
    /// taken C bytes sleeps until the bytes *still queued* reach the mark (the kernel does
    /// not count the C), so with less than mark + C to come it would sleep until the timeout.
    fn tune_lowat(&mut self) {
        let want = match self.parser.body_left() {
            Some(left) if left >= 2 * BODY_LOWAT && self.inbuf.len() >= BIG_READ => BODY_LOWAT,
            _ => 1,
        };
        if want != self.lowat && self.stream.set_rcvlowat(want as usize).is_ok() {
            self.lowat = want;
        }
    }

    /// Parses the `n` bytes a read has just put in the buffer (0: the server closed), into
    /// the replies it completes.
    fn after_read(&mut self, n: usize) -> Result<ReadOutcome, OpError> {
        self.completed.clear();
        let mut out = ReadOutcome::default();
        if n == 0 {
            if self.end_at_close() {
                out.replies = self.completed.len();
                return Ok(out);
            }
            return Err(OpError::new(
                ErrorKind::ShortReply,
                "the server closed the connection",
            ));
        }
        out.wire = n;
        let now = Instant::now();
        out.at = Some(now);
        self.parse(n, now, &mut out)?;
        if n == self.inbuf.len() && n < SMALL_READ {
            // A read that filled the first buffer: more is coming than it holds.
            let mut small = vec![0; SMALL_READ].into_boxed_slice();
            small[..n].copy_from_slice(&self.inbuf);
            self.inbuf = small;
        }
        out.replies = self.completed.len();
        Ok(out)
    }

    pub(super) fn grow(&mut self) {
        if self.inbuf.len() < BIG_READ {
            // The parser is still reading the bytes after the head: they move along.
            let mut big = vec![0; BIG_READ].into_boxed_slice();
            big[..self.inbuf.len()].copy_from_slice(&self.inbuf);
            self.inbuf = big;
        }
    }
}

impl Drop for HttpSession {
    fn drop(&mut self) {
        self.reuse.give(std::mem::take(&mut self.inbuf));
        self.reuse.give_queues(reuse::Queues {
            out: std::mem::take(&mut self.out),
            in_flight: std::mem::take(&mut self.in_flight),
            completed: std::mem::take(&mut self.completed),
        });
    }
}

impl Session for HttpSession {
    fn in_flight(&self) -> usize {
        self.in_flight.len()
    }

    fn oldest(&self) -> Option<Instant> {
        self.in_flight.front().map(|r| r.sent.at)
    }

    fn queue(&mut self, seq: u64, sent: Sent) {
        if self.out_pos == self.out.len() {
            self.out.clear();
            self.out_pos = 0;
        }
        let (kind, head) = match &self.fixed {
            Some(f) => {
                let (body, head) = (f.body, f.head);
                // Pipelined behind another: all go out of `out`, in order.
                let pipelined = self.fixed_unsent || !self.out.is_empty();
                self.copy_unsent();
                if pipelined {
                    self.copy_fixed();
                } else {
                    self.fixed_unsent = true;
                }
                self.body_queued += body;
                (0, head)
            }
            None => {
                let start = self.out.len();
                let kind = self.render(seq);
                (kind, self.out[start..].starts_with(b"HEAD "))
            }
        };
        self.in_flight.push_back(Pending {
            seq,
            sent,
            head,
            kind,
        });
    }

    fn flush_now(&mut self) -> Option<Result<usize, OpError>> {
        if let (true, Some(f)) = (self.fixed_unsent, &self.fixed) {
            let mut pos = 0;
            let sent = self.stream.send_now_from(&f.bytes, &mut pos)?;
            self.fixed_unsent = false;
            return match sent {
                Ok(true) => Some(Ok(pos + std::mem::take(&mut self.sent_now))),
                Ok(false) => {
                    // The socket took part of it: the rest goes out of `out`, by `flush`.
                    self.out.extend_from_slice(&f.bytes[pos..]);
                    self.sent_now += pos;
                    None
                }
                Err(e) => Some(Err(e)),
            };
        }
        let start = self.out_pos;
        match self.stream.send_now_from(&self.out, &mut self.out_pos)? {
            Ok(true) => Some(Ok(self.out_pos - start + std::mem::take(&mut self.sent_now))),
            Ok(false) => {
                self.sent_now += self.out_pos - start;
                None
            }
            Err(e) => Some(Err(e)),
        }
    }

    async fn flush(&mut self) -> Result<usize, OpError> {
        self.copy_unsent();
        let wire = self.stream.write_from(&self.out, &mut self.out_pos).await?;
        Ok(wire + std::mem::take(&mut self.sent_now))
    }

    fn sent_payload(&mut self, wire: usize) -> usize {
        // Bodies of the requests written; a partial write counts them once it is complete.
        if self.out_pos < self.out.len() || self.fixed_unsent {
            return 0;
        }
        std::mem::take(&mut self.body_queued).min(wire)
    }

    async fn read(&mut self) -> Result<ReadOutcome, OpError> {
        self.tune_lowat();
        let n = self
            .stream
            .read(&mut self.inbuf)
            .await
            .map_err(|e| OpError::io("read response", &e))?;
        self.after_read(n)
    }

    fn poll_read(
        &mut self,
        cx: &mut std::task::Context<'_>,
    ) -> Option<std::task::Poll<Result<ReadOutcome, OpError>>> {
        self.tune_lowat();
        use std::task::Poll;
        let read = match self.stream.poll_read_now(cx, &mut self.inbuf)? {
            Poll::Pending => return Some(Poll::Pending),
            Poll::Ready(Ok(n)) => self.after_read(n),
            Poll::Ready(Err(e)) => Err(OpError::io("read response", &e)),
        };
        Some(Poll::Ready(read))
    }

    fn completed(&self) -> &[Done] {
        &self.completed
    }

    fn reusable(&self) -> bool {
        self.reusable
    }

    /// A server that answers with `Connection: close` processes no request after that one
    /// (RFC 9112 §9.6): those pipelined behind it are sent again (§9.3.2). Not when the client
    /// itself asked for the close (`--no-keepalive`).
    fn goodbye(&mut self) -> Option<Vec<crate::driver::Retry>> {
        if self.reusable || !self.spec.keepalive {
            return None;
        }
        let left = self.in_flight.drain(..);
        Some(
            left.map(|p| crate::driver::Retry {
                seq: p.seq,
                sent: p.sent,
            })
            .collect(),
        )
    }

    /// The send MSS and TCP header of this connection, from `TCP_INFO` (the payload counted is
    /// the HTTP bytes, heads included; over TLS its records' overhead is not counted).
    fn segment(&self) -> Option<crate::record::Segment> {
        self.stream.segment()
    }

    fn expire(&mut self, now: Instant, timeout: Duration) -> Expiry {
        match self.oldest() {
            Some(at) if now >= at + timeout => Expiry::Reset,
            _ => Expiry::None,
        }
    }
}
