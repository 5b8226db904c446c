//! The HTTP server's counters: one block per server thread on cache lines of its own, summed
//! only when someone asks; a connection gathers its counts locally ([`Local`]) and adds them to
//! its thread's block before each write, so a client that has its response finds it counted.

use std::fmt;
use std::ops::Deref;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

/// What an HTTP server has done so far (a snapshot, or the final count after it stopped).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HttpServerStats {
    /// Connections accepted and served, in all (refused ones are counted in `rejected` only).
    pub connections: u64,
    /// Connections open right now.
    pub open: u64,
    /// Responses sent (interim `100 Continue` not included), including error responses to
    /// malformed, oversized or timed-out requests; the sum of the four status classes.
    pub requests: u64,
    /// Request body bytes read (decoded: chunk framing not included).
    pub bytes_in: u64,
    /// Response body bytes written (headers and chunk framing not included; 0 for HEAD).
    pub bytes_out: u64,
    /// Responses with a 2xx status.
    pub status_2xx: u64,
    /// Responses with a 3xx status.
    pub status_3xx: u64,
    /// Responses with a 4xx status.
    pub status_4xx: u64,
    /// Responses with a 5xx status.
    pub status_5xx: u64,
    /// Connections refused (accepted and closed at once) because `max_connections` were open.
    pub rejected: u64,
}

impl fmt::Display for HttpServerStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "connections {}, requests {}, bytes in {}, bytes out {}, by status 2xx {} 3xx {} 4xx {} 5xx {}",
            self.connections,
            self.requests,
            self.bytes_in,
            self.bytes_out,
            self.status_2xx,
            self.status_3xx,
            self.status_4xx,
            self.status_5xx
        )
    }
}

/// Counts a connection has gathered since it last handed them to its thread's block.
#[derive(Debug, Default)]
pub(crate) struct Local {
    /// Responses by class: 2xx, 3xx, 4xx, 5xx.
    by_class: [u64; 4],
    bytes_in: u64,
    bytes_out: u64,
}

impl Local {
    /// A response with `status` was produced.
    pub(crate) fn status(&mut self, status: u16) {
        let class = (status / 100).clamp(2, 5) - 2;
        self.by_class[class as usize] += 1;
    }

    /// `n` request body bytes were read.
    pub(crate) fn read(&mut self, n: u64) {
        self.bytes_in += n;
    }

    /// `n` response body bytes were produced.
    pub(crate) fn wrote(&mut self, n: u64) {
        self.bytes_out += n;
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
    by_class: [AtomicU64; 4],
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

    /// A connection was refused over the connection limit.
    pub(crate) fn rejected(&self) {
        self.rejected.fetch_add(1, Relaxed);
    }

    /// Adds a connection's gathered counts and clears them; touches only non-zero counters.
    pub(crate) fn take(&self, local: &mut Local) {
        let mut responses = 0;
        for (counter, n) in self.by_class.iter().zip(local.by_class) {
            if n > 0 {
                counter.fetch_add(n, Relaxed);
                responses += n;
            }
        }
        if responses > 0 {
            self.requests.fetch_add(responses, Relaxed);
        }
        if local.bytes_in > 0 {
            self.bytes_in.fetch_add(local.bytes_in, Relaxed);
        }
        if local.bytes_out > 0 {
            self.bytes_out.fetch_add(local.bytes_out, Relaxed);
        }
        *local = Local::default();
    }

    fn add_to(&self, s: &mut HttpServerStats) {
        s.connections += self.connections.load(Relaxed);
        s.open += self.open.load(Relaxed);
        s.requests += self.requests.load(Relaxed);
        s.bytes_in += self.bytes_in.load(Relaxed);
        s.bytes_out += self.bytes_out.load(Relaxed);
        s.status_2xx += self.by_class[0].load(Relaxed);
        s.status_3xx += self.by_class[1].load(Relaxed);
        s.status_4xx += self.by_class[2].load(Relaxed);
        s.status_5xx += self.by_class[3].load(Relaxed);
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
    /// flows may pair a request count with a byte count a few responses apart.
    pub(crate) fn snapshot(&self) -> HttpServerStats {
        let mut s = HttpServerStats::default();
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
    fn sums_threads_by_class_and_formats() {
        let set = CounterSet::new(2);
        let (a, b) = (Tally::new(set.clone(), 0), Tally::new(set.clone(), 3));
        a.opened();
        b.opened();
        b.closed();
        let mut local = Local::default();
        for status in [200, 204, 301, 404, 503] {
            local.status(status);
        }
        local.read(10);
        local.wrote(20);
        a.take(&mut local);
        local.status(200);
        b.take(&mut local);
        let s = set.snapshot();
        assert_eq!((s.connections, s.open, s.requests), (2, 1, 6));
        assert_eq!(
            s.to_string(),
            "connections 2, requests 6, bytes in 10, bytes out 20, by status 2xx 3 3xx 1 4xx 1 5xx 1"
        );
        assert_eq!(std::mem::align_of::<Counters>(), 128);
    }
}
