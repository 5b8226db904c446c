//! A server's counters: one block per server thread, summed only when someone asks.
//!
//! Each thread owns a block on its own cache lines, so the updates of one thread never bounce a
//! cache line another thread writes; a snapshot reads every block and adds them up. Each server
//! names its counters in a block type of its own and says how a block adds to its public stats
//! ([`Snapshot`]); the blocks, their alignment and the sum are kept here.

use std::ops::Deref;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

/// A server's public stats, the sum of its threads' counter blocks.
pub trait Snapshot: Default {
    /// One thread's counters (atomics, updated with relaxed ordering).
    type Block: Default + Send + Sync + std::fmt::Debug;

    /// Adds one thread's counters to `self`.
    fn add(&mut self, block: &Self::Block);
}

/// One thread's block. The alignment keeps two threads' blocks off a shared cache line (128
/// rather than 64 because adjacent-line prefetch pairs lines on common x86 parts).
#[derive(Debug, Default)]
#[repr(align(128))]
pub(crate) struct Aligned<B>(B);

/// Every thread's counters of one server.
#[derive(Debug)]
pub(crate) struct CounterSet<S: Snapshot> {
    threads: Box<[Aligned<S::Block>]>,
}

impl<S: Snapshot> CounterSet<S> {
    /// Counters for `threads` server threads (at least one).
    pub(crate) fn new(threads: usize) -> Arc<CounterSet<S>> {
        Arc::new(CounterSet {
            threads: (0..threads.max(1)).map(|_| Aligned::default()).collect(),
        })
    }

    /// The sum over all threads. Not atomic across counters: a snapshot taken while traffic
    /// flows may pair a request count with a byte count a few reads apart.
    pub(crate) fn snapshot(&self) -> S {
        let mut s = S::default();
        for block in self.threads.iter() {
            s.add(&block.0);
        }
        s
    }
}

/// A handle on one thread's counters that a connection task can own (tasks must be `'static`).
#[derive(Debug)]
pub(crate) struct Tally<S: Snapshot> {
    set: Arc<CounterSet<S>>,
    index: usize,
}

impl<S: Snapshot> Tally<S> {
    /// Thread `index`'s counters of `set`; an index past the end wraps around.
    pub(crate) fn new(set: Arc<CounterSet<S>>, index: usize) -> Tally<S> {
        let index = index % set.threads.len();
        Tally { set, index }
    }
}

impl<S: Snapshot> Clone for Tally<S> {
    fn clone(&self) -> Self {
        Tally {
            set: self.set.clone(),
            index: self.index,
        }
    }
}

impl<S: Snapshot> Deref for Tally<S> {
    type Target = S::Block;

    fn deref(&self) -> &S::Block {
        &self.set.threads[self.index].0
    }
}

/// The connection counts of a server that accepts connections (TCP and HTTP), part of its
/// block.
#[derive(Debug, Default)]
pub(crate) struct Connections {
    /// Accepted and served, in all (refused ones are counted in `rejected` only).
    connections: AtomicU64,
    /// Open right now.
    open: AtomicU64,
    /// Refused (accepted and closed at once) because `max_connections` were open.
    rejected: AtomicU64,
}

impl Connections {
    /// A connection was admitted: it counts as served and as open until [`Connections::closed`].
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

    /// Adds these counts to a snapshot's `connections`, `open` and `rejected`.
    pub(crate) fn add_to(&self, [connections, open, rejected]: [&mut u64; 3]) {
        *connections += self.connections.load(Relaxed);
        *open += self.open.load(Relaxed);
        *rejected += self.rejected.load(Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Default)]
    struct Sum(u64);

    impl Snapshot for Sum {
        type Block = AtomicU64;

        fn add(&mut self, block: &AtomicU64) {
            self.0 += block.load(Relaxed);
        }
    }

    #[test]
    fn sums_threads_on_their_own_cache_lines() {
        let set = CounterSet::<Sum>::new(2);
        let (a, b) = (Tally::new(set.clone(), 0), Tally::new(set.clone(), 3));
        a.fetch_add(2, Relaxed);
        b.fetch_add(5, Relaxed);
        b.clone().fetch_add(1, Relaxed);
        assert_eq!(set.snapshot().0, 8);
        assert_eq!(std::mem::align_of::<Aligned<AtomicU64>>(), 128);
        let (pa, pb) = (&*a as *const AtomicU64, &*b as *const AtomicU64);
        assert_eq!((pb as usize) - (pa as usize), 128);
    }
}
