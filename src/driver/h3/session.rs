//! One HTTP/3 connection as the engine sees it ([`Session`]): its requests in flight, each a
//! stream of its own ([`super::exchange`]), polled together from the engine's reads; the
//! replies handed on; the QUIC connection's own view of the path kept for the run's figures.

use super::exchange::{exchange, Broke, Counts, Reply};
use super::Requests;
use crate::driver::http::template::{Rng, Vars};
use crate::driver::{Done, Expiry, Failure, ReadOutcome, Sent, Session};
use crate::record::{ErrorKind, OpError};
use bytes::Bytes;
use std::future::{poll_fn, Future};
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

type Exchange = Pin<Box<dyn Future<Output = Result<Reply, Broke>>>>;

/// A request in flight: its number, send times and stream.
struct Flight {
    sent: Sent,
    exchange: Exchange,
    /// Stream bytes read on the connection when it went out: if none came since, the
    /// connection has been silent all its life.
    mark: u64,
}

/// One open HTTP/3 connection.
pub struct H3Session {
    conn: quinn::Connection,
    /// The client's control stream: kept open while the connection lives (closing it is a
    /// connection error, RFC 9114 §6.2.1).
    _control: quinn::SendStream,
    requests: Rc<Requests>,
    counts: Rc<Counts>,
    flights: Vec<Flight>,
    /// Finished requests: those of the last read once `delivered`, else ones still to report.
    completed: Vec<Done>,
    delivered: bool,
    /// Request bytes (frames) and body bytes queued since the last flush.
    queued_wire: usize,
    queued_body: usize,
    /// Bytes read already reported.
    reported_body: u64,
    reported_wire: u64,
    /// Set once the connection failed: later requests fail at once.
    failed: Option<Failure>,
    /// A request's field section, and scratch space for its templated parts.
    block: Vec<u8>,
    scratch: Vec<u8>,
}

impl std::fmt::Debug for H3Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "H3Session({} in flight)", self.flights.len())
    }
}

impl H3Session {
    pub(super) fn new(
        conn: quinn::Connection,
        control: quinn::SendStream,
        requests: Rc<Requests>,
    ) -> H3Session {
        H3Session {
            conn,
            _control: control,
            requests,
            counts: Rc::new(Counts::default()),
            flights: Vec::new(),
            completed: Vec::new(),
            delivered: true,
            queued_wire: 0,
            queued_body: 0,
            reported_body: 0,
            reported_wire: 0,
            failed: None,
            block: Vec::new(),
            scratch: Vec::new(),
        }
    }

    /// The QUIC connection (for its statistics).
    pub fn connection(&self) -> &quinn::Connection {
        &self.conn
    }

    /// The frames of request `seq` and its body; None if a placeholder rendered something
    /// HTTP/3 cannot carry.
    fn render(&mut self, seq: u64) -> Option<(Bytes, Option<Bytes>)> {
        let r = &self.requests;
        let unique = crate::driver::http::unique_seq(seq, r.connections);
        let shape = (unique % r.shapes.count() as u64) as usize;
        if let Some(Some(fixed)) = r.fixed.get(shape) {
            return Some(fixed.clone());
        }
        // The request's own draws, from the seed and its number alone (as HTTP/1.1's).
        let mut rng = Rng::nth(r.spec.seed, unique);
        let mut vars = Vars {
            seq: unique,
            worker: r.worker,
            rng: &mut rng,
        };
        let (req, body) = r.shapes.render(&mut vars, &mut self.scratch)?;
        self.block.clear();
        Some(super::frames(&req, body, &mut self.block))
    }

    /// Polls every request in flight; each that ended becomes a [`Done`].
    fn poll_flights(&mut self, cx: &mut Context<'_>) {
        let (completed, failed, accept) = (
            &mut self.completed,
            &mut self.failed,
            &self.requests.spec.accept,
        );
        self.flights
            .retain_mut(|f| match f.exchange.as_mut().poll(cx) {
                Poll::Pending => true,
                Poll::Ready(Ok(reply)) => {
                    completed.push(Done {
                        sent: f.sent,
                        first_byte: Some(reply.first_byte),
                        status: Some(reply.status),
                        accepted: accept.accepts(reply.status),
                        failure: None,
                        kind: 0,
                    });
                    false
                }
                Poll::Ready(Err(Broke::Stream(why))) => {
                    completed.push(Done::failed(f.sent, why));
                    false
                }
                Poll::Ready(Err(Broke::Connection(why))) => {
                    failed.get_or_insert(why);
                    completed.push(Done::failed(f.sent, why));
                    false
                }
            });
        if self.failed.is_none() {
            if let Some(e) = self.conn.close_reason() {
                self.failed = Some(super::exchange::connection_failure(&e));
            }
        }
        if let Some(why) = self.failed {
            for f in self.flights.drain(..) {
                self.completed.push(Done::failed(f.sent, why));
            }
        }
    }

    fn poll_read(&mut self, cx: &mut Context<'_>) -> Poll<Result<ReadOutcome, OpError>> {
        self.poll_flights(cx);
        let (body, wire) = (self.counts.body_in.get(), self.counts.wire_in.get());
        let bytes = body - self.reported_body;
        if !self.completed.is_empty() || bytes > 0 {
            self.delivered = true;
            self.reported_body = body;
            let wire_read = wire - std::mem::replace(&mut self.reported_wire, wire);
            return Poll::Ready(Ok(ReadOutcome {
                bytes: bytes as usize,
                wire: wire_read as usize,
                replies: self.completed.len(),
                ..ReadOutcome::default()
            }));
        }
        if let Some(f) = self.failed {
            return Poll::Ready(Err(OpError::new(f.kind, f.message())));
        }
        Poll::Pending
    }
}

/// A request whose template rendered what HTTP/3 cannot carry.
const UNRENDERED: Failure = Failure {
    kind: ErrorKind::Other,
    what: "HTTP/3: a placeholder rendered a value HTTP/3 cannot carry",
    code: None,
};

impl Session for H3Session {
    fn in_flight(&self) -> usize {
        let unreported = if self.delivered {
            0
        } else {
            self.completed.len()
        };
        self.flights.len() + unreported
    }

    fn oldest(&self) -> Option<Instant> {
        let first = self.flights.first().map(|f| f.sent.at);
        if self.delivered {
            return first;
        }
        self.completed.iter().map(|d| d.sent.at).chain(first).min()
    }

    fn queue(&mut self, seq: u64, sent: Sent) {
        if self.delivered {
            self.completed.clear();
            self.delivered = false;
        }
        if let Some(f) = self.failed {
            return self.completed.push(Done::failed(sent, f));
        }
        let Some((head, body)) = self.render(seq) else {
            return self.completed.push(Done::failed(sent, UNRENDERED));
        };
        let body_len = body.as_ref().map_or(0, |b| b.len());
        self.queued_wire += head.len() + body_len;
        self.queued_body += body_len;
        let exchange = exchange(self.conn.clone(), head, body, self.counts.clone());
        self.flights.push(Flight {
            sent,
            exchange: Box::pin(exchange),
            mark: self.counts.wire_in.get(),
        });
    }

    async fn flush(&mut self) -> Result<usize, OpError> {
        // Polling the new streams opens them and hands their bytes to QUIC, which sends them
        // from its own task; what they bring back is read by the next read.
        poll_fn(|cx| {
            self.poll_flights(cx);
            Poll::Ready(())
        })
        .await;
        Ok(std::mem::take(&mut self.queued_wire))
    }

    fn sent_payload(&mut self, _wire: usize) -> usize {
        std::mem::take(&mut self.queued_body)
    }

    async fn read(&mut self) -> Result<ReadOutcome, OpError> {
        if self.delivered {
            self.completed.clear();
            self.delivered = false;
        }
        poll_fn(|cx| self.poll_read(cx)).await
    }

    fn completed(&self) -> &[Done] {
        &self.completed
    }

    fn reusable(&self) -> bool {
        self.failed.is_none() && self.conn.close_reason().is_none()
    }

    fn expire(&mut self, now: Instant, timeout: Duration) -> Expiry {
        let overdue = self
            .flights
            .iter()
            .take_while(|f| now >= f.sent.at + timeout)
            .count();
        if overdue == 0 {
            return Expiry::None;
        }
        if self.counts.wire_in.get() == self.flights[0].mark {
            // Nothing came back since the oldest went out: the connection is given up.
            return Expiry::Reset;
        }
        // Dropping a request's streams cancels it (STOP_SENDING, then the stream finished).
        self.flights.drain(..overdue);
        Expiry::Lost(overdue)
    }

    async fn close(&mut self, _limit: Duration) {
        self.conn.close(
            quinn::VarInt::from_u32(crate::wire::h3::frame::NO_ERROR as u32),
            b"",
        );
    }
}
