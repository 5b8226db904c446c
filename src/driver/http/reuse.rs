//! What a worker's HTTP/1.1 connections hand on to each other: emptied buffers and the last
//! response head. With a connection per request (`--no-keepalive`) a connection reads one
//! response, so both were made afresh for each request: zeroing a 2 KiB read buffer was ~2,700
//! instructions per connection and parsing nginx's head ~2,000 (callgrind), more than ab's whole
//! request (~8,000); growing and freeing the request buffer and the queues of requests in flight
//! and of replies completed ~700 more. A worker is one thread, so they are shared with no lock.

use super::response::LastHead;
use super::{Pending, FIRST_READ};
use crate::driver::Done;
use std::cell::RefCell;
use std::collections::VecDeque;

/// The most emptied read buffers a worker keeps.
const KEEP_BUFFERS: usize = 64;
/// The largest read buffer kept (larger ones, grown for a long body, are freed).
const KEEP_MAX: usize = super::SMALL_READ;
/// The most requests (or replies) a kept queue has room for; a longer one is freed.
const KEEP_QUEUE: usize = 1024;

/// A connection's buffers other than the read buffer, empty: the requests to write, the requests
/// in flight and the replies completed by the last read.
#[derive(Debug, Default)]
pub(super) struct Queues {
    pub(super) out: Vec<u8>,
    pub(super) in_flight: VecDeque<Pending>,
    pub(super) completed: Vec<Done>,
}

/// A worker's spare buffers and the last response head any of its connections read.
#[derive(Debug, Default)]
pub(super) struct Reuse {
    buffers: RefCell<Vec<Box<[u8]>>>,
    queues: RefCell<Vec<Queues>>,
    /// The last complete response head of the worker's connections.
    pub(super) last_head: RefCell<LastHead>,
}

impl Reuse {
    /// A read buffer for a new connection: a spare one, else a fresh [`FIRST_READ`] one. A spare
    /// holds an old response's bytes, which nothing reads: the parser reads only what a read
    /// has just put there.
    pub(super) fn buffer(&self) -> Box<[u8]> {
        let spare = self.buffers.borrow_mut().pop();
        spare.unwrap_or_else(|| vec![0; FIRST_READ].into_boxed_slice())
    }

    /// Keeps a closed connection's read buffer for the next one.
    pub(super) fn give(&self, buf: Box<[u8]>) {
        let mut spare = self.buffers.borrow_mut();
        if !buf.is_empty() && buf.len() <= KEEP_MAX && spare.len() < KEEP_BUFFERS {
            spare.push(buf);
        }
    }

    /// Empty queues for a new connection: a closed one's, else new ones.
    pub(super) fn queues(&self) -> Queues {
        self.queues.borrow_mut().pop().unwrap_or_default()
    }

    /// Keeps a closed connection's queues, emptied, for the next one (not grown ones).
    pub(super) fn give_queues(&self, mut q: Queues) {
        let mut spare = self.queues.borrow_mut();
        let small = q.out.capacity() <= KEEP_MAX
            && q.in_flight.capacity() <= KEEP_QUEUE
            && q.completed.capacity() <= KEEP_QUEUE;
        if small && spare.len() < KEEP_BUFFERS {
            q.out.clear();
            q.in_flight.clear();
            q.completed.clear();
            spare.push(q);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_are_handed_on_up_to_a_bound() {
        let r = Reuse::default();
        let a = r.buffer();
        assert_eq!(a.len(), FIRST_READ);
        let p = a.as_ptr();
        r.give(a);
        let b = r.buffer();
        assert_eq!(b.as_ptr(), p, "the spare is handed on");
        drop(b);
        r.give(vec![0; KEEP_MAX + 1].into_boxed_slice());
        r.give(Box::default());
        assert_eq!(
            r.buffers.borrow().len(),
            0,
            "big and empty buffers are not kept"
        );
        for _ in 0..KEEP_BUFFERS + 5 {
            r.give(vec![0; FIRST_READ].into_boxed_slice());
        }
        assert_eq!(r.buffers.borrow().len(), KEEP_BUFFERS);
    }

    #[test]
    fn queues_are_handed_on_empty_up_to_a_bound() {
        let r = Reuse::default();
        let mut q = r.queues();
        q.out.extend_from_slice(b"GET / HTTP/1.1\r\n\r\n");
        let p = q.out.as_ptr();
        r.give_queues(q);
        let q = r.queues();
        assert_eq!(q.out.as_ptr(), p, "the spare is handed on");
        assert!(q.out.is_empty() && q.in_flight.is_empty() && q.completed.is_empty());
        let mut big = Queues::default();
        big.out.reserve(KEEP_MAX + 1);
        r.give_queues(big);
        assert_eq!(r.queues.borrow().len(), 0, "a grown buffer is not kept");
        for _ in 0..KEEP_BUFFERS + 5 {
            r.give_queues(Queues::default());
        }
        assert_eq!(r.queues.borrow().len(), KEEP_BUFFERS);
    }
}
