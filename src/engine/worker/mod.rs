//! One worker: an OS thread running a single-threaded runtime that owns its connections and its
//! recorder. Nothing on the hot path is shared with other workers; once a second the worker
//! ships what it recorded to the collector as an [`Interval`].

mod rec;

pub use rec::WorkerRec;

use super::clock::Clock;
use super::collector::Spares;
use super::conn;
use super::crowd::{Crowd, Role};
use super::pacer::Pacing;
use super::timeline::Timeline;
use crate::driver::Driver;
use crate::plan::Plan;
use crate::record::Interval;
use crate::sys::usage::CpuTimes;
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::mpsc::Sender;
use std::sync::Arc;
use std::time::Instant;

/// What a worker tells the collector.
#[derive(Debug)]
pub enum Msg {
    /// One second (or the warm-up) of measurements.
    Interval {
        /// Which worker.
        worker: usize,
        /// The measurements (boxed: a recorder is large, a `Done` is small).
        interval: Box<Interval>,
    },
    /// The worker has finished; its CPU time over the measured part.
    Done {
        /// Which worker.
        worker: usize,
        /// CPU used by the worker's thread while measuring.
        cpu: CpuTimes,
        /// Its first send and last completion in the measured part, if it did any work there.
        active: Option<Active>,
    },
}

/// The span of a run's work: from its first send to its last completion (a reply, an error,
/// bytes moved). The measured time of a run by count is this span (as the MINT study timed
/// its runs), not the generator's life with its thread spawns and joins.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Active {
    /// The first request (or byte) sent, or the first byte read in a download.
    pub first: Instant,
    /// The last completion.
    pub last: Instant,
}

impl Active {
    /// The span covering both `a` and `b`.
    #[inline]
    pub fn merge(a: Option<Active>, b: Option<Active>) -> Option<Active> {
        match (a, b) {
            (Some(x), Some(y)) => Some(Active {
                first: x.first.min(y.first),
                last: x.last.max(y.last),
            }),
            (x, y) => x.or(y),
        }
    }
}

/// Everything a worker thread needs.
pub struct WorkerSpec {
    /// Worker index.
    pub worker: usize,
    /// Global indices of the connections this worker owns.
    pub connections: Vec<usize>,
    /// The run's plan.
    pub plan: Arc<Plan>,
    /// The run's phases.
    pub timeline: Arc<Timeline>,
    /// Where intervals go.
    pub tx: Sender<Msg>,
    /// The first connection's check, and the run's stop.
    pub gate: Arc<super::gate::Gate>,
    /// Empty recorders for the seconds to come.
    pub spares: Arc<Spares>,
}

/// Runs one worker to completion on the calling thread, opening sessions with `driver`.
// Never inlined: bench/cost.sh's gate counts this function's inclusive instructions by name.
#[inline(never)]
pub fn run<D: Driver + 'static>(spec: WorkerSpec, driver: D) -> std::io::Result<()> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let open_loop = spec.plan.load.schedule().is_some();
    let rec = Rc::new(RefCell::new(WorkerRec::new(&spec, open_loop)));
    let driver = Rc::new(driver);
    let pacing = Rc::new(Pacing::new(spec.plan.connections, &spec.connections));
    rt.block_on(async {
        let clock = Rc::new(Clock::new()?);
        // Each connection is polled only when woken (see `crowd.rs`); the worker's end is its
        // last connection's.
        let mut crowd = Crowd::new();
        for &index in &spec.connections {
            let ctx = conn::Ctx {
                index,
                plan: spec.plan.clone(),
                timeline: spec.timeline.clone(),
                rec: rec.clone(),
                driver: driver.clone(),
                gate: spec.gate.clone(),
                pacing: pacing.clone(),
                clock: clock.clone(),
            };
            crowd.add(Role::Member, conn::run(ctx));
        }
        crowd.add(Role::Helper, clock.run());
        crowd.add(
            Role::Helper,
            tick(rec.clone(), spec.timeline.clone(), &clock),
        );
        // A stop (Ctrl-C) ends the worker's connections where they are; what they recorded is
        // already in `rec`. So does the run's overall limit (`--deadline`): what is still owed
        // then is counted by the engine once every worker has handed in.
        crowd.add(Role::Ender, stopped(&spec.timeline, &clock));
        crowd.add(Role::Ender, spec.timeline.overall_deadline(&clock));
        crowd.add(
            Role::Ender,
            watch_target(rec.clone(), spec.timeline.clone(), &clock, spec.worker),
        );
        crowd.await;
        spec.timeline.vitals.finished(spec.worker);
        Ok::<(), std::io::Error>(())
    })?;
    rec.borrow_mut().finish();
    Ok(())
}

/// Ships each second on time even when no reply arrives (a stalled target).
async fn tick(rec: Rc<RefCell<WorkerRec>>, timeline: Arc<Timeline>, clock: &Clock) {
    let start = timeline.wait_measure_start().await;
    clock.sleep_until(start).await;
    rec.borrow_mut().mark_start(start);
    loop {
        let next = rec.borrow().next_boundary;
        match next {
            Some(b) => clock.sleep_until(b).await,
            None => return,
        }
        rec.borrow_mut().rotate(Instant::now());
    }
}

/// Resolves once the target is gone ([`super::vitals`]): this worker's operations have all
/// failed for the grace with nothing answered, and every other worker's too (or it is done).
/// Never, for a run by time.
async fn watch_target(
    rec: Rc<RefCell<WorkerRec>>,
    timeline: Arc<Timeline>,
    clock: &Clock,
    w: usize,
) {
    let Some(grace) = timeline.vitals.grace else {
        return std::future::pending().await;
    };
    loop {
        clock
            .sleep_until(Instant::now() + super::vitals::WATCH)
            .await;
        let silent = rec.borrow().silent_for(grace, Instant::now());
        if timeline.vitals.say(w, silent) {
            return;
        }
    }
}

/// Resolves once a stop is asked for, looking every [`super::stop::POLL`] on the worker's clock.
async fn stopped(timeline: &Timeline, clock: &Clock) {
    while !timeline.stop.requested() {
        clock.sleep_until(Instant::now() + super::stop::POLL).await;
    }
}
