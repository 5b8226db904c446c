//! Stopping a run early from outside (Ctrl-C): a process-wide flag every connection watches
//! beside its deadline. A stopped run ends like one at its deadline, only sooner: the
//! connections stop, the workers hand in what they recorded, and the measured time is the time
//! until the stop, so the rates of the partial run are true rates.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

/// The flag the hot paths read: written once, so reading it costs no cache-line traffic.
static STOPPED: AtomicBool = AtomicBool::new(false);
use tokio::sync::watch;

fn flag() -> &'static watch::Sender<bool> {
    static STOP: OnceLock<watch::Sender<bool>> = OnceLock::new();
    STOP.get_or_init(|| watch::channel(false).0)
}

/// Asks the run in progress (and any later one in this process) to stop now.
pub fn request() {
    STOPPED.store(true, Ordering::Relaxed);
    flag().send_replace(true);
}

/// Whether a stop was asked for.
pub fn requested() -> bool {
    STOPPED.load(Ordering::Relaxed)
}

/// Resolves once a stop is asked for (connections waiting on the network see it here; a
/// blocking closed loop sees [`requested`] before each request).
pub async fn wait() {
    let mut rx = flag().subscribe();
    let _ = rx.wait_for(|stop| *stop).await;
}
