//! HTTP/1.1: what one operation is over a keep-alive connection. Requests are rendered from
//! templates; responses are parsed as a stream (status line and headers with httparse, then a
//! body by Content-Length, chunked, or up to the close) and never held in memory, so a
//! gigabyte download costs a read buffer. Each response records its status, its time to first
//! byte, and counts as success when its status is accepted.

pub mod file_set;
pub mod flags;
#[doc(hidden)]
pub mod fuzz;
pub mod mix;
pub mod plan;
mod request;
mod response;
mod reuse;
pub mod spec;
pub mod template;

use super::stream::{connect_stream, Stream};
use super::target::{Family, ProtocolName, Scheme};
use super::tls::TlsClient;
use super::{Done, Driver, Expiry, Job, Placement, Protocol, ReadOutcome, Sent, Session};
use crate::record::{ErrorKind, OpError};
use crate::sys::socket::SocketOptions;
use request::{render_request, Fixed};
use response::Parser;
use reuse::Reuse;
use spec::HttpSpec;
use std::collections::VecDeque;
use std::net::SocketAddr;
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};
use template::{Rng, Vars};

/// Read buffer for small responses; a connection switches to [`BIG_READ`] once a response
/// announces a large body, so ten thousand connections stay small and one download is fast.
const SMALL_READ: usize = 16 * 1024;
/// A new connection's read buffer, grown to [`SMALL_READ`] by the first read that fills it.
/// Zeroing 16 KiB for each connection was 17k of crr's 41k instructions per request (callgrind;
/// ab spends 8k on all of it), where a small response (nginx's head and a short body) fits in 2.
const FIRST_READ: usize = 2 * 1024;
const BIG_READ: usize = 256 * 1024;
/// While a long body arrives the reader is woken only when this much is buffered: a gigabyte
/// from nginx on loopback cost ~10,000 sleeps without it, ~350 with it, and twice the MB/s.
const BODY_LOWAT: u64 = 128 * 1024;
/// Opens HTTP connections to one target.
#[derive(Debug)]
pub struct HttpDriver {
    addr: SocketAddr,
    socket: SocketOptions,
    spec: Arc<HttpSpec>,
    worker: usize,
    connections: u64,
    blocking: bool,
    tls: Option<Arc<TlsClient>>,
    /// The request, rendered once, when every request is the same bytes.
    fixed: Option<Arc<Fixed>>,
    /// What the worker's connections hand on to each other.
    reuse: Rc<Reuse>,
}

impl HttpDriver {
    /// A driver for worker `worker` of a run with `connections` connections.
    pub fn new(
        addr: SocketAddr,
        spec: Arc<HttpSpec>,
        socket: SocketOptions,
        worker: usize,
        connections: usize,
    ) -> HttpDriver {
        HttpDriver {
            addr,
            socket,
            fixed: Fixed::of(&spec),
            reuse: Rc::default(),
            spec,
            worker,
            connections: connections as u64,
            blocking: false,
            tls: None,
        }
    }

    /// Speaks TLS (https) with `client`.
    pub fn tls(mut self, client: Option<Arc<TlsClient>>) -> HttpDriver {
        self.tls = client;
        self
    }

    /// Blocking socket calls, for a worker with a single closed-loop connection (see tcp.rs).
    pub fn blocking(mut self, on: bool) -> HttpDriver {
        self.blocking = on;
        self
    }
}

impl Driver for HttpDriver {
    type Session = HttpSession;

    async fn connect(&self, timeout: Duration) -> Result<(HttpSession, Option<Duration>), OpError> {
        let started = Instant::now();
        let blocking = self.blocking && self.tls.is_none();
        let (mut stream, _) = connect_stream(self.addr, self.socket, timeout, blocking).await?;
        if let Some(tls) = &self.tls {
            // The target is there: what fails now is its answer.
            stream = stream.tls(tls, timeout).await.map_err(OpError::reached)?;
        }
        // Connect time includes the TLS handshake: both are paid before the first request.
        let took = started.elapsed();
        let mut session = HttpSession::new(
            stream,
            self.spec.clone(),
            self.worker,
            self.connections,
            self.reuse.clone(),
        );
        session.fixed = self.fixed.clone();
        Ok((session, Some(took)))
    }
}

/// A request in flight: its number, send times, whether it was a HEAD (no body in the reply)
/// and its kind.
#[derive(Debug, Clone, Copy)]
struct Pending {
    seq: u64,
    sent: Sent,
    head: bool,
    /// Its kind in the mix (0: no mix).
    kind: u8,
}

/// One open HTTP connection.
#[derive(Debug)]
pub struct HttpSession {
    stream: Stream,
    spec: Arc<HttpSpec>,
    worker: usize,
    connections: u64,
    out: Vec<u8>,
    out_pos: usize,
    /// Bytes [`Session::flush_now`] wrote of a request the socket did not take whole, counted
    /// by the [`Session::flush`] that sends the rest.
    sent_now: usize,
    /// Scratch space for rendering a templated body (its length goes in the header first).
    body: Vec<u8>,
    /// Body bytes of the requests rendered since the last [`Session::sent_payload`].
    body_queued: usize,
    inbuf: Box<[u8]>,
    in_flight: VecDeque<Pending>,
    parser: Parser,
    /// Read buffers and the last response head, shared with the worker's other connections.
    reuse: Rc<Reuse>,
    completed: Vec<Done>,
    reusable: bool,
    /// The SO_RCVLOWAT in force (1, the kernel's default, outside long bodies).
    lowat: u64,
    /// The request, when every request is the same bytes.
    fixed: Option<Arc<Fixed>>,
    /// The one request queued is the fixed one and is not in `out`: [`Session::flush_now`]
    /// sends it from the worker's shared copy, without copying it into this connection's own
    /// buffer first (whose cache lines a write then touches: ~2 per request; cachegrind).
    fixed_unsent: bool,
}

/// The `{seq}` of the engine's request `seq` (connection k's n-th request is `k << 40 | n`):
/// dense and unique over the run without shared state, in a run of `connections` connections.
pub(crate) fn unique_seq(seq: u64, connections: u64) -> u64 {
    (seq & ((1 << 40) - 1)) * connections + (seq >> 40)
}

impl HttpSession {
    /// A session on a connected stream, with nothing in flight yet.
    fn new(
        stream: Stream,
        spec: Arc<HttpSpec>,
        worker: usize,
        connections: u64,
        reuse: Rc<Reuse>,
    ) -> Self {
        let q = reuse.queues();
        HttpSession {
            stream,
            spec,
            worker,
            connections,
            out: q.out,
            out_pos: 0,
            sent_now: 0,
            body: Vec::new(),
            body_queued: 0,
            inbuf: reuse.buffer(),
            in_flight: q.in_flight,
            parser: Parser::default(),
            reuse,
            completed: q.completed,
            reusable: true,
            lowat: 1,
            fixed: None,
            fixed_unsent: false,
        }
    }

    /// Renders request `seq` into the output buffer; returns its kind in the mix (0: none).
    fn render(&mut self, seq: u64) -> u8 {
        let unique = unique_seq(seq, self.connections);
        let spec = &*self.spec;
        // The request's own draws: its keys depend on the seed and its number alone.
        // (A local generator: seeding one per connection from the kernel cost a getrandom(2)
        // per connection, and was never drawn from.)
        let mut rng = Rng::nth(spec.seed, unique);
        let mut vars = Vars {
            seq: unique,
            worker: self.worker,
            rng: &mut rng,
        };
        let (kind, body) = render_request(spec, &mut vars, &mut self.out, &mut self.body);
        self.body_queued += body;
        kind
    }

    /// Puts the fixed request that [`Session::flush_now`] was to send from the shared copy into
    /// `out` (for a stream that only sends by awaiting, or one pipelined behind it).
    fn copy_unsent(&mut self) {
        if std::mem::take(&mut self.fixed_unsent) {
            self.copy_fixed();
        }
    }

    /// Appends the fixed request to `out`.
    fn copy_fixed(&mut self) {
        if let Some(f) = &self.fixed {
            self.out.extend_from_slice(&f.bytes);
        }
    }

    /// Within a long Content-Length body, a blocking read waits for [`BODY_LOWAT`] bytes; two
    /// setsockopt calls per body. The mark is raised only while at least twice that much of
    /// the body is still to come, and is back at 1 for the rest: a blocking recv(2) that has
    /// taken C bytes sleeps until the bytes *still queued* reach the mark (the kernel does
    /// not count the C), so with less than mark + C to come it would sleep until the timeout.
    fn tune_lowat(&mut self) {
        let want = match self.parser.body_left() {
            Some(left) if left >= 2 * BODY_LOWAT && self.inbuf.len() >= BIG_READ => BODY_LOWAT,
            _ => 1,
        };
        if want != self.lowat && self.stream.set_rcvlowat(want as usize).is_ok() {
            self.lowat = want;
        }
    }

    /// Parses the `n` bytes a read has just put in the buffer (0: the server closed), into
    /// the replies it completes.
    fn after_read(&mut self, n: usize) -> Result<ReadOutcome, OpError> {
        self.completed.clear();
        let mut out = ReadOutcome::default();
        if n == 0 {
            if self.end_at_close() {
                out.replies = self.completed.len();
                return Ok(out);
            }
            return Err(OpError::new(
                ErrorKind::ShortReply,
                "the server closed the connection",
            ));
        }
        out.wire = n;
        let now = Instant::now();
        out.at = Some(now);
        self.parse(n, now, &mut out)?;
        if n == self.inbuf.len() && n < SMALL_READ {
            // A read that filled the first buffer: more is coming than it holds.
            let mut small = vec![0; SMALL_READ].into_boxed_slice();
            small[..n].copy_from_slice(&self.inbuf);
            self.inbuf = small;
        }
        out.replies = self.completed.len();
        Ok(out)
    }

    fn grow(&mut self) {
        if self.inbuf.len() < BIG_READ {
            // The parser is still reading the bytes after the head: they move along.
            let mut big = vec![0; BIG_READ].into_boxed_slice();
            big[..self.inbuf.len()].copy_from_slice(&self.inbuf);
            self.inbuf = big;
        }
    }
}

impl Drop for HttpSession {
    fn drop(&mut self) {
        self.reuse.give(std::mem::take(&mut self.inbuf));
        self.reuse.give_queues(reuse::Queues {
            out: std::mem::take(&mut self.out),
            in_flight: std::mem::take(&mut self.in_flight),
            completed: std::mem::take(&mut self.completed),
        });
    }
}

impl Session for HttpSession {
    fn in_flight(&self) -> usize {
        self.in_flight.len()
    }

    fn oldest(&self) -> Option<Instant> {
        self.in_flight.front().map(|r| r.sent.at)
    }

    fn queue(&mut self, seq: u64, sent: Sent) {
        if self.out_pos == self.out.len() {
            self.out.clear();
            self.out_pos = 0;
        }
        let (kind, head) = match &self.fixed {
            Some(f) => {
                let (body, head) = (f.body, f.head);
                // Pipelined behind another: all go out of `out`, in order.
                let pipelined = self.fixed_unsent || !self.out.is_empty();
                self.copy_unsent();
                if pipelined {
                    self.copy_fixed();
                } else {
                    self.fixed_unsent = true;
                }
                self.body_queued += body;
                (0, head)
            }
            None => {
                let start = self.out.len();
                let kind = self.render(seq);
                (kind, self.out[start..].starts_with(b"HEAD "))
            }
        };
        self.in_flight.push_back(Pending {
            seq,
            sent,
            head,
            kind,
        });
    }

    fn flush_now(&mut self) -> Option<Result<usize, OpError>> {
        if let (true, Some(f)) = (self.fixed_unsent, &self.fixed) {
            let mut pos = 0;
            let sent = self.stream.send_now_from(&f.bytes, &mut pos)?;
            self.fixed_unsent = false;
            return match sent {
                Ok(true) => Some(Ok(pos + std::mem::take(&mut self.sent_now))),
                Ok(false) => {
                    // The socket took part of it: the rest goes out of `out`, by `flush`.
                    self.out.extend_from_slice(&f.bytes[pos..]);
                    self.sent_now += pos;
                    None
                }
                Err(e) => Some(Err(e)),
            };
        }
        let start = self.out_pos;
        match self.stream.send_now_from(&self.out, &mut self.out_pos)? {
            Ok(true) => Some(Ok(self.out_pos - start + std::mem::take(&mut self.sent_now))),
            Ok(false) => {
                self.sent_now += self.out_pos - start;
                None
            }
            Err(e) => Some(Err(e)),
        }
    }

    async fn flush(&mut self) -> Result<usize, OpError> {
        self.copy_unsent();
        let wire = self.stream.write_from(&self.out, &mut self.out_pos).await?;
        Ok(wire + std::mem::take(&mut self.sent_now))
    }

    fn sent_payload(&mut self, wire: usize) -> usize {
        // Bodies of the requests written; a partial write counts them once it is complete.
        if self.out_pos < self.out.len() || self.fixed_unsent {
            return 0;
        }
        std::mem::take(&mut self.body_queued).min(wire)
    }

    async fn read(&mut self) -> Result<ReadOutcome, OpError> {
        self.tune_lowat();
        let n = self
            .stream
            .read(&mut self.inbuf)
            .await
            .map_err(|e| OpError::io("read response", &e))?;
        self.after_read(n)
    }

    fn poll_read(
        &mut self,
        cx: &mut std::task::Context<'_>,
    ) -> Option<std::task::Poll<Result<ReadOutcome, OpError>>> {
        self.tune_lowat();
        use std::task::Poll;
        let read = match self.stream.poll_read_now(cx, &mut self.inbuf)? {
            Poll::Pending => return Some(Poll::Pending),
            Poll::Ready(Ok(n)) => self.after_read(n),
            Poll::Ready(Err(e)) => Err(OpError::io("read response", &e)),
        };
        Some(Poll::Ready(read))
    }

    fn completed(&self) -> &[Done] {
        &self.completed
    }

    fn reusable(&self) -> bool {
        self.reusable
    }

    /// A server that answers with `Connection: close` processes no request after that one
    /// (RFC 9112 §9.6): those pipelined behind it are sent again (§9.3.2). Not when the client
    /// itself asked for the close (`--no-keepalive`).
    fn goodbye(&mut self) -> Option<Vec<super::Retry>> {
        if self.reusable || !self.spec.keepalive {
            return None;
        }
        let left = self.in_flight.drain(..);
        Some(
            left.map(|p| super::Retry {
                seq: p.seq,
                sent: p.sent,
            })
            .collect(),
        )
    }

    /// The send MSS and TCP header of this connection, from `TCP_INFO` (the payload counted is
    /// the HTTP bytes, heads included; over TLS its records' overhead is not counted).
    fn segment(&self) -> Option<crate::record::Segment> {
        self.stream.segment()
    }

    fn expire(&mut self, now: Instant, timeout: Duration) -> Expiry {
        match self.oldest() {
            Some(at) if now >= at + timeout => Expiry::Reset,
            _ => Expiry::None,
        }
    }
}
/// The schemes of HTTP, whichever version carries it.
pub const SCHEMES: [Scheme; 2] = [
    Scheme {
        name: "http",
        protocol: ProtocolName::Http,
        family: Family::Http,
        default_port: Some(80),
        tls: false,
        path: true,
    },
    Scheme {
        name: "https",
        protocol: ProtocolName::Http,
        family: Family::Http,
        default_port: Some(443),
        tls: true,
        path: true,
    },
];

/// HTTP/1.1 (`http://`, `https://`).
#[derive(Debug)]
pub struct Http1 {
    spec: Arc<HttpSpec>,
    tls: Option<Arc<TlsClient>>,
}

impl Protocol for Http1 {
    const SCHEMES: &'static [Scheme] = &SCHEMES;
    const FLAGS: &'static [&'static str] = &[flags::HTTP];
    type Driver = HttpDriver;

    fn check(workload: &super::workload::Workload) -> Result<(), crate::error::UsageError> {
        flags::check(workload)
    }

    fn build(
        given: &crate::driver::Given,
        workload: &mut super::workload::Workload,
    ) -> Result<(), crate::error::UsageError> {
        let http = given.group::<flags::HttpArgs>()?;
        let args = plan::Args {
            http,
            file_set: given.group()?,
            seed: given.seed,
        };
        workload.spec = Some(Arc::new(plan::spec(&args, given.target)?));
        if http.no_keepalive {
            // A connection per request is the crr mode, HTTP-style.
            workload.mode = super::workload::ClientMode::Crr;
        }
        Ok(())
    }

    fn prepare(job: &Job) -> Result<Http1, crate::driver::Error> {
        Ok(Http1 {
            tls: tls_client(job, false)?,
            spec: http_spec(job)?,
        })
    }

    fn driver(&self, job: &Job, at: Placement) -> HttpDriver {
        HttpDriver::new(
            job.target.addr,
            self.spec.clone(),
            job.socket,
            at.worker,
            job.connections,
        )
        .blocking(at.blocking)
        .tls(self.tls.as_ref().map(|t| Arc::new(t.for_worker())))
    }
}

/// The HTTP requests of `job` (the plan makes them for every http:// target).
pub fn http_spec(job: &Job) -> Result<Arc<HttpSpec>, crate::driver::Error> {
    job.workload.shared::<HttpSpec>().ok_or_else(|| {
        crate::driver::Error::NoWorkload(format!(
            "{}: the plan has no HTTP requests",
            job.target.url
        ))
    })
}

/// The TLS client an `https://` job needs, offering h2 in ALPN with `http2`; `None` for
/// `http://`. A certificate file that cannot be read is bad input.
pub fn tls_client(job: &Job, http2: bool) -> Result<Option<Arc<TlsClient>>, crate::driver::Error> {
    let t = &job.tls;
    job.target
        .tls()
        .then(|| TlsClient::new(&job.target.host, t, http2))
        .transpose()
        .map(|c| c.map(Arc::new))
        .map_err(crate::driver::Error::Tls)
}

#[cfg(test)]
mod tests {
    use super::spec::{Accept, Body, HttpRequest, HttpSpec};
    use super::template::Template;
    use super::HttpDriver;
    use crate::driver::{Driver, Sent, Session};
    use crate::engine::block_on;
    use crate::sys::socket::SocketOptions;
    use std::io::Read;
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    /// A fixed request goes out of the worker's shared copy when the socket takes it whole, and
    /// out of the connection's buffer when it does not (the rest after a partial send) or when
    /// requests are pipelined behind it: every byte reaches the server once, in order, and every
    /// byte written is counted once.
    #[test]
    fn a_fixed_request_is_sent_whole_from_the_shared_copy_or_the_buffer() {
        let body = vec![b'x'; 15 * 1024];
        let spec = Arc::new(HttpSpec {
            requests: vec![HttpRequest {
                method: "POST".into(),
                path: Template::literal(b"/up"),
                headers: Vec::new(),
                has_host: false,
                body: Some(Body::Bytes(Arc::new(body))),
            }],
            host: "test".into(),
            accept: Accept::parse("2xx").unwrap(),
            keepalive: true,
            path_text: "/up".into(),
            http2: false,
            http3: false,
            seed: 0,
            mix: None,
            files: None,
        });
        // Small buffers on both ends, so that a request of 15 KiB does not fit at once while
        // the server is not reading.
        let listener =
            socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
        listener.set_recv_buffer_size(2048).unwrap();
        let addr: std::net::SocketAddr = "127.0.0.1:0".parse().unwrap();
        listener.bind(&addr.into()).unwrap();
        listener.listen(1).unwrap();
        let listener: std::net::TcpListener = listener.into();
        let addr = listener.local_addr().unwrap();
        let options = SocketOptions {
            nodelay: true,
            sndbuf: Some(4096),
            rcvbuf: None,
        };
        let driver = HttpDriver::new(addr, spec, options, 0, 1);
        let one = driver.fixed.as_ref().unwrap().bytes.len();
        let (server, wrote) = block_on(async {
            let (mut s, _) = driver.connect(Duration::from_secs(5)).await.unwrap();
            let (mut conn, _) = listener.accept().unwrap();
            let now = Instant::now();
            let sent = Sent {
                intended: now,
                at: now,
            };
            // Alone, with the server not reading: the socket takes part of it now.
            s.queue(0, sent);
            let mut wrote = match s.flush_now() {
                None => 0,
                Some(r) => r.unwrap(),
            };
            assert!(wrote < one, "the socket took all {one} bytes at once");
            let reader = std::thread::spawn(move || {
                let mut all = Vec::new();
                conn.read_to_end(&mut all).unwrap();
                all
            });
            wrote += s.flush().await.unwrap();
            // Alone again, the server reading: whole from the shared copy (or, if the socket
            // is still full, partly from the buffer, which flush then finishes).
            s.queue(1, sent);
            wrote += match s.flush_now() {
                Some(r) => r.unwrap(),
                None => s.flush().await.unwrap(),
            };
            // Two pipelined: both from the buffer, in order.
            s.queue(2, sent);
            s.queue(3, sent);
            wrote += match s.flush_now() {
                Some(r) => r.unwrap(),
                None => s.flush().await.unwrap(),
            };
            assert_eq!(s.in_flight(), 4);
            drop(s);
            (reader.join().unwrap(), wrote)
        });
        let fixed = driver.fixed.as_ref().unwrap();
        assert_eq!(wrote, 4 * one, "bytes counted as written");
        assert_eq!(server.len(), 4 * one, "bytes the server read");
        for request in server.chunks(one) {
            assert_eq!(
                request,
                &fixed.bytes[..],
                "a request arrived out of order or torn"
            );
        }
    }
}
