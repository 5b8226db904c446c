//! The reference UDP server: echo or sink, with per-flow loss, reordering, duplicate and jitter
//! accounting for wirebench clients (see [`crate::wire::datagram`]) and plain echo for everyone else.
//!
//! # Design
//!
//! `threads` OS threads each run a single-threaded tokio runtime with a socket of its own: one
//! thread serves the socket it was given; with more, each extra thread binds a socket to the
//! same address with SO_REUSEPORT, and the kernel hashes each client address (4-tuple) onto one
//! of them. A client's datagrams therefore always reach the same thread, which keeps that
//! client's flow counters in a plain table without locks, sees the datagrams in the order the
//! kernel queued them (no reordering between threads to mistake for the network's), and answers
//! its report requests.
//!
//! A thread waits until its socket is readable, then drains up to a batch of datagrams into one
//! 64 KiB receive buffer, answering each as it goes (echo replies are sent from that buffer, or
//! from a pre-filled buffer with the header written at the front). Delayed replies wait in a
//! FIFO queue (the delay is constant, so due times only grow) served by one timer, so a delay
//! never holds up other datagrams.
//!
//! With `blocking` (`serve udp --blocking`) a thread has no runtime: it blocks in `recv_from`
//! and answers with `send_to`, one syscall each per request, the lowest round trip for a
//! ping-pong (see `blocking.rs`). What happens to each datagram is the same code either way
//! (`worker::Worker`); only the waiting differs.
//!
//! # Bounded memory
//!
//! Whatever arrives: one receive buffer and one filler buffer per thread; a flow table of at
//! most `max_flows` flows (split over the threads; flows idle for [`FLOW_IDLE`] are evicted when
//! it is full, after that datagrams of new flows are served but counted as `untracked`); at most
//! `max_pending` delayed replies and [`MAX_PENDING_BYTES`] of them per thread (beyond that they
//! are dropped and counted).
//!
//! # Exposure
//!
//! A wirebench request names the size of its reply, but gets at most [`MAX_AMPLIFICATION`]
//! times its own size (a 32-byte request asking for 65,507 bytes gets 320), unless the server's
//! `reply_size` is larger: only the operator can make the server an amplifier for spoofed
//! requests. It listens on 127.0.0.1 unless told otherwise.

mod blocking;
mod faults;
mod flows;
mod stats;
mod worker;

pub use stats::UdpServerStats;

use super::rate::Service;
use super::threads::{runtime, Ready};
use super::{Handle, Mode, Shutdown};
use crate::sys::socket::SocketOptions;
use crate::wire::datagram::MAX_DATAGRAM;
use socket2::{Domain, Protocol, SockRef, Socket, Type};
use stats::Tally;
use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::sync::Arc;
use std::time::Duration;

/// A reply a wirebench request asks for is at most this many times the request's size (unless
/// `reply_size` is larger).
pub const MAX_AMPLIFICATION: usize = 10;
/// Flows a server keeps counters for when not told otherwise.
pub const DEFAULT_MAX_FLOWS: usize = 65_536;
/// Delayed replies a server thread holds at most when not told otherwise.
pub const DEFAULT_MAX_PENDING: usize = 65_536;
/// Bytes of delayed replies a server thread holds at most.
pub const MAX_PENDING_BYTES: usize = 64 << 20;
/// A flow that received nothing for this long may be evicted when the flow table is full.
pub const FLOW_IDLE: Duration = Duration::from_secs(60);
/// How long `reorder_every` holds a datagram when no other one arrives to overtake it.
pub const REORDER_HOLD: Duration = Duration::from_millis(250);

/// What the server does and how.
#[derive(Clone, Debug)]
pub struct UdpServerOptions {
    /// Echo or sink; source is not offered for UDP (a datagram server has no one to push to
    /// until a client speaks), and [`run`] refuses it.
    pub mode: Mode,
    /// Echo mode: reply with this many bytes (1 ..= [`MAX_DATAGRAM`]) unless a wirebench
    /// request names its own reply size. Replies to wirebench requests are never shorter than
    /// the header.
    pub reply_size: Option<usize>,
    /// Echo mode: send each reply this long after its request arrived (report answers are not
    /// delayed), to within a few µs (see `serve/delay.rs`).
    pub delay: Option<Duration>,
    /// Echo mode: a server-wide capacity in replies/s across all threads; requests beyond it
    /// wait in each thread's queue of pending replies (see `serve/rate.rs`; a full queue drops).
    pub max_rate: Option<f64>,
    /// SO_SNDBUF and SO_RCVBUF of every socket; `nodelay` does not apply.
    pub socket: SocketOptions,
    /// Server threads, each with its own socket (at least 1; more need SO_REUSEPORT, see
    /// [`bind`]).
    pub threads: usize,
    /// Flows the server keeps counters for, over all threads.
    pub max_flows: usize,
    /// Delayed replies each thread holds at most.
    pub max_pending: usize,
    /// Faults injected on purpose, for tests.
    pub faults: Faults,
    /// Serve with blocking `recv_from`/`send_to` calls on every thread instead of an event
    /// loop: a syscall or two less per request, for the lowest latency with few clients.
    /// Everything else behaves alike (delays and held datagrams are still timed, not served
    /// in line); the shutdown is noticed within 200 ms.
    pub blocking: bool,
}

impl Default for UdpServerOptions {
    fn default() -> Self {
        UdpServerOptions {
            mode: Mode::Echo,
            reply_size: None,
            delay: None,
            max_rate: None,
            socket: SocketOptions::default(),
            threads: 1,
            max_flows: DEFAULT_MAX_FLOWS,
            max_pending: DEFAULT_MAX_PENDING,
            faults: Faults::default(),
            blocking: false,
        }
    }
}

/// Faults a server injects into what it receives, to test loss, duplicate and reordering
/// accounting end to end. They apply to data datagrams only (wirebench data and plain
/// datagrams), counted per server thread from 1; report requests are never touched, so the
/// measurement can still be read out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Faults {
    /// Drop every Nth data datagram before it is counted or answered.
    pub drop_every: Option<u64>,
    /// Count and answer every Nth data datagram twice.
    pub duplicate_every: Option<u64>,
    /// Hold every Nth data datagram and serve it right after the next one (or before the next
    /// report request, or after [`REORDER_HOLD`], whichever comes first).
    pub reorder_every: Option<u64>,
}

/// Binds a UDP socket for a server with these options: SO_REUSEPORT when it has more than one
/// thread, and the buffer sizes set before binding.
pub fn bind(addr: SocketAddr, options: &UdpServerOptions) -> io::Result<UdpSocket> {
    let socket = new_socket(addr, options.threads > 1, &options.socket)?;
    socket.bind(&addr.into())?;
    Ok(socket.into())
}

fn new_socket(addr: SocketAddr, reuse_port: bool, options: &SocketOptions) -> io::Result<Socket> {
    let socket = Socket::new(Domain::for_address(addr), Type::DGRAM, Some(Protocol::UDP))?;
    if reuse_port {
        socket.set_reuse_port(true)?;
    }
    apply_buffers(&SockRef::from(&socket), options)?;
    Ok(socket)
}

fn apply_buffers(socket: &SockRef<'_>, options: &SocketOptions) -> io::Result<()> {
    if let Some(n) = options.sndbuf {
        socket.set_send_buffer_size(n)?;
    }
    if let Some(n) = options.rcvbuf {
        socket.set_recv_buffer_size(n)?;
    }
    Ok(())
}

/// Serves `socket` until `shutdown` is triggered, then returns the final counters.
///
/// The socket must be bound; it is switched to non-blocking mode here (to blocking mode with
/// `options.blocking`). With more than one
/// thread it must have been bound with SO_REUSEPORT (as [`bind`] does), so the other threads
/// can bind sockets of their own to its address. Fails only if the server cannot start (bad
/// options, no sockets, threads or runtimes); errors with single datagrams are counted.
pub fn run(
    socket: UdpSocket,
    options: UdpServerOptions,
    shutdown: Shutdown,
) -> io::Result<UdpServerStats> {
    prepare(socket, options)?.run(shutdown)
}

/// A UDP server running on a background thread (see [`spawn`]). Dropping it stops the server.
pub type UdpServerHandle = Handle<UdpServerStats>;

/// Runs [`run`] on a background thread. Start-up errors are returned here; every thread's
/// socket is bound when this returns, so clients may send at once.
pub fn spawn(socket: UdpSocket, options: UdpServerOptions) -> io::Result<UdpServerHandle> {
    prepare(socket, options)?.spawn()
}

/// What every thread of one server shares, read-only.
#[derive(Debug)]
pub(crate) struct Shared {
    options: UdpServerOptions,
    /// The address the server is bound to: datagrams from it are never answered.
    local: SocketAddr,
    /// Flows each thread keeps counters for.
    flows_per_thread: usize,
    /// When each reply is due: `delay` and `max_rate`.
    service: Service,
}

/// Checks the options.
fn validate(options: &UdpServerOptions) -> io::Result<()> {
    let invalid = |what: &str| {
        Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            what.to_string(),
        ))
    };
    if options.mode == Mode::Source {
        return invalid("the UDP server echoes or sinks; source mode is TCP only");
    }
    if options
        .reply_size
        .is_some_and(|n| n == 0 || n > MAX_DATAGRAM)
    {
        return invalid("reply size must lie in 1 ..= 65507 bytes");
    }
    if options
        .max_rate
        .is_some_and(|r| !(r > 0.0 && r.is_finite()))
    {
        return invalid("max_rate must be above zero");
    }
    let f = &options.faults;
    if [f.drop_every, f.duplicate_every, f.reorder_every].contains(&Some(0)) {
        return invalid("fault intervals must be at least 1");
    }
    Ok(())
}

/// Everything that can fail before serving, done before the first thread starts. Returns the
/// server ready to start: it runs its threads, each with a socket and a runtime (none for
/// blocking threads), until shutdown.
fn prepare(socket: UdpSocket, options: UdpServerOptions) -> io::Result<Ready<UdpServerStats>> {
    validate(&options)?;
    let local = socket.local_addr()?;
    let count = options.threads.max(1);
    apply_buffers(&SockRef::from(&socket), &options.socket)?;
    if count > 1 && !SockRef::from(&socket).reuse_port()? {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "more than one thread needs a socket bound with SO_REUSEPORT (see serve::udp::bind)",
        ));
    }
    let mut sockets = vec![socket];
    for _ in 1..count {
        let extra = new_socket(local, true, &options.socket)?;
        extra.bind(&local.into())?;
        sockets.push(extra.into());
    }
    let mut threads = Vec::with_capacity(count);
    for socket in sockets {
        socket.set_nonblocking(!options.blocking)?;
        let runtime = if options.blocking {
            None
        } else {
            Some(runtime()?)
        };
        threads.push((socket, runtime));
    }
    let shared = Arc::new(Shared {
        flows_per_thread: options.max_flows.div_ceil(count),
        service: Service::new(options.delay, options.max_rate),
        options,
        local,
    });
    Ok(Ready::new(
        "serve-udp",
        local,
        threads,
        move |(socket, runtime), tally, stop| {
            let shared = shared.clone();
            move || thread(runtime, socket, shared, tally, stop)
        },
    ))
}

/// One server thread: serves its socket until shutdown, on its own runtime or (without one)
/// with blocking calls.
fn thread(
    runtime: Option<tokio::runtime::Runtime>,
    socket: UdpSocket,
    shared: Arc<Shared>,
    tally: Tally,
    shutdown: Shutdown,
) -> io::Result<()> {
    let worker = worker::Worker::new(shared, tally);
    match runtime {
        None => blocking::run(worker, socket, &shutdown),
        Some(runtime) => runtime.block_on(async {
            let socket = tokio::net::UdpSocket::from_std(socket)?;
            worker::run_event_loop(worker, socket, &shutdown).await;
            Ok(())
        }),
    }
}
