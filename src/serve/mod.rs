//! Reference servers to measure against. Each takes a bound listener, its options and a
//! [`Shutdown`], so tests bind `127.0.0.1:0` and call the same `run` the CLI does.

pub mod http;
pub mod tcp;
pub mod udp;

use std::sync::Arc;
use tokio::sync::watch;

/// Tells a running server (all its threads) to stop; cloneable, usable from any thread.
#[derive(Clone, Debug)]
pub struct Shutdown {
    tx: Arc<watch::Sender<bool>>,
}

impl Default for Shutdown {
    fn default() -> Self {
        Shutdown::new()
    }
}

impl Shutdown {
    /// A shutdown that has not been triggered.
    pub fn new() -> Shutdown {
        Shutdown {
            tx: Arc::new(watch::channel(false).0),
        }
    }

    /// Asks every server holding this shutdown to stop.
    pub fn trigger(&self) {
        self.tx.send_replace(true);
    }

    /// True once triggered.
    pub fn is_triggered(&self) -> bool {
        *self.tx.borrow()
    }

    /// Resolves once triggered (at once if it already was).
    pub async fn wait(&self) {
        let mut rx = self.tx.subscribe();
        // An error means the sender is gone, which cannot happen while `self` holds it.
        let _ = rx.wait_for(|stop| *stop).await;
    }
}

/// Waits for SIGINT or SIGTERM on a small runtime of its own, then triggers `shutdown`.
pub fn trigger_on_signal(shutdown: Shutdown) -> std::io::Result<()> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            rt.block_on(async {
                use tokio::signal::unix::{signal, SignalKind};
                let (Ok(mut int), Ok(mut term)) = (
                    signal(SignalKind::interrupt()),
                    signal(SignalKind::terminate()),
                ) else {
                    return;
                };
                tokio::select! {
                    _ = int.recv() => {},
                    _ = term.recv() => {},
                    _ = shutdown.wait() => {},
                }
                shutdown.trigger();
            })
        })?;
    Ok(())
}
