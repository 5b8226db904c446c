//! What a worker's HTTP/1.1 connections hand on to each other: emptied read buffers and the
//! last response head. With a connection per request (`--no-keepalive`) a connection reads one
//! response, so both were made afresh for each request: zeroing a 2 KiB read buffer was ~2,700
//! instructions per connection and parsing nginx's head ~2,000 (callgrind), more than ab's whole
//! request (~8,000). A worker is one thread, so they are shared with no lock.

use super::response::LastHead;
use super::FIRST_READ;
use std::cell::RefCell;

/// The most emptied read buffers a worker keeps.
const KEEP_BUFFERS: usize = 64;
/// The largest read buffer kept (larger ones, grown for a long body, are freed).
const KEEP_MAX: usize = super::SMALL_READ;

/// A worker's spare read buffers and the last response head any of its connections read.
#[derive(Debug, Default)]
pub(super) struct Reuse {
    buffers: RefCell<Vec<Box<[u8]>>>,
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
}
