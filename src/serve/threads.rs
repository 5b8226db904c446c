//! The threads of a server: one per server thread, started and joined together; a server
//! [`Ready`] to run them, in the caller's thread or on a background thread behind a [`Handle`].

use super::counters::{CounterSet, Snapshot, Tally};
use super::Shutdown;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::thread::JoinHandle;
use tokio::runtime::Runtime;

/// A single-threaded runtime with I/O and timers, as each server thread runs.
pub(crate) fn runtime() -> io::Result<Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
}

/// Starts a thread `{name}-{i}` for each item, running what `start(i, item)` returns, and waits
/// for them all; the first error wins. A thread that fails stops the whole server. If a thread
/// cannot start, the server is stopped, the threads already started are waited for, and the
/// error is returned.
fn run_threads<T, F>(
    name: &str,
    items: Vec<T>,
    shutdown: &Shutdown,
    mut start: impl FnMut(usize, T) -> F,
) -> io::Result<()>
where
    F: FnOnce() -> io::Result<()> + Send + 'static,
{
    let mut workers = Vec::with_capacity(items.len());
    for (i, item) in items.into_iter().enumerate() {
        let (body, stop) = (start(i, item), shutdown.clone());
        let spawned = std::thread::Builder::new()
            .name(format!("{name}-{i}"))
            .spawn(move || {
                let result = body();
                if result.is_err() {
                    // A server missing a thread would still look alive; stop all of it instead.
                    stop.trigger();
                }
                result
            });
        match spawned {
            Ok(w) => workers.push(w),
            Err(e) => {
                shutdown.trigger();
                join(workers)?;
                return Err(e);
            }
        }
    }
    join(workers)
}

/// Waits for every worker; the first error wins.
fn join(workers: Vec<JoinHandle<io::Result<()>>>) -> io::Result<()> {
    let mut result = Ok(());
    for w in workers {
        let r = w
            .join()
            .unwrap_or_else(|_| Err(io::Error::other("a server thread panicked")));
        if result.is_ok() {
            result = r;
        }
    }
    result
}

/// A server ready to start, with stats `S`: everything that can fail before serving is done, so
/// a start-up error leaves nothing running. It runs one thread per item it was given (a socket,
/// a runtime …) until shutdown, each with that thread's counters.
pub(crate) struct Ready<S: Snapshot> {
    /// The server's name, e.g. `serve-tcp`, for its threads.
    name: &'static str,
    /// The address it listens on (is bound to).
    addr: SocketAddr,
    counters: Arc<CounterSet<S>>,
    serve: Box<dyn FnOnce(Shutdown) -> io::Result<()> + Send>,
}

impl<S: Snapshot + 'static> Ready<S> {
    /// A server listening on `addr` that runs a thread `{name}-{i}` per item, each running what
    /// `start(item, counters of thread i, shutdown)` returns.
    pub(crate) fn new<T, F>(
        name: &'static str,
        addr: SocketAddr,
        items: Vec<T>,
        mut start: impl FnMut(T, Tally<S>, Shutdown) -> F + Send + 'static,
    ) -> Ready<S>
    where
        T: Send + 'static,
        F: FnOnce() -> io::Result<()> + Send + 'static,
    {
        let counters = CounterSet::new(items.len());
        let set = counters.clone();
        let serve = move |shutdown: Shutdown| {
            run_threads(name, items, &shutdown, |i, item| {
                start(item, Tally::new(set.clone(), i), shutdown.clone())
            })
        };
        Ready {
            name,
            addr,
            counters,
            serve: Box::new(serve),
        }
    }

    /// Serves until `shutdown` is triggered, then returns the final counters.
    pub(crate) fn run(self, shutdown: Shutdown) -> io::Result<S> {
        (self.serve)(shutdown)?;
        Ok(self.counters.snapshot())
    }

    /// Serves on a background thread until the handle is stopped or dropped.
    pub(crate) fn spawn(self) -> io::Result<Handle<S>> {
        let shutdown = Shutdown::new();
        let (stop, serve) = (shutdown.clone(), self.serve);
        let thread = std::thread::Builder::new()
            .name(self.name.into())
            .spawn(move || serve(stop))?;
        Ok(Handle {
            addr: self.addr,
            shutdown,
            counters: self.counters,
            thread: Some(thread),
        })
    }
}

/// A server running on a background thread (see each server's `spawn`), with stats `S`.
/// Dropping it stops the server too.
#[derive(Debug)]
pub struct Handle<S: Snapshot> {
    /// The address the server listens on (is bound to).
    pub addr: SocketAddr,
    shutdown: Shutdown,
    counters: Arc<CounterSet<S>>,
    thread: Option<JoinHandle<io::Result<()>>>,
}

impl<S: Snapshot> Handle<S> {
    /// The counters so far, while the server runs.
    pub fn stats(&self) -> S {
        self.counters.snapshot()
    }

    /// Stops the server, waits for its threads and returns the final counters.
    pub fn stop(mut self) -> S {
        self.finish();
        self.counters.snapshot()
    }

    fn finish(&mut self) {
        self.shutdown.trigger();
        if let Some(thread) = self.thread.take() {
            // Start-up errors were returned by `spawn`; a later failure (a thread that could not
            // start) already stopped the server, and its counters say what it did.
            let _ = thread.join();
        }
    }
}

impl<S: Snapshot> Drop for Handle<S> {
    fn drop(&mut self) {
        self.finish();
    }
}
