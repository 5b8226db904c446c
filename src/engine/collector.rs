//! The collector: adds up the workers' intervals into the run's totals, builds the exact
//! per-second series (a second is closed once every worker has moved past it), and shows each
//! closed second to the caller's watcher (the live progress line). Memory stays bounded: only
//! seconds still open are held.

use super::steady::Judge;
use super::timeline::Timeline;
use super::worker::{Active, Msg};
use crate::record::{Phase, Recorder, RunRecord, SeriesPoint, Settled, Snapshot};
use std::collections::BTreeMap;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Emptied recorders, handed back and forth so that no one allocates one during the run: a
/// worker takes one at each second's boundary (in place of the one it ships), the collector
/// clears what it has merged and puts it back. A fresh recorder costs most of a millisecond
/// (its histograms' memory and page faults), time in which a due request would wait.
#[derive(Debug, Default)]
pub struct Spares(Mutex<Vec<Recorder>>);

impl Spares {
    /// A pool of `n` empty recorders, made before the run starts.
    pub fn new(n: usize) -> Spares {
        Spares(Mutex::new((0..n).map(|_| Recorder::new()).collect()))
    }

    /// An empty recorder: a spare if there is one, else a new one.
    // Never inlined: bench/cost.sh's gate subtracts it from the worker's count by name.
    #[inline(never)]
    pub fn take(&self) -> Recorder {
        let spare = self.0.lock().map(|mut v| v.pop()).unwrap_or(None);
        spare.unwrap_or_default()
    }

    /// Clears `rec` and keeps it for the next [`Spares::take`].
    pub fn give(&self, mut rec: Recorder) {
        rec.clear();
        if let Ok(mut v) = self.0.lock() {
            v.push(rec);
        }
    }
}

struct Collector<'w> {
    /// The latest second each worker has shipped (None: nothing yet); finished workers are None
    /// in `open_workers`.
    shipped: Vec<Option<u64>>,
    finished: Vec<bool>,
    pending: BTreeMap<u64, Recorder>,
    out: RunRecord,
    watch: &'w mut dyn FnMut(&Snapshot),
    t0: Instant,
    spares: Arc<Spares>,
}

impl Collector<'_> {
    fn handle(&mut self, msg: Msg) {
        match msg {
            Msg::Interval { worker, interval } => match interval.phase {
                Phase::Warmup => {
                    self.out.warm += &interval.rec;
                    self.spares.give(interval.rec);
                    self.show_warmup();
                }
                Phase::Measure => {
                    let spares = &self.spares;
                    *self
                        .pending
                        .entry(interval.second)
                        .or_insert_with(|| spares.take()) += &interval.rec;
                    self.spares.give(interval.rec);
                    self.shipped[worker] = Some(interval.second);
                    self.close_ready();
                }
            },
            Msg::Done {
                worker,
                cpu,
                active,
            } => {
                self.finished[worker] = true;
                self.out.cpu += cpu;
                let before = self.out.active.map(|(first, last)| Active { first, last });
                let both = Active::merge(before, active);
                self.out.active = both.map(|a| (a.first, a.last));
                self.close_ready();
            }
        }
    }

    /// Closes every pending second that no worker can add to any more.
    fn close_ready(&mut self) {
        let floor = self
            .shipped
            .iter()
            .zip(&self.finished)
            .filter(|(_, &done)| !done)
            .map(|(s, _)| s.map_or(-1, |s| s as i64))
            .min();
        while let Some(entry) = self.pending.first_entry() {
            if floor.is_some_and(|f| *entry.key() as i64 > f) {
                break;
            }
            let (second, rec) = entry.remove_entry();
            self.close(second, rec);
        }
    }

    fn close(&mut self, second: u64, rec: Recorder) {
        let point = SeriesPoint::of(second, &rec);
        self.out.total += &rec;
        let p99 = (!self.out.total.latency.is_empty())
            .then(|| self.out.total.latency.value_at_quantile(0.99) as f64 / 1000.0);
        (self.watch)(&Snapshot {
            elapsed: Duration::from_secs(second + 1),
            warmup: false,
            ok: self.out.total.ok,
            ops_per_s: point.ok as f64,
            p99_us: p99,
            errors: self.out.total.errors.total(),
            bytes: self.out.total.sent_bytes + self.out.total.received_bytes,
            bytes_per_s: (point.sent_bytes + point.received_bytes) as f64,
        });
        self.out.series.push(point);
        self.spares.give(rec);
    }

    fn show_warmup(&mut self) {
        let elapsed = self.t0.elapsed();
        (self.watch)(&Snapshot {
            elapsed,
            warmup: true,
            ok: self.out.warm.ok,
            ops_per_s: self.out.warm.ok as f64 / elapsed.as_secs_f64().max(1e-3),
            p99_us: None,
            errors: self.out.warm.errors.total(),
            bytes: self.out.warm.sent_bytes + self.out.warm.received_bytes,
            bytes_per_s: (self.out.warm.sent_bytes + self.out.warm.received_bytes) as f64
                / elapsed.as_secs_f64().max(1e-3),
        });
    }
}

/// `--warmup auto`: the judge of the warm-up's seconds, until measuring starts.
struct Warming {
    judge: Judge,
    cap: Duration,
    /// When the second being counted ends, and when it began.
    next: Instant,
    last: Instant,
}

impl Warming {
    /// Judges each second that has ended; starts measuring once the run is steady, at the
    /// cap, or when the run is being stopped. Returns how long to wait for the next second.
    fn tick(&mut self, timeline: &Timeline, c: &mut Collector) -> Option<Duration> {
        let (_, tally) = timeline.auto.as_ref().filter(|_| timeline.warming())?;
        let now = Instant::now();
        let mut settled = None;
        if now >= self.next {
            let secs = (now - self.last).as_secs_f64();
            let (totals, before) = (tally.read(), self.judge.replies());
            settled = self.judge.second(totals, secs);
            let ok = totals.0;
            self.last = now;
            // The progress line: the warm-up's replies so far and its rate this second.
            (c.watch)(&Snapshot {
                elapsed: now - timeline.t0,
                warmup: true,
                ok,
                ops_per_s: (ok - before) as f64 / secs.max(1e-3),
                p99_us: None,
                errors: 0,
                bytes: 0,
                bytes_per_s: 0.0,
            });
            self.next = (self.next + Duration::from_secs(1)).max(now + Duration::from_millis(500));
        }
        let over = now >= timeline.t0 + self.cap || timeline.stop.requested() || timeline.expired();
        if settled.is_none() && !over {
            return Some(self.next.saturating_duration_since(now));
        }
        c.out.settled = settled.or_else(|| self.judge.verdict()).or(Some(Settled {
            steady: false,
            cov: None,
            judged: self.judge.judged(),
            window: super::steady::WINDOW,
            bound: super::steady::BOUND,
        }));
        timeline.begin();
        None
    }
}

/// Receives from `workers` workers until they have all finished, and returns the totals (the
/// record's timings are the caller's to fill); recorders it has merged go back to `spares`.
/// With `--warmup auto` it also judges the warm-up and starts the measured part on `timeline`.
pub fn collect(
    rx: Receiver<Msg>,
    workers: usize,
    watch: &mut dyn FnMut(&Snapshot),
    timeline: &Timeline,
    open_loop: bool,
    spares: Arc<Spares>,
) -> RunRecord {
    let t0 = timeline.t0;
    let mut warming = timeline.auto.as_ref().map(|(cap, _)| Warming {
        judge: Judge::new(open_loop),
        cap: *cap,
        next: t0 + Duration::from_secs(1),
        last: t0,
    });
    let mut c = Collector {
        shipped: vec![None; workers],
        finished: vec![false; workers],
        pending: BTreeMap::new(),
        out: RunRecord::default(),
        watch,
        t0,
        spares,
    };
    loop {
        let mut wait = Duration::from_millis(500);
        if let Some(w) = warming.as_mut() {
            match w.tick(timeline, &mut c) {
                Some(next) => wait = wait.min(next),
                None => warming = None,
            }
        }
        match rx.recv_timeout(wait) {
            Ok(msg) => c.handle(msg),
            Err(RecvTimeoutError::Timeout) => continue,
            Err(RecvTimeoutError::Disconnected) => break,
        }
    }
    let rest = std::mem::take(&mut c.pending);
    for (second, rec) in rest {
        c.close(second, rec);
    }
    c.out
}
