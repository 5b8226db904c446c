//! The steps both request loops (closed and open) and the bulk transfer are made of: connect
//! (through the run's gate, with back-off), queue, flush, read, expire, and fail what is in
//! flight.

use super::{Ctx, Slot};
use crate::driver::{Done, Driver, Expiry, Retry, Sent, Session};
use crate::engine::clock::Clock;
use crate::engine::gate::Abort;
use crate::engine::worker::WorkerRec;
use crate::plan::Plan;
use crate::record::{ErrorKind, OpError};
use std::future::Future;
use std::rc::Rc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

/// The longest pause between attempts to reach a target that refuses connections.
const MAX_BACKOFF: Duration = Duration::from_millis(500);

/// Waits at the gate until the run's first connection is up; true for that first connection
/// itself, which goes through. Never returns once the run is stopped (the connection's task is
/// dropped by [`super::run`]).
pub(in crate::engine) async fn pass_gate<D: Driver>(ctx: &Ctx<D>) -> bool {
    let first = ctx.index == 0 && ctx.gate.pending();
    if ctx.gate.aborted() || (!first && ctx.gate.pending() && !ctx.gate.wait_open().await) {
        std::future::pending::<()>().await;
    }
    first
}

/// The run's first connection failed, or a connection met a fatal error: the run stops with
/// it, and this connection waits to be dropped.
pub(in crate::engine) async fn stop_run<D: Driver>(ctx: &Ctx<D>, e: OpError) {
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
    let why = match e.kind {
        // Refused after the target took the connection (an HTTP/2 GOAWAY) says its own why.
        ErrorKind::Refused if !e.reached => format!(
            "connection refused by {addr}: nothing listens there; start a server (e.g. wirebench serve tcp) or check the port"
        ),
        ErrorKind::Timeout => format!(
            "{url}: {}: check the address, or raise --timeout",
            e.message
        ),
        _ => format!("cannot connect to {url}: {}; check the address", e.message),
    };
    Abort::Unreachable(crate::engine::gate::Unreachable { kind: e.kind, why })
}

/// Counts `n` failed operations, or, for a fatal error, stops the run with it.
pub(in crate::engine) fn record_error<D: Driver>(
    ctx: &Ctx<D>,
    sent: Instant,
    now: Instant,
    err: OpError,
    n: usize,
) {
    if err.fatal {
        ctx.gate.abort(refused(&ctx.plan, &err));
    } else {
        ctx.rec.borrow_mut().error(sent, now, err, n);
    }
}

/// Connects if there is no session; on failure records the error (as a request meant to go
/// out at `intended`, or now; or, when requests wait to be sent again, as theirs) and backs off.
pub(in crate::engine) async fn ensure_session<D: Driver>(
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
        Err(e) if e.fatal || (first && !silent_target(&e)) => {
            stop_run(ctx, e).await;
            Err(())
        }
        Err(e) => {
            if first {
                // The target took the connection and never answered its handshake: it is
                // reached, so this is a result, as a tcp request that times out is.
                ctx.gate.open();
            }
            let now = Instant::now();
            // Requests waiting to be sent again were counted as issued already.
            let (sent, n) = match slot.retry.first() {
                Some(r) => (r.sent, std::mem::take(&mut slot.retry).len()),
                None => {
                    let sent = Sent {
                        intended: intended.unwrap_or(began),
                        at: began,
                    };
                    ctx.rec.borrow_mut().issued(sent);
                    (sent, 1)
                }
            };
            record_error(ctx, sent.intended, now, e, n);
            back_off(slot).await;
            Err(())
        }
    }
}

/// Whether a failed connection reached a target that then never answered its handshake (HTTP/2
/// SETTINGS, a DICOM association, TLS): a target frozen or not reading, which the run measures
/// (timeouts counted, the run saved) rather than ending at once as for one that is not there.
/// Any other answer (a rejection, bytes of another protocol) still stops the run at once.
pub(in crate::engine) fn silent_target(e: &OpError) -> bool {
    e.reached && e.kind == ErrorKind::Timeout
}

/// Waits before the next connection attempt, doubling the wait up to [`MAX_BACKOFF`], so a dead
/// target is retried without spinning.
async fn back_off<S>(slot: &mut Slot<S>) {
    slot.backoff = (slot.backoff * 2).clamp(Duration::from_millis(10), MAX_BACKOFF);
    tokio::time::sleep(slot.backoff).await;
}

/// Queues request `seq` (then advances it) on the session and records that it went out.
pub(in crate::engine) fn queue<D: Driver>(
    ctx: &Ctx<D>,
    session: &mut D::Session,
    seq: &mut u64,
    sent: Sent,
) {
    session.queue(*seq, sent);
    ctx.rec.borrow_mut().issued(sent);
    *seq += 1;
}

/// Queues on the session the requests a server did not process before it closed their
/// connection in good order; they were counted as issued when first sent.
pub(in crate::engine) fn resend<S: Session>(session: &mut S, retry: &mut Vec<Retry>) {
    for r in retry.drain(..) {
        session.queue(r.seq, r.sent);
    }
}

/// Ends a session that will take no more requests. If the server closed it in good order,
/// the requests it did not process wait in the slot to be sent again on the next session, and
/// the close is counted; requests still in flight then (pipelined behind an HTTP/1.1 close
/// without the server's word on them) fail, so that every request sent is an ok or an error.
pub(in crate::engine) fn retire<D: Driver>(
    ctx: &Ctx<D>,
    slot: &mut Slot<D::Session>,
    since: Instant,
) {
    let Some(session) = slot.session.as_mut() else {
        return;
    };
    if let Some(again) = session.goodbye() {
        ctx.rec
            .borrow_mut()
            .server_closed(Instant::now(), again.len());
        slot.retry.extend(again);
    }
    let left = session.in_flight();
    if left > 0 {
        let why = format!("the server closed the connection with {left} request(s) unanswered");
        fail_all(ctx, slot, OpError::new(ErrorKind::ShortReply, why), since);
    }
    close_session(ctx, slot); // close: the client holds TIME_WAIT, as a real client would
}

/// Sends what is queued and records the bytes, and any replies read while writing waited.
/// `now`: the time, if the caller has just read it (nothing waited since then). The bytes of a
/// write that did not have to wait are placed in the time series there, which saves the keep-alive
/// path a clock read per request; a write that waited reads the clock when it is done.
pub(in crate::engine) async fn flush<D: Driver>(
    ctx: &Ctx<D>,
    session: &mut D::Session,
    now: Option<Instant>,
) -> Result<(), OpError> {
    let mut waited = false;
    let sent = {
        let mut write = std::pin::pin!(session.flush());
        std::future::poll_fn(|cx| {
            let poll = write.as_mut().poll(cx);
            waited |= poll.is_pending();
            poll
        })
        .await
    };
    if let Some(early) = session.take_early() {
        let now = Instant::now();
        let at = session.completed().first().map_or(now, |d| d.sent.intended);
        let mut rec = ctx.rec.borrow_mut();
        rec.read_at(at, now, &early);
        for done in session.completed() {
            record_done(&mut rec, done, now, ctx.plan.timeout);
        }
    }
    record_sent(ctx, session, sent?, || {
        now.filter(|_| !waited).unwrap_or_else(Instant::now)
    });
    Ok(())
}

/// Records the `wire` bytes a flush wrote (and their payload) at the time `at` gives, asked
/// only when there are bytes.
fn record_sent<D: Driver>(
    ctx: &Ctx<D>,
    session: &mut D::Session,
    wire: usize,
    at: impl FnOnce() -> Instant,
) {
    let payload = session.sent_payload(wire);
    if wire + payload > 0 {
        ctx.rec.borrow_mut().sent_wire(at(), payload, wire);
    }
}

/// [`flush`] without waiting: sends what is queued if the socket takes all of it now, and
/// records it at `now` (nothing waited). None if it could not, or if the session only sends by
/// awaiting: then `flush` sends the rest (and counts what went out here).
pub(in crate::engine) fn flush_now<D: Driver>(
    ctx: &Ctx<D>,
    session: &mut D::Session,
    now: Instant,
) -> Option<Result<(), OpError>> {
    let wire = match session.flush_now()? {
        Ok(wire) => wire,
        Err(e) => return Some(Err(e)),
    };
    record_sent(ctx, session, wire, || now);
    Some(Ok(()))
}

/// [`read_replies`] as a poll; None if the session only reads by awaiting. `oldest`: the
/// session's oldest request in flight before the read.
pub(in crate::engine) fn poll_replies<D: Driver>(
    ctx: &Ctx<D>,
    session: &mut D::Session,
    oldest: Option<Instant>,
    cx: &mut Context<'_>,
) -> Option<Poll<Result<(usize, Instant), OpError>>> {
    let outcome = match session.poll_read(cx)? {
        Poll::Pending => return Some(Poll::Pending),
        Poll::Ready(read) => read,
    };
    Some(Poll::Ready(
        outcome.map(|outcome| record_read(ctx, session, oldest, &outcome)),
    ))
}

/// Reads once and records the completed replies; returns how many completed, and when (the
/// time they are recorded at).
pub(in crate::engine) async fn read_replies<D: Driver>(
    ctx: &Ctx<D>,
    session: &mut D::Session,
) -> Result<(usize, Instant), OpError> {
    // The bytes belong with the request they answer (a warm-up reply's bytes stay warm-up).
    let oldest = session.oldest();
    let outcome = session.read().await?;
    Ok(record_read(ctx, session, oldest, &outcome))
}

/// Records what a read brought (its bytes, with the request they answer, or the oldest in
/// flight before it) and the replies it completed; returns how many, and when.
fn record_read<D: Driver>(
    ctx: &Ctx<D>,
    session: &D::Session,
    oldest: Option<Instant>,
    outcome: &crate::driver::ReadOutcome,
) -> (usize, Instant) {
    let now = outcome.at.unwrap_or_else(Instant::now);
    let at = session
        .completed()
        .first()
        .map(|d| d.sent.intended)
        .or(oldest)
        .unwrap_or(now);
    let mut rec = ctx.rec.borrow_mut();
    rec.read_at(at, now, outcome);
    for done in session.completed() {
        record_done(&mut rec, done, now, ctx.plan.timeout);
    }
    (outcome.replies, now)
}

/// Records a completed reply, or a timeout if it completed after `--timeout`: the expiry timer
/// cannot fire while a blocking read waits, nor win over reads that keep returning bytes, so
/// a reply that trickled in past its limit would otherwise count as ok.
fn record_done(rec: &mut WorkerRec, done: &Done, now: Instant, limit: Duration) {
    let waited = done.sent.waited(now);
    if done.failure.is_none() && waited.service >= limit {
        rec.kind_error(done.kind, done.sent.intended, now, timeout_error(limit));
        rec.error(done.sent.intended, now, timeout_error(limit), 1);
    } else {
        rec.done(done, now, waited);
    }
}

/// Records `err` for every request in flight (at least one) and drops the session.
pub(in crate::engine) fn fail_all<D: Driver>(
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
    close_session(ctx, slot);
}

/// The error of a request that outlived `--timeout`.
pub(in crate::engine) fn timeout_error(limit: Duration) -> OpError {
    OpError::new(
        ErrorKind::Timeout,
        format!("no complete reply within {limit:?} (--timeout)"),
    )
}

/// The lazy timer that finds requests past their `--timeout`. It fires no later than the
/// oldest request's time limit (it is only ever set to that limit, or earlier), and is re-armed
/// only when it fires, which keeps timer work off the per-request path.
pub(in crate::engine) struct ExpiryTimer {
    alarm: Alarm,
}

impl ExpiryTimer {
    /// A timer on the worker's `clock` that first fires a whole `limit` from now, before any
    /// request sent from now on can be overdue.
    pub(in crate::engine) fn new(clock: &Rc<Clock>, limit: Duration) -> ExpiryTimer {
        ExpiryTimer {
            alarm: Alarm::new(clock, Instant::now() + limit),
        }
    }

    /// Whether the timer is due at `now` (the time of a read): after a read, which may have
    /// kept it from firing (a blocking read never yields; a read that is always ready wins the
    /// biased select).
    pub(in crate::engine) fn due(&self, now: Instant) -> bool {
        now >= self.alarm.at
    }

    /// Completes when the timer fires; then call [`ExpiryTimer::check`].
    pub(in crate::engine) async fn fired(&mut self) {
        std::future::poll_fn(|cx| self.poll_fired(cx)).await
    }

    /// [`ExpiryTimer::fired`] as a poll.
    pub(in crate::engine) fn poll_fired(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        self.alarm.poll_fired(cx)
    }

    /// The timer fired: expires the requests past their limit, unless it fired before the
    /// oldest was due, and re-arms for the oldest request left (a whole limit from now if none
    /// is left).
    pub(in crate::engine) fn check<D: Driver>(
        &mut self,
        ctx: &Ctx<D>,
        slot: &mut Slot<D::Session>,
    ) {
        let limit = ctx.plan.timeout;
        let oldest = |slot: &Slot<D::Session>| slot.session.as_ref().and_then(|s| s.oldest());
        if oldest(slot).is_some_and(|t| Instant::now() >= t + limit) {
            expire(ctx, slot);
        }
        let next = oldest(slot).unwrap_or_else(Instant::now) + limit;
        self.alarm.reset(next);
    }
}

/// A deadline on the worker's [`Clock`] (a timerfd, not tokio's timer wheel: see `clock.rs`),
/// asked for once per setting and after that only looked at: a connection's task wakes with
/// the same waker every time, and the clock wakes it when the deadline passes.
pub(in crate::engine) struct Alarm {
    clock: Rc<Clock>,
    /// When it fires.
    at: Instant,
    /// The clock has the waker for `at`: asked since it was made or reset.
    armed: bool,
}

impl Alarm {
    pub(in crate::engine) fn new(clock: &Rc<Clock>, at: Instant) -> Alarm {
        Alarm {
            clock: clock.clone(),
            at,
            armed: false,
        }
    }

    /// Ready once the deadline has passed.
    pub(in crate::engine) fn poll_fired(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        if self.clock.passed(self.at) {
            return Poll::Ready(());
        }
        if !self.armed {
            self.clock.wake_at(self.at, cx.waker());
            self.armed = true;
        }
        Poll::Pending
    }

    /// Sets a new time to fire at; the next poll asks the clock for it.
    pub(in crate::engine) fn reset(&mut self, at: Instant) {
        self.at = at;
        self.armed = false;
    }
}

/// `work` until `at` on the worker's `clock`, or None if `at` came first: tokio's
/// `timeout_at`, with its timer an [`Alarm`] (work is polled first, as there).
pub(in crate::engine) async fn until<F: Future>(
    clock: &Rc<Clock>,
    at: Instant,
    work: F,
) -> Option<F::Output> {
    let mut alarm = Alarm::new(clock, at);
    let mut work = std::pin::pin!(work);
    std::future::poll_fn(|cx| {
        if let Poll::Ready(v) = work.as_mut().poll(cx) {
            return Poll::Ready(Some(v));
        }
        alarm.poll_fired(cx).map(|()| None)
    })
    .await
}

/// Handles expired requests: counts the lost ones, or drops a session that cannot go on.
fn expire<D: Driver>(ctx: &Ctx<D>, slot: &mut Slot<D::Session>) {
    let now = Instant::now();
    let limit = ctx.plan.timeout;
    let Some(session) = slot.session.as_mut() else {
        return;
    };
    match session.expire(now, limit) {
        Expiry::None => {}
        Expiry::Lost(n) => {
            ctx.rec
                .borrow_mut()
                .error(now, now, timeout_error(limit), n);
        }
        Expiry::Reset => fail_all(ctx, slot, timeout_error(limit), now),
    }
}

/// Closes the connection's session. The first one a connection closes gives its packet size
/// for `--link` (read from `TCP_INFO` before the socket goes): sessions replaced mid-run — a
/// connection per request, a server's GOAWAY or `Connection: close` — would otherwise leave
/// none at the end for the wire rate. Once per connection, so crr mode pays no syscall per
/// request.
pub(crate) fn close_session<D: Driver>(ctx: &Ctx<D>, slot: &mut Slot<D::Session>) {
    let Some(session) = slot.session.take() else {
        return;
    };
    if !slot.sized && ctx.plan.link.is_some() {
        slot.sized = true;
        if let Some(segment) = session.segment() {
            // Its packet size only: a stream's acknowledged bytes are counted apart (see
            // `transfer::note_acked`), once per session.
            let segment = crate::record::Segment {
                acked: None,
                ..segment
            };
            ctx.rec.borrow_mut().segment(Instant::now(), segment);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{until, Alarm};
    use crate::engine::block_on;
    use crate::engine::clock::Clock;
    use std::future::Future;
    use std::rc::Rc;
    use std::time::{Duration, Instant};

    /// Runs `test` with a worker's clock running beside it.
    fn with_clock<F: Future<Output = ()>>(test: impl FnOnce(Rc<Clock>) -> F) {
        block_on(async {
            let clock = Rc::new(Clock::new().unwrap());
            tokio::select! {
                _ = clock.run() => unreachable!("the clock runs until dropped"),
                _ = test(clock.clone()) => {}
            }
        });
    }

    /// Waits for the alarm to fire (Err: not within 10 s).
    async fn wait(alarm: &mut Alarm) -> Result<(), tokio::time::error::Elapsed> {
        let fired = std::future::poll_fn(|cx| alarm.poll_fired(cx));
        tokio::time::timeout(Duration::from_secs(10), fired).await
    }

    /// An alarm wakes its task when it fires, and again after a reset (which a fired alarm
    /// needs asked for anew): each wait ends, none hangs.
    #[test]
    fn an_alarm_fires_and_fires_again_after_a_reset() {
        with_clock(|clock| async move {
            let began = Instant::now();
            let mut alarm = Alarm::new(&clock, began + Duration::from_millis(20));
            assert!(
                wait(&mut alarm).await.is_ok(),
                "the alarm never woke its task"
            );
            let took = began.elapsed();
            assert!(took >= Duration::from_millis(19) && took < Duration::from_secs(5));
            alarm.reset(Instant::now() + Duration::from_millis(20));
            let reset = Instant::now();
            assert!(
                wait(&mut alarm).await.is_ok(),
                "the reset alarm never woke its task"
            );
            // Woken by the alarm itself, not found fired when the 10 s guard woke the task.
            let took = reset.elapsed();
            assert!(took >= Duration::from_millis(19) && took < Duration::from_secs(5));
        });
    }

    /// `until` gives the work's output when it ends first, None when the time comes first.
    #[test]
    fn until_ends_the_work_at_its_time() {
        with_clock(|clock| async move {
            let soon = Instant::now() + Duration::from_millis(20);
            assert_eq!(until(&clock, soon, async { 7 }).await, Some(7));
            let began = Instant::now();
            let never = std::future::pending::<()>();
            assert_eq!(
                until(&clock, Instant::now() + Duration::from_millis(20), never).await,
                None
            );
            let took = began.elapsed();
            assert!(took >= Duration::from_millis(19) && took < Duration::from_secs(10));
        });
    }
}
