//! The first connection is the run's reachability check: the others wait for it, so a target
//! that is not there, or that refuses what the user asked for, ends the run at once with one
//! line, and a target is only ever sent what the run itself sends (no hidden probe connection).
//! A target that takes the first connection and then never answers its handshake (HTTP/2
//! SETTINGS, a DICOM association, TLS) is there: the gate opens, and the run counts its
//! timeouts as it does a tcp target's that never replies (`conn::steps::silent_target`).
//!
//! The gate is also how a fatal error ([`crate::record::OpError::fatal`]) seen by any connection
//! on any worker stops every other one: the first reason given wins and is what the run reports.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Mutex;
use std::task::Waker;
use tokio::sync::watch;

/// Why a run stopped before its end.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Abort {
    /// The input must change (a mode the server refuses, an untrusted certificate): exit 2.
    Usage(String),
    /// The target could not be reached at all (refused, no route, no answer): exit 1.
    Unreachable(Unreachable),
}

/// The run's first connection failed: the target could not be reached at all. The error a
/// run returns then; a command of several runs keeps it as a run of one failed operation.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{why}")]
pub struct Unreachable {
    /// The kind of the failed connection (refused, timeout …).
    pub kind: crate::record::ErrorKind,
    /// The one line the run ends with: what failed, and what to check.
    pub why: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
enum State {
    /// The first connection has not connected yet.
    Pending,
    /// It has: everyone may connect.
    Open,
    /// The run is over; see the reason.
    Aborted,
}

/// Shared by all workers of a run.
#[derive(Debug)]
pub struct Gate {
    state: watch::Sender<State>,
    /// The state as a number, for the checks made for every connection and every wake of its
    /// task: one atomic load, where the watch's value is behind a lock. Written before the
    /// watch is told, so a waiter woken by the watch sees it.
    now: AtomicU8,
    reason: Mutex<Option<Abort>>,
    /// The wakers of the tasks running [`Gate::unless_aborted`], woken by an abort.
    stopping: Mutex<Vec<Waker>>,
}

impl Default for Gate {
    fn default() -> Self {
        Gate::new()
    }
}

impl Gate {
    /// A closed gate: only the first connection may connect.
    pub fn new() -> Gate {
        Gate {
            state: watch::channel(State::Pending).0,
            now: AtomicU8::new(State::Pending as u8),
            reason: Mutex::new(None),
            stopping: Mutex::new(Vec::new()),
        }
    }

    /// Whether the first connection has yet to connect.
    pub fn pending(&self) -> bool {
        self.now.load(Ordering::Acquire) == State::Pending as u8
    }

    /// Whether the run has been stopped.
    pub fn aborted(&self) -> bool {
        self.now.load(Ordering::Acquire) == State::Aborted as u8
    }

    /// The first connection is up: let the others connect.
    pub fn open(&self) {
        self.state.send_if_modified(|s| {
            let was = *s == State::Pending;
            if was {
                *s = State::Open;
                self.now.store(State::Open as u8, Ordering::Release);
            }
            was
        });
    }

    /// Stops the run for `why`, unless it was stopped already (the first reason stands).
    pub fn abort(&self, why: Abort) {
        let mut reason = self.reason.lock().unwrap_or_else(|e| e.into_inner());
        if reason.is_none() {
            *reason = Some(why);
        }
        drop(reason);
        // Under the watch's lock, so that a concurrent open() cannot write Open after it.
        self.state.send_modify(|s| {
            *s = State::Aborted;
            self.now.store(State::Aborted as u8, Ordering::Release);
        });
        // After the store: a task registered later reads Aborted itself.
        let stopping =
            std::mem::take(&mut *self.stopping.lock().unwrap_or_else(|e| e.into_inner()));
        for waker in stopping {
            waker.wake();
        }
    }

    /// Waits until the gate opens; false if the run was stopped instead.
    pub async fn wait_open(&self) -> bool {
        let mut rx = self.state.subscribe();
        let open = match rx.wait_for(|s| *s != State::Pending).await {
            Ok(s) => *s == State::Open,
            Err(_) => false,
        };
        open
    }

    /// Runs `work` until it completes (Some of its output) or the run is stopped (None), the
    /// stop first when both are ready. The task's waker is registered with the gate once (again
    /// only if the task's waker changes), and [`Gate::abort`] wakes every one registered; at each
    /// wake of the task the stop costs one atomic load. A wait on the gate's watch here cost a
    /// lock and a waker comparison inside tokio's Notify at every wake (234 instructions per
    /// request in crr; callgrind), and skipping that wait while the state looked unchanged lost
    /// the abort when a poll fell between the state's store and the watch's notice.
    ///
    /// Not an `async fn`: one would keep `work` twice, the argument beside its pinned copy (a
    /// connection's phases, ~4.8 KB for HTTP, made each task 9.7 KB; `rustc -Zprint-type-sizes`).
    /// It is boxed here instead, once per call.
    pub fn unless_aborted<'a, F: std::future::Future + 'a>(
        &'a self,
        work: F,
    ) -> impl std::future::Future<Output = Option<F::Output>> + 'a {
        use std::task::Poll;
        let mut work = Box::pin(work);
        let mut armed: Option<Waker> = None;
        std::future::poll_fn(move |cx| {
            if armed.as_ref().is_none_or(|w| !w.will_wake(cx.waker())) {
                // Registered before the state is read: an abort after this read wakes it.
                self.stopping
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push(cx.waker().clone());
                armed = Some(cx.waker().clone());
            }
            if self.aborted() {
                return Poll::Ready(None);
            }
            work.as_mut().poll(cx).map(Some)
        })
    }

    /// Why the run was stopped, if it was.
    pub fn reason(&self) -> Option<Abort> {
        self.reason
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::block_on;

    #[test]
    fn opens_once_and_the_first_reason_stands() {
        let g = Gate::new();
        assert!(g.pending() && !g.aborted());
        g.open();
        assert!(block_on(g.wait_open()));
        g.abort(Abort::Usage("first".into()));
        g.abort(Abort::Usage("second".into()));
        assert!(g.aborted());
        assert_eq!(g.reason(), Some(Abort::Usage("first".into())));
        assert_eq!(
            block_on(g.unless_aborted(std::future::pending::<()>())),
            None
        );
    }

    #[test]
    fn work_stops_at_an_abort_after_the_gate_opened() {
        // The open wakes the stop's waiter; the abort after it must still be seen.
        let g = std::sync::Arc::new(Gate::new());
        let g2 = g.clone();
        let t =
            std::thread::spawn(move || block_on(g2.unless_aborted(std::future::pending::<()>())));
        std::thread::sleep(std::time::Duration::from_millis(20));
        g.open();
        std::thread::sleep(std::time::Duration::from_millis(20));
        g.abort(Abort::Usage("down".into()));
        assert_eq!(t.join().unwrap(), None);
        assert_eq!(
            block_on(g.unless_aborted(async { 7 })),
            None,
            "aborted first"
        );
        let open = Gate::new();
        open.open();
        assert_eq!(block_on(open.unless_aborted(async { 7 })), Some(7));
    }

    #[test]
    fn waiters_learn_of_an_abort_from_another_thread() {
        let g = std::sync::Arc::new(Gate::new());
        let g2 = g.clone();
        let t = std::thread::spawn(move || block_on(g2.wait_open()));
        std::thread::sleep(std::time::Duration::from_millis(20));
        g.abort(Abort::Usage("down".into()));
        assert!(!t.join().unwrap());
    }

    #[test]
    fn every_connection_sees_an_abort_however_it_races_the_poll() {
        // Connections polled on another thread while the run is stopped, some at every turn of
        // their runtime (as one whose reads keep completing is), some parked: each must end.
        // A poll that fell between the state's store and the watch's notice once took the new
        // state as seen and never looked again: a peak step after a killed target hung.
        use std::future::Future;
        use std::sync::Arc;
        use std::task::Poll;
        fn busy() -> impl Future<Output = ()> {
            std::future::poll_fn(|cx| {
                cx.waker().wake_by_ref();
                Poll::Pending
            })
        }
        for round in 0..300u32 {
            let g = Arc::new(Gate::new());
            let g2 = g.clone();
            let t = std::thread::spawn(move || {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .unwrap();
                let local = tokio::task::LocalSet::new();
                local.block_on(&rt, async move {
                    let tasks: Vec<_> = (0..6)
                        .map(|i| {
                            let g = g2.clone();
                            tokio::task::spawn_local(async move {
                                if i % 2 == 0 {
                                    g.unless_aborted(busy()).await
                                } else {
                                    g.unless_aborted(std::future::pending::<()>()).await
                                }
                            })
                        })
                        .collect();
                    let all = async {
                        for t in tasks {
                            assert_eq!(t.await.unwrap(), None);
                        }
                    };
                    tokio::time::timeout(std::time::Duration::from_secs(5), all)
                        .await
                        .is_ok()
                })
            });
            if round % 2 == 1 {
                g.open();
            }
            for _ in 0..(round * 37) % 5000 {
                std::hint::spin_loop();
            }
            g.abort(Abort::Usage("down".into()));
            assert!(
                t.join().unwrap(),
                "round {round}: a connection missed the stop"
            );
        }
    }
}
