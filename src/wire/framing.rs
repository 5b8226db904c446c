//! The wirebench framing: one preamble line that lets a client tell the reference server how big
//! its requests and replies are, so one running server serves a whole size sweep.
//!
//! A wirebench client opens each connection with one ASCII line, then sends plain payload:
//!
//! ```text
//! WIREBENCH/1 exchange req=<N> rep=<M>\n   request/response: requests of N bytes, replies of M bytes
//! WIREBENCH/1 stream req=<N> [report=1]\n  bulk upload to a sink, counted in N-byte messages
//! WIREBENCH/1 source msg=<N>\n             the server pushes N-byte messages until the client closes
//! ```
//!
//! N and M lie in 1 ..= 1 GiB; the line is at most [`MAX_PREAMBLE`] bytes. After it, requests
//! carry no header: payload sizes are exactly what the user asked for, so a 4-byte message is 4
//! bytes on the wire. A server whose mode does not fit the client's intent (an `exchange` sent to a
//! sink) answers `WIREBENCH/1 error <why>\n` and closes, so the client can say what is wrong.
//!
//! Clients that do not start with [`MAGIC`] are plain clients: the server frames their bytes by
//! its own `--request-size N` (fixed size), `--delimiter D`, or, by default, echoes bytes as they
//! arrive (each read counted as one request).
//!
//! A stream with `report=1` is acknowledged and accounted: the sink answers the preamble with
//! [`OK_LINE`] (so the client knows its bytes reach a sink before it counts any), and when the
//! client half-closes it answers `WIREBENCH/1 received bytes=<B>\n`, the payload bytes it read,
//! then closes. Bulk throughput is then what the receiver counted, not what the sender's kernel
//! took into its buffers.

use crate::units::MAX_SIZE;

/// Every preamble starts with these bytes.
pub const MAGIC: &[u8] = b"WIREBENCH/1 ";
/// The longest preamble line a server reads before calling the frame bad.
pub const MAX_PREAMBLE: usize = 256;
/// What a server's error answer starts with.
pub const ERROR_PREFIX: &[u8] = b"WIREBENCH/1 error ";
/// A sink's acknowledgement of a stream preamble with `report=1`.
pub const OK_LINE: &[u8] = b"WIREBENCH/1 ok\n";
/// What a sink's count of a reporting stream starts with; the byte count and a newline follow.
pub const RECEIVED_PREFIX: &[u8] = b"WIREBENCH/1 received bytes=";

/// The line a sink sends when a reporting stream's client half-closes.
pub fn received_line(bytes: u64) -> Vec<u8> {
    let mut line = RECEIVED_PREFIX.to_vec();
    line.extend_from_slice(format!("{bytes}\n").as_bytes());
    line
}

/// The byte count of a sink's received line (with or without its newline).
pub fn parse_received(line: &[u8]) -> Option<u64> {
    let rest = line.strip_prefix(RECEIVED_PREFIX)?;
    let rest = rest.strip_suffix(b"\n").unwrap_or(rest);
    std::str::from_utf8(rest).ok()?.parse().ok()
}

/// What a wirebench client announces about its connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Preamble {
    /// Request/response: each request is `request` bytes, each reply `reply` bytes.
    Exchange {
        /// Request size in bytes.
        request: u64,
        /// Reply size in bytes.
        reply: u64,
    },
    /// Bulk upload of `request`-byte messages to a sink.
    Stream {
        /// Message size in bytes.
        request: u64,
        /// Whether the sink acknowledges the preamble and reports its byte count at the end.
        report: bool,
    },
    /// The server pushes `message`-byte messages.
    Source {
        /// Message size in bytes.
        message: u64,
    },
}

/// A preamble line a server refuses; the message is what the server answers.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PreambleError {
    /// Not UTF-8.
    #[error("preamble is not ASCII")]
    NotAscii,
    /// No `WIREBENCH/1 ` before the words.
    #[error("preamble does not start with WIREBENCH/1")]
    NoMagic,
    /// A word without `=`.
    #[error("preamble word '{0}' is not key=value")]
    NotKeyValue(String),
    /// A value that is not a number.
    #[error("preamble {0}='{1}' is not a number")]
    NotNumber(String, String),
    /// A size of 0 or over 1 GiB.
    #[error("preamble {0}={1} is outside 1..=1GiB")]
    OutOfRange(String, u64),
    /// A key the intent needs, missing.
    #[error("preamble lacks {0}=")]
    Lacks(&'static str),
    /// An intent wirebench does not know.
    #[error("preamble intent '{0}' is not exchange, stream or source")]
    Intent(String),
}

impl Preamble {
    /// The preamble line, newline included.
    pub fn encode(&self) -> Vec<u8> {
        match self {
            Preamble::Exchange { request, reply } => {
                format!("WIREBENCH/1 exchange req={request} rep={reply}\n")
            }
            Preamble::Stream {
                request,
                report: false,
            } => format!("WIREBENCH/1 stream req={request}\n"),
            Preamble::Stream {
                request,
                report: true,
            } => format!("WIREBENCH/1 stream req={request} report=1\n"),
            Preamble::Source { message } => format!("WIREBENCH/1 source msg={message}\n"),
        }
        .into_bytes()
    }

    /// Parses one preamble line (with or without its newline).
    pub fn parse(line: &[u8]) -> Result<Preamble, PreambleError> {
        let text = std::str::from_utf8(line).map_err(|_| PreambleError::NotAscii)?;
        let text = text.trim_end_matches('\n').trim_end_matches('\r');
        let rest = text
            .strip_prefix("WIREBENCH/1 ")
            .ok_or(PreambleError::NoMagic)?;
        let mut words = rest.split(' ');
        let intent = words.next().unwrap_or("");
        let (mut req, mut rep, mut msg, mut report) = (None, None, None, false);
        for word in words.filter(|w| !w.is_empty()) {
            let (key, value) = word
                .split_once('=')
                .ok_or_else(|| PreambleError::NotKeyValue(word.into()))?;
            let n: u64 = value
                .parse()
                .map_err(|_| PreambleError::NotNumber(key.into(), value.into()))?;
            if n == 0 || n > MAX_SIZE {
                return Err(PreambleError::OutOfRange(key.into(), n));
            }
            match key {
                "req" => req = Some(n),
                "rep" => rep = Some(n),
                "msg" => msg = Some(n),
                "report" => report = n == 1,
                _ => {} // unknown keys are ignored, for forward compatibility
            }
        }
        let need = |v: Option<u64>, key: &'static str| v.ok_or(PreambleError::Lacks(key));
        match intent {
            "exchange" => Ok(Preamble::Exchange {
                request: need(req, "req")?,
                reply: need(rep, "rep")?,
            }),
            "stream" => Ok(Preamble::Stream {
                request: need(req, "req")?,
                report,
            }),
            "source" => Ok(Preamble::Source {
                message: need(msg, "msg")?,
            }),
            other => Err(PreambleError::Intent(other.into())),
        }
    }
}

/// What the first bytes of a connection say about its client.
#[derive(Debug, PartialEq, Eq)]
pub enum Detect {
    /// The bytes start with [`MAGIC`]: a wirebench client.
    Wirebench,
    /// The bytes cannot be a preamble: a plain client.
    Plain,
    /// The bytes so far are a prefix of [`MAGIC`]: read more before deciding.
    NeedMore,
}

/// Decides from the first bytes of a connection whether its client speaks wirebench framing.
pub fn detect(first: &[u8]) -> Detect {
    let n = first.len().min(MAGIC.len());
    if first[..n] != MAGIC[..n] {
        Detect::Plain
    } else if n == MAGIC.len() {
        Detect::Wirebench
    } else {
        Detect::NeedMore
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        for p in [
            Preamble::Exchange {
                request: 4,
                reply: 65536,
            },
            Preamble::Stream {
                request: 1 << 20,
                report: false,
            },
            Preamble::Stream {
                request: 8,
                report: true,
            },
            Preamble::Source { message: 128 },
        ] {
            let line = p.encode();
            assert!(line.len() <= MAX_PREAMBLE);
            assert_eq!(Preamble::parse(&line), Ok(p));
        }
    }

    #[test]
    fn received_lines_round_trip() {
        assert_eq!(parse_received(&received_line(12_345)), Some(12_345));
        assert_eq!(parse_received(b"WIREBENCH/1 received bytes=7"), Some(7));
        assert_eq!(parse_received(b"WIREBENCH/1 received bytes=x\n"), None);
        assert_eq!(parse_received(b"WIREBENCH/1 ok\n"), None);
    }

    #[test]
    fn rejects_bad_lines() {
        for bad in [
            &b"WIREBENCH/1 exchange req=4\n"[..],
            b"WIREBENCH/1 exchange req=0 rep=4\n",
            b"WIREBENCH/1 exchange req=4 rep=2000000000\n",
            b"WIREBENCH/1 teleport req=4\n",
            b"WIREBENCH/1 source msg=x\n",
            b"HELLO\n",
        ] {
            assert!(Preamble::parse(bad).is_err(), "{}", bad.escape_ascii());
        }
    }

    #[test]
    fn detects_clients() {
        assert_eq!(detect(b"WIRE"), Detect::NeedMore);
        assert_eq!(detect(b"WIREBENCH/1 exchange"), Detect::Wirebench);
        assert_eq!(detect(b"get k\r\n"), Detect::Plain);
        assert_eq!(detect(b"W"), Detect::NeedMore);
        assert_eq!(detect(b"WX"), Detect::Plain);
    }
}
