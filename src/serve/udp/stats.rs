//! The UDP server's counters: one block per server thread, summed only when someone asks.
//!
//! Each thread owns a block on its own cache lines (as in the TCP server), so the per-datagram
//! updates of one thread never bounce a cache line another thread writes.

use std::fmt;
use std::ops::Deref;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

/// What a UDP server has done so far (a snapshot, or the final count after it stopped).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UdpServerStats {
    /// Datagrams received, of every kind (dropped, bad and report requests included).
    pub datagrams: u64,
    /// Their bytes.
    pub bytes_in: u64,
    /// Datagrams sent: replies and report answers.
    pub replies: u64,
    /// Their bytes.
    pub bytes_out: u64,
    /// Flows (peer address, flow id) that got counters, in all (idle flows evicted from a full
    /// table stay counted here).
    pub flows: u64,
    /// Datagrams ignored as malformed: the wirebench magic with a short or unknown header, a
    /// kind a server does not take (replies, report answers), a reply size over the datagram
    /// limit, or a datagram from the server's own address.
    pub bad: u64,
    /// Datagrams received but neither counted nor answered: `--drop-every`, or a delayed reply
    /// that found the queue of pending replies full.
    pub dropped: u64,
    /// Datagrams served but not counted in a flow because the flow table was full.
    pub untracked: u64,
    /// Replies the kernel refused to send.
    pub send_errors: u64,
}

impl fmt::Display for UdpServerStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "datagrams {}, bytes in {}, bytes out {}, flows {}, bad {}, dropped {}",
            self.datagrams, self.bytes_in, self.bytes_out, self.flows, self.bad, self.dropped
        )?;
        if self.untracked > 0 {
            write!(f, ", untracked {}", self.untracked)?;
        }
        if self.send_errors > 0 {
            write!(f, ", send errors {}", self.send_errors)?;
        }
        Ok(())
    }
}

/// One thread's counters, aligned so two threads' blocks never share a cache line (128 rather
/// than 64 because adjacent-line prefetch pairs lines on common x86 parts).
#[derive(Debug, Default)]
#[repr(align(128))]
pub(crate) struct Counters {
    datagrams: AtomicU64,
    bytes_in: AtomicU64,
    replies: AtomicU64,
    bytes_out: AtomicU64,
    flows: AtomicU64,
    bad: AtomicU64,
    dropped: AtomicU64,
    untracked: AtomicU64,
    send_errors: AtomicU64,
}

impl Counters {
    /// A datagram of `n` bytes arrived.
    pub(crate) fn received(&self, n: usize) {
        self.datagrams.fetch_add(1, Relaxed);
        self.bytes_in.fetch_add(n as u64, Relaxed);
    }

    /// A datagram of `n` bytes went out.
    pub(crate) fn sent(&self, n: usize) {
        self.replies.fetch_add(1, Relaxed);
        self.bytes_out.fetch_add(n as u64, Relaxed);
    }

    /// A flow got counters.
    pub(crate) fn flow(&self) {
        self.flows.fetch_add(1, Relaxed);
    }

    /// A datagram was malformed.
    pub(crate) fn bad(&self) {
        self.bad.fetch_add(1, Relaxed);
    }

    /// `n` datagrams were dropped on purpose.
    pub(crate) fn dropped(&self, n: u64) {
        self.dropped.fetch_add(n, Relaxed);
    }

    /// `n` datagrams could not be counted in a flow.
    pub(crate) fn untracked(&self, n: u64) {
        self.untracked.fetch_add(n, Relaxed);
    }

    /// A send failed.
    pub(crate) fn send_error(&self) {
        self.send_errors.fetch_add(1, Relaxed);
    }

    fn add_to(&self, s: &mut UdpServerStats) {
        s.datagrams += self.datagrams.load(Relaxed);
        s.bytes_in += self.bytes_in.load(Relaxed);
        s.replies += self.replies.load(Relaxed);
        s.bytes_out += self.bytes_out.load(Relaxed);
        s.flows += self.flows.load(Relaxed);
        s.bad += self.bad.load(Relaxed);
        s.dropped += self.dropped.load(Relaxed);
        s.untracked += self.untracked.load(Relaxed);
        s.send_errors += self.send_errors.load(Relaxed);
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

    /// The sum over all threads (not atomic across counters).
    pub(crate) fn snapshot(&self) -> UdpServerStats {
        let mut s = UdpServerStats::default();
        for c in self.threads.iter() {
            c.add_to(&mut s);
        }
        s
    }
}

/// A handle on one thread's counters.
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
        let (a, b) = (Tally::new(set.clone(), 0), Tally::new(set.clone(), 3));
        a.received(10);
        b.received(20);
        a.sent(5);
        b.flow();
        a.bad();
        b.dropped(2);
        let s = set.snapshot();
        assert_eq!(
            s.to_string(),
            "datagrams 2, bytes in 30, bytes out 5, flows 1, bad 1, dropped 2"
        );
        b.untracked(1);
        b.send_error();
        assert!(set
            .snapshot()
            .to_string()
            .ends_with(", untracked 1, send errors 1"));
    }
}
