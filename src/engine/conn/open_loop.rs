//! The open loop of one connection: whenever it has room, it takes its turn at the worker's
//! pacer (`pacer.rs`) and sends the requests due, reading its replies in between, never waiting
//! for them. Latency counts from each request's intended send time, and the lag of each send
//! behind that time is recorded too.

use super::super::pacer::{Pacer, Timetable, Turn};
use super::{
    close_session, ensure_session, fail_all, flush, queue, read_replies, resend, retire,
    timeout_error, Ctx, ExpiryTimer, Slot,
};
use crate::driver::workload::ClientMode;
use crate::driver::{Driver, Sent, Session};
use crate::record::{ErrorKind, OpError, Phase};
use std::time::Instant;

/// The open loop on the worker's pacer of `phase` (made from `timetable` by the first of its
/// connections to get there).
pub(super) async fn paced<D: Driver>(
    ctx: &Ctx<D>,
    slot: &mut Slot<D::Session>,
    phase: Phase,
    timetable: impl FnOnce() -> Timetable,
) {
    match ctx.pacing.pacer(phase, timetable) {
        Ok(pacer) => open_loop(ctx, slot, &pacer).await,
        Err(e) => {
            let now = Instant::now();
            let err = OpError::new(ErrorKind::Other, format!("timerfd: {e}"));
            ctx.rec.borrow_mut().error(now, now, err, 1);
        }
    }
}

/// Open loop: whenever this connection has room, takes its turn at the worker's `pacer` and
/// sends the requests due; reads replies in between. Returns once the pacer has nothing more to
/// send and every reply is in or expired. A due request waits only while every connection of
/// the worker is full, and then goes out late, never skipped.
async fn open_loop<D: Driver>(ctx: &Ctx<D>, slot: &mut Slot<D::Session>, pacer: &Pacer) {
    let window = ctx.plan.load.in_flight();
    let mut expiry = ExpiryTimer::new(&ctx.clock, ctx.plan.timeout);
    loop {
        if !slot.retry.is_empty() {
            send_again(ctx, slot).await;
            continue;
        }
        let (in_flight, room) = match &slot.session {
            None => (0, true),
            // Nothing more goes on a connection the server is closing; it is replaced once empty.
            Some(s) => (s.in_flight(), s.in_flight() < window && s.reusable()),
        };
        let more = !pacer.finished();
        if in_flight == 0 && !(room && more) {
            if !more {
                return;
            }
            close_session(ctx, slot);
            continue;
        }
        let step = tokio::select! {
            biased;
            r = async {
                match slot.session.as_mut() {
                    Some(s) => read_replies(ctx, s).await,
                    None => std::future::pending().await,
                }
            }, if in_flight > 0 => Step::Read(r),
            _ = expiry.fired(), if in_flight > 0 => Step::Expiry,
            turn = pacer.turn(), if room && more => match turn {
                Some((turn, woke)) => {
                    if let Some(lag) = woke {
                        ctx.rec.borrow_mut().woke(lag);
                    }
                    send_due(ctx, slot, pacer, turn).await;
                    Step::Sent
                }
                None => Step::Sent,
            },
        };
        match step {
            Step::Read(Err(e)) => fail_all(ctx, slot, e, Instant::now()),
            // crr, or a server that closes: a new connection for the next request (and for
            // those the server did not process).
            Step::Read(Ok((n, now))) => {
                if expiry.due(now) {
                    expiry.check(ctx, slot);
                }
                let per_request = ctx.plan.workload.mode == ClientMode::Crr;
                if let Some(s) = &slot.session {
                    if !s.reusable() {
                        retire(ctx, slot, Instant::now());
                    } else if n > 0 && per_request && s.in_flight() == 0 {
                        close_session(ctx, slot);
                    }
                }
            }
            Step::Expiry => expiry.check(ctx, slot),
            Step::Sent => {}
        }
    }
}

/// Sends the requests the server did not process before it closed their connection in good
/// order, on a new one, at once: they are overdue already.
async fn send_again<D: Driver>(ctx: &Ctx<D>, slot: &mut Slot<D::Session>) {
    if ensure_session(ctx, slot, None).await.is_err() {
        return; // they failed with the connect
    }
    let Some(session) = slot.session.as_mut() else {
        return; // connected above
    };
    resend(session, &mut slot.retry);
    let (limit, now) = (ctx.plan.timeout, Instant::now());
    match tokio::time::timeout(limit, flush(ctx, session, Some(now))).await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => fail_all(ctx, slot, e, now),
        Err(_) => fail_all(ctx, slot, timeout_error(limit), now),
    }
}

/// The most requests a connection takes from the schedule in one turn; it takes its next turn
/// at once if more are due.
const MAX_BATCH: usize = 64;

/// What woke the open loop.
enum Step {
    /// Replies completed, and when (see [`read_replies`]).
    Read(Result<(usize, Instant), OpError>),
    Expiry,
    Sent,
}

/// With the worker's turn: takes the requests due now, as many as the window allows, passes
/// the turn on, and sends them. Without a session it takes one and connects first; the
/// request's send begins there (crr: its operation includes the connect).
async fn send_due<D: Driver>(
    ctx: &Ctx<D>,
    slot: &mut Slot<D::Session>,
    pacer: &Pacer,
    turn: Turn<'_>,
) {
    let window = ctx.plan.load.in_flight();
    let mut now = Instant::now();
    let mut fresh = true;
    if let Some(session) = slot.session.as_mut() {
        // At most a batch per turn: a schedule far ahead of what the socket takes (a UDP
        // stream offered 20 Gbit/s: 273,000 datagrams due at once) would otherwise be written
        // in one flush that no deadline interrupts (a 2 s run took 15-30 s), and queued whole.
        let mut room = (window - session.in_flight()).min(MAX_BATCH);
        while room > 0 {
            let Some(intended) = pacer.take(now) else {
                break;
            };
            queue(ctx, session, &mut slot.seq, Sent { intended, at: now });
            room -= 1;
        }
        drop(turn);
    } else {
        let Some(intended) = pacer.take(now) else {
            return;
        };
        drop(turn);
        if ensure_session(ctx, slot, Some(intended)).await.is_err() {
            return; // the request failed with the connect
        }
        if ctx.plan.workload.mode == ClientMode::Crr {
            // `now` stays the operation's start, from before the connect: the write reads
            // its own time.
            fresh = false;
        } else {
            now = Instant::now();
        }
        let Some(session) = slot.session.as_mut() else {
            return; // connected above
        };
        queue(ctx, session, &mut slot.seq, Sent { intended, at: now });
    }
    let Some(session) = slot.session.as_mut() else {
        return; // connected above
    };
    let limit = ctx.plan.timeout;
    match tokio::time::timeout(limit, flush(ctx, session, fresh.then_some(now))).await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => fail_all(ctx, slot, e, now),
        Err(_) => fail_all(ctx, slot, timeout_error(limit), now),
    }
}
