//! The requests in flight on one connection, each one h2 stream: opened when the connection
//! allows another, then its response head awaited and its body drained. Polled with a no-op
//! waker after the connection poll (see the module docs of [`super`]).

use super::failure::{stream_failure, unprocessed};
use super::request::Rendered;
use crate::driver::http::spec::Accept;
use crate::driver::{Done, Failure, Sent};
use bytes::Bytes;
use h2::client::{ResponseFuture, SendRequest};
use h2::RecvStream;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use std::time::Instant;

/// Where a request is.
pub(super) enum Stage {
    /// Rendered, waiting for the server to allow another concurrent stream.
    Queued(Box<Rendered>),
    /// Sent; waiting for the response head.
    Head(ResponseFuture),
    /// The head came (status kept in the entry); draining the body.
    Body(RecvStream),
    /// For a moment only: a queued request on its way into h2.
    Opening,
}

impl Stage {
    /// Takes the request out of a queued stage.
    pub(super) fn take_queued(&mut self) -> Option<Box<Rendered>> {
        match std::mem::replace(self, Stage::Opening) {
            Stage::Queued(req) => Some(req),
            other => {
                *self = other;
                None
            }
        }
    }
}

/// A request in flight.
pub(super) struct Entry {
    /// The engine's number of the request (kept to send it again after a GOAWAY).
    pub(super) seq: u64,
    /// When it was meant to go out and did.
    pub(super) sent: Sent,
    /// The connection's bytes read when it was queued: unchanged at its time limit means the
    /// connection has been silent all along.
    pub(super) mark: u64,
    /// When its response head was seen.
    pub(super) first_byte: Option<Instant>,
    /// The response's status, once its head came.
    pub(super) status: u16,
    /// Where it is.
    pub(super) stage: Stage,
}

/// A context whose waker does nothing, for polling the streams (see the module docs).
pub(super) fn quiet() -> Context<'static> {
    Context::from_waker(Waker::noop())
}

/// What became of an attempt to open a stream.
pub(super) enum Opened {
    Stream(ResponseFuture),
    Wait(Box<Rendered>),
    Failed(Failure),
    /// The server is closing the connection in good order: the request goes on another.
    Again,
}

/// How a request ended on this connection.
pub(super) enum Outcome {
    /// With a reply, or an error of its own.
    Done(Done),
    /// Not processed by a server closing the connection in good order (see [`unprocessed`]).
    Again,
}

/// Opens a stream for `req` if the connection allows another now.
pub(super) fn open(send: &mut SendRequest<Bytes>, req: Box<Rendered>, gone: &mut bool) -> Opened {
    match send.poll_ready(&mut quiet()) {
        Poll::Pending => return Opened::Wait(req),
        Poll::Ready(Err(e)) => {
            *gone = true;
            return match unprocessed(&e) {
                true => Opened::Again,
                false => Opened::Failed(stream_failure(&e)),
            };
        }
        Poll::Ready(Ok(())) => {}
    }
    let (req, body) = *req;
    match send.send_request(req, body.is_none()) {
        Ok((response, mut tx)) => {
            // Buffered by h2 and sent as the server's window allows.
            if let Some(b) = body {
                if let Err(e) = tx.send_data(b, true) {
                    return Opened::Failed(stream_failure(&e));
                }
            }
            Opened::Stream(response)
        }
        Err(e) => Opened::Failed(stream_failure(&e)),
    }
}

impl Entry {
    /// Advances this request; returns its outcome once it has one. `now` is the time of the
    /// connection poll that brought what is seen here.
    pub(super) fn poll(
        &mut self,
        now: Instant,
        send: &mut SendRequest<Bytes>,
        gone: &mut bool,
        bytes: &mut usize,
        accept: &Accept,
    ) -> Option<Outcome> {
        let mut cx = quiet();
        loop {
            match &mut self.stage {
                Stage::Opening => unreachable!("a request is opened within one call"),
                Stage::Queued(_) => {
                    let req = self.stage.take_queued()?;
                    match open(send, req, gone) {
                        Opened::Stream(r) => self.stage = Stage::Head(r),
                        Opened::Wait(req) => {
                            self.stage = Stage::Queued(req);
                            return None;
                        }
                        Opened::Failed(f) => return Some(Outcome::Done(self.failed(f))),
                        Opened::Again => return Some(Outcome::Again),
                    }
                }
                Stage::Head(response) => match Pin::new(response).poll(&mut cx) {
                    Poll::Pending => return None,
                    Poll::Ready(Err(e)) if unprocessed(&e) => return Some(Outcome::Again),
                    Poll::Ready(Err(e)) => {
                        return Some(Outcome::Done(self.failed(stream_failure(&e))))
                    }
                    Poll::Ready(Ok(r)) => {
                        self.first_byte = Some(now);
                        self.status = r.status().as_u16();
                        self.stage = Stage::Body(r.into_body());
                    }
                },
                Stage::Body(body) => loop {
                    match body.poll_data(&mut cx) {
                        Poll::Pending => return None,
                        Poll::Ready(Some(Ok(chunk))) => {
                            *bytes += chunk.len();
                            let _ = body.flow_control().release_capacity(chunk.len());
                        }
                        Poll::Ready(Some(Err(e))) => {
                            return Some(Outcome::Done(self.failed(stream_failure(&e))))
                        }
                        Poll::Ready(None) => {
                            return Some(Outcome::Done(Done {
                                sent: self.sent,
                                first_byte: self.first_byte,
                                status: Some(self.status),
                                accepted: accept.accepts(self.status),
                                failure: None,
                                kind: 0,
                            }))
                        }
                    }
                },
            }
        }
    }

    pub(super) fn failed(&self, f: Failure) -> Done {
        Done {
            sent: self.sent,
            first_byte: None,
            status: None,
            accepted: false,
            failure: Some(f),
            kind: 0,
        }
    }
}
