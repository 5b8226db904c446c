//! Open-loop schedules: a fixed timetable of intended send times, independent of replies.
//!
//! A schedule is a pure function of the request index: [`Schedule::time_of`] gives the instant
//! (since the start of the measured part) at which request `i` *should* be sent. Latency is
//! counted from that instant, not from the actual send, so a stalled server cannot hide behind
//! a client that politely waited (coordinated omission; wrk2's method; docs/method.md). The engine
//! never lowers the rate: when it falls behind, it sends late and reports the lag.
//!
//! Arrivals are either the fixed timetable (request `i` when the rate's integral reaches `i`)
//! or a Poisson process over the same rate (`--arrival poisson`, mutilate's `--iadist
//! exponential`): request `i` when the integral reaches the sum of `i` exponential gaps of
//! mean 1, drawn from the run's seed. Either way the times are fixed before the run starts, and
//! latency is counted from them. A [`Clock`] reads them in order at O(1) a request.

use crate::random::{exp1, mix};
use crate::units::UnitError;
use std::time::Duration;

/// What the next send should do, given the time elapsed and the requests sent so far.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Pace {
    /// The next request is due (or overdue): send it now.
    Now,
    /// The next request is due after this wait.
    Wait(Duration),
    /// The schedule has ended.
    Stop,
}

/// A timetable of offered load, in requests per second over all connections.
#[derive(Clone, Debug, PartialEq)]
pub enum Schedule {
    /// The same rate throughout.
    Constant {
        /// Requests per second.
        rate: f64,
    },
    /// A linear ramp from `from` to `to` over `over`, then `to` for as long as the run lasts.
    Ramp {
        /// Rate at the start.
        from: f64,
        /// Rate at the end of the ramp.
        to: f64,
        /// Length of the ramp.
        over: Duration,
    },
    /// Steps: each stage holds its rate for its duration; the schedule ends after the last.
    Stages(Vec<Stage>),
    /// Requests at the random times of a Poisson process whose rate follows `shape` (a fixed
    /// timetable): exponential gaps, each drawn from `seed` and the request's index.
    Poisson {
        /// The rate over time.
        shape: Box<Schedule>,
        /// The seed of the gaps.
        seed: u64,
    },
}

/// One step of a staged schedule.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stage {
    /// How long the stage lasts.
    pub duration: Duration,
    /// Requests per second during it.
    pub rate: f64,
}

impl Schedule {
    /// The offered rate at `t` since the start.
    pub fn rate_at(&self, t: Duration) -> f64 {
        let t = t.as_secs_f64();
        match self {
            Schedule::Constant { rate } => *rate,
            Schedule::Ramp { from, to, over } => {
                let span = over.as_secs_f64();
                if t >= span {
                    *to
                } else {
                    from + (to - from) * t / span
                }
            }
            Schedule::Stages(stages) => {
                let mut start = 0.0;
                for s in stages {
                    let end = start + s.duration.as_secs_f64();
                    if t < end {
                        return s.rate;
                    }
                    start = end;
                }
                0.0
            }
            Schedule::Poisson { shape, .. } => shape.rate_at(Duration::from_secs_f64(t)),
        }
    }

    /// Poisson arrivals at the rate of `shape` (which keeps its own if it has them already).
    pub fn poisson(shape: Schedule, seed: u64) -> Schedule {
        match shape {
            Schedule::Poisson { .. } => shape,
            shape => Schedule::Poisson {
                shape: Box::new(shape),
                seed,
            },
        }
    }

    /// `shape` with this schedule's kind of arrivals: Poisson (from a seed of its own) if these
    /// are, so that a warm-up arrives as the measured part does.
    pub fn same_arrivals(&self, shape: Schedule) -> Schedule {
        match self {
            Schedule::Poisson { seed, .. } => Schedule::poisson(shape, mix(*seed, 1)),
            _ => shape,
        }
    }

    /// Whether arrivals are random (a Poisson process).
    pub fn is_random(&self) -> bool {
        matches!(self, Schedule::Poisson { .. })
    }

    /// The natural length of the schedule (a ramp's length, the stages' sum), if it has one.
    pub fn length(&self) -> Option<Duration> {
        match self {
            Schedule::Constant { .. } => None,
            Schedule::Ramp { over, .. } => Some(*over),
            Schedule::Stages(stages) => Some(stages.iter().map(|s| s.duration).sum()),
            Schedule::Poisson { shape, .. } => shape.length(),
        }
    }

    /// When request `i` (0-based, over all connections) should be sent, or None if the schedule
    /// has ended before it. O(i) for Poisson arrivals: read many in order with a [`Clock`].
    pub fn time_of(&self, i: u64) -> Option<Duration> {
        Clock::new(self.clone()).time_of(i)
    }

    /// When the rate's integral reaches `i` (fractional) requests: request `i`'s time on the
    /// fixed timetable.
    fn time_at(&self, i: f64) -> Option<Duration> {
        let secs = match self {
            Schedule::Constant { rate } => i / rate,
            Schedule::Ramp { from, to, over } => ramp_time(i, *from, *to, over.as_secs_f64()),
            Schedule::Stages(stages) => {
                let (mut start, mut before) = (0.0, 0.0);
                let mut found = None;
                for s in stages {
                    let len = s.duration.as_secs_f64();
                    let count = s.rate * len;
                    if i < before + count {
                        found = Some(start + (i - before) / s.rate);
                        break;
                    }
                    start += len;
                    before += count;
                }
                found?
            }
            Schedule::Poisson { shape, .. } => return shape.time_at(i),
        };
        Some(Duration::from_secs_f64(secs))
    }

    /// Whether to send now, wait, or stop, after `sent` requests at `elapsed` (vegeta's pacer).
    pub fn pace(&self, elapsed: Duration, sent: u64) -> Pace {
        match self.time_of(sent) {
            None => Pace::Stop,
            Some(due) if due <= elapsed => Pace::Now,
            Some(due) => Pace::Wait(due - elapsed),
        }
    }

    /// Requests due by `t` since the start (those whose intended time is at or before `t`):
    /// the integral of the rate, rounded down, plus the request due at 0.
    pub fn due_by(&self, t: Duration) -> u64 {
        if self.is_random() {
            return Clock::new(self.clone()).due(t, true);
        }
        let (n, cap) = self.integral(t);
        // A hair of tolerance so that float error never loses a request due exactly at `t`.
        ((n + 1e-6).floor() as u64 + 1).min(cap)
    }

    /// Requests due strictly before `t`: request `k` is due at N⁻¹(k), so these are the k < N(t).
    /// The offered count of a span [a, b) is `due_before(b) - due_before(a)`; `due_by(t - 1ns)`
    /// is not, because its tolerance (10⁻⁶ requests) outweighs 1 ns at rates up to 1000/s.
    pub fn due_before(&self, t: Duration) -> u64 {
        if self.is_random() {
            return Clock::new(self.clone()).due(t, false);
        }
        let (n, cap) = self.integral(t);
        // The same tolerance: a request due within float error of `t` counts as due at `t`.
        ((n - 1e-6).ceil().max(0.0) as u64).min(cap)
    }

    /// The integral of the rate from 0 to `t` (fractional requests), and how many requests the
    /// schedule holds in all (`u64::MAX` when it does not end).
    fn integral(&self, t: Duration) -> (f64, u64) {
        let t = t.as_secs_f64();
        match self {
            Schedule::Constant { rate } => (rate * t, u64::MAX),
            Schedule::Ramp { from, to, over } => {
                let span = over.as_secs_f64();
                let k = (to - from) / span;
                let ramp = t.min(span);
                let n = from * ramp + k * ramp * ramp / 2.0 + to * (t - span).max(0.0);
                (n, u64::MAX)
            }
            Schedule::Stages(stages) => {
                let (mut start, mut n, mut total) = (0.0, 0.0, 0.0);
                for s in stages {
                    let len = s.duration.as_secs_f64();
                    n += s.rate * (t - start).clamp(0.0, len);
                    total += s.rate * len;
                    start += len;
                }
                // The last request falls before the end; none is due exactly at it.
                (n, (total - 1e-6).ceil() as u64)
            }
            Schedule::Poisson { shape, .. } => shape.integral(Duration::from_secs_f64(t)),
        }
    }
}

/// A schedule's intended times read in increasing order of request: O(1) a request even for
/// Poisson arrivals, where request `i` is due when the rate's integral reaches the sum of `i`
/// exponential gaps (the pacer and the per-second offered counts read them so). Reading
/// backwards starts the sum again: correct, only slower.
#[derive(Clone, Debug)]
pub struct Clock {
    schedule: Schedule,
    walk: Walk,
}

/// How far the sum of gaps has been taken: request `next` is due at integral `x`, the one
/// before it at `prev`.
#[derive(Clone, Copy, Debug)]
struct Walk {
    next: u64,
    x: f64,
    prev: f64,
}

impl Default for Walk {
    fn default() -> Walk {
        Walk {
            next: 0,
            x: 0.0,
            prev: f64::NEG_INFINITY,
        }
    }
}

impl Walk {
    /// The integral at which request `i` is due, for gaps drawn from `seed`.
    fn to(&mut self, seed: u64, i: u64) -> f64 {
        if i < self.next {
            *self = Walk::default();
        }
        while self.next < i {
            self.step(seed);
        }
        self.x
    }

    fn step(&mut self, seed: u64) {
        self.prev = self.x;
        self.x += exp1(mix(seed, self.next));
        self.next += 1;
    }

    /// How many requests are due below integral `x` (at or below it, `inclusive`).
    fn count(&mut self, seed: u64, x: f64, inclusive: bool) -> u64 {
        let before = |at: f64| at < x || (inclusive && at <= x);
        if !before(self.prev) && self.next > 0 {
            *self = Walk::default();
        }
        while before(self.x) {
            self.step(seed);
        }
        self.next
    }
}

impl Clock {
    /// Reads `schedule` from its first request.
    pub fn new(schedule: Schedule) -> Clock {
        Clock {
            schedule,
            walk: Walk::default(),
        }
    }

    /// The schedule read.
    pub fn schedule(&self) -> &Schedule {
        &self.schedule
    }

    /// When request `i` should be sent, or None if the schedule has ended before it.
    pub fn time_of(&mut self, i: u64) -> Option<Duration> {
        match &self.schedule {
            Schedule::Poisson { shape, seed } => shape.time_at(self.walk.to(*seed, i)),
            s => s.time_at(i as f64),
        }
    }

    /// Requests due strictly before `t` (at or before it, `inclusive`): see
    /// [`Schedule::due_before`] and [`Schedule::due_by`].
    pub fn due(&mut self, t: Duration, inclusive: bool) -> u64 {
        match &self.schedule {
            // The integral of stages stops at their end: the requests counted all fall before it.
            // The same tolerance as the fixed timetable's: a request due within float error
            // of `t` counts as due at `t`.
            Schedule::Poisson { shape, seed } => {
                let (x, _) = shape.integral(t);
                let x = if inclusive { x + 1e-6 } else { x - 1e-6 };
                self.walk.count(*seed, x, inclusive)
            }
            s if inclusive => s.due_by(t),
            s => s.due_before(t),
        }
    }
}

/// Inverse of the ramp's cumulative count N(t) = from·t + k·t²/2 (k = (to − from)/span).
fn ramp_time(i: f64, from: f64, to: f64, span: f64) -> f64 {
    let k = (to - from) / span;
    let at_end = (from + to) * span / 2.0;
    if i >= at_end {
        return span + (i - at_end) / to;
    }
    if k.abs() < 1e-12 {
        return i / from;
    }
    (-from + (from * from + 2.0 * k * i).sqrt()) / k
}

/// A `--rate` that is not a rate or a ramp; each carries the text given.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RateError {
    /// A part that is not a number.
    #[error("--rate '{text}': '{part}' is not a number; write e.g. --rate 20000 or --rate 1000..50000/30s")]
    NotNumber {
        /// The whole `--rate`.
        text: String,
        /// The part that is not a number.
        part: String,
    },
    /// A rate of 0 or less.
    #[error("--rate '{0}': a rate must be above 0 requests/s")]
    NotPositive(String),
    /// A rate above [`MAX_RATE`].
    #[error("--rate '{0}': a rate must be at most 1e12 requests/s (a million times any generator's reach); write e.g. --rate 20000")]
    TooHigh(String),
    /// `FROM..TO` without `/DURATION`.
    #[error("--rate '{0}': a ramp needs its length, e.g. 1000..50000/30s")]
    NoLength(String),
    /// A `/` without `FROM..TO` before it.
    #[error("--rate '{0}': write a ramp as FROM..TO/DURATION, e.g. 1000..50000/30s")]
    NotRamp(String),
    /// A ramp down.
    #[error("--rate '{0}': the ramp ends below its start; write FROM..TO with TO ≥ FROM, or use --stages for steps down")]
    Backward(String),
    /// A ramp's length that is not a duration.
    #[error("--rate '{0}': {1}")]
    Length(String, UnitError),
    /// A ramp of no length.
    #[error("--rate '{0}': the ramp needs a length above 0")]
    ZeroLength(String),
}

/// The highest rate `--rate` and `--stages` take, in requests/s: far beyond any generator,
/// low enough that every count derived from it fits its integer.
pub const MAX_RATE: f64 = 1e12;

/// Parses `--rate`: `20000` (constant) or `1000..50000/30s` (linear ramp).
pub fn parse_rate(text: &str) -> Result<Schedule, RateError> {
    let positive = |t: &str| -> Result<f64, RateError> {
        let v: f64 = t.trim().parse().map_err(|_| RateError::NotNumber {
            text: text.into(),
            part: t.into(),
        })?;
        if !(v > 0.0 && v.is_finite()) {
            return Err(RateError::NotPositive(text.into()));
        }
        if v > MAX_RATE {
            return Err(RateError::TooHigh(text.into()));
        }
        Ok(v)
    };
    let Some((range, over)) = text.split_once('/') else {
        if text.contains("..") {
            return Err(RateError::NoLength(text.into()));
        }
        return Ok(Schedule::Constant {
            rate: positive(text)?,
        });
    };
    let (from, to) = range
        .split_once("..")
        .ok_or_else(|| RateError::NotRamp(text.into()))?;
    let (from, to) = (positive(from)?, positive(to)?);
    if to < from {
        return Err(RateError::Backward(text.into()));
    }
    let over = crate::units::parse_duration(over).map_err(|e| RateError::Length(text.into(), e))?;
    if over.is_zero() {
        return Err(RateError::ZeroLength(text.into()));
    }
    Ok(Schedule::Ramp { from, to, over })
}

/// A `--stages` stage that is not a duration and a rate above 0.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum StagesError {
    /// Not `DURATION@RATE`.
    #[error("--stages '{text}': '{stage}' is not DURATION@RATE; write e.g. --stages '10s@1000,10s@5000'")]
    NotStage {
        /// The whole `--stages`.
        text: String,
        /// The stage.
        stage: String,
    },
    /// A rate of 0 or less.
    #[error("--stages '{text}': stage '{stage}' needs a rate above 0 and at most 1e12 requests/s")]
    ZeroRate {
        /// The whole `--stages`.
        text: String,
        /// The stage.
        stage: String,
    },
    /// A stage of no length.
    #[error("--stages '{text}': stage '{stage}' needs a duration above 0")]
    ZeroDuration {
        /// The whole `--stages`.
        text: String,
        /// The stage.
        stage: String,
    },
}

/// Parses `--stages '10s@1000,10s@5000'`: each stage a duration and a rate.
pub fn parse_stages(text: &str) -> Result<Schedule, StagesError> {
    let mut stages = Vec::new();
    for part in text.split(',').map(str::trim) {
        let (text, stage) = (text.to_string(), part.to_string());
        let bad = || StagesError::NotStage {
            text: text.clone(),
            stage: stage.clone(),
        };
        let (d, r) = part.split_once('@').ok_or_else(bad)?;
        let duration = crate::units::parse_duration(d).map_err(|_| bad())?;
        let rate: f64 = r.trim().parse().map_err(|_| bad())?;
        if !(rate > 0.0 && rate <= MAX_RATE) {
            return Err(StagesError::ZeroRate { text, stage });
        }
        if duration.is_zero() {
            return Err(StagesError::ZeroDuration { text, stage });
        }
        stages.push(Stage { duration, rate });
    }
    Ok(Schedule::Stages(stages))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn constant_rate_paces_on_a_fixed_timetable() {
        let s = Schedule::Constant { rate: 2.0 };
        let cases = [
            (ms(0), 0, Pace::Now),
            (ms(0), 1, Pace::Wait(ms(500))),
            (ms(4900), 10, Pace::Wait(ms(100))),
            (ms(5000), 10, Pace::Now),
            // Behind schedule: still due now, never skipped or slowed.
            (ms(9000), 3, Pace::Now),
        ];
        for (elapsed, sent, want) in cases {
            assert_eq!(s.pace(elapsed, sent), want, "{elapsed:?} {sent}");
        }
        // Requests 0..=10 are due at 0 s, 0.5 s, ..., 5 s.
        assert_eq!(s.due_by(ms(5000)), 11);
        assert_eq!(s.due_before(ms(5000)), 10);
        assert_eq!(s.due_before(ms(0)), 0);
        assert_eq!(s.due_before(ms(5001)), 11);
    }

    #[test]
    fn due_before_counts_a_span_exactly_at_any_rate() {
        // 90 ms at 1000/s offers requests 0..=89 (due at 0, 1, ..., 89 ms): 90, not 91.
        // due_by(90 ms - 1 ns) said 91: its tolerance outweighed the nanosecond.
        let s = Schedule::Constant { rate: 1000.0 };
        assert_eq!(s.due_before(ms(90)), 90);
        for rate in [1.0, 3.0, 1000.0, 8_928.571_428_571_428, 1e6] {
            let s = Schedule::Constant { rate };
            let whole = s.due_before(ms(10_000));
            let parts: u64 = (0..10)
                .map(|i| s.due_before(ms(1000 * (i + 1))) - s.due_before(ms(1000 * i)))
                .sum();
            assert_eq!(parts, whole, "{rate}/s");
            assert_eq!(whole, (rate * 10.0).ceil() as u64, "{rate}/s");
        }
        let stages = parse_stages("1s@100, 2s@1000").unwrap();
        assert_eq!(stages.due_before(Duration::from_secs(1)), 100);
        assert_eq!(stages.due_before(Duration::from_secs(10)), 2100);
    }

    #[test]
    fn ramp_integrates_the_rate() {
        let s = Schedule::Ramp {
            from: 1000.0,
            to: 3000.0,
            over: Duration::from_secs(10),
        };
        // N(10 s) = (1000 + 3000) / 2 * 10 = 20,000.
        assert_eq!(s.due_by(Duration::from_secs(10)), 20_001);
        let t = s.time_of(20_000).unwrap().as_secs_f64();
        assert!((t - 10.0).abs() < 1e-6, "{t}");
        // After the ramp the rate holds at 3000/s.
        assert_eq!(s.due_by(Duration::from_secs(11)), 23_001);
        for i in [0u64, 1, 999, 5_000, 19_999, 25_000] {
            let t = s.time_of(i).unwrap();
            assert_eq!(s.due_by(t), i + 1, "request {i} at {t:?}");
        }
        assert_eq!(s.rate_at(Duration::from_secs(5)), 2000.0);
    }

    #[test]
    fn stages_step_and_end() {
        let s = parse_stages("1s@100, 2s@1000").unwrap();
        assert_eq!(s.length(), Some(Duration::from_secs(3)));
        assert_eq!(s.time_of(99), Some(Duration::from_millis(990)));
        assert_eq!(s.time_of(100), Some(Duration::from_secs(1)));
        assert_eq!(s.time_of(2099).map(|d| d.as_millis()), Some(2999));
        assert_eq!(s.time_of(2100), None);
        assert_eq!(s.pace(Duration::from_secs(4), 2100), Pace::Stop);
        assert_eq!(s.due_by(Duration::from_secs(10)), 2100);
        assert_eq!(s.rate_at(Duration::from_millis(1500)), 1000.0);
    }

    #[test]
    fn poisson_gaps_are_exponential_and_their_times_kept() {
        let s = Schedule::poisson(Schedule::Constant { rate: 1000.0 }, 7);
        let mut clock = Clock::new(s.clone());
        let times: Vec<f64> = (0..100_000)
            .map(|i| clock.time_of(i).unwrap().as_secs_f64())
            .collect();
        let gaps: Vec<f64> = times.windows(2).map(|w| w[1] - w[0]).collect();
        let n = gaps.len() as f64;
        let mean = gaps.iter().sum::<f64>() / n;
        let sd = (gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
        // Exponential gaps: mean 1/rate, coefficient of variation 1 (the fixed timetable's is 0).
        assert!((mean * 1000.0 - 1.0).abs() < 0.02, "mean gap {mean}");
        assert!((sd / mean - 1.0).abs() < 0.05, "CoV {}", sd / mean);
        assert!(gaps.iter().all(|&g| g >= 0.0));
        // The times are fixed by the seed: read alone, in any order, or by the pacer's rule.
        assert_eq!(times[0], 0.0);
        for i in [99_999u64, 1, 17, 5_000] {
            let t = s.time_of(i).unwrap();
            assert_eq!(t, clock.time_of(i).unwrap(), "request {i}");
            assert_eq!(t.as_secs_f64(), times[i as usize]);
            assert_eq!(s.due_before(t), i, "request {i} at {t:?}");
            assert_eq!(s.due_by(t), i + 1, "request {i} at {t:?}");
            assert_eq!(s.pace(t, i), Pace::Now);
            let early = t - Duration::from_nanos(1000);
            assert_eq!(s.pace(early, i), Pace::Wait(Duration::from_nanos(1000)));
        }
        let other = Schedule::poisson(Schedule::Constant { rate: 1000.0 }, 8);
        assert_ne!(other.time_of(10), s.time_of(10));
        assert_eq!(s.rate_at(ms(5)), 1000.0);
    }

    #[test]
    fn poisson_counts_per_second_add_up_and_stages_end() {
        let s = Schedule::poisson(parse_stages("1s@100, 2s@1000").unwrap(), 3);
        assert_eq!(s.length(), Some(Duration::from_secs(3)));
        let whole = s.due_before(Duration::from_secs(10));
        // 2100 expected; a Poisson count's sd is sqrt(2100) = 46.
        assert!((1900..2300).contains(&whole), "{whole}");
        assert!(s.time_of(whole - 1).is_some());
        assert_eq!(s.time_of(whole), None, "the stages end");
        let mut clock = Clock::new(s.clone());
        let parts: u64 = (0..10)
            .map(|i| {
                let (from, to) = (Duration::from_secs(i), Duration::from_secs(i + 1));
                let from = clock.due(from, false);
                clock.due(to, false) - from
            })
            .sum();
        assert_eq!(parts, whole);
        let first = s.due_before(Duration::from_secs(1));
        assert!((60..140).contains(&first), "{first} in the 100/s second");
        // Same arrivals for a warm-up, from a seed of its own.
        let warm = s.same_arrivals(Schedule::Constant { rate: 5.0 });
        assert!(warm.is_random() && warm != s);
        let fixed = Schedule::Constant { rate: 5.0 };
        assert_eq!(fixed.same_arrivals(fixed.clone()), fixed);
    }

    #[test]
    fn parses_and_rejects() {
        assert_eq!(
            parse_rate("20000").unwrap(),
            Schedule::Constant { rate: 20000.0 }
        );
        assert!(matches!(
            parse_rate("1000..50000/30s").unwrap(),
            Schedule::Ramp { .. }
        ));
        for bad in [
            "0",
            "-5",
            "abc",
            "5000..1000/10s",
            "1000..5000",
            "1000..5000/0s",
            "1..x/1s",
        ] {
            let e = parse_rate(bad).expect_err(bad).to_string();
            assert!(e.contains("--rate"), "{e}");
        }
        for bad in ["10s", "10s@", "@100", "10s@0", "x@100", "10s@100,,"] {
            assert!(parse_stages(bad).is_err(), "{bad}");
        }
    }
}
