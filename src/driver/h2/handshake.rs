//! The HTTP/2 handshake: prefaces and SETTINGS exchanged within the connect timeout, with a
//! plain error when a cleartext server turns out to speak HTTP/1.1 only.

use super::failure::connection_error;
use super::io::{not_h2c, Counts, Io};
use crate::record::{ErrorKind, OpError};
use bytes::Bytes;
use h2::client::{Builder, Connection, SendRequest};
use std::future::{poll_fn, Future};
use std::pin::Pin;
use std::task::Poll;
use std::time::Duration;

/// Shakes hands over `io` within `timeout`, until the server's SETTINGS are in force.
/// `cleartext` (h2c with prior knowledge) names an HTTP/1.1 server's answer when it fails.
pub(super) async fn handshake(
    builder: &Builder,
    io: Io,
    counts: &Counts,
    cleartext: bool,
    timeout: Duration,
) -> Result<(SendRequest<Bytes>, Connection<Io, Bytes>), OpError> {
    match tokio::time::timeout(timeout, settings(builder, io, counts)).await {
        Ok(Err(e)) if cleartext => {
            // An HTTP/1.1 server answers the preface with a status line: name it, once.
            let first = counts.first.borrow();
            Err(match not_h2c(&first) {
                Some(why) if !first.is_empty() => OpError::fatal(ErrorKind::Other, why),
                _ => e,
            })
        }
        Ok(r) => r,
        Err(_) => Err(OpError::new(
            ErrorKind::Timeout,
            format!("HTTP/2 handshake: no SETTINGS from the server within {timeout:?}"),
        )),
    }
}

/// Sends the preface, then polls the connection until the server's first bytes are handled.
async fn settings(
    builder: &Builder,
    io: Io,
    counts: &Counts,
) -> Result<(SendRequest<Bytes>, Connection<Io, Bytes>), OpError> {
    let (send, mut conn) = builder
        .handshake(io)
        .await
        .map_err(|e| connection_error("HTTP/2 handshake", &e))?;
    // The server's SETTINGS say how many streams it allows; streams opened before they
    // arrive would be refused past its limit. They are the first thing a server sends:
    // once some bytes have been read and handled, they are in force.
    poll_fn(|cx| match Pin::new(&mut conn).poll(cx) {
        Poll::Ready(Ok(())) => Poll::Ready(Err(OpError::new(
            ErrorKind::ShortReply,
            "HTTP/2 handshake: the server closed the connection",
        ))),
        Poll::Ready(Err(e)) => Poll::Ready(Err(connection_error("HTTP/2 handshake", &e))),
        Poll::Pending if counts.read.get() > 0 => Poll::Ready(Ok(())),
        Poll::Pending => Poll::Pending,
    })
    .await?;
    Ok((send, conn))
}
