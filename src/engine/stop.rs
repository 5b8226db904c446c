//! Stopping a run early from outside (Ctrl-C, or the program that embeds the library): a
//! [`Stop`] handle each run is given and each worker watches beside its connections. A stopped
//! run ends like one at its deadline, only sooner: the connections stop, the workers hand in
//! what they recorded, and the measured time is the time until the stop, so the rates of the
//! partial run are true rates.
//!
//! Each run has its own handle, so a stop ends only the runs that share it: two runs in one
//! process (an embedding program, a test) do not stop each other. The command line's runs
//! share the process's handle (`app::signals::process`), which SIGINT and SIGTERM request.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// How often a worker looks at the flag while its connections wait on the network (on its own
/// clock, beside its connections: an open loop or a connection stalled on its target stops
/// within this; a closed loop also reads [`Stop::requested`] before each request, a load of a
/// line no one writes, so nothing shared across threads is touched per request).
pub(super) const POLL: Duration = Duration::from_millis(50);

/// A stop for the runs given it: cloned handles share one flag, written once, so reading it on
/// a hot path costs no cache-line traffic.
#[derive(Clone, Debug, Default)]
pub struct Stop(Arc<Flag>);

/// The flag and who raised it.
#[derive(Debug, Default)]
struct Flag {
    raised: AtomicBool,
    by: OnceLock<&'static str>,
}

impl Stop {
    /// A handle no one has asked to stop.
    pub fn new() -> Stop {
        Stop::default()
    }

    /// Asks the runs given this handle (and any later one given it) to stop now.
    pub fn request(&self) {
        self.0.raised.store(true, Ordering::Relaxed);
    }

    /// [`Stop::request`], naming who asked (`Ctrl-C`, `SIGTERM`), as a study's document says
    /// why it stopped ("stopped by Ctrl-C").
    pub fn request_by(&self, who: &'static str) {
        let _ = self.0.by.set(who);
        self.request();
    }

    /// Whether a stop was asked for.
    pub fn requested(&self) -> bool {
        self.0.raised.load(Ordering::Relaxed)
    }

    /// Who asked for the stop, as [`Stop::request_by`] named it; `a stop request` otherwise.
    pub fn by(&self) -> &'static str {
        self.0.by.get().copied().unwrap_or("a stop request")
    }
}
