//! One connection's life under the closed-loop model: connect, keep `pipeline` requests in
//! flight (a new connection per request in crr mode), record every outcome, reconnect after a
//! failure, stop at the deadline or when the connection's share of `--requests` is used up.

use super::timeline::Timeline;
use super::worker::WorkerRec;
use crate::cli::ClientMode;
use crate::driver::tcp::{TcpConn, TcpDriver};
use crate::load::share;
use crate::plan::{Plan, Warmup};
use crate::record::{ErrorKind, OpError};
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::time::timeout_at;

/// The longest pause between attempts to reach a target that refuses connections.
const MAX_BACKOFF: Duration = Duration::from_millis(500);

/// What one connection task needs.
pub struct Ctx {
    /// This connection's index among all connections (for its share of counts).
    pub index: usize,
    /// The run's plan.
    pub plan: Arc<Plan>,
    /// The run's phases.
    pub timeline: Arc<Timeline>,
    /// The worker's recorder.
    pub rec: Rc<RefCell<WorkerRec>>,
    /// Opens connections.
    pub driver: Rc<TcpDriver>,
}

/// State carried across phases: the open connection and the next sequence number.
struct Slot {
    conn: Option<TcpConn>,
    seq: u64,
    backoff: Duration,
}

/// Runs one connection through warm-up and the measured part.
pub async fn run(ctx: Ctx) {
    let mut slot = Slot {
        conn: None,
        seq: (ctx.index as u64) << 40,
        backoff: Duration::ZERO,
    };
    let bulk = matches!(
        ctx.plan.workload.mode,
        ClientMode::Stream | ClientMode::Source
    );
    match ctx.plan.warmup {
        Some(Warmup::Count(n)) => {
            let mine = share(n, ctx.plan.connections, ctx.index);
            operations(&ctx, &mut slot, Some(mine), None).await;
            ctx.timeline.arrive();
        }
        Some(Warmup::Duration(_)) if !bulk => {
            let start = ctx.timeline.wait_measure_start().await;
            operations(&ctx, &mut slot, None, Some(start)).await;
        }
        _ => {}
    }
    let start = ctx.timeline.wait_measure_start().await;
    ctx.rec.borrow_mut().mark_start(start);
    let deadline = ctx.timeline.deadline(start);
    let quota = ctx
        .plan
        .stop
        .requests
        .map(|n| share(n, ctx.plan.connections, ctx.index));
    let work = async {
        if bulk {
            transfer(&ctx, &mut slot).await
        } else {
            operations(&ctx, &mut slot, quota, deadline).await
        }
    };
    match deadline {
        // At the deadline, requests still in flight are dropped uncounted, as wrk does.
        Some(d) => {
            let _ = timeout_at(d.into(), work).await;
        }
        None => work.await,
    }
}

/// Issues requests until `limit` have been issued or `issue_until` passes, then waits for the
/// replies still in flight.
async fn operations(ctx: &Ctx, slot: &mut Slot, limit: Option<u64>, issue_until: Option<Instant>) {
    let plan = &ctx.plan;
    let pipeline = plan.load.in_flight();
    let think = plan.load.think();
    let per_request = plan.workload.mode == ClientMode::Crr;
    let mut issued = 0u64;
    let may_issue = |issued: u64, now: Instant| {
        limit.is_none_or(|l| issued < l) && issue_until.is_none_or(|u| now < u)
    };
    loop {
        let op_start = Instant::now();
        if slot.conn.is_none() {
            if !may_issue(issued, op_start) {
                return;
            }
            match ctx.driver.connect(plan.timeout).await {
                Ok((c, took)) => {
                    ctx.rec
                        .borrow_mut()
                        .connected(op_start, Instant::now(), took);
                    slot.conn = Some(c);
                    slot.backoff = Duration::ZERO;
                }
                Err(e) => {
                    issued += 1;
                    let now = Instant::now();
                    ctx.rec.borrow_mut().error(op_start, now, e, 1);
                    back_off(slot).await;
                    continue;
                }
            }
        }
        let conn = slot.conn.as_mut().expect("connected above");
        let now = Instant::now();
        while conn.in_flight() < pipeline && may_issue(issued, now) {
            // In crr mode the operation began before the connect.
            conn.queue(slot.seq, if per_request { op_start } else { now });
            slot.seq += 1;
            issued += 1;
        }
        if conn.in_flight() == 0 {
            if per_request {
                slot.conn = None;
            }
            return;
        }
        let replies = exchange(ctx, conn).await;
        match replies {
            Ok(0) => {}
            Ok(_) => {
                if per_request {
                    slot.conn = None; // close: the client holds TIME_WAIT, as a real client would
                }
                if let Some(t) = think {
                    tokio::time::sleep(t).await;
                }
            }
            Err(e) => {
                let n = conn.in_flight().max(1);
                let sent = conn.oldest_sent().unwrap_or(op_start);
                ctx.rec.borrow_mut().error(sent, Instant::now(), e, n);
                slot.conn = None;
            }
        }
    }
}

/// Writes what is queued and reads once, within the oldest request's timeout; records the
/// bytes and the completed replies and returns how many completed.
async fn exchange(ctx: &Ctx, conn: &mut TcpConn) -> Result<usize, OpError> {
    let oldest = conn.oldest_sent().expect("a request is in flight");
    let limit = ctx.plan.timeout;
    let result = timeout_at((oldest + limit).into(), async {
        let sent = conn.flush().await?;
        if sent > 0 {
            ctx.rec.borrow_mut().sent(Instant::now(), sent);
        }
        conn.read().await
    })
    .await;
    let outcome = match result {
        Ok(r) => r?,
        Err(_) => {
            return Err(OpError::new(
                ErrorKind::Timeout,
                format!("no complete reply within {limit:?} (--timeout)"),
            ))
        }
    };
    let now = Instant::now();
    let mut rec = ctx.rec.borrow_mut();
    rec.received(now, outcome.bytes);
    for &sent in conn.completed() {
        rec.ok(sent, now);
    }
    Ok(outcome.replies)
}

/// Bulk transfer (stream or source) until the deadline cancels it; reconnects after failures.
async fn transfer(ctx: &Ctx, slot: &mut Slot) {
    let plan = &ctx.plan;
    let upload = plan.workload.mode == ClientMode::Stream;
    loop {
        let began = Instant::now();
        let mut conn = match ctx.driver.connect(plan.timeout).await {
            Ok((mut c, took)) => {
                ctx.rec.borrow_mut().connected(began, Instant::now(), took);
                slot.backoff = Duration::ZERO;
                match c.start_bulk().await {
                    Ok(()) => c,
                    Err(e) => {
                        ctx.rec.borrow_mut().error(began, Instant::now(), e, 1);
                        continue;
                    }
                }
            }
            Err(e) => {
                ctx.rec.borrow_mut().error(began, Instant::now(), e, 1);
                back_off(slot).await;
                continue;
            }
        };
        loop {
            let step = tokio::time::timeout(plan.timeout, async {
                if upload {
                    conn.send_bulk().await
                } else {
                    conn.recv_bulk().await
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
            match step {
                Ok(n) if upload => ctx.rec.borrow_mut().sent(now, n),
                Ok(n) => ctx.rec.borrow_mut().received(now, n),
                Err(e) => {
                    ctx.rec.borrow_mut().error(now, now, e, 1);
                    break;
                }
            }
        }
    }
}

/// Waits before the next connection attempt, doubling the wait up to [`MAX_BACKOFF`], so a dead
/// target is retried without spinning.
async fn back_off(slot: &mut Slot) {
    slot.backoff = (slot.backoff * 2).clamp(Duration::from_millis(10), MAX_BACKOFF);
    tokio::time::sleep(slot.backoff).await;
}
