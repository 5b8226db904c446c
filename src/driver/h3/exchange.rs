//! One HTTP/3 request: a bidirectional QUIC stream opened, the request's frames written and
//! the stream finished, then the response read until the server finishes its side. Its body
//! is counted as it arrives (never kept), so a download of any size takes constant memory.

use crate::driver::Failure;
use crate::record::ErrorKind;
use crate::wire::h3::frame::{self, Event, FrameReader};
use crate::wire::h3::qpack;
use bytes::Bytes;
use std::cell::Cell;
use std::time::Instant;

/// The largest response head (and any other frame but DATA) read: 64 KiB.
pub(super) const HEAD_LIMIT: usize = 64 << 10;

/// Bytes that crossed one connection's request streams, shared by its requests.
#[derive(Debug, Default)]
pub(super) struct Counts {
    /// Response body bytes read (DATA payload).
    pub body_in: Cell<u64>,
    /// Response stream bytes read (frames, heads included).
    pub wire_in: Cell<u64>,
}

/// What ended a request without a response.
#[derive(Debug, Clone, Copy)]
pub(super) enum Broke {
    /// This request alone failed (the server reset its stream, a malformed response).
    Stream(Failure),
    /// The whole connection failed: every request on it fails alike.
    Connection(Failure),
}

/// A response: when its first byte came and its final status.
#[derive(Debug, Clone, Copy)]
pub(super) struct Reply {
    pub first_byte: Instant,
    pub status: u16,
}

/// Sends one request (`head`: its HEADERS frame and, with a body, the DATA frame's head; then
/// `body`) and reads its response.
pub(super) async fn exchange(
    conn: quinn::Connection,
    head: Bytes,
    body: Option<Bytes>,
    counts: std::rc::Rc<Counts>,
) -> Result<Reply, Broke> {
    let (mut send, mut recv) = conn.open_bi().await.map_err(lost)?;
    let mut chunks = [head, body.unwrap_or_default()];
    match send.write_all_chunks(&mut chunks).await {
        Ok(()) => {
            // Finishing a stream fails only if it was reset, which the read below reports.
            let _ = send.finish();
        }
        // The server stopped reading the request (it answered without the body): its
        // response still comes.
        Err(quinn::WriteError::Stopped(_)) => {}
        Err(quinn::WriteError::ConnectionLost(e)) => return Err(lost(e)),
        Err(_) => return Err(Broke::Stream(failure(ErrorKind::Other, WRITE_FAILED, None))),
    }
    let mut reader = FrameReader::new(HEAD_LIMIT);
    let (mut first_byte, mut status, mut bad) = (None, None, None);
    loop {
        let chunk = match recv.read_chunk(usize::MAX, true).await {
            Ok(Some(chunk)) => chunk.bytes,
            Ok(None) => break,
            Err(e) => return Err(read_failed(e)),
        };
        first_byte.get_or_insert_with(Instant::now);
        counts
            .wire_in
            .set(counts.wire_in.get() + chunk.len() as u64);
        let fed = reader.feed(&chunk, |event| match event {
            Event::Headers(section) if status.is_none() => match final_status(section) {
                Ok(s) => status = s,
                Err(why) => bad = Some(why),
            },
            // Trailers after the body, and frames of other types, are not looked at.
            Event::Headers(_) | Event::Other(..) => {}
            Event::Data(d) if status.is_some() => {
                counts.body_in.set(counts.body_in.get() + d.len() as u64);
            }
            Event::Data(_) => bad = Some(DATA_FIRST),
        });
        if fed.is_err() {
            bad = Some(TOO_LARGE);
        }
        if let Some(why) = bad {
            let _ = recv.stop(quinn::VarInt::from_u32(frame::MESSAGE_ERROR as u32));
            return Err(Broke::Stream(failure(ErrorKind::Mismatch, why, None)));
        }
    }
    match (first_byte, status) {
        (Some(first_byte), Some(status)) if reader.at_boundary() => {
            Ok(Reply { first_byte, status })
        }
        _ => Err(Broke::Stream(failure(
            ErrorKind::ShortReply,
            CUT_SHORT,
            None,
        ))),
    }
}

const WRITE_FAILED: &str = "HTTP/3: the request could not be written to its stream";
const DATA_FIRST: &str = "HTTP/3: a response body before its HEADERS";
const TOO_LARGE: &str = "HTTP/3: a response head larger than 64 KiB";
const CUT_SHORT: &str = "HTTP/3: the server ended the stream before a whole response";
const BAD_HEAD: &str = "HTTP/3: a response head without a valid :status";

fn failure(kind: ErrorKind, what: &'static str, code: Option<&'static str>) -> Failure {
    Failure { kind, what, code }
}

/// The final status in a response head; None for an interim (1xx) one.
fn final_status(section: &[u8]) -> Result<Option<u16>, &'static str> {
    let mut status = None;
    qpack::decode(section, |name, value| {
        if name == b":status" {
            status = std::str::from_utf8(value)
                .ok()
                .and_then(|v| v.parse::<u16>().ok());
        }
    })
    .map_err(|e| e.0)?;
    match status {
        Some(s) if (100..200).contains(&s) => Ok(None),
        Some(s) if (200..1000).contains(&s) => Ok(Some(s)),
        _ => Err(BAD_HEAD),
    }
}

/// A failed read of the response.
fn read_failed(e: quinn::ReadError) -> Broke {
    match e {
        quinn::ReadError::Reset(code) => {
            let code = code.into_inner();
            let kind = match code {
                // H3_REQUEST_REJECTED: not processed at all.
                0x10b => ErrorKind::Refused,
                _ => ErrorKind::Reset,
            };
            Broke::Stream(failure(
                kind,
                "HTTP/3: the server reset the stream",
                frame::error_name(code),
            ))
        }
        quinn::ReadError::ConnectionLost(e) => lost(e),
        _ => Broke::Stream(failure(
            ErrorKind::Other,
            "HTTP/3: the response stream could not be read",
            None,
        )),
    }
}

/// A connection that ended, as the failure of every request on it.
pub(super) fn lost(e: quinn::ConnectionError) -> Broke {
    Broke::Connection(connection_failure(&e))
}

/// What a connection's end means for the requests on it.
pub(super) fn connection_failure(e: &quinn::ConnectionError) -> Failure {
    use quinn::ConnectionError as E;
    match e {
        E::TimedOut => failure(
            ErrorKind::Timeout,
            "HTTP/3: the connection timed out (no packet from the server within its idle timeout)",
            None,
        ),
        E::ApplicationClosed(c) => failure(
            ErrorKind::ShortReply,
            "HTTP/3: the server closed the connection",
            frame::error_name(c.error_code.into_inner()),
        ),
        E::ConnectionClosed(_) => failure(
            ErrorKind::ShortReply,
            "QUIC: the server closed the connection",
            None,
        ),
        E::Reset => failure(
            ErrorKind::Reset,
            "QUIC: the server reset the connection (a stateless reset: it lost the connection's state)",
            None,
        ),
        E::LocallyClosed => failure(ErrorKind::Other, "HTTP/3: the connection was closed", None),
        E::TransportError(_) | E::VersionMismatch | E::CidsExhausted => failure(
            ErrorKind::Other,
            "QUIC: the connection failed (a transport error)",
            None,
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interim_and_final_statuses() {
        let head = |status: &str| {
            let mut b = Vec::new();
            qpack::put_prefix(&mut b);
            qpack::put_field(&mut b, b":status", status.as_bytes());
            b
        };
        assert_eq!(final_status(&head("200")), Ok(Some(200)));
        assert_eq!(final_status(&head("418")), Ok(Some(418)));
        assert_eq!(final_status(&head("103")), Ok(None));
        assert_eq!(final_status(&head("x")), Err(BAD_HEAD));
        assert_eq!(final_status(&[0, 0]), Err(BAD_HEAD));
    }
}
