//! The closed loop of one connection: keep `pipeline` requests in flight, each new one issued
//! as a reply frees its place (a new connection per request in crr mode).

use super::steps::{
    close_session, ensure_session, fail_all, flush, flush_now, poll_replies, queue, read_replies,
    resend, retire, ExpiryTimer,
};
use super::{Ctx, Slot};
use crate::driver::workload::ClientMode;
use crate::driver::{Driver, Sent, Session};
use std::task::Poll;
use std::time::Instant;
use tokio::time::sleep_until;

/// Until when a closed loop issues requests.
#[derive(Clone, Copy, Debug)]
pub(in crate::engine) enum Until {
    /// The warm-up: until this instant (None: until its count is done, or with `--warmup
    /// auto` until the collector finds the run steady).
    Warm(Option<Instant>),
    /// The measured part: until its deadline (None: until its count is done).
    Measured(Option<Instant>),
}

/// Closed loop: issues requests until `limit` have been issued or `until` passes, then
/// waits for the replies still in flight.
pub(in crate::engine) async fn closed_loop<D: Driver>(
    ctx: &Ctx<D>,
    slot: &mut Slot<D::Session>,
    limit: Option<u64>,
    until: Until,
) {
    let pipeline = ctx.plan.load.in_flight();
    let per_request = ctx.plan.workload.mode == ClientMode::Crr;
    let mut issued = 0u64;
    let (issue_until, until_steady) = match until {
        Until::Warm(at) => (at, ctx.timeline.auto.is_some()),
        Until::Measured(at) => (at, false),
    };
    let may_issue = |issued: u64, now: Instant| {
        limit.is_none_or(|l| issued < l)
            && issue_until.is_none_or(|u| now < u)
            && (!until_steady || ctx.timeline.warming())
            && !ctx.timeline.stop.requested()
            && !ctx.timeline.overall_passed(now)
    };
    let mut expiry = ExpiryTimer::new(&ctx.clock, ctx.plan.timeout);
    // Think time is waited on a timerfd, as the open loop's sends are: tokio's 1 ms tick made
    // --think 1ms a 2.15 ms cycle.
    let think_timer = ctx
        .plan
        .load
        .think()
        .and_then(|_| crate::engine::timer::PreciseTimer::new().ok());
    loop {
        let op_start = Instant::now();
        if slot
            .session
            .as_ref()
            .is_some_and(|s| !s.reusable() && s.in_flight() == 0)
        {
            retire(ctx, slot, op_start);
        }
        let connecting = slot.session.is_none();
        if connecting {
            // Requests to send again go out even after the last new one.
            let fresh = slot.retry.is_empty();
            if fresh && !may_issue(issued, op_start) {
                return;
            }
            if ensure_session(ctx, slot, None).await.is_err() {
                issued += fresh as u64;
                continue;
            }
        }
        let Some(session) = slot.session.as_mut() else {
            return; // connected above
        };
        resend(session, &mut slot.retry);
        // Nothing waited since `op_start` unless a connection was opened (one clock read per
        // request fewer on the keep-alive path).
        let now = if connecting { Instant::now() } else { op_start };
        // In crr mode the operation began before the connect.
        let at = if per_request { op_start } else { now };
        // Nothing new goes on a connection the server is closing (an HTTP/2 GOAWAY): it would
        // not be in flight there, so this loop would never stop queueing (10 GiB in 4 s).
        while session.reusable() && session.in_flight() < pipeline && may_issue(issued, now) {
            queue(ctx, session, &mut slot.seq, Sent { intended: at, at });
            issued += 1;
        }
        if session.in_flight() == 0 {
            if !session.reusable() {
                continue; // retired at the top, its requests sent again on a new connection
            }
            if per_request {
                close_session(ctx, slot);
            }
            return;
        }
        // A socket that takes the request now, and a session that reads by polling, wait in one
        // poll beside the expiry timer: no future per request (the usual keep-alive case).
        let quick = match flush_now(ctx, session, now) {
            Some(Ok(())) => {
                let oldest = session.oldest();
                std::future::poll_fn(|cx| match poll_replies(ctx, session, oldest, cx) {
                    None => Poll::Ready(None),
                    Some(Poll::Ready(r)) => Poll::Ready(Some(Some(r))),
                    Some(Poll::Pending) => expiry.poll_fired(cx).map(|()| Some(None)),
                })
                .await
            }
            Some(Err(e)) => Some(Some(Err(e))),
            None => None,
        };
        let step = match quick {
            Some(step) => step,
            None => tokio::select! {
                biased;
                r = async {
                    flush(ctx, session, Some(now)).await?;
                    read_replies(ctx, session).await
                } => Some(r),
                _ = expiry.fired() => None,
            },
        };
        match step {
            None => expiry.check(ctx, slot),
            Some(Ok((n, read_at))) => {
                if expiry.due(read_at) {
                    expiry.check(ctx, slot);
                }
                if n > 0 {
                    after_replies(ctx, slot, op_start);
                    // Awaited only when there is a pause: an await's state is written into the
                    // connection's future even when it has nothing to wait for.
                    if let Some(pause) = ctx.plan.load.thinking() {
                        let t = pause.pause(slot.seq);
                        think(ctx, t, issue_until, think_timer.as_ref()).await;
                    }
                }
            }
            Some(Err(e)) => fail_all(ctx, slot, e, op_start),
        }
    }
}

/// After replies came in: closes the connection in crr mode or when the server will not keep
/// it.
fn after_replies<D: Driver>(ctx: &Ctx<D>, slot: &mut Slot<D::Session>, op_start: Instant) {
    let per_request = ctx.plan.workload.mode == ClientMode::Crr;
    if per_request || !slot.session.as_ref().is_some_and(|s| s.reusable()) {
        // Requests pipelined behind a "Connection: close" are sent again on a new connection.
        retire(ctx, slot, op_start);
    }
}

/// Thinks for `t` before the next request (drawn per request, the last one's number, so
/// --seed repeats the pauses), on the precise `timer` when there is one.
async fn think<D: Driver>(
    ctx: &Ctx<D>,
    t: std::time::Duration,
    issue_until: Option<Instant>,
    timer: Option<&crate::engine::timer::PreciseTimer>,
) {
    // A pause never outlasts the time for issuing requests.
    let from = Instant::now();
    let asked = from + t;
    let until = issue_until.map_or(asked, |u| asked.min(u));
    // A stale expiry can wake the timer early: wait again until the time has come.
    let mut precise = timer.is_some();
    while let Some(timer) = timer.filter(|_| precise && Instant::now() < until) {
        precise = timer.sleep_until(until).await.is_ok();
    }
    if !precise {
        // No timerfd: tokio's sleep, which rounds every deadline up to its next 1 ms tick
        // (even one already past), hence only as the fallback.
        sleep_until(until.into()).await;
    }
    // What was waited, so the report can say how close it came to what was asked (a pause
    // cut short by the end of the run is not one that was asked for).
    if until == asked {
        ctx.rec.borrow_mut().thought(from, Instant::now());
    }
}
