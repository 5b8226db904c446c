//! gRPC calls over one HTTP/2 connection (the h2 crate, which hands over every header and the
//! trailers that carry a call's status): the calls of a run ([`GrpcSession`]), each call's
//! state from its head to its trailers. The connection's opening and the few calls made before
//! the run are in [`super::exchange`]; how a call's status reads, in [`super::status`].

use super::shape::{CallShape, Made};
use super::status::{failure, h2_failure, no_status, status_failure, status_of};
use crate::driver::h2::io::{Counts, Io};
use crate::driver::{Done, Expiry, Failure, ReadOutcome, Sent, Session};
use crate::record::{ErrorKind, OpError};
use crate::wire::grpc::Deframer;
use bytes::Bytes;
use h2::client::{Connection, ResponseFuture, SendRequest};
use h2::{RecvStream, SendStream};
use std::collections::VecDeque;
use std::future::{poll_fn, Future};
use std::pin::Pin;
use std::rc::Rc;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

/// Where a call is.
enum Phase {
    /// Waiting for the response head.
    Head(ResponseFuture),
    /// Reading reply messages.
    Body(RecvStream),
    /// Waiting for the trailers.
    Trailers(RecvStream),
    /// Ended (only while it is taken out).
    Over,
}

/// One call in flight.
struct Call {
    sent: Sent,
    phase: Phase,
    /// The request stream, kept to send a client stream's later messages and to cancel.
    tx: SendStream<Bytes>,
    /// A client stream's messages still to send, the message and when the next goes.
    left: u64,
    message: Bytes,
    next: Instant,
    deframer: Deframer,
    /// When its first and last reply messages came, and how many.
    first: Option<Instant>,
    messages: u32,
}

impl Call {
    /// Moves the call on as far as it can now; its end, if it ended.
    fn poll(&mut self, cx: &mut Context<'_>, now: Instant, bytes: &mut usize) -> Option<Done> {
        loop {
            match std::mem::replace(&mut self.phase, Phase::Over) {
                Phase::Head(mut f) => match Pin::new(&mut f).poll(cx) {
                    Poll::Pending => {
                        self.phase = Phase::Head(f);
                        return None;
                    }
                    Poll::Ready(Err(e)) => return Some(self.failed(h2_failure(&e))),
                    Poll::Ready(Ok(response)) => {
                        let (parts, body) = response.into_parts();
                        if parts.status != 200 {
                            return Some(self.failed(failure(
                                ErrorKind::Status,
                                "gRPC: the server answered with an HTTP status other than 200",
                            )));
                        }
                        if let Some((code, _)) = status_of(&parts.headers) {
                            return Some(self.ended(code));
                        }
                        self.phase = Phase::Body(body);
                    }
                },
                Phase::Body(mut b) => match b.poll_data(cx) {
                    Poll::Pending => {
                        self.phase = Phase::Body(b);
                        return None;
                    }
                    Poll::Ready(Some(Ok(chunk))) => {
                        let _ = b.flow_control().release_capacity(chunk.len());
                        let (first, messages) = (&mut self.first, &mut self.messages);
                        let pushed = self.deframer.push(&chunk, |m| {
                            first.get_or_insert(now);
                            *messages += 1;
                            *bytes += m.len();
                        });
                        if pushed.is_err() {
                            self.tx.send_reset(h2::Reason::CANCEL);
                            return Some(self.failed(failure(
                                ErrorKind::Mismatch,
                                "gRPC: a reply message over 4 MiB, or compressed unasked",
                            )));
                        }
                        self.phase = Phase::Body(b);
                    }
                    Poll::Ready(Some(Err(e))) => return Some(self.failed(h2_failure(&e))),
                    Poll::Ready(None) => self.phase = Phase::Trailers(b),
                },
                Phase::Trailers(mut b) => match b.poll_trailers(cx) {
                    Poll::Pending => {
                        self.phase = Phase::Trailers(b);
                        return None;
                    }
                    Poll::Ready(Ok(Some(t))) => {
                        return Some(match status_of(&t) {
                            Some((code, _)) => self.ended(code),
                            None => self.failed(no_status()),
                        })
                    }
                    Poll::Ready(Ok(None)) => return Some(self.failed(no_status())),
                    Poll::Ready(Err(e)) => return Some(self.failed(h2_failure(&e))),
                },
                Phase::Over => return None,
            }
        }
    }

    fn failed(&self, f: Failure) -> Done {
        Done::failed(self.sent, f)
    }

    fn ended(&self, code: u32) -> Done {
        match code {
            0 => Done {
                first_byte: self.first,
                ..Done::ok(self.sent)
            },
            _ => self.failed(status_failure(code)),
        }
    }
}

/// One gRPC connection as the engine sees it: calls waiting for a stream, calls in flight.
pub struct GrpcSession {
    send: SendRequest<Bytes>,
    conn: Connection<Io, Bytes>,
    shape: Arc<CallShape>,
    worker: usize,
    connections: u64,
    counts: Rc<Counts>,
    fd: std::os::fd::RawFd,
    /// Calls queued, not yet on a stream.
    waiting: VecDeque<(u64, Sent)>,
    calls: Vec<Call>,
    completed: Vec<Done>,
    delivered: bool,
    /// Request and reply message bytes not yet reported.
    payload_sent: usize,
    payload_read: usize,
    reported: u64,
    read_reported: u64,
    /// Why the connection is over, once it is.
    over: Option<Failure>,
    /// Wakes the session for a client stream's next message.
    timer: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl std::fmt::Debug for GrpcSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GrpcSession")
            .field("calls", &self.calls.len())
            .field("waiting", &self.waiting.len())
            .finish()
    }
}

impl GrpcSession {
    /// A session on a connection that finished its handshake.
    pub(super) fn new(
        (send, conn): (SendRequest<Bytes>, Connection<Io, Bytes>),
        shape: Arc<CallShape>,
        worker: usize,
        connections: u64,
        counts: Rc<Counts>,
        fd: std::os::fd::RawFd,
    ) -> GrpcSession {
        GrpcSession {
            send,
            conn,
            shape,
            worker,
            connections,
            counts,
            fd,
            waiting: VecDeque::new(),
            calls: Vec::new(),
            completed: Vec::new(),
            delivered: true,
            payload_sent: 0,
            payload_read: 0,
            reported: 0,
            read_reported: 0,
            over: None,
            timer: None,
        }
    }

    /// The connection is over with `f`: every call in it and waiting for it fails.
    fn end(&mut self, f: Failure) {
        self.over.get_or_insert(f);
        for c in self.calls.drain(..) {
            self.completed.push(c.failed(f));
        }
        for (_, sent) in self.waiting.drain(..) {
            self.completed.push(Done::failed(sent, f));
        }
    }

    fn drive(&mut self, cx: &mut Context<'_>) {
        if self.over.is_some() {
            return;
        }
        match Pin::new(&mut self.conn).poll(cx) {
            Poll::Pending => {}
            Poll::Ready(Ok(())) => self.end(failure(
                ErrorKind::ShortReply,
                "gRPC: the server closed the connection",
            )),
            Poll::Ready(Err(e)) => self.end(h2_failure(&e)),
        }
    }

    /// Puts waiting calls on streams while the server allows more.
    fn open(&mut self, cx: &mut Context<'_>, now: Instant) {
        while !self.waiting.is_empty() && self.over.is_none() {
            match self.send.poll_ready(cx) {
                Poll::Pending => break,
                Poll::Ready(Err(e)) => self.end(h2_failure(&e)),
                Poll::Ready(Ok(())) => {
                    let Some((seq, sent)) = self.waiting.pop_front() else {
                        break;
                    };
                    let unique = crate::driver::http::unique_seq(seq, self.connections);
                    match self.shape.make(unique, self.worker) {
                        Made::Call(head, message) => self.start(sent, head, message, now),
                        Made::Failed(f) => self.completed.push(Done {
                            failure: Some(f),
                            accepted: false,
                            ..Done::ok(sent)
                        }),
                    }
                }
            }
        }
    }

    fn start(&mut self, sent: Sent, head: http::Request<()>, message: Bytes, now: Instant) {
        let (response, mut tx) = match self.send.send_request(head, false) {
            Ok(pair) => pair,
            Err(e) => {
                let f = h2_failure(&e);
                self.completed.push(Done {
                    failure: Some(f),
                    accepted: false,
                    ..Done::ok(sent)
                });
                return;
            }
        };
        let (count, interval) = self.shape.client_stream;
        let payload = message.len().saturating_sub(5);
        let _ = tx.send_data(message.clone(), count <= 1);
        self.payload_sent += payload;
        self.calls.push(Call {
            sent,
            phase: Phase::Head(response),
            tx,
            left: count.saturating_sub(1),
            message,
            next: now + interval,
            deframer: Deframer::default(),
            first: None,
            messages: 0,
        });
    }

    /// Sends the client streams' messages that are due; arms the timer for the next.
    fn stream_out(&mut self, cx: &mut Context<'_>, now: Instant) {
        let interval = self.shape.client_stream.1;
        let mut next: Option<Instant> = None;
        for c in &mut self.calls {
            while c.left > 0 && c.next <= now {
                c.left -= 1;
                let _ = c.tx.send_data(c.message.clone(), c.left == 0);
                self.payload_sent += c.message.len().saturating_sub(5);
                c.next += interval;
            }
            if c.left > 0 {
                next = Some(next.map_or(c.next, |n| n.min(c.next)));
            }
        }
        match next {
            Some(at) => {
                let at = tokio::time::Instant::from_std(at);
                let timer = self
                    .timer
                    .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(at)));
                if timer.deadline() != at {
                    timer.as_mut().reset(at);
                }
                let _ = timer.as_mut().poll(cx);
            }
            None => self.timer = None,
        }
    }

    /// One pass: the connection, new streams, every call; whether any call ended.
    fn pass(&mut self, cx: &mut Context<'_>) {
        let now = Instant::now();
        self.drive(cx);
        self.open(cx, now);
        if self.shape.client_stream.0 > 1 {
            self.stream_out(cx, now);
        }
        let mut i = 0;
        while i < self.calls.len() {
            match self.calls[i].poll(cx, now, &mut self.payload_read) {
                Some(done) => {
                    self.calls.remove(i);
                    self.completed.push(done);
                }
                None => i += 1,
            }
        }
        // What the calls queued goes out now.
        self.drive(cx);
    }

    fn outcome(&mut self) -> ReadOutcome {
        self.delivered = true;
        let read = self.counts.read.get();
        ReadOutcome {
            bytes: std::mem::take(&mut self.payload_read),
            wire: (read - std::mem::replace(&mut self.read_reported, read)) as usize,
            replies: self.completed.len(),
            ..ReadOutcome::default()
        }
    }
}

impl Session for GrpcSession {
    fn in_flight(&self) -> usize {
        let unreported = if self.delivered {
            0
        } else {
            self.completed.len()
        };
        self.calls.len() + self.waiting.len() + unreported
    }

    fn oldest(&self) -> Option<Instant> {
        let calls = self.calls.iter().map(|c| c.sent.at);
        let waiting = self.waiting.iter().map(|w| w.1.at);
        let done = self
            .completed
            .iter()
            .filter(|_| !self.delivered)
            .map(|d| d.sent.at);
        calls.chain(waiting).chain(done).min()
    }

    fn queue(&mut self, seq: u64, sent: Sent) {
        if self.delivered {
            self.completed.clear();
            self.delivered = false;
        }
        if let Some(f) = self.over {
            return self.completed.push(Done::failed(sent, f));
        }
        self.waiting.push_back((seq, sent));
    }

    async fn flush(&mut self) -> Result<usize, OpError> {
        poll_fn(|cx| {
            self.pass(cx);
            Poll::Ready(())
        })
        .await;
        let written = self.counts.written.get();
        let n = written - self.reported;
        self.reported = written;
        Ok(n as usize)
    }

    fn sent_payload(&mut self, _wire: usize) -> usize {
        std::mem::take(&mut self.payload_sent)
    }

    async fn read(&mut self) -> Result<ReadOutcome, OpError> {
        if self.delivered {
            self.completed.clear();
            self.delivered = false;
        }
        poll_fn(|cx| {
            self.pass(cx);
            if !self.completed.is_empty() || self.payload_read > 0 {
                return Poll::Ready(Ok(self.outcome()));
            }
            match self.over {
                Some(f) => Poll::Ready(Err(OpError::new(f.kind, f.message()))),
                None => Poll::Pending,
            }
        })
        .await
    }

    fn completed(&self) -> &[Done] {
        &self.completed
    }

    fn segment(&self) -> Option<crate::record::Segment> {
        crate::driver::stream::segment_of(self.fd)
    }

    fn reusable(&self) -> bool {
        self.over.is_none()
    }

    fn expire(&mut self, now: Instant, timeout: Duration) -> Expiry {
        let late = |s: &Sent| now >= s.at + timeout;
        let before = self.calls.len() + self.waiting.len();
        self.calls.retain_mut(|c| {
            let keep = !late(&c.sent);
            if !keep {
                c.tx.send_reset(h2::Reason::CANCEL);
            }
            keep
        });
        self.waiting.retain(|w| !late(&w.1));
        match before - self.calls.len() - self.waiting.len() {
            0 => Expiry::None,
            n => Expiry::Lost(n),
        }
    }
}
