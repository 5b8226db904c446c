//! How a gRPC call ends: its status (`grpc-status`, `grpc-message`) read from a head or its
//! trailers, and the failure the engine counts when it is not OK, or when HTTP/2 ended it.

use crate::driver::Failure;
use crate::record::ErrorKind;
use crate::wire::grpc;

/// A call's status and message from a head or trailers, if it has one.
pub(super) fn status_of(h: &http::HeaderMap) -> Option<(u32, String)> {
    let code = h.get("grpc-status")?.to_str().ok()?.trim().parse().ok()?;
    let message = h
        .get("grpc-message")
        .map(|m| percent_decode(m.as_bytes()))
        .unwrap_or_default();
    Some((code, message))
}

/// `grpc-message` is percent-encoded (gRPC over HTTP/2).
fn percent_decode(v: &[u8]) -> String {
    let mut out = Vec::with_capacity(v.len());
    let mut i = 0;
    while i < v.len() {
        let hex = v
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (v[i], hex) {
            (b'%', Some(b)) => {
                out.push(b);
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The failure of a call that ended with status `code` (not OK).
pub(super) fn status_failure(code: u32) -> Failure {
    Failure {
        kind: ErrorKind::Status,
        what: "gRPC: the call ended with a status other than OK",
        code: Some(grpc::status_name(code)),
    }
}

/// A failure of `kind`, with no code.
pub(super) fn failure(kind: ErrorKind, what: &'static str) -> Failure {
    Failure {
        kind,
        what,
        code: None,
    }
}

/// The failure of a call (or connection) that h2 ended with `e`.
pub(super) fn h2_failure(e: &h2::Error) -> Failure {
    if let Some(io) = e.get_io() {
        return match io.kind() {
            std::io::ErrorKind::BrokenPipe
            | std::io::ErrorKind::UnexpectedEof
            | std::io::ErrorKind::ConnectionReset => failure(
                ErrorKind::Reset,
                "gRPC: the connection was closed or reset under the call",
            ),
            _ => failure(ErrorKind::of_io(io), "gRPC: the connection failed"),
        };
    }
    let reason = e
        .reason()
        .map(|r| crate::driver::h2::reason_name(u32::from(r)));
    if e.is_go_away() {
        return Failure {
            kind: ErrorKind::Refused,
            what: "gRPC: the server sent GOAWAY; the call was not processed",
            code: reason,
        };
    }
    if e.is_reset() && e.is_remote() {
        return Failure {
            kind: ErrorKind::Reset,
            what: "gRPC: the server reset the call's stream (RST_STREAM)",
            code: reason,
        };
    }
    Failure {
        kind: ErrorKind::Mismatch,
        what: "gRPC: HTTP/2 failed under the call",
        code: reason,
    }
}

/// The failure of a call whose reply ended without its status.
pub(super) fn no_status() -> Failure {
    failure(
        ErrorKind::Mismatch,
        "gRPC: the reply ended without a grpc-status",
    )
}
