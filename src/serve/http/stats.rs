//! The HTTP server's counters: one block per server thread on cache lines of its own, summed
//! only when someone asks (see [`crate::serve::counters`]); a connection gathers its counts
//! locally ([`Local`]) and adds them to its thread's block before each write, so a client that
//! has its response finds it counted.

use crate::serve::counters::{self, Connections, Snapshot};
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

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

/// One thread's counters.
#[derive(Debug, Default)]
pub struct Counters {
    conns: Connections,
    requests: AtomicU64,
    bytes_in: AtomicU64,
    bytes_out: AtomicU64,
    by_class: [AtomicU64; 4],
}

impl Counters {
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
}

impl AsRef<Connections> for Counters {
    fn as_ref(&self) -> &Connections {
        &self.conns
    }
}

impl Snapshot for HttpServerStats {
    type Block = Counters;

    fn add(&mut self, c: &Counters) {
        let conns = [&mut self.connections, &mut self.open, &mut self.rejected];
        c.conns.add_to(conns);
        self.requests += c.requests.load(Relaxed);
        self.bytes_in += c.bytes_in.load(Relaxed);
        self.bytes_out += c.bytes_out.load(Relaxed);
        self.status_2xx += c.by_class[0].load(Relaxed);
        self.status_3xx += c.by_class[1].load(Relaxed);
        self.status_4xx += c.by_class[2].load(Relaxed);
        self.status_5xx += c.by_class[3].load(Relaxed);
    }
}

/// A handle on one thread's counters that a connection task can own.
pub(crate) type Tally = counters::Tally<HttpServerStats>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_threads_by_class_and_formats() {
        let set = counters::CounterSet::<HttpServerStats>::new(2);
        let (a, b) = (Tally::new(set.clone(), 0), Tally::new(set.clone(), 3));
        a.as_ref().opened();
        b.as_ref().opened();
        b.as_ref().closed();
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
        assert_eq!(std::mem::align_of::<counters::Aligned<Counters>>(), 128);
    }
}
