//! The server's counters: one block per server thread, summed only when someone asks (see
//! [`crate::serve::counters`]).

use crate::serve::counters::{self, Connections, Snapshot};
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// What a server has done so far (a snapshot, or the final count after it stopped).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ServerStats {
    /// Connections accepted and served, in all (refused ones are counted in `rejected` only).
    pub connections: u64,
    /// Connections open right now.
    pub open: u64,
    /// Requests answered (echo), messages counted (sink) or messages pushed (source).
    pub requests: u64,
    /// Payload bytes read from clients (wirebench preambles not included).
    pub bytes_in: u64,
    /// Payload bytes written to clients (error lines not included).
    pub bytes_out: u64,
    /// Connections closed because of what the client sent: a malformed preamble, an intent that
    /// does not fit the server's mode, or a delimited request over the length limit.
    pub bad_frames: u64,
    /// Connections refused (accepted and closed at once) because `max_connections` were open.
    pub rejected: u64,
}

impl fmt::Display for ServerStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "connections {}, requests {}, bytes in {}, bytes out {}, bad frames {}, rejected {}",
            self.connections,
            self.requests,
            self.bytes_in,
            self.bytes_out,
            self.bad_frames,
            self.rejected
        )
    }
}

/// One thread's counters.
#[derive(Debug, Default)]
pub struct Counters {
    conns: Connections,
    requests: AtomicU64,
    bytes_in: AtomicU64,
    bytes_out: AtomicU64,
    bad_frames: AtomicU64,
}

impl Counters {
    /// `n` payload bytes were read.
    pub(crate) fn read(&self, n: usize) {
        self.bytes_in.fetch_add(n as u64, Relaxed);
    }

    /// `n` payload bytes were written.
    pub(crate) fn wrote(&self, n: u64) {
        self.bytes_out.fetch_add(n, Relaxed);
    }

    /// `n` requests (or messages) were completed.
    pub(crate) fn requests(&self, n: u64) {
        if n > 0 {
            self.requests.fetch_add(n, Relaxed);
        }
    }

    /// A connection was closed for a bad frame.
    pub(crate) fn bad_frame(&self) {
        self.bad_frames.fetch_add(1, Relaxed);
    }
}

impl AsRef<Connections> for Counters {
    fn as_ref(&self) -> &Connections {
        &self.conns
    }
}

impl Snapshot for ServerStats {
    type Block = Counters;

    fn add(&mut self, c: &Counters) {
        let conns = [&mut self.connections, &mut self.open, &mut self.rejected];
        c.conns.add_to(conns);
        self.requests += c.requests.load(Relaxed);
        self.bytes_in += c.bytes_in.load(Relaxed);
        self.bytes_out += c.bytes_out.load(Relaxed);
        self.bad_frames += c.bad_frames.load(Relaxed);
    }
}

/// A handle on one thread's counters that a connection task can own.
pub(crate) type Tally = counters::Tally<ServerStats>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_threads_and_formats() {
        let set = counters::CounterSet::<ServerStats>::new(2);
        let (a, b) = (Tally::new(set.clone(), 0), Tally::new(set.clone(), 1));
        a.as_ref().opened();
        b.as_ref().opened();
        b.as_ref().closed();
        a.requests(3);
        b.requests(4);
        a.read(10);
        b.wrote(20);
        let s = set.snapshot();
        assert_eq!((s.connections, s.open, s.requests), (2, 1, 7));
        assert_eq!(
            s.to_string(),
            "connections 2, requests 7, bytes in 10, bytes out 20, bad frames 0, rejected 0"
        );
        assert_eq!(std::mem::align_of::<counters::Aligned<Counters>>(), 128);
    }
}
