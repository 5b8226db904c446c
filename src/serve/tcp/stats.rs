//! The server's counters: one block per server thread, summed only when someone asks.
//!
//! Each thread owns a block on its own cache lines, so the per-read updates of one thread never
//! bounce a cache line another thread writes; a snapshot reads every block and adds them up.

use std::fmt;
use std::ops::Deref;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

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

/// One thread's counters. The alignment keeps two threads' blocks off a shared cache line (128
/// rather than 64 because adjacent-line prefetch pairs lines on common x86 parts).
#[derive(Debug, Default)]
#[repr(align(128))]
pub(crate) struct Counters {
    connections: AtomicU64,
    open: AtomicU64,
    requests: AtomicU64,
    bytes_in: AtomicU64,
    bytes_out: AtomicU64,
    bad_frames: AtomicU64,
    rejected: AtomicU64,
}

impl Counters {
    /// A connection was admitted: it counts as served and as open until [`Counters::closed`].
    pub(crate) fn opened(&self) {
        self.connections.fetch_add(1, Relaxed);
        self.open.fetch_add(1, Relaxed);
    }

    /// An admitted connection ended.
    pub(crate) fn closed(&self) {
        self.open.fetch_sub(1, Relaxed);
    }

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

    /// A connection was refused over the connection limit.
    pub(crate) fn rejected(&self) {
        self.rejected.fetch_add(1, Relaxed);
    }

    fn add_to(&self, s: &mut ServerStats) {
        s.connections += self.connections.load(Relaxed);
        s.open += self.open.load(Relaxed);
        s.requests += self.requests.load(Relaxed);
        s.bytes_in += self.bytes_in.load(Relaxed);
        s.bytes_out += self.bytes_out.load(Relaxed);
        s.bad_frames += self.bad_frames.load(Relaxed);
        s.rejected += self.rejected.load(Relaxed);
    }
}

/// Every thread's counters of one server.
#[derive(Debug)]
pub(crate) struct CounterSet {
    threads: Box<[Counters]>,
}

impl CounterSet {
    /// Counters for `threads` server threads (at least one).
    pub(crate) fn new(threads: usize) -> Arc<CounterSet> {
        Arc::new(CounterSet {
            threads: (0..threads.max(1)).map(|_| Counters::default()).collect(),
        })
    }

    /// The sum over all threads. Not atomic across counters: a snapshot taken while traffic
    /// flows may pair a request count with a byte count a few reads apart.
    pub(crate) fn snapshot(&self) -> ServerStats {
        let mut s = ServerStats::default();
        for c in self.threads.iter() {
            c.add_to(&mut s);
        }
        s
    }
}

/// A handle on one thread's counters that a connection task can own (tasks must be `'static`).
#[derive(Clone, Debug)]
pub(crate) struct Tally {
    set: Arc<CounterSet>,
    index: usize,
}

impl Tally {
    /// Thread `index`'s counters of `set`; an index past the end wraps around.
    pub(crate) fn new(set: Arc<CounterSet>, index: usize) -> Tally {
        let index = index % set.threads.len();
        Tally { set, index }
    }
}

impl Deref for Tally {
    type Target = Counters;

    fn deref(&self) -> &Counters {
        &self.set.threads[self.index]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_threads_and_formats() {
        let set = CounterSet::new(2);
        let (a, b) = (Tally::new(set.clone(), 0), Tally::new(set.clone(), 1));
        a.opened();
        b.opened();
        b.closed();
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
        assert_eq!(std::mem::align_of::<Counters>(), 128);
    }
}
