//! One connection's life: connect, issue requests under the load model, record every outcome,
//! reconnect after a failure, stop at the deadline or when the connection's share of
//! `--requests` is used up.
//!
//! Closed loop: keep `pipeline` requests in flight (a new connection per request in crr mode).
//! Open loop: the worker's share of the schedule goes out at its intended times, each request
//! on whichever of the worker's connections has room (see `pacer.rs`); a connection reads its
//! replies in between, never waiting for them.
//!
//! This file holds the connection's phases (warm-up, measured part, the peer's report at the
//! end); each way of issuing requests has its own file: `conn/closed_loop.rs`, `conn/open_loop.rs`
//! and, for stream and source, `conn/transfer.rs`. The steps they share (connect, queue, flush,
//! read, expire) are in `conn/steps.rs`.

use super::gate::Gate;
use super::pacer::{Pacing, Timetable};
use super::timeline::Timeline;
use super::worker::WorkerRec;
use crate::driver::workload::ClientMode;
use crate::driver::{Driver, Session};
use crate::load::{share, Schedule, Stage};
use crate::plan::{Plan, Warmup};
use crate::record::Phase;
use closed_loop::{closed_loop, Until};
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};
use steps::{pass_gate, silent_target, stop_run};
use transfer::transfer;

mod closed_loop;
mod open_loop;
mod steps;
mod transfer;

pub(super) use steps::{
    close_session, ensure_session, fail_all, flush, queue, read_replies, resend, retire,
    timeout_error, ExpiryTimer,
};

/// What one connection task needs.
pub struct Ctx<D> {
    /// This connection's index among all connections (for its share of a closed loop's counts,
    /// and its requests' sequence numbers).
    pub index: usize,
    /// The run's plan.
    pub plan: Arc<Plan>,
    /// The run's phases.
    pub timeline: Arc<Timeline>,
    /// The worker's recorder.
    pub rec: Rc<RefCell<WorkerRec>>,
    /// Opens sessions.
    pub driver: Rc<D>,
    /// The worker's open-loop pacing, shared by its connections.
    pub pacing: Rc<Pacing>,
    /// The first connection's check, and the run's stop for fatal errors.
    pub gate: Arc<Gate>,
    /// The worker's timers (see `clock.rs`).
    pub(super) clock: Rc<super::clock::Clock>,
}

/// State carried across phases: the open session and the next sequence number.
pub(super) struct Slot<S> {
    pub(super) session: Option<S>,
    pub(super) seq: u64,
    backoff: Duration,
    /// A closed session already gave its packet size (see [`steps::close_session`]).
    sized: bool,
    /// Requests the server did not process before it closed their session in good order,
    /// to go out first on the next one.
    pub(super) retry: Vec<crate::driver::Retry>,
    /// A stream session's count of acknowledged bytes (TCP_INFO), read after one of its last
    /// writes before the window's end: what the window surely holds if the end is read late.
    pub(super) acked_before_end: Option<u64>,
}

/// Runs one connection through warm-up and the measured part, unless the run is stopped.
pub async fn run<D: Driver>(ctx: Ctx<D>) {
    ctx.gate.unless_aborted(phases(&ctx)).await;
}

/// Warm-up, the measured part, and what the server counted at the end.
async fn phases<D: Driver>(ctx: &Ctx<D>) {
    let mut slot = Slot {
        session: None,
        seq: (ctx.index as u64) << 40,
        backoff: Duration::ZERO,
        sized: false,
        retry: Vec::new(),
        acked_before_end: None,
    };
    let plan = ctx.plan.clone();
    let bulk = plan.workload.mode == ClientMode::Source
        || (plan.workload.mode == ClientMode::Stream && plan.load.schedule().is_none());
    let opened = before_start(ctx, &mut slot, bulk).await;
    let start = ctx.timeline.wait_measure_start().await;
    ctx.rec.borrow_mut().mark_start(start);
    if let Some(session) = slot.session.as_ref() {
        // A stream opened in the warm-up: what it delivered before the window is not the window's.
        transfer::note_acked(ctx, session, true, None);
    }
    if let Some(took) = opened {
        // The early connect counts with the warm-up if there is one, else with the measured part.
        let at = if plan.warmup.is_some() {
            ctx.timeline.t0
        } else {
            start
        };
        ctx.rec.borrow_mut().connected(at, Instant::now(), took);
    }
    let deadline = ctx.timeline.deadline(start);
    ctx.rec.borrow_mut().mark_end(deadline);
    let quota = plan
        .stop
        .requests
        .map(|n| share(n, plan.connections, ctx.index));
    let work = async {
        match plan.load.schedule() {
            _ if bulk => transfer(ctx, &mut slot, deadline).await,
            Some(schedule) => {
                let timetable = || Timetable {
                    schedule: schedule.clone(),
                    start,
                    limit: plan.stop.requests,
                    end: deadline,
                    steady: None,
                };
                open_loop::paced(ctx, &mut slot, Phase::Measure, timetable).await
            }
            None => closed_loop(ctx, &mut slot, quota, Until::Measured(deadline)).await,
        }
    };
    match deadline {
        // At the deadline no new request goes out; those in flight get their --timeout to
        // finish (each is then an ok or a timeout, so sent = ok + errors), and the hard stop a
        // little later bounds the run whatever a session does. A bulk transfer stops at once.
        Some(d) => {
            // A stream (UDP's too: paced, so not `bulk`) sends nothing after its window.
            let stop = if bulk || plan.workload.mode == ClientMode::Stream {
                d
            } else {
                d + plan.timeout + DRAIN_SLACK
            };
            let _ = steps::until(&ctx.clock, stop, work).await;
        }
        None => work.await,
    }
    ask_peer(ctx, &mut slot, bulk).await;
}

/// At the end: the session's packet size (for `--link`); a datagram session asks the server
/// what it received of it; a stream asks the sink what it counted; then the session closes
/// as its protocol asks.
async fn ask_peer<D: Driver>(ctx: &Ctx<D>, slot: &mut Slot<D::Session>, bulk: bool) {
    let Some(session) = slot.session.as_mut() else {
        return;
    };
    if let Some(segment) = session.segment() {
        ctx.rec.borrow_mut().segment(Instant::now(), segment);
    }
    transfer::note_acked(ctx, session, false, slot.acked_before_end);
    // The server's count of a datagram flow is the result of a stream: given time, on a busy
    // machine, to come (1 s lost it in 10 of 17 runs under load).
    let wait = REPORT_WAIT.max(ctx.plan.timeout);
    if let Some(report) = session.report(wait * 2).await {
        ctx.rec.borrow_mut().peer(Instant::now(), &report);
    }
    if bulk && ctx.plan.workload.mode == ClientMode::Stream {
        let count = session.finish_bulk(REPORT_WAIT).await;
        ctx.rec.borrow_mut().receiver(Instant::now(), count);
    }
    session.close(REPORT_WAIT).await;
}

/// Everything before the measured part: an open loop's early connect, the warm-up, and the
/// gates that start the measured part. Returns how long the early connect took, if made.
async fn before_start<D: Driver>(
    ctx: &Ctx<D>,
    slot: &mut Slot<D::Session>,
    bulk: bool,
) -> Option<Duration> {
    let plan = &ctx.plan;
    // An open loop opens its connection before the timetable starts, so that its first request
    // does not wait for the handshake (crr opens one per request, as part of the request).
    let early = plan.load.schedule().is_some() && !bulk && plan.workload.mode != ClientMode::Crr;
    let opened = if early {
        open_early(ctx, slot).await
    } else {
        None
    };
    match plan.warmup {
        Some(Warmup::Count(n)) => {
            warm_up(ctx, slot, Some(n), None).await;
            ctx.timeline.arrive();
        }
        Some(Warmup::Duration(w)) if !bulk => warm_up(ctx, slot, None, Some(w)).await,
        // Until the collector finds the run steady (the warm-up's requests in flight then
        // finish as warm-up ones).
        Some(Warmup::Auto(_)) => warm_up(ctx, slot, None, None).await,
        _ if ctx.timeline.gated() => ctx.timeline.connected(),
        _ => {}
    }
    opened
}

/// Opens the connection before an open loop's timetable starts; returns how long it took to
/// establish (recorded by the caller once it knows the phase). A failure is not recorded here:
/// the connection is tried again when it first takes a request, and a failure then counts.
async fn open_early<D: Driver>(ctx: &Ctx<D>, slot: &mut Slot<D::Session>) -> Option<Duration> {
    let first = pass_gate(ctx).await;
    match ctx.driver.connect(ctx.plan.timeout).await {
        Ok((session, took)) => {
            slot.session = Some(session);
            if first {
                ctx.gate.open();
            }
            took
        }
        Err(e) => {
            if e.fatal || (first && !silent_target(&e)) {
                stop_run(ctx, e).await;
            }
            if first {
                // A target that took the connection and never answered is measured.
                ctx.gate.open();
            }
            None
        }
    }
}

/// How long past deadline + timeout a connection may take to record its last expiries.
const DRAIN_SLACK: Duration = Duration::from_millis(100);

/// How long a session waits for the server's report at the end of a run.
const REPORT_WAIT: Duration = Duration::from_secs(1);

/// The warm-up: the closed loop as planned, or the open loop at the schedule's opening rate.
/// `count` is the warm-up's request count over all connections.
async fn warm_up<D: Driver>(
    ctx: &Ctx<D>,
    slot: &mut Slot<D::Session>,
    count: Option<u64>,
    time: Option<Duration>,
) {
    let Some(schedule) = ctx.plan.load.schedule() else {
        let until = time.map(|w| ctx.timeline.t0 + w);
        let mine = count.map(|n| share(n, ctx.plan.connections, ctx.index));
        return closed_loop(ctx, slot, mine, Until::Warm(until)).await;
    };
    let rate = schedule.rate_at(Duration::ZERO);
    let timetable = || Timetable {
        schedule: schedule.same_arrivals(match time {
            Some(duration) => Schedule::Stages(vec![Stage { duration, rate }]),
            None => Schedule::Constant { rate },
        }),
        start: ctx.timeline.t0,
        limit: count,
        end: None,
        steady: ctx.timeline.auto.is_some().then(|| ctx.timeline.clone()),
    };
    open_loop::paced(ctx, slot, Phase::Warmup, timetable).await;
}
