//! `wirebench serve tcp|udp|http|http3|…`: the reference servers' flags.

use clap::{Args, Subcommand, ValueEnum};

use super::socket::SocketArgs;

/// Reference servers, one per protocol.
#[derive(Debug, Subcommand)]
pub enum ServeCommand {
    /// A TCP server that echoes, sinks or sources bytes.
    Tcp(ServeTcpArgs),
    /// A UDP server that echoes or sinks datagrams and counts loss, reordering and jitter per flow.
    Udp(ServeUdpArgs),
    /// An HTTP/1.1 server: /bytes/N, /delay/D, /status/CODE, /echo, and files with --dir.
    Http(ServeHttpArgs),
    /// An HTTP/3 server over QUIC (UDP): the routes of `serve http`; a self-signed certificate
    /// is written at start (its path printed) unless --cert and --key are given.
    Http3(ServeHttp3Args),
    /// The servers that need only a listener, as `serve` registers them.
    #[command(flatten)]
    Simple(crate::serve::SimpleCommand),
}

/// What the reference server does with a connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ServerMode {
    /// Reply to each request: the same bytes, or `--reply-size` bytes.
    Echo,
    /// Read, count and discard.
    Sink,
    /// Push `--size`-byte messages as fast as the client takes them.
    Source,
}

/// What the reference UDP server does with a datagram: `serve tcp`'s modes but `source`,
/// which `--help` does not list (a datagram server has no one to push to) and which is refused
/// with that reason.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum UdpServerMode {
    /// Reply to each datagram: the same bytes, or `--reply-size` bytes.
    Echo,
    /// Read, count and discard.
    Sink,
    /// TCP's push mode: not offered for UDP (refused, naming `serve tcp --mode source`).
    #[value(hide = true)]
    Source,
}

impl From<UdpServerMode> for ServerMode {
    fn from(m: UdpServerMode) -> ServerMode {
        match m {
            UdpServerMode::Echo => ServerMode::Echo,
            UdpServerMode::Sink => ServerMode::Sink,
            UdpServerMode::Source => ServerMode::Source,
        }
    }
}

/// `wirebench serve tcp`: the reference TCP server.
#[derive(Debug, Args)]
pub struct ServeTcpArgs {
    /// Address to listen on; port 0 picks a free port. The bound address is printed first.
    #[arg(short = 'l', long, default_value = "127.0.0.1:0", value_name = "ADDR")]
    pub listen: String,

    /// What to do with each connection.
    #[arg(long, value_enum, default_value_t = ServerMode::Echo)]
    pub mode: ServerMode,

    /// Echo mode: reply with this many bytes instead of echoing the request, to clients that
    /// do not say their reply size (a wirebench client says its own: `run --expect-size`, else
    /// its request's size).
    #[arg(long, value_name = "BYTES")]
    pub reply_size: Option<String>,

    /// Source mode: message size pushed to clients that do not say (wirebench clients do) [default: 1024]
    #[arg(long, value_name = "BYTES")]
    pub size: Option<String>,

    /// Framing for plain (non-wirebench) clients: every request is exactly this many bytes.
    #[arg(long, value_name = "BYTES", conflicts_with = "delimiter")]
    pub request_size: Option<String>,

    /// Framing for plain clients: a request ends with this delimiter (escapes allowed), e.g. '\n'.
    #[arg(long, value_name = "DELIM")]
    pub delimiter: Option<String>,

    /// Service time: wait this long before the first byte of each reply, e.g. 5ms. Waited to a
    /// few µs: as root, the server also keeps every CPU out of idle sleep while it runs
    /// (/dev/cpu_dma_latency = 0, released when it exits), so a timer wakes it on time.
    #[arg(long, value_name = "DURATION")]
    pub delay: Option<String>,

    /// Run the server's threads under SCHED_FIFO (needs root), so other processes on their
    /// CPUs do not hold up a delayed reply. A busy server then has its CPU first: the kernel
    /// still leaves others 5% of each second.
    #[arg(long)]
    pub realtime: bool,

    /// Capacity: serve at most this many requests per second across all threads and
    /// connections (e.g. 2000 or 2000/s); requests beyond it queue, first come first served, so
    /// latency grows when more is offered: a server whose true peak is known (see `wirebench
    /// peak`).
    #[arg(long, value_name = "RATE")]
    pub max_rate: Option<String>,

    /// Refuse (accept and close at once) connections beyond this many open at a time.
    #[arg(long, value_name = "N")]
    pub max_connections: Option<usize>,

    /// Close a connection whose client sends nothing for this long (0: never); in source mode,
    /// one whose client takes nothing for this long; with --blocking too. Memory per
    /// connection is one 64 KiB read buffer plus the kernel's socket buffers.
    #[arg(long, default_value = "5m", value_name = "DURATION")]
    pub idle_timeout: String,

    /// Serve each connection on its own thread with blocking socket calls (echo and sink): a
    /// syscall less per request, the lowest latency for a few connections. The default event
    /// loop scales to tens of thousands.
    #[arg(long)]
    pub blocking: bool,

    /// Test fault: hold all replies for --stall-for once every this long (e.g. 1s).
    #[arg(long, value_name = "DURATION", hide = true)]
    pub stall_every: Option<String>,

    /// Test fault: how long each stall lasts (e.g. 500ms).
    #[arg(long, value_name = "DURATION", hide = true)]
    pub stall_for: Option<String>,

    // --- misbehaving on purpose, for `wirebench diagnose` (issue 11) ---
    /// Write each echo reply in N separate write() calls, as a server that sends a header and
    /// then a body. With --no-nodelay, Nagle's algorithm holds each later piece until the client
    /// ACKs the first, and the client delays that ACK (Linux: at least 40 ms): the DCMTK
    /// stall (a reply in pieces + Nagle + delayed ACK), reproducible without DCMTK.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub reply_writes: usize,

    /// Apply --delay to every Nth request of a connection only; the rest are answered at once:
    /// a rare slow request, the tail that pulls the mean above p95.
    #[arg(long, value_name = "N", requires = "delay")]
    pub delay_every: Option<u64>,
    // --- end misbehaving ---
    /// Server threads [default: the number of CPUs]
    #[arg(short = 't', long, value_name = "N")]
    pub threads: Option<usize>,

    /// Server socket options.
    #[command(flatten)]
    pub socket: SocketArgs,
}

/// `wirebench serve udp`: the reference UDP server.
#[derive(Debug, Args)]
#[command(
    after_help = "Wirebench datagrams (see src/wire/datagram.rs and src/wire/flow.rs) are counted per client and flow: loss, \
reordering, duplicates and RFC 3550 jitter, which a client asks for with a report request. Other \
datagrams are echoed (or counted, in sink mode) as they are."
)]
pub struct ServeUdpArgs {
    /// Address to bind; port 0 picks a free port. The bound address is printed first.
    #[arg(short = 'l', long, default_value = "127.0.0.1:0", value_name = "ADDR")]
    pub listen: String,

    /// Echo: answer each datagram; sink: count it and answer nothing.
    #[arg(long, value_enum, default_value_t = UdpServerMode::Echo)]
    pub mode: UdpServerMode,

    /// Echo mode: reply with this many bytes (at most 65507) unless a wirebench client asks
    /// for its own reply size. A client may ask for at most 10 times its datagram's size (no
    /// amplifier for spoofed requests), or this size where it is larger.
    #[arg(long, value_name = "BYTES")]
    pub reply_size: Option<String>,

    /// Echo mode, service time: send each reply this long after its request, e.g. 5ms; other
    /// datagrams are served meanwhile.
    #[arg(long, value_name = "DURATION")]
    pub delay: Option<String>,

    /// Capacity: serve at most this many requests per second across all threads and
    /// connections (e.g. 2000 or 2000/s); requests beyond it queue, first come first served, so
    /// latency grows when more is offered: a server whose true peak is known (see `wirebench
    /// peak`).
    #[arg(long, value_name = "RATE")]
    pub max_rate: Option<String>,

    /// Set SO_SNDBUF to this many bytes (e.g. 1M).
    #[arg(long, value_name = "BYTES")]
    pub sndbuf: Option<String>,

    /// Set SO_RCVBUF to this many bytes (e.g. 4M); a small one drops bursts in the kernel.
    #[arg(long, value_name = "BYTES")]
    pub rcvbuf: Option<String>,

    /// Server threads, each with its own socket on the same port (SO_REUSEPORT); the kernel
    /// keeps each client address on one of them.
    #[arg(short = 't', long, default_value_t = 1, value_name = "N")]
    pub threads: usize,

    /// Serve with blocking recv/send calls on each thread instead of an event loop: a syscall
    /// or two less per request, the lowest latency for a ping-pong with few clients.
    #[arg(long)]
    pub blocking: bool,

    /// Test fault: drop every Nth data datagram received, before it is counted or answered.
    #[arg(long, hide = true, value_name = "N")]
    pub drop_every: Option<u64>,

    /// Test fault: count and answer every Nth data datagram twice.
    #[arg(long, hide = true, value_name = "N")]
    pub duplicate_every: Option<u64>,

    /// Test fault: hold every Nth data datagram and serve it after the next one.
    #[arg(long, hide = true, value_name = "N")]
    pub reorder_every: Option<u64>,
}

/// `wirebench serve http`: the reference HTTP/1.1 server.
#[derive(Debug, Args)]
#[command(
    after_help = "Routes: GET /bytes/N (N bytes, k/M/G suffixes, up to 1 TiB), /delay/D (e.g. /delay/5ms), \
/status/CODE, POST|PUT /echo (the request body back); with --dir, other GET paths serve files. HEAD \
works everywhere, keep-alive and pipelining by default.\n\n\
Memory per connection is bounded whatever a client sends: a read buffer of --max-header-bytes (at \
least 16 KiB) and an output buffer of 4 KiB that grows to 128 KiB at most while large responses are \
written, plus the kernel's socket buffers; 2,000 idle connections took ~32 MB (bench/hostile.sh). \
A slow client is bounded in time by --request-timeout (a head trickled byte by byte gets 408) and \
--idle-timeout; in number by --max-connections."
)]
pub struct ServeHttpArgs {
    /// Address to listen on; port 0 picks a free port. The URL is printed first.
    #[arg(short = 'l', long, default_value = "127.0.0.1:0", value_name = "ADDR")]
    pub listen: String,

    /// Server threads [default: the number of CPUs]
    #[arg(short = 't', long, value_name = "N")]
    pub threads: Option<usize>,

    /// Serve the files under this directory for paths that are not built-in routes (sendfile).
    #[arg(long, value_name = "PATH")]
    pub dir: Option<String>,

    /// Run under a memory limit that caps the page cache too (a cgroup v1 memory group, made
    /// for this server and removed when it stops; needs root), e.g. 64M: files beyond it are
    /// read from the disk, as on a machine with that much memory (the Flash study's large
    /// data set). Pair with `run --cache cold`, which drops what is already cached.
    #[arg(long, value_name = "BYTES")]
    pub memory_limit: Option<String>,

    /// A request head must arrive within this long (from the connection, or its first byte),
    /// else 408 and close.
    #[arg(long, default_value = "10s", value_name = "DURATION")]
    pub request_timeout: String,

    /// Close a keep-alive connection after this long without a request (and give up on a body
    /// or a reply that makes no progress for this long).
    #[arg(long, default_value = "60s", value_name = "DURATION")]
    pub idle_timeout: String,

    /// The largest request head (request line and header fields), 256 to 1M; a larger one gets
    /// 431 and a close. The read buffer is this size, at least 16k.
    #[arg(long, default_value = "16k", value_name = "BYTES")]
    pub max_header_bytes: String,

    /// Refuse (accept and close at once) connections beyond this many open at a time.
    #[arg(long, value_name = "N")]
    pub max_connections: Option<usize>,

    /// Service time: wait this long before every response, e.g. 5ms.
    #[arg(long, value_name = "DURATION")]
    pub delay: Option<String>,

    /// The longest /delay/D a client may ask for; a longer one gets 400 at once. A delayed
    /// response is abandoned when its client leaves.
    #[arg(long, default_value = "60s", value_name = "DURATION")]
    pub max_delay: String,

    /// Capacity: serve at most this many requests per second across all threads and
    /// connections (e.g. 2000 or 2000/s); requests beyond it queue, first come first served, so
    /// latency grows when more is offered: a server whose true peak is known (see `wirebench
    /// peak`).
    #[arg(long, value_name = "RATE")]
    pub max_rate: Option<String>,

    /// Server socket options.
    #[command(flatten)]
    pub socket: SocketArgs,
}

/// `wirebench serve http3`: HTTP/3 over QUIC.
#[derive(Debug, Args)]
pub struct ServeHttp3Args {
    /// UDP address to listen on; port 0 picks a free port. The URL is printed first.
    #[arg(short = 'l', long, default_value = "127.0.0.1:0", value_name = "ADDR")]
    pub listen: String,

    /// The certificate chain to present (PEM); with --key. Without both, a self-signed
    /// certificate for 127.0.0.1, ::1 and localhost is made and written beside its key in a
    /// new temporary directory, whose path is printed (give it to clients as --cacert).
    #[arg(long, value_name = "FILE", requires = "key")]
    pub cert: Option<String>,

    /// The private key of --cert (PEM).
    #[arg(long, value_name = "FILE", requires = "cert")]
    pub key: Option<String>,

    /// Serve the files under this directory for paths that are not built-in routes.
    #[arg(long, value_name = "PATH")]
    pub dir: Option<String>,

    /// Close a connection silent for this long (QUIC's idle timeout).
    #[arg(long, default_value = "60s", value_name = "DURATION")]
    pub idle_timeout: String,

    /// The largest request head (its HEADERS frame), 256 to 1M.
    #[arg(long, default_value = "16k", value_name = "BYTES")]
    pub max_header_bytes: String,

    /// Refuse connections beyond this many open at a time.
    #[arg(long, value_name = "N")]
    pub max_connections: Option<usize>,

    /// Service time: wait this long before every response, e.g. 5ms.
    #[arg(long, value_name = "DURATION")]
    pub delay: Option<String>,

    /// Capacity: serve at most this many requests per second (e.g. 2000 or 2000/s); requests
    /// beyond it queue, first come first served.
    #[arg(long, value_name = "RATE")]
    pub max_rate: Option<String>,
}
