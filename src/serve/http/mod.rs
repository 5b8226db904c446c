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

mod body;
mod conn;
pub(super) mod file;
#[doc(hidden)]
pub mod fuzz;
pub(super) mod request;
pub(super) mod response;
mod stats;

pub use stats::HttpServerStats;

use super::listen;
use super::rate::Service;
use super::threads::Ready;
use super::{Handle, Shutdown};
use crate::sys::socket::SocketOptions;
use std::io;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// How long a request head may take to arrive, by default.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a keep-alive connection may wait for its next request, by default.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(60);
/// The longest `/delay/D`, by default (`--max-delay`).
pub const DEFAULT_MAX_DELAY: Duration = Duration::from_secs(60);
/// The largest request head (request line and header fields), by default.
pub const DEFAULT_MAX_HEADER_BYTES: usize = 16 * 1024;

/// The smallest and largest `max_header_bytes` accepted.
pub const HEADER_LIMITS: std::ops::RangeInclusive<u64> = 256..=1 << 20;

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
    /// as 400, 408 and 431, are answered at once). Added to `/delay/D`. Both are waited to
    /// within a few µs (see `serve/delay.rs`), not to tokio's 1 ms tick.
    pub delay: Option<Duration>,
    /// The longest `/delay/D` a request may ask for; a longer one gets 400 at once, so no
    /// request holds a connection (and its descriptor) longer than this.
    pub max_delay: Duration,
    /// `--max-rate`: a server-wide capacity in requests/s across all threads and connections;
    /// requests beyond it wait in one FIFO queue before their delay (see `serve/rate.rs`).
    pub max_rate: Option<f64>,
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
            max_delay: DEFAULT_MAX_DELAY,
            max_rate: None,
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

/// What every connection of one server shares, read-only.
#[derive(Debug)]
pub(crate) struct Shared {
    options: HttpServerOptions,
    /// `dir`, held open: served paths are resolved beneath it.
    root: Option<file::Root>,
    /// When each request is answered: `delay` and `max_rate`.
    service: Service,
}

impl Shared {
    fn new(options: HttpServerOptions) -> io::Result<Shared> {
        let invalid = |what: String| Err(io::Error::new(io::ErrorKind::InvalidInput, what));
        if options.request_timeout.is_zero() || options.idle_timeout.is_zero() {
            return invalid("request and idle timeouts must be above zero".into());
        }
        if !HEADER_LIMITS.contains(&(options.max_header_bytes as u64)) {
            return invalid(format!(
                "max_header_bytes must lie in {}..={}",
                HEADER_LIMITS.start(),
                HEADER_LIMITS.end()
            ));
        }
        let root = match &options.dir {
            None => None,
            Some(dir) => {
                if !dir.is_dir() {
                    if let Err(e) = std::fs::metadata(dir) {
                        let why = format!("directory {}: {e}", dir.display());
                        return Err(io::Error::new(e.kind(), why));
                    }
                    return invalid(format!("{} is not a directory", dir.display()));
                }
                let root = file::Root::open(dir).map_err(|e| {
                    io::Error::new(e.kind(), format!("directory {}: {e}", dir.display()))
                })?;
                Some(root)
            }
        };
        if options
            .max_rate
            .is_some_and(|r| !(r > 0.0 && r.is_finite()))
        {
            return invalid("max_rate must be above zero".into());
        }
        let service = Service::new(options.delay, options.max_rate);
        Ok(Shared {
            options,
            root,
            service,
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
    prepare(listener, options)?.run(shutdown)
}

/// A server running on a background thread (see [`spawn`]). Dropping it stops the server too.
pub type HttpServerHandle = Handle<HttpServerStats>;

/// Runs [`run`] on a background thread. Start-up errors (bad options, a missing directory, no
/// runtime) are returned here; the listener is already listening, so clients may connect as
/// soon as this returns.
pub fn spawn(
    listener: std::net::TcpListener,
    options: HttpServerOptions,
) -> io::Result<HttpServerHandle> {
    prepare(listener, options)?.spawn()
}

/// Everything that can fail before serving, done before the first thread starts. Returns the
/// server ready to start: it runs its threads until shutdown, each accepting on its own runtime,
/// then dropping the runtime, which ends the connections it serves.
fn prepare(
    listener: std::net::TcpListener,
    options: HttpServerOptions,
) -> io::Result<Ready<HttpServerStats>> {
    let shared = Arc::new(Shared::new(options)?);
    let o = &shared.options;
    let (socket, threads, max) = (o.socket, o.threads, o.max_connections);
    listen::accepting(
        "serve-http",
        listener,
        socket,
        threads,
        max,
        move |stream, admission, _| {
            let shared = shared.clone();
            tokio::spawn(async move {
                conn::serve(stream, &shared, &admission.tally).await;
                drop(admission);
            });
        },
    )
}
