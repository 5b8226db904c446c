//! Errors on the hot path are counters by kind, with the first message of each kind kept as a sample.

use std::io;

/// What went wrong with one operation; an index into [`ErrorCounts`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// The target refused the connection (nothing listening, or a full backlog).
    Refused,
    /// The connection was reset or broken by the peer.
    Reset,
    /// No complete reply within `--timeout`.
    Timeout,
    /// The peer closed the connection before the whole reply arrived.
    ShortReply,
    /// The reply arrived but was not the expected bytes (or not the expected size).
    Mismatch,
    /// The client ran out of local ports (EADDRNOTAVAIL), typically from TIME_WAIT with a connection per request.
    PortExhausted,
    /// An HTTP reply whose status is not accepted (`--accept`, default 2xx); a DICOM response
    /// whose status is not Success, or an association the peer rejected.
    Status,
    /// The TLS handshake failed (certificate, protocol).
    Tls,
    /// Anything else the operating system reported.
    Other,
}

impl ErrorKind {
    /// Every kind, in report order.
    pub const ALL: [ErrorKind; 9] = [
        ErrorKind::Refused,
        ErrorKind::Reset,
        ErrorKind::Timeout,
        ErrorKind::ShortReply,
        ErrorKind::Mismatch,
        ErrorKind::PortExhausted,
        ErrorKind::Status,
        ErrorKind::Tls,
        ErrorKind::Other,
    ];

    /// The name used in reports and JSON.
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::Refused => "refused",
            ErrorKind::Reset => "reset",
            ErrorKind::Timeout => "timeout",
            ErrorKind::ShortReply => "short_reply",
            ErrorKind::Mismatch => "mismatch",
            ErrorKind::PortExhausted => "port_exhausted",
            ErrorKind::Status => "status",
            ErrorKind::Tls => "tls",
            ErrorKind::Other => "other",
        }
    }

    /// Classifies an I/O error from a socket call.
    pub fn of_io(err: &io::Error) -> ErrorKind {
        if err.raw_os_error() == Some(libc::EADDRNOTAVAIL) {
            return ErrorKind::PortExhausted;
        }
        match err.kind() {
            io::ErrorKind::ConnectionRefused => ErrorKind::Refused,
            io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::BrokenPipe
            | io::ErrorKind::NotConnected => ErrorKind::Reset,
            io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock => ErrorKind::Timeout,
            io::ErrorKind::UnexpectedEof => ErrorKind::ShortReply,
            io::ErrorKind::AddrNotAvailable => ErrorKind::PortExhausted,
            _ => ErrorKind::Other,
        }
    }
}

/// One failed operation: its kind and a message for the report's sample column.
#[derive(Debug)]
pub struct OpError {
    /// The counter this error goes to.
    pub kind: ErrorKind,
    /// What happened, in words; kept only for the first error of each kind.
    pub message: String,
    /// The target said the run itself is wrong, whatever the load: a wirebench server refusing
    /// the client's mode, a certificate the client does not trust, a server that does not speak
    /// HTTP/2. Not a result to count: the run stops at once and names it (exit 2).
    pub fatal: bool,
    /// The target accepted the TCP connection and this failed after it (a handshake the
    /// target never answered): the target is there, so a run's first connection failing so is
    /// a result of the run (counted, like a request that timed out), not an unreachable target.
    pub reached: bool,
}

impl OpError {
    /// An error of `kind` with a message.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> OpError {
        OpError {
            kind,
            message: message.into(),
            fatal: false,
            reached: false,
        }
    }

    /// The same error, marked as met after the target accepted the connection.
    pub fn reached(self) -> OpError {
        OpError {
            reached: true,
            ..self
        }
    }

    /// An error that ends the run: the input must change, not the load (see [`OpError::fatal`]).
    pub fn fatal(kind: ErrorKind, message: impl Into<String>) -> OpError {
        OpError {
            fatal: true,
            ..OpError::new(kind, message)
        }
    }

    /// An error from a socket call, with what was being done (`"connect"`, `"read reply"`).
    pub fn io(doing: &str, err: &io::Error) -> OpError {
        OpError::new(ErrorKind::of_io(err), format!("{doing}: {err}"))
    }
}

/// Counts of errors by kind plus one sample message per kind; merges with `+=`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ErrorCounts {
    counts: [u64; ErrorKind::ALL.len()],
    samples: [Option<String>; ErrorKind::ALL.len()],
}

impl ErrorCounts {
    /// Counts one error, keeping its message if it is the first of its kind.
    pub fn add(&mut self, err: OpError) {
        let i = err.kind as usize;
        self.counts[i] += 1;
        if self.samples[i].is_none() {
            self.samples[i] = Some(err.message);
        }
    }

    /// Counts `n` errors like `err` at once.
    pub fn add_many(&mut self, err: OpError, n: u64) {
        let i = err.kind as usize;
        self.counts[i] += n;
        if n > 0 && self.samples[i].is_none() {
            self.samples[i] = Some(err.message);
        }
    }

    /// All errors, whatever their kind.
    pub fn total(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// Errors of one kind.
    pub fn count(&self, kind: ErrorKind) -> u64 {
        self.counts[kind as usize]
    }

    /// The first message seen for a kind.
    pub fn sample(&self, kind: ErrorKind) -> Option<&str> {
        self.samples[kind as usize].as_deref()
    }

    /// The kinds that occurred, with count and sample, in report order.
    pub fn iter(&self) -> impl Iterator<Item = (ErrorKind, u64, &str)> + '_ {
        ErrorKind::ALL.into_iter().filter_map(|k| {
            let n = self.count(k);
            (n > 0).then(|| (k, n, self.sample(k).unwrap_or("")))
        })
    }
}

impl std::ops::AddAssign<&ErrorCounts> for ErrorCounts {
    fn add_assign(&mut self, other: &ErrorCounts) {
        for i in 0..self.counts.len() {
            self.counts[i] += other.counts[i];
            if self.samples[i].is_none() {
                self.samples[i].clone_from(&other.samples[i]);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_os_errors() {
        let refused = io::Error::from_raw_os_error(libc::ECONNREFUSED);
        assert_eq!(ErrorKind::of_io(&refused), ErrorKind::Refused);
        let ports = io::Error::from_raw_os_error(libc::EADDRNOTAVAIL);
        assert_eq!(ErrorKind::of_io(&ports), ErrorKind::PortExhausted);
        let reset = io::Error::from_raw_os_error(libc::ECONNRESET);
        assert_eq!(ErrorKind::of_io(&reset), ErrorKind::Reset);
    }

    #[test]
    fn merge_keeps_first_sample() {
        let mut a = ErrorCounts::default();
        a.add(OpError::new(ErrorKind::Timeout, "first"));
        let mut b = ErrorCounts::default();
        b.add(OpError::new(ErrorKind::Timeout, "second"));
        b.add(OpError::new(ErrorKind::Reset, "reset"));
        a += &b;
        assert_eq!(a.count(ErrorKind::Timeout), 2);
        assert_eq!(a.sample(ErrorKind::Timeout), Some("first"));
        assert_eq!(a.total(), 3);
    }
}
