//! Bulk transfer (stream or source): one connection moves bytes as fast as it can, and
//! reconnects after a failure.

use super::steps::{close_session, ensure_session, fail_all, record_error};
use super::{Ctx, Slot};
use crate::driver::workload::ClientMode;
use crate::driver::{Driver, Session};
use crate::record::{ErrorKind, OpError};
use std::time::{Duration, Instant};

/// How long before the window's end a stream's writes read the acknowledged count (the floor
/// of [`note_acked`] when the end is read late).
const NEAR_END: Duration = Duration::from_millis(100);

/// Bulk transfer until `until`; reconnects after failures. (The deadline is checked here too,
/// not only by the caller's timeout: a blocking session never yields.)
pub(in crate::engine) async fn transfer<D: Driver>(
    ctx: &Ctx<D>,
    slot: &mut Slot<D::Session>,
    until: Option<Instant>,
) {
    loop {
        if ensure_session(ctx, slot, None).await.is_err() {
            continue;
        }
        if start(ctx, slot).await && pump(ctx, slot, until).await {
            return;
        }
    }
}

/// Starts the transfer on the connected session (the wirebench preamble and its answer);
/// false, with the failure recorded and the session dropped, if it did not start.
async fn start<D: Driver>(ctx: &Ctx<D>, slot: &mut Slot<D::Session>) -> bool {
    let plan = &ctx.plan;
    let Some(session) = slot.session.as_mut() else {
        return false; // connected by the caller
    };
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
    let Err(e) = started else {
        return true;
    };
    if plan.workload.mode == ClientMode::Stream {
        // This connection's bytes will never be counted by the receiver; its failure is the
        // error counted for it.
        ctx.rec.borrow_mut().receiver_failed(began);
    }
    fail_all(ctx, slot, e, began);
    false
}

/// Records what the receiver of `session` (a stream's) has acknowledged so far, its preamble
/// not counted: at the measured window's start (`at_start`) or at the session's end. The bulk
/// rates are the difference over the window: bytes that crossed the link within it, not bytes
/// written (part of which wait in buffers) nor the receiver's final count (which includes what
/// drained from those buffers after the window). `before_end`: the count read after a write
/// shortly before the window's end (see [`pump`]), a floor when the end is read late.
pub(in crate::engine) fn note_acked<D: Driver>(
    ctx: &Ctx<D>,
    session: &D::Session,
    at_start: bool,
    before_end: Option<u64>,
) {
    let plan = &ctx.plan;
    if plan.workload.mode != ClientMode::Stream {
        return;
    }
    let Some(acked) = session.segment().and_then(|s| s.acked) else {
        return;
    };
    let preamble = plan
        .workload
        .preamble()
        .map_or(0, |p| p.encode().len() as u64);
    let now = Instant::now();
    let mut payload = acked.saturating_sub(preamble);
    let start = ctx.timeline.measure_start();
    if let (false, Some(start), Some(end)) = (
        at_start,
        start,
        start.and_then(|s| ctx.timeline.deadline(s)),
    ) {
        if now > end {
            // Read late (a busy machine runs the task after the deadline), the count holds what
            // was acknowledged since: as the buffered bytes drain at the link's rate, the
            // window's share is the window's share of the time. Where the buffers drained
            // sooner (loopback: at once), that share is too low, and the count read after a
            // write just before the end is surely the window's: the larger of the two.
            let (window, read) = (end - start, now - start);
            let share = (payload as f64 * window.as_secs_f64() / read.as_secs_f64()) as u64;
            let floor = before_end.map_or(0, |b| b.saturating_sub(preamble));
            payload = share.max(floor.min(payload));
        }
    }
    ctx.rec.borrow_mut().acked(now, payload, at_start);
}

/// Sends (stream) or receives (source) until `until`: true once it has passed; false after a
/// failure, recorded, with the session dropped.
async fn pump<D: Driver>(
    ctx: &Ctx<D>,
    slot: &mut Slot<D::Session>,
    until: Option<Instant>,
) -> bool {
    let plan = &ctx.plan;
    let upload = plan.workload.mode == ClientMode::Stream;
    let Some(session) = slot.session.as_mut() else {
        return false; // started by the caller
    };
    // A new session counts from zero: an older one's count is no floor for it.
    slot.acked_before_end = None;
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
        let over = until.is_some_and(|u| now >= u) || ctx.timeline.stop.requested();
        match step {
            // The last write counts too: the receiver will count its bytes.
            Ok(n) if upload => {
                ctx.rec.borrow_mut().sent(now, n);
                if !over && until.is_some_and(|u| u - now <= NEAR_END) {
                    // One getsockopt per write near the end only (a write is up to 512 KiB).
                    slot.acked_before_end = session.segment().and_then(|s| s.acked);
                }
            }
            Ok(n) if !over => ctx.rec.borrow_mut().received(now, n),
            Ok(_) => {}
            Err(_) if over => {}
            Err(e) => {
                if upload {
                    note_acked(ctx, session, false, slot.acked_before_end);
                    ctx.rec.borrow_mut().receiver_failed(now);
                }
                record_error(ctx, now, now, e, 1);
                close_session(ctx, slot);
                return false;
            }
        }
        if over {
            return true;
        }
    }
}
