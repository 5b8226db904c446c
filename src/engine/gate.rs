//! The first connection is the run's reachability check: the others wait for it, so a target
//! that is not there, or that refuses what the user asked for, ends the run at once with one
//! line, and a target is only ever sent what the run itself sends (no hidden probe connection).
//! A target that takes the first connection and then never answers its handshake (HTTP/2
//! SETTINGS, a DICOM association, TLS) is there: the gate opens, and the run counts its
//! timeouts as it does a tcp target's that never replies (`conn::steps::silent_target`).
//!
//! The gate is also how a fatal error ([`crate::record::OpError::fatal`]) seen by any connection
//! on any worker stops every other one: the first reason given wins and is what the run reports.

use std::sync::Mutex;
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
    reason: Mutex<Option<Abort>>,
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
            reason: Mutex::new(None),
        }
    }

    /// Whether the first connection has yet to connect.
    pub fn pending(&self) -> bool {
        *self.state.borrow() == State::Pending
    }

    /// Whether the run has been stopped.
    pub fn aborted(&self) -> bool {
        *self.state.borrow() == State::Aborted
    }

    /// The first connection is up: let the others connect.
    pub fn open(&self) {
        self.state.send_if_modified(|s| {
            let was = *s == State::Pending;
            if was {
                *s = State::Open;
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
        self.state.send_replace(State::Aborted);
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

    /// Resolves when the run is stopped (never, if it is not).
    pub async fn until_aborted(&self) {
        let mut rx = self.state.subscribe();
        let _ = rx.wait_for(|s| *s == State::Aborted).await;
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

    fn block_on<F: std::future::Future>(f: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(f)
    }

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
        block_on(g.until_aborted());
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
}
