//! `wirebench serve grpc`: the benchmark service of `proto/wirebench/bench.proto` over h2c,
//! with reflection on (grpc.reflection.v1 and v1alpha), so a `grpc://` run needs no `.proto`.
//! `Echo` answers after `delay_us` with `reply_size` bytes (or the payload back), or with the
//! status it is asked for; `Stream` sends `count` messages of `size` bytes every `interval_ms`;
//! `Collect` counts a client stream. It counts what it served, per method.
//!
//! Bounded against hostile clients: messages up to 4 MiB, a delay up to 10 s, a stream of at
//! most 1,000,000 messages 60 s apart at most, 256 concurrent calls per connection, and each
//! message sent only as the client's flow-control window takes it (nothing queues unbounded).

use super::Shutdown;
use crate::wire::grpc::{self, Deframer, Field, ReflectionReply, ReflectionRequest};
use bytes::Bytes;
use clap::Args;
use h2::server::SendResponse;
use h2::{RecvStream, SendStream};
use std::fmt;
use std::future::poll_fn;
use std::io;
use std::net::TcpListener;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// The longest `delay_us` honoured.
const MOST_DELAY: Duration = Duration::from_secs(10);
/// The most messages one `Stream` call sends, and the longest interval between them.
const MOST_MESSAGES: u64 = 1_000_000;
const MOST_INTERVAL_MS: u64 = 60_000;
/// Concurrent calls one connection may have.
const STREAMS: u32 = 256;
/// The piece of a message sent at a time, each when the flow-control window has room.
const PIECE: usize = 16 << 10;

/// The flags of `wirebench serve grpc` (its `about` is the subcommand's help text).
#[derive(Debug, Args, Clone)]
#[command(
    about = "A gRPC server (h2c) with the benchmark service of proto/wirebench/bench.proto and reflection on"
)]
pub struct ServeGrpcArgs {
    /// Address to listen on (port 0 picks a free port).
    #[arg(
        short = 'l',
        long,
        default_value = "127.0.0.1:50051",
        value_name = "ADDR"
    )]
    pub listen: String,
}

impl super::Simple for ServeGrpcArgs {
    const SCHEME: &'static str = "grpc";
    const PORT: u16 = 50051;
    const DESCRIPTION: &'static str =
        "wirebench.bench.Bench (Echo, Stream, Collect) with reflection";
    type Stats = Stats;

    fn listen(&self) -> &str {
        &self.listen
    }

    fn run(&self, listener: TcpListener, shutdown: Shutdown) -> io::Result<Stats> {
        run(listener, shutdown)
    }
}

/// What the server did, printed when it stops.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Stats {
    /// Connections accepted.
    pub connections: u64,
    /// Calls answered, each method's: `Echo` (any status), `Stream`, `Collect`, reflection.
    pub echo: u64,
    /// `Stream` calls, and the messages all of them sent.
    pub streams: u64,
    pub streamed: u64,
    /// `Collect` calls, and the messages they received.
    pub collects: u64,
    pub collected: u64,
    /// Reflection calls.
    pub reflection: u64,
    /// Calls ended with a status other than OK (asked for, or an unknown method).
    pub failed: u64,
}

impl fmt::Display for Stats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} connections, {} Echo calls, {} Stream calls ({} messages), {} Collect calls ({} messages), {} reflection calls, {} calls not OK",
            self.connections,
            self.echo,
            self.streams,
            self.streamed,
            self.collects,
            self.collected,
            self.reflection,
            self.failed
        )
    }
}

#[derive(Debug, Default)]
struct Counters {
    connections: AtomicU64,
    echo: AtomicU64,
    streams: AtomicU64,
    streamed: AtomicU64,
    collects: AtomicU64,
    collected: AtomicU64,
    reflection: AtomicU64,
    failed: AtomicU64,
}

impl Counters {
    fn stats(&self) -> Stats {
        let g = |a: &AtomicU64| a.load(Ordering::Relaxed);
        Stats {
            connections: g(&self.connections),
            echo: g(&self.echo),
            streams: g(&self.streams),
            streamed: g(&self.streamed),
            collects: g(&self.collects),
            collected: g(&self.collected),
            reflection: g(&self.reflection),
            failed: g(&self.failed),
        }
    }
}

fn bump(a: &AtomicU64) {
    a.fetch_add(1, Ordering::Relaxed);
}

/// What every call reads: the counters and the benchmark file for reflection.
#[derive(Debug)]
struct Service {
    counters: Counters,
    descriptor: Vec<u8>,
}

/// Serves `listener` until `shutdown`, then returns its counters.
pub fn run(listener: TcpListener, shutdown: Shutdown) -> io::Result<Stats> {
    let descriptor = grpc::bench_descriptor().map_err(io::Error::other)?;
    let service = Arc::new(Service {
        counters: Counters::default(),
        descriptor,
    });
    listener.set_nonblocking(true)?;
    let runtime = super::threads::runtime()?;
    let s = service.clone();
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::from_std(listener)?;
        loop {
            let (socket, _) = tokio::select! {
                r = listener.accept() => match r {
                    Ok(a) => a,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    // Out of descriptors, a connection reset before accept: go on.
                    Err(_) => {
                        tokio::time::sleep(Duration::from_millis(10)).await;
                        continue;
                    }
                },
                _ = shutdown.wait() => break,
            };
            bump(&s.counters.connections);
            let _ = socket.set_nodelay(true);
            let (s, shutdown) = (s.clone(), shutdown.clone());
            tokio::spawn(async move {
                tokio::select! {
                    _ = connection(socket, s) => {},
                    _ = shutdown.wait() => {},
                }
            });
        }
        Ok::<(), io::Error>(())
    })?;
    Ok(service.counters.stats())
}

/// Serves one connection's calls until it ends.
async fn connection(socket: tokio::net::TcpStream, s: Arc<Service>) {
    let built = h2::server::Builder::new()
        .max_concurrent_streams(STREAMS)
        .initial_window_size(1 << 20)
        .initial_connection_window_size(4 << 20)
        .handshake::<_, Bytes>(socket)
        .await;
    let Ok(mut conn) = built else { return };
    while let Some(Ok((req, respond))) = conn.accept().await {
        let s = s.clone();
        tokio::spawn(async move {
            let path = req.uri().path().to_string();
            // A call whose client went away ends with it: nothing to count or answer.
            let _ = call(&path, req.into_body(), respond, &s).await;
        });
    }
}

/// How a call ended, when not with OK.
struct Status(u32, String);

impl Status {
    fn unimplemented(path: &str) -> Status {
        Status(
            12,
            format!("unknown method {path}: this server offers {}", methods()),
        )
    }
}

/// The methods the server offers, for an unknown one's message.
fn methods() -> String {
    let mut m: Vec<String> = ["Echo", "Stream", "Collect"]
        .iter()
        .map(|m| format!("{}/{m}", grpc::BENCH_SERVICE))
        .collect();
    m.extend(
        grpc::REFLECTION
            .iter()
            .map(|r| format!("{r}/{}", grpc::REFLECTION_METHOD)),
    );
    m.join(", ")
}

/// Answers one call.
async fn call(
    path: &str,
    mut body: RecvStream,
    mut respond: SendResponse<Bytes>,
    s: &Service,
) -> Result<(), h2::Error> {
    let c = &s.counters;
    let (service, method) = path
        .trim_start_matches('/')
        .split_once('/')
        .unwrap_or(("", ""));
    let outcome = match (service, method) {
        (grpc::BENCH_SERVICE, "Echo") => {
            bump(&c.echo);
            match first_message(&mut body).await? {
                Ok(m) => echo(&m, &mut respond).await?,
                Err(st) => Err(st),
            }
        }
        (grpc::BENCH_SERVICE, "Stream") => {
            bump(&c.streams);
            match first_message(&mut body).await? {
                Ok(m) => stream(&m, &mut respond, c).await?,
                Err(st) => Err(st),
            }
        }
        (grpc::BENCH_SERVICE, "Collect") => {
            bump(&c.collects);
            collect(&mut body, &mut respond, c).await?
        }
        (r, grpc::REFLECTION_METHOD) if grpc::REFLECTION.contains(&r) => {
            bump(&c.reflection);
            reflect(&mut body, &mut respond, &s.descriptor).await?
        }
        _ => Err(Status::unimplemented(path)),
    };
    if let Err(Status(code, message)) = outcome {
        bump(&c.failed);
        // Trailers-Only: the status in the response head, no body.
        let head = http::Response::builder()
            .status(200)
            .header("content-type", "application/grpc")
            .header("grpc-status", code.to_string())
            .header("grpc-message", percent(&message))
            .body(())
            .unwrap_or_default();
        respond.send_response(head, true)?;
    }
    Ok(())
}

/// `grpc-message` percent-encoded (the gRPC over HTTP/2 spec: printable ASCII but `%`).
fn percent(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if (0x20..0x7f).contains(&b) && b != b'%' {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Reads the request's body to its end and returns its first message (a unary or
/// server-streaming call has exactly one).
async fn first_message(body: &mut RecvStream) -> Result<Result<Vec<u8>, Status>, h2::Error> {
    let mut d = Deframer::default();
    let mut first: Option<Vec<u8>> = None;
    while let Some(chunk) = body.data().await {
        let chunk = chunk?;
        let _ = body.flow_control().release_capacity(chunk.len());
        let pushed = d.push(&chunk, |m| {
            first.get_or_insert_with(|| m.to_vec());
        });
        if let Err(e) = pushed {
            return Ok(Err(Status(3, format!("the request body: {e}"))));
        }
    }
    Ok(first.ok_or_else(|| Status(3, "the request had no message".into())))
}

/// The response head of a call that answers.
fn head() -> http::Response<()> {
    http::Response::builder()
        .status(200)
        .header("content-type", "application/grpc")
        .body(())
        .unwrap_or_default()
}

/// Sends `msg` framed, a piece at a time as the window takes it.
async fn send(out: &mut SendStream<Bytes>, msg: &[u8]) -> Result<(), h2::Error> {
    let mut framed = Vec::with_capacity(msg.len() + 5);
    grpc::frame(msg, &mut framed);
    let mut framed = Bytes::from(framed);
    while !framed.is_empty() {
        let n = framed.len().min(PIECE);
        out.reserve_capacity(n);
        while out.capacity() < n {
            match poll_fn(|cx| out.poll_capacity(cx)).await {
                Some(Ok(_)) => {}
                Some(Err(e)) => return Err(e),
                None => return Ok(()), // the stream ended: nothing more goes out
            }
        }
        out.send_data(framed.split_to(n), false)?;
    }
    Ok(())
}

/// Ends a call with OK.
fn ok(out: &mut SendStream<Bytes>) -> Result<(), h2::Error> {
    let mut trailers = http::HeaderMap::new();
    trailers.insert("grpc-status", http::HeaderValue::from_static("0"));
    out.send_trailers(trailers)
}

type Outcome = Result<Result<(), Status>, h2::Error>;

async fn echo(m: &[u8], respond: &mut SendResponse<Bytes>) -> Outcome {
    let (mut payload, mut size, mut delay, mut status, mut message) = (&[][..], 0, 0, 0, "");
    for f in grpc::fields(m) {
        match f {
            Some((1, Field::Bytes(p))) => payload = p,
            Some((2, Field::Varint(v))) => size = v as usize,
            Some((3, Field::Varint(v))) => delay = v,
            Some((4, Field::Varint(v))) => status = v as u32,
            Some((5, Field::Bytes(t))) => message = std::str::from_utf8(t).unwrap_or(""),
            Some(_) => {}
            None => return Ok(Err(Status(3, "the request is no EchoRequest".into()))),
        }
    }
    if size > grpc::MAX_MESSAGE - 16 {
        return Ok(Err(Status(
            11,
            format!("reply_size {size} is over the 4 MiB message limit"),
        )));
    }
    if delay > 0 {
        tokio::time::sleep(Duration::from_micros(delay).min(MOST_DELAY)).await;
    }
    if status != 0 {
        return Ok(Err(Status(status, message.to_string())));
    }
    let mut reply = Vec::with_capacity(size.max(payload.len()) + 8);
    match size {
        0 => grpc::put_bytes(&mut reply, 1, payload),
        n => grpc::put_bytes(&mut reply, 1, &vec![b'x'; n]),
    }
    let mut out = respond.send_response(head(), false)?;
    send(&mut out, &reply).await?;
    ok(&mut out)?;
    Ok(Ok(()))
}

async fn stream(m: &[u8], respond: &mut SendResponse<Bytes>, c: &Counters) -> Outcome {
    let (mut count, mut interval, mut size) = (0u64, 0u64, 0usize);
    for f in grpc::fields(m) {
        match f {
            Some((1, Field::Varint(v))) => count = v,
            Some((2, Field::Varint(v))) => interval = v,
            Some((3, Field::Varint(v))) => size = v as usize,
            Some(_) => {}
            None => return Ok(Err(Status(3, "the request is no StreamRequest".into()))),
        }
    }
    if count > MOST_MESSAGES || interval > MOST_INTERVAL_MS || size > grpc::MAX_MESSAGE - 32 {
        return Ok(Err(Status(
            11,
            format!("at most {MOST_MESSAGES} messages of 4 MiB, {MOST_INTERVAL_MS} ms apart"),
        )));
    }
    let mut out = respond.send_response(head(), false)?;
    let payload = vec![b'x'; size];
    let start = tokio::time::Instant::now();
    let mut msg = Vec::with_capacity(size + 16);
    for i in 0..count {
        // On a timetable from the start, so a late message does not delay the rest.
        tokio::time::sleep_until(start + Duration::from_millis(interval * i)).await;
        msg.clear();
        grpc::put_uint(&mut msg, 1, i);
        grpc::put_bytes(&mut msg, 2, &payload);
        send(&mut out, &msg).await?;
        bump(&c.streamed);
    }
    ok(&mut out)?;
    Ok(Ok(()))
}

async fn collect(
    body: &mut RecvStream,
    respond: &mut SendResponse<Bytes>,
    c: &Counters,
) -> Outcome {
    let mut d = Deframer::default();
    let (mut messages, mut bytes) = (0u64, 0u64);
    while let Some(chunk) = body.data().await {
        let chunk = chunk?;
        let _ = body.flow_control().release_capacity(chunk.len());
        let pushed = d.push(&chunk, |m| {
            messages += 1;
            for (n, f) in grpc::fields(m).map_while(|f| f) {
                if let (1, Field::Bytes(p)) = (n, f) {
                    bytes += p.len() as u64;
                }
            }
        });
        if let Err(e) = pushed {
            c.collected.fetch_add(messages, Ordering::Relaxed);
            return Ok(Err(Status(3, format!("the request stream: {e}"))));
        }
    }
    c.collected.fetch_add(messages, Ordering::Relaxed);
    let mut reply = Vec::new();
    grpc::put_uint(&mut reply, 1, messages);
    grpc::put_uint(&mut reply, 2, bytes);
    let mut out = respond.send_response(head(), false)?;
    send(&mut out, &reply).await?;
    ok(&mut out)?;
    Ok(Ok(()))
}

/// Server reflection: one answer per request, as they come, until the client ends its stream.
async fn reflect(body: &mut RecvStream, respond: &mut SendResponse<Bytes>, file: &[u8]) -> Outcome {
    let mut out = respond.send_response(head(), false)?;
    let mut d = Deframer::default();
    while let Some(chunk) = body.data().await {
        let chunk = chunk?;
        let _ = body.flow_control().release_capacity(chunk.len());
        let mut replies = Vec::new();
        if d.push(&chunk, |m| {
            replies.push(answer(&ReflectionRequest::decode(m), file))
        })
        .is_err()
        {
            break;
        }
        for r in replies {
            send(&mut out, &r.encode()).await?;
        }
    }
    ok(&mut out)?;
    Ok(Ok(()))
}

/// What reflection answers to `req`.
fn answer(req: &ReflectionRequest, file: &[u8]) -> ReflectionReply {
    let ours = |symbol: &str| {
        let package = "wirebench.bench.";
        symbol
            .strip_prefix(package)
            .is_some_and(|rest| !rest.is_empty())
    };
    match req {
        ReflectionRequest::ListServices => {
            let mut names = vec![grpc::BENCH_SERVICE.to_string()];
            names.extend(grpc::REFLECTION.iter().map(|r| r.to_string()));
            ReflectionReply::Services(names)
        }
        ReflectionRequest::FileByName(f) if f == grpc::BENCH_FILE => {
            ReflectionReply::Files(vec![file.to_vec()])
        }
        ReflectionRequest::FileContainingSymbol(s) if ours(s) => {
            ReflectionReply::Files(vec![file.to_vec()])
        }
        ReflectionRequest::FileByName(name) | ReflectionRequest::FileContainingSymbol(name) => {
            ReflectionReply::Error(5, format!("{name} not found"))
        }
        ReflectionRequest::Other => ReflectionReply::Error(12, "not answered here".into()),
    }
}
