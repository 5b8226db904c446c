//! HTTP/3 (`--http3`) over QUIC, on `https://` URLs: ALPN `h3`, TLS 1.3 inside QUIC (quinn on
//! rustls with ring, the TLS stack of `https://` over TCP). One session is one QUIC connection;
//! `--pipeline K` requests in flight are K concurrent request streams on it (h2load's `-m`).
//!
//! Each worker has one QUIC endpoint, one UDP socket, which all its connections share (quinn
//! sends and receives with UDP GSO and GRO where the kernel has them), never a socket per
//! connection. The HTTP/3 framing and QPACK (static table only) are wirebench's own
//! ([`crate::wire::h3`]), shared with `serve http3`.
//!
//! Failures: a stream the server resets fails its request alone; a connection that closes or
//! times out fails its requests, is not reused, and the engine opens another. A request past
//! `--timeout` is given up alone (its streams dropped), unless nothing came back on the
//! connection all that time: then the connection is. A target that never answers the first
//! QUIC handshake of the run is bad input (UDP blocked, or nothing serves QUIC there): one
//! line naming the fix, as for an untrusted certificate or a server without `h3` in ALPN.

mod exchange;
mod session;

use super::target::Scheme;
use super::tls::TlsClient;
use super::{Driver, Job, Placement, Protocol};
use crate::driver::http::spec::HttpSpec;
use crate::record::{ErrorKind, OpError};
use crate::wire::h3::{frame, qpack};
use bytes::Bytes;
use rustls::client::{ClientSessionMemoryCache, ClientSessionStore, Resumption};
use rustls::pki_types::ServerName;
pub use session::H3Session;
use std::cell::OnceCell;
use std::net::SocketAddr;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long the run's first handshake waits for any answer before the target is taken not to
/// speak QUIC at all (the "within 3 s"; `--timeout` if shorter).
const FIRST_ANSWER: Duration = Duration::from_secs(3);

/// Sessions a worker's cache keeps, as for TLS over TCP.
const SESSIONS: usize = 32;

/// What the run's requests are made from, shared by a worker's sessions.
#[derive(Debug)]
struct Requests {
    spec: Arc<HttpSpec>,
    shapes: crate::driver::h2::request::Shapes,
    /// Per shape without placeholders: its frames and body, built once.
    fixed: Vec<Option<(Bytes, Option<Bytes>)>>,
    worker: usize,
    connections: u64,
}

/// A request's frames: HEADERS with its QPACK field section, then, with a body, the DATA
/// frame's head (the body goes out as it is, not copied); `block` is scratch space.
fn frames(
    req: &http::Request<()>,
    body: Option<Bytes>,
    block: &mut Vec<u8>,
) -> (Bytes, Option<Bytes>) {
    block.clear();
    qpack::put_prefix(block);
    crate::driver::h2::request::fields(req, |name, value| qpack::put_field(block, name, value));
    let mut head = Vec::with_capacity(block.len() + 16);
    crate::wire::h3::put_headers(&mut head, block);
    if let Some(b) = &body {
        frame::put_head(&mut head, frame::DATA, b.len() as u64);
    }
    (Bytes::from(head), body)
}

/// A worker's TLS session cache that counts the tickets taken: a handshake that took one
/// offered to resume (the connect is synchronous, so the count before and after tells).
#[derive(Debug)]
struct Counted {
    inner: ClientSessionMemoryCache,
    taken: AtomicU64,
}

impl ClientSessionStore for Counted {
    fn set_kx_hint(&self, name: ServerName<'static>, group: rustls::NamedGroup) {
        self.inner.set_kx_hint(name, group)
    }
    fn kx_hint(&self, name: &ServerName<'_>) -> Option<rustls::NamedGroup> {
        self.inner.kx_hint(name)
    }
    fn set_tls12_session(
        &self,
        name: ServerName<'static>,
        value: rustls::client::Tls12ClientSessionValue,
    ) {
        self.inner.set_tls12_session(name, value)
    }
    fn tls12_session(
        &self,
        name: &ServerName<'_>,
    ) -> Option<rustls::client::Tls12ClientSessionValue> {
        self.inner.tls12_session(name)
    }
    fn remove_tls12_session(&self, name: &ServerName<'static>) {
        self.inner.remove_tls12_session(name)
    }
    fn insert_tls13_ticket(
        &self,
        name: ServerName<'static>,
        value: rustls::client::Tls13ClientSessionValue,
    ) {
        self.inner.insert_tls13_ticket(name, value)
    }
    fn take_tls13_ticket(
        &self,
        name: &ServerName<'static>,
    ) -> Option<rustls::client::Tls13ClientSessionValue> {
        let t = self.inner.take_tls13_ticket(name);
        if t.is_some() {
            self.taken.fetch_add(1, Ordering::Relaxed);
        }
        t
    }
}

/// Opens HTTP/3 connections to one target from one worker's endpoint.
pub struct H3Driver {
    addr: SocketAddr,
    name: String,
    config: quinn::ClientConfig,
    store: Option<Arc<Counted>>,
    /// The worker's endpoint, made at its first connect (it needs the worker's runtime).
    endpoint: OnceCell<quinn::Endpoint>,
    requests: Rc<Requests>,
    /// Whether the target answered any handshake of the run (shared by the workers).
    answered: Arc<AtomicBool>,
}

impl std::fmt::Debug for H3Driver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "H3Driver({})", self.addr)
    }
}

impl H3Driver {
    fn endpoint(&self) -> Result<&quinn::Endpoint, OpError> {
        if let Some(e) = self.endpoint.get() {
            return Ok(e);
        }
        let bind: SocketAddr = match self.addr {
            SocketAddr::V4(_) => (std::net::Ipv4Addr::UNSPECIFIED, 0).into(),
            SocketAddr::V6(_) => (std::net::Ipv6Addr::UNSPECIFIED, 0).into(),
        };
        let e = quinn::Endpoint::client(bind).map_err(|e| OpError::io("QUIC endpoint", &e))?;
        Ok(self.endpoint.get_or_init(|| e))
    }

    /// Why a handshake failed, as the run reports it.
    fn handshake_error(&self, e: &quinn::ConnectionError, answered: bool) -> OpError {
        use quinn::ConnectionError as E;
        let alert = |e: &quinn::ConnectionError| match e {
            E::ConnectionClosed(c) => Some((u64::from(c.error_code), c.reason.clone())),
            E::TransportError(t) => Some((u64::from(t.code), t.reason.clone().into())),
            _ => None,
        };
        if let Some((code, reason)) = alert(e) {
            // A TLS alert is carried as CRYPTO_ERROR 0x100 + the alert (RFC 9001 §4.8).
            if code == 0x100 + 120 {
                return OpError::fatal(
                    ErrorKind::Tls,
                    "the server does not offer h3 in ALPN (it does not speak HTTP/3 here): enable HTTP/3 on the server, or leave out --http3 to run over TCP",
                );
            }
            if (0x100..0x200).contains(&code) {
                let mut reason = String::from_utf8_lossy(&reason).into_owned();
                if reason.is_empty() {
                    reason = e.to_string();
                }
                return OpError::fatal(
                    ErrorKind::Tls,
                    format!("QUIC's TLS handshake failed: {reason}; for a self-signed server use --insecure, or --cacert FILE with its CA"),
                );
            }
        }
        if let E::TimedOut = e {
            if !answered {
                return self.no_answer();
            }
        }
        let f = exchange::connection_failure(e);
        OpError::new(f.kind, format!("QUIC handshake: {}", f.message())).reached()
    }

    fn no_answer(&self) -> OpError {
        OpError::fatal(
            ErrorKind::Timeout,
            format!(
                "no QUIC answer from {} within {} s: is UDP open? without --http3 the same URL runs over TCP",
                self.addr,
                FIRST_ANSWER.as_secs()
            ),
        )
    }
}

impl Driver for H3Driver {
    type Session = H3Session;

    async fn connect(&self, timeout: Duration) -> Result<(H3Session, Option<Duration>), OpError> {
        let endpoint = self.endpoint()?;
        let answered = self.answered.load(Ordering::Relaxed);
        let limit = match answered {
            true => timeout,
            false => timeout.min(FIRST_ANSWER),
        };
        let started = Instant::now();
        let connecting = endpoint
            .connect_with(self.config.clone(), self.addr, &self.name)
            .map_err(|e| OpError::fatal(ErrorKind::Other, format!("QUIC: {e}")))?;
        let _resumed = self
            .store
            .as_ref()
            .is_some_and(|s| s.taken.load(Ordering::Relaxed) > 0);
        let conn = match tokio::time::timeout(limit, connecting).await {
            Err(_) if !answered => return Err(self.no_answer()),
            Err(_) => {
                return Err(OpError::new(
                    ErrorKind::Timeout,
                    format!("QUIC handshake: no answer within {limit:?}"),
                )
                .reached())
            }
            Ok(Err(e)) => return Err(self.handshake_error(&e, answered)),
            Ok(Ok(c)) => c,
        };
        let took = started.elapsed();
        self.answered.store(true, Ordering::Relaxed);
        let mut control = conn
            .open_uni()
            .await
            .map_err(|e| OpError::new(ErrorKind::Other, format!("HTTP/3: {e}")).reached())?;
        let mut open = Vec::new();
        crate::wire::h3::put_control_open(&mut open);
        control
            .write_all(&open)
            .await
            .map_err(|e| OpError::new(ErrorKind::Other, format!("HTTP/3: {e}")).reached())?;
        Ok((
            H3Session::new(conn, control, self.requests.clone()),
            Some(took),
        ))
    }
}

/// HTTP/3 (`--http3`, `https://` only).
#[derive(Debug)]
pub struct Http3 {
    spec: Arc<HttpSpec>,
    tls: Arc<TlsClient>,
    answered: Arc<AtomicBool>,
}

/// The transport settings of the client's connections: windows wide enough that one stream
/// can fill a fast path (a 64 MiB download on loopback), and no limit of its own below the
/// engine's timeouts.
fn transport() -> quinn::TransportConfig {
    let mut t = quinn::TransportConfig::default();
    t.stream_receive_window(quinn::VarInt::from_u32(16 << 20));
    t.receive_window(quinn::VarInt::from_u32(64 << 20));
    t.send_window(64 << 20);
    t.max_concurrent_uni_streams(quinn::VarInt::from_u32(16));
    t
}

impl Protocol for Http3 {
    const SCHEMES: &'static [Scheme] = &crate::driver::http::SCHEMES;
    const FLAGS: &'static [&'static str] = &[crate::driver::http::flags::HTTP];
    type Driver = H3Driver;

    fn check(w: &crate::driver::workload::Workload) -> Result<(), crate::error::UsageError> {
        crate::driver::http::flags::check(w)
    }

    fn carries(job: &Job) -> bool {
        job.workload.spec_of::<HttpSpec>().is_some_and(|h| h.http3)
    }

    fn prepare(job: &Job) -> Result<Http3, crate::driver::Error> {
        let spec = crate::driver::http::http_spec(job)?;
        let tls = crate::driver::http::tls_client(job, false)?.ok_or_else(|| {
            crate::driver::Error::NoWorkload(format!(
                "{}: HTTP/3 runs over QUIC, which is always TLS: give an https:// URL",
                job.target.url
            ))
        })?;
        crate::driver::h2::check(&spec, true).map_err(crate::driver::Error::Request)?;
        Ok(Http3 {
            spec,
            tls,
            answered: Arc::new(AtomicBool::new(false)),
        })
    }

    fn driver(&self, job: &Job, at: Placement) -> H3Driver {
        let (mut tls, name, resume) = self.tls.quic_parts();
        tls.alpn_protocols = vec![crate::wire::h3::ALPN.to_vec()];
        let store = resume.then(|| {
            Arc::new(Counted {
                inner: ClientSessionMemoryCache::new(SESSIONS),
                taken: AtomicU64::new(0),
            })
        });
        tls.resumption = match &store {
            Some(s) => Resumption::store(s.clone()),
            None => Resumption::disabled(),
        };
        #[allow(
            clippy::expect_used,
            reason = "rustls's ring provider has TLS 1.3 and AES-128-GCM, all quinn asks"
        )]
        let crypto = quinn::crypto::rustls::QuicClientConfig::try_from(Arc::new(tls))
            .expect("a TLS 1.3 configuration");
        let mut config = quinn::ClientConfig::new(Arc::new(crypto));
        config.transport_config(Arc::new(transport()));
        #[allow(
            clippy::expect_used,
            reason = "the plan built the same shapes and refused the run as bad input if they failed"
        )]
        let shapes = crate::driver::h2::request::Shapes::new(&self.spec, true)
            .expect("checked when the plan was made");
        let mut block = Vec::new();
        let fixed = (0..shapes.count())
            .map(|i| {
                shapes.is_fixed(i).then(|| {
                    let mut rng = crate::driver::http::template::Rng::new();
                    let mut vars = crate::driver::http::template::Vars {
                        seq: i as u64,
                        worker: at.worker,
                        rng: &mut rng,
                    };
                    shapes
                        .render(&mut vars, &mut Vec::new())
                        .map(|(req, body)| frames(&req, body, &mut block))
                })?
            })
            .collect();
        H3Driver {
            addr: job.target.addr,
            name,
            config,
            store,
            endpoint: OnceCell::new(),
            requests: Rc::new(Requests {
                spec: self.spec.clone(),
                shapes,
                fixed,
                worker: at.worker,
                connections: job.connections as u64,
            }),
            answered: self.answered.clone(),
        }
    }
}
