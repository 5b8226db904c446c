//! The UDP server's counters: one block per server thread, summed only when someone asks (see
//! [`crate::serve::counters`]).

use crate::serve::counters::{self, Snapshot};
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

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

/// One thread's counters.
#[derive(Debug, Default)]
pub struct Counters {
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
}

impl Snapshot for UdpServerStats {
    type Block = Counters;

    fn add(&mut self, c: &Counters) {
        self.datagrams += c.datagrams.load(Relaxed);
        self.bytes_in += c.bytes_in.load(Relaxed);
        self.replies += c.replies.load(Relaxed);
        self.bytes_out += c.bytes_out.load(Relaxed);
        self.flows += c.flows.load(Relaxed);
        self.bad += c.bad.load(Relaxed);
        self.dropped += c.dropped.load(Relaxed);
        self.untracked += c.untracked.load(Relaxed);
        self.send_errors += c.send_errors.load(Relaxed);
    }
}

/// A handle on one thread's counters.
pub(crate) type Tally = counters::Tally<UdpServerStats>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_threads_and_formats() {
        let set = counters::CounterSet::<UdpServerStats>::new(2);
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
