//! Faults a server thread injects on purpose, for tests (see [`Faults`]): every Nth data
//! datagram dropped, served twice, or held back and served after the next one, so loss,
//! duplicate and reordering accounting can be checked end to end.

use super::{Faults, REORDER_HOLD};
use std::net::SocketAddr;
use std::time::Instant;

/// What the test faults do with one data datagram.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fault {
    Drop,
    Hold,
    Serve,
}

/// A datagram held back by `reorder_every`.
pub(super) struct Held {
    pub(super) data: Vec<u8>,
    pub(super) peer: SocketAddr,
    /// Times it is served (2 when `duplicate_every` hit it too).
    pub(super) copies: u8,
    /// When it is served at the latest, if no other datagram overtakes it first.
    due: Instant,
}

/// What becomes of a data datagram that went through the faults.
pub(super) enum Fate {
    /// Dropped: neither counted nor answered.
    Dropped,
    /// Held back, to be served right after the next one (or when due).
    Held,
    /// Served `copies` times, then the datagram held before it, if any.
    Serve { copies: u8, then: Option<Held> },
}

/// The test faults' state on one thread.
pub(super) struct FaultState {
    faults: Faults,
    /// Data datagrams seen so far.
    seen: u64,
    held: Option<Held>,
}

impl FaultState {
    pub(super) fn new(faults: Faults) -> FaultState {
        FaultState {
            faults,
            seen: 0,
            held: None,
        }
    }

    /// Puts a data datagram received at `now` through the faults.
    pub(super) fn apply(&mut self, data: &[u8], peer: SocketAddr, now: Instant) -> Fate {
        let (fault, copies) = self.next();
        match fault {
            Fault::Drop => return Fate::Dropped,
            Fault::Hold if self.held.is_none() => {
                self.held = Some(Held {
                    data: data.to_vec(),
                    peer,
                    copies,
                    due: now + REORDER_HOLD,
                });
                return Fate::Held;
            }
            // One datagram is held at a time; a second one due for holding is served.
            Fault::Hold | Fault::Serve => {}
        }
        Fate::Serve {
            copies,
            then: self.held.take(),
        }
    }

    /// When the held datagram must be served, if one is held.
    pub(super) fn held_due(&self) -> Option<Instant> {
        self.held.as_ref().map(|h| h.due)
    }

    /// Takes the held datagram out, to be served now.
    pub(super) fn take_held(&mut self) -> Option<Held> {
        self.held.take()
    }

    /// The fate of the next data datagram, and how many times it is served.
    fn next(&mut self) -> (Fault, u8) {
        self.seen += 1;
        let seen = self.seen;
        let hit = |every: Option<u64>| every.is_some_and(|n| seen % n == 0);
        if hit(self.faults.drop_every) {
            return (Fault::Drop, 0);
        }
        let copies = if hit(self.faults.duplicate_every) {
            2
        } else {
            1
        };
        if hit(self.faults.reorder_every) {
            (Fault::Hold, copies)
        } else {
            (Fault::Serve, copies)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn faults_follow_their_intervals() {
        let mut f = FaultState::new(Faults {
            drop_every: Some(4),
            duplicate_every: Some(3),
            reorder_every: Some(5),
        });
        let got: Vec<(Fault, u8)> = (0..6).map(|_| f.next()).collect();
        assert_eq!(
            got,
            [
                (Fault::Serve, 1),
                (Fault::Serve, 1),
                (Fault::Serve, 2),
                (Fault::Drop, 0),
                (Fault::Hold, 1),
                (Fault::Serve, 2),
            ]
        );
    }
}
