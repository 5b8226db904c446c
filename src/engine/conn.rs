//! One connection's life: connect, issue requests under the load model, record every outcome,
//! reconnect after a failure, stop at the deadline or when the connection's share of
//! `--requests` is used up.
//!
//! Closed loop: keep `pipeline` requests in flight (a new connection per request in crr mode).
//! Open loop: connection `k` of `c` sends requests `k, k + c, k + 2c, ...` of the schedule at
//! their intended times, reading replies in between, never waiting for them.

use super::timeline::Timeline;
use super::worker::WorkerRec;
use crate::cli::ClientMode;
use crate::driver::{Driver, Expiry, Sent, Session};
use crate::load::{share, Schedule, Stage};
use crate::plan::{Plan, Warmup};
use crate::record::{ErrorKind, OpError};
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::time::{sleep_until, timeout_at};

/// The longest pause between attempts to reach a target that refuses connections.
const MAX_BACKOFF: Duration = Duration::from_millis(500);

/// What one connection task needs.
pub struct Ctx<D> {
    /// This connection's index among all connections (for its share of counts and schedule).
    pub index: usize,
    /// The run's plan.
    pub plan: Arc<Plan>,
    /// The run's phases.
    pub timeline: Arc<Timeline>,
    /// The worker's recorder.
    pub rec: Rc<RefCell<WorkerRec>>,
    /// Opens sessions.
    pub driver: Rc<D>,
}

/// State carried across phases: the open session and the next sequence number.
struct Slot<S> {
    session: Option<S>,
    seq: u64,
    backoff: Duration,
}

/// Runs one connection through warm-up and the measured part.
pub async fn run<D: Driver>(ctx: Ctx<D>) {
    let mut slot = Slot {
        session: None,
        seq: (ctx.index as u64) << 40,
        backoff: Duration::ZERO,
    };
    let plan = ctx.plan.clone();
    let bulk = plan.workload.mode == ClientMode::Source
        || (plan.workload.mode == ClientMode::Stream && plan.load.schedule().is_none());
    match plan.warmup {
        Some(Warmup::Count(n)) => {
            let mine = share(n, plan.connections, ctx.index);
            warm_up(&ctx, &mut slot, Some(mine), None).await;
            ctx.timeline.arrive();
        }
        Some(Warmup::Duration(w)) if !bulk => warm_up(&ctx, &mut slot, None, Some(w)).await,
        _ => {}
    }
    let start = ctx.timeline.wait_measure_start().await;
    ctx.rec.borrow_mut().mark_start(start);
    let deadline = ctx.timeline.deadline(start);
    let quota = plan
        .stop
        .requests
        .map(|n| share(n, plan.connections, ctx.index));
    let work = async {
        match plan.load.schedule() {
            _ if bulk => transfer(&ctx, &mut slot, deadline).await,
            Some(schedule) => open_loop(&ctx, &mut slot, schedule, start, quota, deadline).await,
            None => closed_loop(&ctx, &mut slot, quota, deadline).await,
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
    // Datagram sessions ask the server what it received of them.
    if let Some(session) = slot.session.as_mut() {
        if let Some(report) = session.report(REPORT_WAIT).await {
            ctx.rec.borrow_mut().peer(Instant::now(), &report);
        }
    }
}

/// How long past deadline + timeout a connection may take to record its last expiries.
const DRAIN_SLACK: Duration = Duration::from_millis(100);

/// How long a session waits for the server's report at the end of a run.
const REPORT_WAIT: Duration = Duration::from_secs(1);

/// The warm-up: the closed loop as planned, or the open loop at the schedule's opening rate.
async fn warm_up<D: Driver>(
    ctx: &Ctx<D>,
    slot: &mut Slot<D::Session>,
    count: Option<u64>,
    time: Option<Duration>,
) {
    let Some(schedule) = ctx.plan.load.schedule() else {
        let until = time.map(|w| ctx.timeline.t0 + w);
        return closed_loop(ctx, slot, count, until).await;
    };
    let rate = schedule.rate_at(Duration::ZERO);
    let warm = match time {
        Some(duration) => Schedule::Stages(vec![Stage { duration, rate }]),
        None => Schedule::Constant { rate },
    };
    open_loop(ctx, slot, &warm, ctx.timeline.t0, count, None).await;
}

/// Connects if there is no session; on failure records the error and backs off.
async fn ensure_session<D: Driver>(ctx: &Ctx<D>, slot: &mut Slot<D::Session>) -> Result<(), ()> {
    if slot.session.is_some() {
        return Ok(());
    }
    let began = Instant::now();
    match ctx.driver.connect(ctx.plan.timeout).await {
        Ok((s, took)) => {
            if let Some(took) = took {
                ctx.rec.borrow_mut().connected(began, Instant::now(), took);
            }
            slot.session = Some(s);
            slot.backoff = Duration::ZERO;
            Ok(())
        }
        Err(e) => {
            let now = Instant::now();
            let sent = Sent {
                intended: began,
                at: began,
            };
            ctx.rec.borrow_mut().issued(sent);
            ctx.rec.borrow_mut().error(began, now, e, 1);
            back_off(slot).await;
            Err(())
        }
    }
}

/// Records `err` for every request in flight (at least one) and drops the session.
fn fail_all<D: Driver>(ctx: &Ctx<D>, slot: &mut Slot<D::Session>, err: OpError, since: Instant) {
    let (n, sent) = match &slot.session {
        Some(s) => (s.in_flight().max(1), s.oldest().unwrap_or(since)),
        None => (1, since),
    };
    ctx.rec.borrow_mut().error(sent, Instant::now(), err, n);
    slot.session = None;
}

fn timeout_error(limit: Duration) -> OpError {
    OpError::new(
        ErrorKind::Timeout,
        format!("no complete reply within {limit:?} (--timeout)"),
    )
}

/// Handles expired requests; returns false when the session had to be dropped.
fn expire<D: Driver>(ctx: &Ctx<D>, slot: &mut Slot<D::Session>) -> bool {
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
async fn read_replies<D: Driver>(ctx: &Ctx<D>, session: &mut D::Session) -> Result<usize, OpError> {
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
async fn flush<D: Driver>(ctx: &Ctx<D>, session: &mut D::Session) -> Result<(), OpError> {
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
            if ensure_session(ctx, slot).await.is_err() {
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

/// Open loop: sends request `k + j·c` of `schedule` (from `start`) at its intended time, for
/// j = 0, 1, ... until the schedule, `limit` or `end` comes, reading replies in between; then
/// waits for the replies still in flight. When it falls behind it sends at once, never skipping.
async fn open_loop<D: Driver>(
    ctx: &Ctx<D>,
    slot: &mut Slot<D::Session>,
    schedule: &Schedule,
    start: Instant,
    limit: Option<u64>,
    end: Option<Instant>,
) {
    let (c, k) = (ctx.plan.connections as u64, ctx.index as u64);
    let window = ctx.plan.load.in_flight();
    let per_request = ctx.plan.workload.mode == ClientMode::Crr;
    // Request j's intended time, if it is still to go out at `now`: past the end nothing more
    // goes out, not even requests still owed from before it.
    let due = |j: u64, now: Instant| -> Option<Instant> {
        if limit.is_some_and(|l| j >= l) {
            return None;
        }
        let at = start + schedule.time_of(j * c + k)?;
        end.is_none_or(|e| at < e && now < e).then_some(at)
    };
    let far = Instant::now() + Duration::from_secs(365 * 86400);
    let timer = match super::timer::PreciseTimer::new() {
        Ok(t) => t,
        Err(e) => {
            let now = Instant::now();
            let err = OpError::new(ErrorKind::Other, format!("timerfd: {e}"));
            return ctx.rec.borrow_mut().error(now, now, err, 1);
        }
    };
    let mut j = 0u64;
    loop {
        if slot.session.is_none() {
            let Some(at) = due(j, Instant::now()) else {
                return;
            };
            let _ = timer.sleep_until(at).await;
            if ensure_session(ctx, slot).await.is_err() {
                // Requests due while the target could not be reached failed with it.
                j += 1;
                let now = Instant::now();
                while due(j, now).is_some_and(|d| d <= now) {
                    j += 1;
                }
                continue;
            }
        }
        let session = slot.session.as_mut().expect("connected above");
        let now = Instant::now();
        let mut queued = false;
        // Nothing more goes on a connection the server is closing; it is replaced once empty.
        while let Some(d) =
            due(j, now).filter(|&d| d <= now && session.in_flight() < window && session.reusable())
        {
            let sent = Sent {
                intended: d,
                at: now,
            };
            session.queue(slot.seq, sent);
            ctx.rec.borrow_mut().issued(sent);
            slot.seq += 1;
            j += 1;
            queued = true;
        }
        if queued {
            let limit = ctx.plan.timeout;
            match tokio::time::timeout(limit, flush(ctx, session)).await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => fail_all(ctx, slot, e, now),
                Err(_) => fail_all(ctx, slot, timeout_error(limit), now),
            }
            continue;
        }
        let next = due(j, now);
        if next.is_none() && session.in_flight() == 0 {
            return;
        }
        // With the window full (or the connection closing), a due request waits for a reply,
        // not for its time.
        let next = next.filter(|_| session.in_flight() < window && session.reusable());
        let expires = session.oldest().map(|t| t + ctx.plan.timeout);
        let waiting = session.in_flight() > 0;
        tokio::select! {
            biased;
            r = read_replies(ctx, session), if waiting => match r {
                Err(e) => fail_all(ctx, slot, e, now),
                // crr, or a server that closes: a new connection for the next request.
                Ok(n) if n > 0 && (per_request || !session.reusable()) && session.in_flight() == 0 => {
                    slot.session = None
                }
                Ok(_) => {}
            },
            _ = sleep_until(expires.unwrap_or(far).into()), if expires.is_some() => {
                expire(ctx, slot);
            }
            _ = timer.sleep_until(next.unwrap_or(far)), if next.is_some() => {}
        }
    }
}

/// Bulk transfer (stream or source) until `until`; reconnects after failures. (The deadline is
/// checked here too, not only by the caller's timeout: a blocking session never yields.)
async fn transfer<D: Driver>(ctx: &Ctx<D>, slot: &mut Slot<D::Session>, until: Option<Instant>) {
    let plan = &ctx.plan;
    let upload = plan.workload.mode == ClientMode::Stream;
    loop {
        if ensure_session(ctx, slot).await.is_err() {
            continue;
        }
        let session = slot.session.as_mut().expect("connected above");
        let began = Instant::now();
        if let Err(e) = session.start_bulk().await {
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
            if until.is_some_and(|u| now >= u) {
                return;
            }
            match step {
                Ok(n) if upload => ctx.rec.borrow_mut().sent(now, n),
                Ok(n) => ctx.rec.borrow_mut().received(now, n),
                Err(e) => {
                    ctx.rec.borrow_mut().error(now, now, e, 1);
                    slot.session = None;
                    break;
                }
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
