//! What an h2 error means for the request it ended: an error counter, and words that name
//! the cause (RST_STREAM, GOAWAY, a closed connection) with its HTTP/2 error code.

use crate::driver::Failure;
use crate::record::{ErrorKind, OpError};
use h2::Reason;

/// The name of an HTTP/2 error code (RFC 9113 §7).
pub(super) fn reason_name(r: Reason) -> &'static str {
    const NAMES: [&str; 14] = [
        "NO_ERROR",
        "PROTOCOL_ERROR",
        "INTERNAL_ERROR",
        "FLOW_CONTROL_ERROR",
        "SETTINGS_TIMEOUT",
        "STREAM_CLOSED",
        "FRAME_SIZE_ERROR",
        "REFUSED_STREAM",
        "CANCEL",
        "COMPRESSION_ERROR",
        "CONNECT_ERROR",
        "ENHANCE_YOUR_CALM",
        "INADEQUATE_SECURITY",
        "HTTP_1_1_REQUIRED",
    ];
    NAMES
        .get(u32::from(r) as usize)
        .copied()
        .unwrap_or("unknown error code")
}

/// What an h2 error means for the request it ended, as an error counter and words.
pub(super) fn stream_failure(e: &h2::Error) -> Failure {
    let code = e.reason().map(reason_name);
    let f = |kind, what| Failure { kind, what, code };
    if let Some(io) = e.get_io() {
        return match io.kind() {
            // h2 reports the server closing the connection as a broken pipe.
            std::io::ErrorKind::BrokenPipe | std::io::ErrorKind::UnexpectedEof => f(
                ErrorKind::ShortReply,
                "HTTP/2: the server closed the connection",
            ),
            _ => Failure {
                kind: ErrorKind::of_io(io),
                what: "HTTP/2: the connection failed",
                code: None,
            },
        };
    }
    let remote = e.is_remote();
    match (e.is_go_away(), e.is_reset(), e.reason()) {
        (true, _, Some(Reason::NO_ERROR)) if remote => f(
            ErrorKind::Refused,
            "HTTP/2: the server sent GOAWAY before this stream, which it did not process (a limit of requests per connection, e.g. nginx's keepalive_requests)",
        ),
        (true, _, _) if remote => f(
            ErrorKind::Reset,
            "HTTP/2: the server closed the connection with GOAWAY",
        ),
        (_, true, Some(Reason::REFUSED_STREAM)) if remote => f(
            ErrorKind::Refused,
            "HTTP/2: the server refused the stream (RST_STREAM), which it did not process",
        ),
        (_, true, _) if remote => f(ErrorKind::Reset, "HTTP/2: the server reset the stream (RST_STREAM)"),
        (true, _, _) | (_, true, _) => f(
            ErrorKind::Mismatch,
            "HTTP/2: the server broke the protocol; the client ended the stream or connection",
        ),
        _ => f(ErrorKind::Other, "HTTP/2: the request could not be sent"),
    }
}

/// Whether `e` ended a stream the server never processed because it is closing the connection
/// in good order: a GOAWAY with NO_ERROR whose last stream is below this one (RFC 9113 §6.8:
/// such a stream may be sent again on a new connection).
pub(super) fn unprocessed(e: &h2::Error) -> bool {
    e.is_go_away() && e.is_remote() && e.reason() == Some(Reason::NO_ERROR)
}

/// An error of a whole connection, before any stream.
pub(super) fn connection_error(doing: &str, e: &h2::Error) -> OpError {
    let f = stream_failure(e);
    OpError::new(f.kind, format!("{doing}: {e}"))
}
