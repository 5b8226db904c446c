//! The reference HTTP/1.1 server, the baseline for HTTP load tests ("a service" vs "the same
//! bytes as a plain file").
//!
//! # Routes
//!
//! - `GET /bytes/N`: 200 with an N-byte body (`k`, `M`, `G` suffixes, up to 1 TiB), cut from a
//!   fixed 64 KiB block, so any size takes constant memory.
//! - `/delay/D`: waits D (e.g. `/delay/5ms`), then 200 with a short body.
//! - `/status/CODE`: that status (200–599; 1xx is a 400) with a short body (none for 204, 205
//!   and 304).
//! - `POST|PUT /echo`: 200 with the request body, streamed as it arrives; a chunked request gets
//!   a chunked response, the only response without a Content-Length.
//! - With [`HttpServerOptions::dir`], any other `GET` path serves the file under the directory,
//!   with `sendfile(2)`; paths are canonicalized and must stay inside (else 403).
//! - Anything else: 404; a method a route does not take: 405; an unknown method: 405. `HEAD`
//!   works wherever `GET` does.
//!
//! # Design
//!
//! As the TCP server: `threads` OS threads each run a single-threaded tokio runtime with its own
//! handle on the one listening socket, and serve the connections they accept to the end, with
//! counters on cache lines of their own (see `stats`). A connection (see `conn`) reads into a
//! fixed buffer, parses heads with `httparse`, queues the responses of all the complete requests
//! it holds in one output buffer and writes that once, so pipelined requests cost one write
//! per batch and a small response is one write, head and body together. Per connection the
//! memory is bounded whatever a client sends; timeouts bound how long a slow client holds it.
//!
//! Shutdown stops every thread's accept loop; dropping the runtime then ends its connection
//! tasks at once.

mod command;
mod conn;
mod file;
mod request;
mod response;
mod stats;

pub use command::main;
pub use stats::HttpServerStats;

use crate::plan::SocketOptions;
use crate::serve::Shutdown;
use socket2::SockRef;
use stats::{CounterSet, Tally};
use std::io;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};

/// How long a request head may take to arrive, by default.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a keep-alive connection may wait for its next request, by default.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(60);
/// The largest request head (request line and header fields), by default.
pub const DEFAULT_MAX_HEADER_BYTES: usize = 16 * 1024;

/// The smallest and largest `max_header_bytes` accepted.
const HEADER_LIMITS: std::ops::RangeInclusive<usize> = 256..=1 << 20;

/// How long a thread backs off after a failed accept (e.g. out of file descriptors).
const ACCEPT_BACKOFF: Duration = Duration::from_millis(10);

/// What the server does and how.
#[derive(Clone, Debug)]
pub struct HttpServerOptions {
    /// Serve the files under this directory for paths that are not routes; it must exist.
    pub dir: Option<PathBuf>,
    /// A request head must arrive within this long: from the connection for its first request,
    /// from its first byte for later ones. Else 408 and close (a connection that sent nothing
    /// is closed without a response).
    pub request_timeout: Duration,
    /// A keep-alive connection waits this long for its next request, then closes; a read of a
    /// body or a write that makes no progress for this long ends the connection too.
    pub idle_timeout: Duration,
    /// Service time: wait this long before every response to a request (protocol errors, such
    /// as 400, 408 and 431, are answered at once). Added to `/delay/D`.
    pub delay: Option<Duration>,
    /// The largest request head; a larger one gets 431 and a close. 256 B to 1 MiB.
    pub max_header_bytes: usize,
    /// Connections beyond this many open at a time are accepted and closed at once.
    pub max_connections: Option<usize>,
    /// Options applied to every accepted socket (and SO_RCVBUF to the listener).
    pub socket: SocketOptions,
    /// Server threads, each with its own runtime (at least 1).
    pub threads: usize,
}

impl Default for HttpServerOptions {
    fn default() -> Self {
        HttpServerOptions {
            dir: None,
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            delay: None,
            max_header_bytes: DEFAULT_MAX_HEADER_BYTES,
            max_connections: None,
            socket: SocketOptions {
                nodelay: true,
                ..SocketOptions::default()
            },
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
        }
    }
}

/// What every connection of one server shares, read-only except for the admission count.
#[derive(Debug)]
pub(crate) struct Shared {
    options: HttpServerOptions,
    /// `dir`, canonical: served paths must lie under it.
    root: Option<PathBuf>,
    /// Connections open now, over all threads; only kept when `max_connections` is set.
    admitted: AtomicUsize,
}

impl Shared {
    fn new(options: HttpServerOptions) -> io::Result<Shared> {
        let invalid = |what: String| Err(io::Error::new(io::ErrorKind::InvalidInput, what));
        if options.request_timeout.is_zero() || options.idle_timeout.is_zero() {
            return invalid("request and idle timeouts must be above zero".into());
        }
        if !HEADER_LIMITS.contains(&options.max_header_bytes) {
            return invalid(format!(
                "max_header_bytes must lie in {}..={}",
                HEADER_LIMITS.start(),
                HEADER_LIMITS.end()
            ));
        }
        let root = match &options.dir {
            None => None,
            Some(dir) => {
                let root = std::fs::canonicalize(dir).map_err(|e| {
                    io::Error::new(e.kind(), format!("directory {}: {e}", dir.display()))
                })?;
                if !root.is_dir() {
                    return invalid(format!("{} is not a directory", dir.display()));
                }
                Some(root)
            }
        };
        Ok(Shared {
            options,
            root,
            admitted: AtomicUsize::new(0),
        })
    }
}

/// Serves `listener` until `shutdown` is triggered, then returns the final counters.
///
/// The listener must be bound and listening; it is switched to non-blocking mode here. Fails
/// only if the server cannot start (bad options, a missing directory, no threads or runtimes);
/// per-connection errors just end that connection.
pub fn run(
    listener: std::net::TcpListener,
    options: HttpServerOptions,
    shutdown: Shutdown,
) -> io::Result<HttpServerStats> {
    let counters = CounterSet::new(options.threads);
    let prepared = prepare(listener, options)?;
    serve(prepared, shutdown, counters.clone())?;
    Ok(counters.snapshot())
}

/// A server running on a background thread (see [`spawn`]). Dropping it stops the server too.
#[derive(Debug)]
pub struct HttpServerHandle {
    /// The address the server listens on.
    pub addr: SocketAddr,
    shutdown: Shutdown,
    counters: Arc<CounterSet>,
    thread: Option<JoinHandle<io::Result<()>>>,
}

impl HttpServerHandle {
    /// The counters so far, while the server runs.
    pub fn stats(&self) -> HttpServerStats {
        self.counters.snapshot()
    }

    /// Stops the server, waits for its threads and returns the final counters.
    pub fn stop(mut self) -> HttpServerStats {
        self.finish();
        self.counters.snapshot()
    }

    fn finish(&mut self) {
        self.shutdown.trigger();
        if let Some(thread) = self.thread.take() {
            // Start-up errors were returned by `spawn`; a later failure already stopped the
            // server, and its counters say what it did.
            let _ = thread.join();
        }
    }
}

impl Drop for HttpServerHandle {
    fn drop(&mut self) {
        self.finish();
    }
}

/// Runs [`run`] on a background thread. Start-up errors (bad options, a missing directory, no
/// runtime) are returned here; the listener is already listening, so clients may connect as
/// soon as this returns.
pub fn spawn(
    listener: std::net::TcpListener,
    options: HttpServerOptions,
) -> io::Result<HttpServerHandle> {
    let addr = listener.local_addr()?;
    let shutdown = Shutdown::new();
    let counters = CounterSet::new(options.threads);
    let prepared = prepare(listener, options)?;
    let (stop, set) = (shutdown.clone(), counters.clone());
    let thread = std::thread::Builder::new()
        .name("serve-http".into())
        .spawn(move || serve(prepared, stop, set))?;
    Ok(HttpServerHandle {
        addr,
        shutdown,
        counters,
        thread: Some(thread),
    })
}

/// A server ready to start: per thread a handle on the listener and a runtime, and what its
/// connections share.
struct Prepared {
    threads: Vec<(std::net::TcpListener, tokio::runtime::Runtime)>,
    shared: Arc<Shared>,
}

/// Everything that can fail before serving, done before the first thread starts.
fn prepare(listener: std::net::TcpListener, options: HttpServerOptions) -> io::Result<Prepared> {
    listener.set_nonblocking(true)?;
    if let Some(n) = options.socket.rcvbuf {
        SockRef::from(&listener).set_recv_buffer_size(n)?;
    }
    let count = options.threads.max(1);
    let shared = Arc::new(Shared::new(options)?);
    let mut threads = Vec::with_capacity(count);
    for _ in 0..count {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        // A duplicate descriptor of the same socket: every thread accepts from the one queue.
        threads.push((listener.try_clone()?, runtime));
    }
    Ok(Prepared { threads, shared })
}

/// Starts the server threads and waits for them.
fn serve(prepared: Prepared, shutdown: Shutdown, counters: Arc<CounterSet>) -> io::Result<()> {
    let Prepared { threads, shared } = prepared;
    let mut workers = Vec::with_capacity(threads.len());
    for (i, (listener, runtime)) in threads.into_iter().enumerate() {
        let (shared, stop) = (shared.clone(), shutdown.clone());
        let tally = Tally::new(counters.clone(), i);
        let spawned = std::thread::Builder::new()
            .name(format!("serve-http-{i}"))
            .spawn(move || worker(runtime, listener, shared, tally, stop));
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

/// One server thread: accepts on its own runtime until shutdown, then drops the runtime, which
/// ends the connections it serves.
fn worker(
    runtime: tokio::runtime::Runtime,
    listener: std::net::TcpListener,
    shared: Arc<Shared>,
    tally: Tally,
    shutdown: Shutdown,
) -> io::Result<()> {
    let result = runtime.block_on(async {
        let listener = TcpListener::from_std(listener)?;
        let stopped = shutdown.wait();
        tokio::pin!(stopped);
        loop {
            tokio::select! {
                _ = &mut stopped => return Ok(()),
                accepted = listener.accept() => match accepted {
                    Ok((stream, _)) => admit(stream, &shared, &tally),
                    Err(_) => tokio::time::sleep(ACCEPT_BACKOFF).await,
                },
            }
        }
    });
    if result.is_err() {
        // A server missing a thread would still look alive; stop all of it instead.
        shutdown.trigger();
    }
    result
}

/// Applies the connection limit and socket options, then serves the connection on this thread.
fn admit(stream: TcpStream, shared: &Arc<Shared>, tally: &Tally) {
    let Some(admission) = Admission::new(shared, tally) else {
        tally.rejected();
        return; // dropping the stream closes it
    };
    let socket = &shared.options.socket;
    // Failures are ignored: the peer may already have reset the connection, and then the first
    // read says so.
    let _ = stream.set_nodelay(socket.nodelay);
    let sock = SockRef::from(&stream);
    if let Some(n) = socket.sndbuf {
        let _ = sock.set_send_buffer_size(n);
    }
    if let Some(n) = socket.rcvbuf {
        let _ = sock.set_recv_buffer_size(n);
    }
    let shared = shared.clone();
    tokio::spawn(async move {
        conn::serve(stream, &shared, &admission.tally).await;
        drop(admission);
    });
}

/// An admitted connection: counted open (and against the limit) until dropped, which happens
/// when its task ends or its runtime is dropped.
struct Admission {
    tally: Tally,
    limited: Option<Arc<Shared>>,
}

impl Admission {
    /// Admits a connection, or `None` when `max_connections` are already open.
    fn new(shared: &Arc<Shared>, tally: &Tally) -> Option<Admission> {
        let limited = match shared.options.max_connections {
            Some(max) => {
                if shared.admitted.fetch_add(1, Ordering::Relaxed) >= max {
                    shared.admitted.fetch_sub(1, Ordering::Relaxed);
                    return None;
                }
                Some(shared.clone())
            }
            None => None,
        };
        tally.opened();
        Some(Admission {
            tally: tally.clone(),
            limited,
        })
    }
}

impl Drop for Admission {
    fn drop(&mut self) {
        self.tally.closed();
        if let Some(shared) = &self.limited {
            shared.admitted.fetch_sub(1, Ordering::Relaxed);
        }
    }
}
