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
mod session;
pub mod spec;
pub mod template;

pub(crate) use session::unique_seq;

use super::stream::{connect_stream, Stream};
use super::target::{Family, ProtocolName, Scheme};
use super::tls::TlsClient;
use super::{Done, Driver, Job, Placement, Protocol, Sent};
use crate::record::OpError;
use crate::sys::socket::SocketOptions;
use request::Fixed;
use response::Parser;
use reuse::Reuse;
use spec::HttpSpec;
use std::collections::VecDeque;
use std::net::SocketAddr;
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};

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
