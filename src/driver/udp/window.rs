//! Which request each datagram answers: the window of requests in flight, replies matched by
//! sequence number (framed) or first in, first out (raw), late, duplicated and reordered replies
//! counted, and requests past their time limit given up as lost.

use super::UdpSession;
use crate::driver::{Done, ReadOutcome, Sent};
use crate::wire::datagram::{Header, Kind};
use std::time::{Duration, Instant};

/// Replies remembered after their request left the window, to tell late from duplicate.
pub(super) const HISTORY: usize = 4096;

/// What became of a request that left the in-flight window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Fate {
    Answered,
    Expired,
}

/// A request in flight: its sequence number, send times, and whether it has been answered.
#[derive(Clone, Copy, Debug)]
pub(super) struct Pending {
    pub(super) seq: u64,
    pub(super) sent: Sent,
    pub(super) answered: bool,
}

impl UdpSession {
    /// Drops answered entries from the front of the window.
    pub(super) fn trim(&mut self) {
        while let Some(p) = self.in_flight.front().filter(|p| p.answered) {
            self.history[(p.seq as usize) % HISTORY] = (p.seq, Fate::Answered);
            self.in_flight.pop_front();
        }
    }

    /// Accounts one received datagram.
    pub(super) fn on_datagram(&mut self, n: usize, out: &mut ReadOutcome) {
        out.bytes += n;
        if !self.framed {
            // Raw datagrams carry no sequence number: the oldest request is answered.
            if let Some(p) = self.in_flight.iter_mut().find(|p| !p.answered) {
                p.answered = true;
                self.outstanding -= 1;
                self.completed.push(Done::ok(p.sent));
                out.replies += 1;
            }
            return;
        }
        let Some(h) =
            Header::decode(&self.rx[..n]).filter(|h| h.kind == Kind::Reply && h.flow == self.flow)
        else {
            return;
        };
        let front = self.in_flight.front().map_or(u64::MAX, |p| p.seq);
        if h.seq < front || front == u64::MAX {
            match self.history[(h.seq as usize) % HISTORY] {
                (s, Fate::Expired) if s == h.seq => {
                    out.late += 1;
                    self.history[(h.seq as usize) % HISTORY] = (s, Fate::Answered);
                }
                _ => {
                    out.duplicates += 1;
                    self.duplicating = true;
                }
            }
            return;
        }
        let Some(p) = self.in_flight.get_mut((h.seq - front) as usize) else {
            return; // a sequence number never sent: not ours
        };
        if p.answered {
            out.duplicates += 1;
            self.duplicating = true;
            return;
        }
        p.answered = true;
        let sent = p.sent;
        self.outstanding -= 1;
        // Out of order as RFC 4737 counts it: below the highest sequence number seen so far.
        match self.highest_reply {
            Some(top) if h.seq < top => out.reordered += 1,
            _ => self.highest_reply = Some(h.seq),
        }
        self.completed.push(Done::ok(sent));
        out.replies += 1;
    }

    /// Whether the oldest request still unanswered was sent `timeout` or more before `now`.
    pub(super) fn overdue(&self, now: Instant) -> bool {
        self.outstanding > 0
            && self
                .in_flight
                .iter()
                .find(|p| !p.answered)
                .is_some_and(|p| now >= p.sent.at + self.timeout)
    }

    /// Gives up the requests sent `timeout` or more before `now`; returns how many.
    pub(super) fn expire_overdue(&mut self, now: Instant, timeout: Duration) -> usize {
        let mut lost = 0;
        while let Some(&p) = self.in_flight.front() {
            if p.answered {
                self.history[(p.seq as usize) % HISTORY] = (p.seq, Fate::Answered);
            } else if now >= p.sent.at + timeout {
                self.history[(p.seq as usize) % HISTORY] = (p.seq, Fate::Expired);
                self.outstanding -= 1;
                lost += 1;
            } else {
                break;
            }
            self.in_flight.pop_front();
        }
        lost
    }
}
