//! WHEN to send: the load models. A model decides when the next operation may start; it knows
//! nothing of the protocol.
//!
//! The closed loop: each connection waits for its reply, optionally keeping `pipeline`
//! requests in flight and pausing `think` between them. The open loop: requests follow a
//! [`Schedule`] (constant rate, ramp, stages), whatever the replies do.

pub mod schedule;
pub mod search;
pub mod sweep;

pub use schedule::{Pace, Schedule, Stage};

use std::time::Duration;

/// The in-flight window that sets no limit (the UDP open loop's default: datagrams do not wait
/// for one another). Reports say "unlimited" rather than print the number.
pub const UNLIMITED: usize = usize::MAX;

/// When operations are issued.
#[derive(Clone, Debug, PartialEq)]
pub enum LoadModel {
    /// Each connection keeps `pipeline` requests in flight and sends the next one as soon as a reply
    /// arrives (after `think`, if set).
    Closed {
        /// Requests in flight per connection.
        pipeline: usize,
        /// Pause between a reply and the next request.
        think: Option<Think>,
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

    /// The in-flight limit per connection, or None when any number may be in flight.
    pub fn in_flight_limit(&self) -> Option<usize> {
        Some(self.in_flight()).filter(|&n| n != UNLIMITED)
    }

    /// How long a connection pauses after a reply before sending again (the mean, when the
    /// pauses are drawn).
    pub fn think(&self) -> Option<Duration> {
        self.thinking().map(|t| t.mean)
    }

    /// The think time and its law.
    pub fn thinking(&self) -> Option<Think> {
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

/// A pause between a reply and the next request (`--think`): always `mean`, or drawn from an
/// exponential law of that mean (`--think exp:10ms`: a population of users who think
/// independently, so their requests form a Poisson stream; TPC-W's and httperf's think times).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Think {
    /// The pause, or its mean.
    pub mean: Duration,
    /// With the seed of the draws: exponential pauses; without: every pause `mean`.
    pub exp_seed: Option<u64>,
}

impl Think {
    /// The pause after request `n` (its `{seq}`): the same for the same seed and `n`,
    /// whichever connection sent it.
    pub fn pause(&self, n: u64) -> Duration {
        match self.exp_seed {
            None => self.mean,
            Some(seed) => {
                let x = crate::random::exp1(crate::random::mix(seed, n));
                Duration::from_secs_f64(self.mean.as_secs_f64() * x)
            }
        }
    }

    /// `10ms` or `exp:10ms`, as the flag is written.
    pub fn law(&self) -> &'static str {
        match self.exp_seed {
            None => "fixed",
            Some(_) => "exp",
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

/// The requests of an open-loop timetable that one worker sends: the lanes of its connections
/// (lane `k` of `of` holds requests `k, k + of, k + 2·of, ...`), merged in time order.
///
/// A worker hands each of its requests to whichever of its connections has room, so a
/// connection still waiting for a reply does not hold back a request another one could send;
/// the lanes only divide the timetable between workers, in proportion to their connections.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lanes {
    of: u64,
    own: Vec<u64>,
}

impl Lanes {
    /// The lanes `own` (indices below `of`, in any order) of `of` lanes in all.
    pub fn new(of: usize, own: &[usize]) -> Lanes {
        let mut own: Vec<u64> = own.iter().map(|&k| k as u64).collect();
        own.sort_unstable();
        own.dedup();
        debug_assert!(
            own.last().is_none_or(|&k| k < of as u64),
            "lanes below {of}"
        );
        Lanes { of: of as u64, own }
    }

    /// The timetable index of this worker's `m`-th request (0-based); increasing in `m`.
    pub fn nth(&self, m: u64) -> u64 {
        let n = self.own.len() as u64;
        self.own[(m % n) as usize] + (m / n) * self.of
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unlimited_window_has_no_limit() {
        let open = |window| LoadModel::Open {
            schedule: Schedule::Constant { rate: 10.0 },
            window,
        };
        assert_eq!(open(UNLIMITED).in_flight_limit(), None);
        assert_eq!(open(4).in_flight_limit(), Some(4));
        let closed = LoadModel::Closed {
            pipeline: 1,
            think: None,
        };
        assert_eq!(closed.in_flight_limit(), Some(1));
    }

    #[test]
    fn exponential_think_times_have_their_mean_and_a_cov_of_one() {
        let ms = Duration::from_millis(10);
        let fixed = Think {
            mean: ms,
            exp_seed: None,
        };
        assert_eq!(fixed.pause(7), ms);
        let exp = Think {
            mean: ms,
            exp_seed: Some(3),
        };
        let xs: Vec<f64> = (0..100_000).map(|n| exp.pause(n).as_secs_f64()).collect();
        let mean = xs.iter().sum::<f64>() / xs.len() as f64;
        let sd = (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / xs.len() as f64).sqrt();
        assert!((mean / 0.010 - 1.0).abs() < 0.02, "{mean}");
        assert!((sd / mean - 1.0).abs() < 0.02, "CoV {}", sd / mean);
        assert_eq!(exp.pause(5), exp.pause(5));
        assert_ne!(
            exp.pause(5),
            Think {
                exp_seed: Some(4),
                ..exp
            }
            .pause(5)
        );
    }

    #[test]
    fn lanes_merge_in_time_order() {
        let nth = |of, own: &[usize]| -> Vec<u64> {
            let lanes = Lanes::new(of, own);
            (0..6).map(|m| lanes.nth(m)).collect()
        };
        // One worker with every connection sends the whole timetable.
        assert_eq!(nth(4, &[3, 1, 0, 2]), [0, 1, 2, 3, 4, 5]);
        // 8 connections on 2 threads: worker 0 owns connections 0, 2, 4, 6.
        assert_eq!(nth(8, &[0, 2, 4, 6]), [0, 2, 4, 6, 8, 10]);
        // 3 connections on 2 threads: worker 0 has two of them, so two thirds of the requests.
        assert_eq!(nth(3, &[0, 2]), [0, 2, 3, 5, 6, 8]);
        assert_eq!(nth(3, &[1]), [1, 4, 7, 10, 13, 16]);
    }

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
