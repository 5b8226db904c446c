//! One connection's life: connect, issue requests under the load model, record every outcome,
//! reconnect after a failure, stop at the deadline or when the connection's share of
//! `--requests` is used up.
//!
//! Closed loop: keep `pipeline` requests in flight (a new connection per request in crr mode).
//! Open loop: the worker's share of the schedule goes out at its intended times, each request
//! on whichever of the worker's connections has room (see `pacer.rs`); a connection reads its
//! replies in between, never waiting for them.

use super::gate::{Abort, Gate};
use super::open_loop;
use super::pacer::{Pacing, Timetable};
use super::timeline::Timeline;
use super::worker::WorkerRec;
use crate::driver::workload::ClientMode;
use crate::driver::{Driver, Expiry, Sent, Session};
use crate::load::{share, Schedule, Stage};
use crate::plan::{Plan, Warmup};
use crate::record::{ErrorKind, OpError, Phase};
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::time::{sleep_until, timeout_at};

/// The longest pause between attempts to reach a target that refuses connections.
const MAX_BACKOFF: Duration = Duration::from_millis(500);

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
}

/// State carried across phases: the open session and the next sequence number.
pub(super) struct Slot<S> {
    pub(super) session: Option<S>,
    pub(super) seq: u64,
    backoff: Duration,
}

/// Runs one connection through warm-up and the measured part, unless the run is stopped.
pub async fn run<D: Driver>(ctx: Ctx<D>) {
    tokio::select! {
        biased;
        _ = ctx.gate.until_aborted() => {}
        _ = phases(&ctx) => {}
    }
}

/// Warm-up, the measured part, and what the server counted at the end.
async fn phases<D: Driver>(ctx: &Ctx<D>) {
    let mut slot = Slot {
        session: None,
        seq: (ctx.index as u64) << 40,
        backoff: Duration::ZERO,
    };
    let plan = ctx.plan.clone();
    let bulk = plan.workload.mode == ClientMode::Source
        || (plan.workload.mode == ClientMode::Stream && plan.load.schedule().is_none());
    let opened = before_start(ctx, &mut slot, bulk).await;
    let start = ctx.timeline.wait_measure_start().await;
    ctx.rec.borrow_mut().mark_start(start);
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
                };
                open_loop::paced(ctx, &mut slot, Phase::Measure, timetable).await
            }
            None => closed_loop(ctx, &mut slot, quota, deadline).await,
        }
    };
    match deadline {
        // At the deadline no new request goes out; those in flight get their --timeout to
        // finish (each is then an ok or a timeout, so sent = ok + errors), and the hard stop a
        // little later bounds the run whatever a session does. A bulk transfer stops at once.
        Some(d) => {
            let stop = if bulk {
                d
            } else {
                d + plan.timeout + DRAIN_SLACK
            };
            let _ = timeout_at(stop.into(), work).await;
        }
        None => work.await,
    }
    // Datagram sessions ask the server what it received of them; a stream asks the sink.
    if let Some(session) = slot.session.as_mut() {
        if let Some(report) = session.report(REPORT_WAIT).await {
            ctx.rec.borrow_mut().peer(Instant::now(), &report);
        }
        if bulk && plan.workload.mode == ClientMode::Stream {
            let count = session.finish_bulk(REPORT_WAIT).await;
            ctx.rec.borrow_mut().receiver(Instant::now(), count);
        }
    }
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
            if first || e.fatal {
                stop_run(ctx, e).await;
            }
            None
        }
    }
}

/// Waits at the gate until the run's first connection is up; true for that first connection
/// itself, which goes through. Never returns once the run is stopped (the connection's task is
/// dropped by [`run`]).
async fn pass_gate<D: Driver>(ctx: &Ctx<D>) -> bool {
    let first = ctx.index == 0 && ctx.gate.pending();
    if ctx.gate.aborted() || (!first && ctx.gate.pending() && !ctx.gate.wait_open().await) {
        std::future::pending::<()>().await;
    }
    first
}

/// The run's first connection failed, or a connection met a fatal error: the run stops with
/// it, and this connection waits to be dropped.
async fn stop_run<D: Driver>(ctx: &Ctx<D>, e: OpError) {
    let why = if e.fatal {
        refused(&ctx.plan, &e)
    } else {
        unreachable(&ctx.plan, &e)
    };
    ctx.gate.abort(why);
    std::future::pending::<()>().await;
}

/// A fatal error as the one line the run ends with.
fn refused(plan: &Plan, e: &OpError) -> Abort {
    Abort::Usage(format!("{}: {}", plan.target.url, e.message))
}

/// Why the run's first connection failed, as the one line the run ends with.
fn unreachable(plan: &Plan, e: &OpError) -> Abort {
    let (url, addr) = (&plan.target.url, plan.target.addr);
    Abort::Unreachable(match e.kind {
        ErrorKind::Refused => format!(
            "connection refused by {addr}: nothing listens there; start a server (e.g. wirebench serve tcp) or check the port"
        ),
        ErrorKind::Timeout => format!(
            "{url}: {}: check the address, or raise --timeout",
            e.message
        ),
        _ => format!("cannot connect to {url}: {}; check the address", e.message),
    })
}

/// Counts `n` failed operations, or, for a fatal error, stops the run with it.
fn record_error<D: Driver>(ctx: &Ctx<D>, sent: Instant, now: Instant, err: OpError, n: usize) {
    if err.fatal {
        ctx.gate.abort(refused(&ctx.plan, &err));
    } else {
        ctx.rec.borrow_mut().error(sent, now, err, n);
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
        return closed_loop(ctx, slot, mine, until).await;
    };
    let rate = schedule.rate_at(Duration::ZERO);
    let timetable = || Timetable {
        schedule: match time {
            Some(duration) => Schedule::Stages(vec![Stage { duration, rate }]),
            None => Schedule::Constant { rate },
        },
        start: ctx.timeline.t0,
        limit: count,
        end: None,
    };
    open_loop::paced(ctx, slot, Phase::Warmup, timetable).await;
}

/// Connects if there is no session; on failure records the error (as a request meant to go
/// out at `intended`, or now) and backs off.
pub(super) async fn ensure_session<D: Driver>(
    ctx: &Ctx<D>,
    slot: &mut Slot<D::Session>,
    intended: Option<Instant>,
) -> Result<(), ()> {
    if slot.session.is_some() {
        return Ok(());
    }
    let first = pass_gate(ctx).await;
    let began = Instant::now();
    match ctx.driver.connect(ctx.plan.timeout).await {
        Ok((s, took)) => {
            if let Some(took) = took {
                ctx.rec.borrow_mut().connected(began, Instant::now(), took);
            }
            slot.session = Some(s);
            slot.backoff = Duration::ZERO;
            if first {
                ctx.gate.open();
            }
            Ok(())
        }
        Err(e) if first || e.fatal => {
            stop_run(ctx, e).await;
            Err(())
        }
        Err(e) => {
            let now = Instant::now();
            let sent = Sent {
                intended: intended.unwrap_or(began),
                at: began,
            };
            ctx.rec.borrow_mut().issued(sent);
            record_error(ctx, sent.intended, now, e, 1);
            back_off(slot).await;
            Err(())
        }
    }
}

/// Records `err` for every request in flight (at least one) and drops the session.
pub(super) fn fail_all<D: Driver>(
    ctx: &Ctx<D>,
    slot: &mut Slot<D::Session>,
    err: OpError,
    since: Instant,
) {
    let (n, sent) = match &slot.session {
        Some(s) => (s.in_flight().max(1), s.oldest().unwrap_or(since)),
        None => (1, since),
    };
    record_error(ctx, sent, Instant::now(), err, n);
    slot.session = None;
}

pub(super) fn timeout_error(limit: Duration) -> OpError {
    OpError::new(
        ErrorKind::Timeout,
        format!("no complete reply within {limit:?} (--timeout)"),
    )
}

/// Handles expired requests; returns false when the session had to be dropped.
pub(super) fn expire<D: Driver>(ctx: &Ctx<D>, slot: &mut Slot<D::Session>) -> bool {
    let now = Instant::now();
    let limit = ctx.plan.timeout;
    let Some(session) = slot.session.as_mut() else {
        return false;
    };
    match session.expire(now, limit) {
        Expiry::None => true,
        Expiry::Lost(n) => {
            ctx.rec
                .borrow_mut()
                .error(now, now, timeout_error(limit), n);
            true
        }
        Expiry::Reset => {
            fail_all(ctx, slot, timeout_error(limit), now);
            false
        }
    }
}

/// Reads once and records the completed replies; returns how many completed.
pub(super) async fn read_replies<D: Driver>(
    ctx: &Ctx<D>,
    session: &mut D::Session,
) -> Result<usize, OpError> {
    let outcome = session.read().await?;
    let now = Instant::now();
    let mut rec = ctx.rec.borrow_mut();
    rec.read(now, &outcome);
    for done in session.completed() {
        rec.done(done, now);
    }
    Ok(outcome.replies)
}

/// Sends what is queued and records the bytes, and any replies read while writing waited.
pub(super) async fn flush<D: Driver>(
    ctx: &Ctx<D>,
    session: &mut D::Session,
) -> Result<(), OpError> {
    let sent = session.flush().await;
    if let Some(early) = session.take_early() {
        let now = Instant::now();
        let mut rec = ctx.rec.borrow_mut();
        rec.read(now, &early);
        for done in session.completed() {
            rec.done(done, now);
        }
    }
    let bytes = sent?;
    if bytes > 0 {
        ctx.rec.borrow_mut().sent(Instant::now(), bytes);
    }
    Ok(())
}

/// Closed loop: issues requests until `limit` have been issued or `issue_until` passes, then
/// waits for the replies still in flight.
async fn closed_loop<D: Driver>(
    ctx: &Ctx<D>,
    slot: &mut Slot<D::Session>,
    limit: Option<u64>,
    issue_until: Option<Instant>,
) {
    let plan = &ctx.plan;
    let pipeline = plan.load.in_flight();
    let think = plan.load.think();
    let per_request = plan.workload.mode == ClientMode::Crr;
    let mut issued = 0u64;
    let may_issue = |issued: u64, now: Instant| {
        limit.is_none_or(|l| issued < l) && issue_until.is_none_or(|u| now < u)
    };
    // Fires no later than the oldest request's time limit; see below.
    let mut expiry = Box::pin(tokio::time::sleep(plan.timeout));
    loop {
        let op_start = Instant::now();
        if slot.session.is_none() {
            if !may_issue(issued, op_start) {
                return;
            }
            if ensure_session(ctx, slot, None).await.is_err() {
                issued += 1;
                continue;
            }
        }
        let session = slot.session.as_mut().expect("connected above");
        let now = Instant::now();
        while session.in_flight() < pipeline && may_issue(issued, now) {
            // In crr mode the operation began before the connect.
            let at = if per_request { op_start } else { now };
            let sent = Sent { intended: at, at };
            session.queue(slot.seq, sent);
            ctx.rec.borrow_mut().issued(sent);
            slot.seq += 1;
            issued += 1;
        }
        if session.in_flight() == 0 {
            if per_request {
                slot.session = None;
            }
            return;
        }
        let due = session.oldest().expect("a request is in flight") + plan.timeout;
        let step = tokio::select! {
            biased;
            r = async {
                flush(ctx, session).await?;
                read_replies(ctx, session).await
            } => Ok(r),
            _ = &mut expiry => Err(()),
        };
        match step {
            // The lazy timer fired: expire if the oldest request is really overdue, else re-arm
            // for its time. Re-arming only then keeps timer work off the per-request path.
            Err(()) if Instant::now() < due => expiry.as_mut().reset(due.into()),
            Err(()) => {
                expire(ctx, slot);
                expiry
                    .as_mut()
                    .reset((Instant::now() + plan.timeout).into());
            }
            Ok(Ok(0)) => {}
            Ok(Ok(_)) => {
                if per_request || !slot.session.as_ref().is_some_and(|s| s.reusable()) {
                    // Requests pipelined behind a "Connection: close" will not be answered:
                    // they fail, so that every request sent is an ok or an error.
                    let left = slot.session.as_ref().map_or(0, |s| s.in_flight());
                    if left > 0 {
                        let why = format!(
                            "the server closed the connection with {left} request(s) unanswered"
                        );
                        fail_all(
                            ctx,
                            slot,
                            OpError::new(ErrorKind::ShortReply, why),
                            op_start,
                        );
                    }
                    slot.session = None; // close: the client holds TIME_WAIT, as a real client would
                }
                if let Some(t) = think {
                    // A pause never outlasts the time for issuing requests.
                    let until = Instant::now() + t;
                    sleep_until(issue_until.map_or(until, |u| until.min(u)).into()).await;
                }
            }
            Ok(Err(e)) => fail_all(ctx, slot, e, op_start),
        }
    }
}

/// Bulk transfer (stream or source) until `until`; reconnects after failures. (The deadline is
/// checked here too, not only by the caller's timeout: a blocking session never yields.)
async fn transfer<D: Driver>(ctx: &Ctx<D>, slot: &mut Slot<D::Session>, until: Option<Instant>) {
    let plan = &ctx.plan;
    let upload = plan.workload.mode == ClientMode::Stream;
    loop {
        if ensure_session(ctx, slot, None).await.is_err() {
            continue;
        }
        let session = slot.session.as_mut().expect("connected above");
        let began = Instant::now();
        let started = tokio::time::timeout(plan.timeout, session.start_bulk())
            .await
            .unwrap_or_else(|_| {
                Err(OpError::new(
                    ErrorKind::Timeout,
                    format!(
                        "no answer to the wirebench preamble within {:?}: is it a wirebench server? For other servers use --raw",
                        plan.timeout
                    ),
                ))
            });
        if let Err(e) = started {
            if upload {
                // This connection's bytes will never be counted by the receiver.
                ctx.rec.borrow_mut().receiver(began, None);
            }
            fail_all(ctx, slot, e, began);
            continue;
        }
        loop {
            let step = tokio::time::timeout(plan.timeout, async {
                if upload {
                    session.send_bulk().await
                } else {
                    session.recv_bulk().await
                }
            })
            .await
            .unwrap_or_else(|_| {
                Err(OpError::new(
                    ErrorKind::Timeout,
                    format!("no progress within {:?} (--timeout)", plan.timeout),
                ))
            });
            let now = Instant::now();
            let over = until.is_some_and(|u| now >= u);
            match step {
                // The last write counts too: the receiver will count its bytes.
                Ok(n) if upload => ctx.rec.borrow_mut().sent(now, n),
                Ok(n) if !over => ctx.rec.borrow_mut().received(now, n),
                Ok(_) => {}
                Err(_) if over => {}
                Err(e) => {
                    if upload {
                        ctx.rec.borrow_mut().receiver(now, None);
                    }
                    record_error(ctx, now, now, e, 1);
                    slot.session = None;
                    break;
                }
            }
            if over {
                return;
            }
        }
    }
}

/// Waits before the next connection attempt, doubling the wait up to [`MAX_BACKOFF`], so a dead
/// target is retried without spinning.
async fn back_off<S>(slot: &mut Slot<S>) {
    slot.backoff = (slot.backoff * 2).clamp(Duration::from_millis(10), MAX_BACKOFF);
    tokio::time::sleep(slot.backoff).await;
}
