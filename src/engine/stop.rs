//! Stopping a run early from outside (Ctrl-C): a process-wide flag each worker watches beside
//! its connections. A stopped run ends like one at its deadline, only sooner: the connections
//! stop, the workers hand in what they recorded, and the measured time is the time until the
//! stop, so the rates of the partial run are true rates.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// The flag: written once, so reading it on a hot path costs no cache-line traffic.
static STOPPED: AtomicBool = AtomicBool::new(false);

/// How often a worker looks at the flag while its connections wait on the network.
const POLL: Duration = Duration::from_millis(50);

/// Asks the run in progress (and any later one in this process) to stop now.
pub fn request() {
    STOPPED.store(true, Ordering::Relaxed);
}

/// Whether a stop was asked for.
pub fn requested() -> bool {
    STOPPED.load(Ordering::Relaxed)
}

/// Resolves once a stop is asked for, looking every 50 ms on the worker's own timer: a
/// worker waits on this beside its connections, so an open loop or a connection stalled on its
/// target stops within 50 ms, and nothing shared across threads is touched per request (a
/// closed loop reads [`requested`] before each request: a load of a line no one writes).
pub async fn polled() {
    while !requested() {
        tokio::time::sleep(POLL).await;
    }
}
