//! WHEN to send: the load models. A model decides when the next operation may start; it knows
//! nothing of the protocol.
//!
//! The closed loop: each connection waits for its reply, optionally keeping `pipeline`
//! requests in flight and pausing `think` between them. The open loop: requests follow a
//! [`Schedule`] (constant rate, ramp, stages), whatever the replies do.

pub mod schedule;

pub use schedule::{Pace, Schedule, Stage};

use std::time::Duration;

/// When operations are issued.
#[derive(Clone, Debug, PartialEq)]
pub enum LoadModel {
    /// Each connection keeps `pipeline` requests in flight and sends the next one as soon as a reply
    /// arrives (after `think`, if set).
    Closed {
        /// Requests in flight per connection.
        pipeline: usize,
        /// Pause between a reply and the next request.
        think: Option<Duration>,
    },
    /// Requests go out on a fixed timetable, whatever the replies do (no coordinated omission).
    Open {
        /// The timetable, over all connections together.
        schedule: Schedule,
        /// Requests a connection may have in flight (wrk2's model: a due request waits for a
        /// free slot and goes out late, its latency still counted from the intended time).
        window: usize,
    },
}

impl LoadModel {
    /// Requests a connection may have in flight at once.
    pub fn in_flight(&self) -> usize {
        match self {
            LoadModel::Closed { pipeline, .. } => *pipeline,
            LoadModel::Open { window, .. } => *window,
        }
    }

    /// How long a connection pauses after a reply before sending again.
    pub fn think(&self) -> Option<Duration> {
        match self {
            LoadModel::Closed { think, .. } => *think,
            LoadModel::Open { .. } => None,
        }
    }

    /// The open-loop timetable, if this is the open loop.
    pub fn schedule(&self) -> Option<&Schedule> {
        match self {
            LoadModel::Closed { .. } => None,
            LoadModel::Open { schedule, .. } => Some(schedule),
        }
    }
}

/// Splits `total` operations over `parts` connections as evenly as possible; part `i` gets its share.
///
/// Static shares make `--requests N` exact with no shared counter on the hot path.
pub fn share(total: u64, parts: usize, i: usize) -> u64 {
    let parts = parts as u64;
    let i = i as u64;
    total / parts + u64::from(i < total % parts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_add_up() {
        for (total, parts) in [(10u64, 3usize), (1, 4), (0, 2), (1000, 7), (5, 5)] {
            let sum: u64 = (0..parts).map(|i| share(total, parts, i)).sum();
            assert_eq!(sum, total, "{total} over {parts}");
            let max = (0..parts).map(|i| share(total, parts, i)).max().unwrap();
            let min = (0..parts).map(|i| share(total, parts, i)).min().unwrap();
            assert!(max - min <= 1);
        }
    }
}
