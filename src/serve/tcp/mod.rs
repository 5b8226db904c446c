//! The reference TCP server: echo, sink or source, for wirebench clients (which announce their
//! sizes in a preamble, see [`crate::wire::framing`]) and plain clients alike.
//!
//! # Design
//!
//! `threads` OS threads each run a single-threaded tokio runtime with its own handle on the one
//! listening socket; whichever thread accepts a connection serves it to the end, so a connection
//! never migrates and its counters stay on one thread's cache lines (see `stats`). A connection
//! (see `conn`) reads into a fixed 64 KiB buffer and answers each read with one write, however
//! many pipelined requests the read held; it never buffers a whole request, so memory per
//! connection is bounded whatever a client sends.
//!
//! Shutdown stops every thread's accept loop; dropping the runtime then ends its connection tasks
//! at once. Connection tasks deliberately do not watch the shutdown themselves: polling a shared
//! watch on every wake-up would take a cross-thread lock per request.

mod blocking;
mod conn;
mod filler;
mod framer;
mod stats;
mod transfer;

pub use stats::ServerStats;

use super::listen::{self, Admission};
use super::rate::Service;
use super::threads::{runtime, Ready};
use super::{Handle, Mode, Shutdown};
use crate::sys::socket::SocketOptions;
use filler::Filler;
use framer::Framer;
use std::io;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpStream;

/// How long a connection may stay silent, by default: far above any think time or open-loop
/// gap a load test uses, yet it bounds how long a client that never speaks holds a connection.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(300);

/// Message size pushed to plain clients in source mode when none is configured.
pub const DEFAULT_SOURCE_SIZE: usize = 1024;

/// What the server does and how.
#[derive(Clone, Debug)]
pub struct TcpServerOptions {
    /// Echo, sink or source. A wirebench client whose intent does not fit is told so and closed.
    pub mode: Mode,
    /// Echo mode, plain clients: reply to each request with this many bytes instead of echoing
    /// it. Wirebench clients announce their own reply size.
    pub reply_size: Option<usize>,
    /// Source mode, plain clients: size of the pushed messages. Wirebench clients announce theirs.
    pub source_size: usize,
    /// How requests of plain clients are framed.
    pub plain: PlainFraming,
    /// Service time: wait this long before the first byte of each reply (each pushed message in
    /// source mode), to within a few µs (see `serve/delay.rs`), not to tokio's 1 ms tick.
    /// Requests on one connection are served in order, so K pipelined requests take K times as
    /// long.
    pub delay: Option<Duration>,
    /// `--max-rate`: a server-wide capacity in requests/s (pushed messages in source mode),
    /// across all threads and connections; requests beyond it wait in one FIFO queue (see
    /// `serve/rate.rs`), so latency grows when more is offered: a server whose peak is known.
    pub max_rate: Option<f64>,
    /// A test fault: hold every reply during a window that recurs on a fixed period, as a
    /// server that stops (a GC pause, a lock) for a moment; shows coordinated omission.
    pub stall: Option<Stall>,
    /// A test fault: write each echo reply in this many separate write() calls (1: one write).
    /// With Nagle's algorithm on (`socket.nodelay` false) the second piece waits for the ACK of
    /// the first, which the client delays (Linux: at least 40 ms): the DCMTK study's stall
    /// (seed 003), reproduced without DCMTK.
    pub reply_writes: usize,
    /// A test fault: apply `delay` to every Nth request of a connection only, the others are
    /// answered at once: a tail that pulls the mean above p95 (the Flash study's pattern).
    pub delay_every: Option<u64>,
    /// Options applied to every accepted socket (and SO_RCVBUF to the listener).
    pub socket: SocketOptions,
    /// Connections beyond this many open at a time are accepted and closed at once.
    pub max_connections: Option<usize>,
    /// A connection whose client sends nothing for this long is closed (none: never); in
    /// source mode, one whose client takes nothing (a write that makes no progress) for this
    /// long. With `blocking`, a read or a write of the connection's thread likewise.
    pub idle_timeout: Option<Duration>,
    /// Server threads, each with its own runtime (at least 1).
    pub threads: usize,
    /// Serve each connection on its own thread with blocking socket calls (echo and sink):
    /// a syscall less per request, for the lowest latency with few connections.
    pub blocking: bool,
}

/// Replies are held while the wall clock is within the first `length` of every `every`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stall {
    /// The period, e.g. 1 s.
    pub every: Duration,
    /// How long each stall lasts, e.g. 500 ms.
    pub length: Duration,
}

impl Stall {
    /// Waits until the current stall window (if any) is over. Windows follow the wall clock, so
    /// every connection and thread stalls at the same moments without shared state.
    pub async fn wait_out(&self) {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        let every = self.every.as_nanos().max(1);
        let phase = Duration::from_nanos((now.as_nanos() % every) as u64);
        if phase < self.length {
            tokio::time::sleep(self.length - phase).await;
        }
    }
}

impl Default for TcpServerOptions {
    fn default() -> Self {
        TcpServerOptions {
            mode: Mode::Echo,
            reply_size: None,
            source_size: DEFAULT_SOURCE_SIZE,
            plain: PlainFraming::Stream,
            delay: None,
            max_rate: None,
            stall: None,
            reply_writes: 1,
            delay_every: None,
            socket: SocketOptions {
                nodelay: true,
                ..SocketOptions::default()
            },
            max_connections: None,
            idle_timeout: Some(DEFAULT_IDLE_TIMEOUT),
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            blocking: false,
        }
    }
}

/// How the server frames the requests of a plain (non-wirebench) client.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PlainFraming {
    /// No framing: every read is one request, echoed as it arrives.
    Stream,
    /// Every request is exactly this many bytes.
    Fixed(usize),
    /// A request ends with these bytes; a request over 1 MiB is a bad frame.
    Delimiter(Vec<u8>),
}

/// What every connection of one server shares, read-only.
#[derive(Debug)]
pub(crate) struct Shared {
    options: TcpServerOptions,
    /// Plain clients' replies when `reply_size` is set (ending with the delimiter, if any).
    plain_reply: Option<Filler>,
    /// Plain clients' pushed messages in source mode.
    plain_source: Filler,
    /// When each request is answered: `delay` and `max_rate`.
    pub(crate) service: Service,
}

impl Shared {
    fn new(options: TcpServerOptions) -> io::Result<Shared> {
        let invalid = |what: &str| Err(io::Error::new(io::ErrorKind::InvalidInput, what));
        if options.reply_size == Some(0) || options.source_size == 0 {
            return invalid("reply and message sizes must be at least 1 byte");
        }
        let tail: &[u8] = match &options.plain {
            PlainFraming::Fixed(0) => return invalid("fixed request size must be at least 1 byte"),
            PlainFraming::Delimiter(d) if d.is_empty() => return invalid("empty delimiter"),
            PlainFraming::Delimiter(d) => d,
            _ => &[],
        };
        if options.idle_timeout.is_some_and(|d| d.is_zero()) {
            return invalid("idle_timeout must be above zero (none: no timeout)");
        }
        if options.reply_writes == 0 || options.delay_every == Some(0) {
            return invalid("reply_writes and delay_every must be at least 1");
        }
        if options
            .max_rate
            .is_some_and(|r| !(r > 0.0 && r.is_finite()))
        {
            return invalid("max_rate must be above zero");
        }
        Ok(Shared {
            service: Service::new(options.delay, options.max_rate),
            plain_reply: options.reply_size.map(|n| Filler::tailed(n, tail)),
            plain_source: Filler::tailed(options.source_size, tail),
            options,
        })
    }

    /// The echo loop's test faults.
    fn faults(&self) -> transfer::Faults {
        let o = &self.options;
        transfer::Faults {
            stall: o.stall,
            reply_writes: o.reply_writes,
            delay_every: o.delay_every,
        }
    }

    /// A fresh framer for a plain client.
    fn plain_framer(&self) -> Framer {
        match &self.options.plain {
            PlainFraming::Stream => Framer::PerRead,
            PlainFraming::Fixed(n) => Framer::sized(*n as u64),
            PlainFraming::Delimiter(d) => Framer::delimited(d),
        }
    }
}

/// Serves `listener` until `shutdown` is triggered, then returns the final counters.
///
/// The listener must be bound and listening; it is switched to non-blocking mode here. Fails
/// only if the server cannot start (bad options, no threads or runtimes); per-connection errors
/// just end that connection.
pub fn run(
    listener: std::net::TcpListener,
    options: TcpServerOptions,
    shutdown: Shutdown,
) -> io::Result<ServerStats> {
    prepare(listener, options)?.run(shutdown)
}

/// A server running on a background thread (see [`spawn`]). Dropping it stops the server too.
pub type ServerHandle = Handle<ServerStats>;

/// Runs [`run`] on a background thread. Start-up errors (bad options, no runtime) are returned
/// here; the listener is already listening, so clients may connect as soon as this returns.
pub fn spawn(
    listener: std::net::TcpListener,
    options: TcpServerOptions,
) -> io::Result<ServerHandle> {
    prepare(listener, options)?.spawn()
}

/// Everything that can fail before serving, done before the first thread starts, so a failure
/// leaves nothing running. Returns the server ready to start: it runs its threads until
/// shutdown, each accepting on its own runtime, then dropping the runtime, which ends the
/// connections it serves.
fn prepare(
    listener: std::net::TcpListener,
    options: TcpServerOptions,
) -> io::Result<Ready<ServerStats>> {
    let shared = Arc::new(Shared::new(options)?);
    let o = &shared.options;
    let (socket, threads, max) = (o.socket, o.threads, o.max_connections);
    listen::accepting(
        "serve-tcp",
        listener,
        socket,
        threads,
        max,
        move |stream, admission, stop| serve(stream, &shared, admission, stop),
    )
}

/// Serves an admitted connection on this thread, or on a thread of its own with `blocking`.
fn serve(
    stream: TcpStream,
    shared: &Arc<Shared>,
    admission: Admission<ServerStats>,
    shutdown: &Shutdown,
) {
    let (shared, shutdown) = (shared.clone(), shutdown.clone());
    if shared.options.blocking {
        return on_own_thread(stream, shared, admission, shutdown);
    }
    tokio::spawn(async move {
        conn::serve(stream, &shared, &admission.tally, &shutdown).await;
        drop(admission);
    });
}

/// `--blocking`: serves a connection on a thread of its own (see `blocking.rs`).
fn on_own_thread(
    stream: TcpStream,
    shared: Arc<Shared>,
    admission: Admission<ServerStats>,
    shutdown: Shutdown,
) {
    let Ok(socket) = stream.into_std() else {
        return;
    };
    let spawned = std::thread::Builder::new()
        .name("serve-tcp-conn".into())
        .stack_size(256 * 1024)
        .spawn(move || {
            let Ok(rt) = runtime() else {
                return;
            };
            rt.block_on(async {
                if let Ok(stream) = TcpStream::from_std(socket) {
                    conn::serve(stream, &shared, &admission.tally, &shutdown).await;
                }
            });
            drop(admission);
        });
    // A thread that cannot start drops its connection: the client sees it closed.
    drop(spawned);
}
