//! The reference HTTP/3 server (`wirebench serve http3`): the routes of `serve http`
//! (`/bytes/N`, `/delay/D`, `/status/CODE`, `POST|PUT /echo`, files under `dir`, `--delay`,
//! `--max-rate`) over QUIC, on one UDP socket.
//!
//! # Design
//!
//! One thread runs a single-threaded tokio runtime with one quinn endpoint; each connection
//! and each request stream is a task. The HTTP/3 framing and QPACK (static table only: the
//! server announces no dynamic table, so clients encode without one) are `wire::h3`'s, the
//! client's too. A certificate is given (`cert`), or made and written at start by the command.
//!
//! Bounds against a hostile client: a request head (and any other frame but DATA) of at most
//! `max_header_bytes`, at most [`STREAMS`] request streams open per connection and a few
//! unidirectional ones, `max_connections` connections (beyond: refused in the handshake), and
//! an idle timeout after which QUIC closes a silent connection. Bodies are never gathered.

mod stream;

use super::rate::Service;
use super::Shutdown;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Request streams a client may have open at once on one connection.
pub const STREAMS: u32 = 256;

/// A certificate chain and its key, as the server presents them.
#[derive(Debug)]
pub struct Certificate {
    /// The chain, leaf first.
    pub chain: Vec<CertificateDer<'static>>,
    /// The leaf's private key.
    pub key: PrivateKeyDer<'static>,
}

impl Certificate {
    /// A self-signed certificate for `127.0.0.1`, `::1` and `localhost`, with its PEM text
    /// (certificate, key) to write down for the clients (`--cacert`).
    pub fn self_signed() -> io::Result<(Certificate, String, String)> {
        let names = ["localhost", "127.0.0.1", "::1"].map(String::from).to_vec();
        let c = rcgen::generate_simple_self_signed(names).map_err(io::Error::other)?;
        let (cert_pem, key_pem) = (c.cert.pem(), c.signing_key.serialize_pem());
        let cert = Certificate {
            chain: vec![c.cert.der().clone()],
            key: PrivateKeyDer::Pkcs8(c.signing_key.serialize_der().into()),
        };
        Ok((cert, cert_pem, key_pem))
    }

    /// A chain and key from PEM text (`--cert`, `--key`); the error says what is missing.
    pub fn from_pem(cert: &[u8], key: &[u8]) -> Result<Certificate, String> {
        use rustls::pki_types::pem::PemObject;
        let chain = CertificateDer::pem_slice_iter(cert)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| format!("not PEM certificates ({e})"))?;
        if chain.is_empty() {
            return Err("no certificate in the file".into());
        }
        let key =
            PrivateKeyDer::from_pem_slice(key).map_err(|e| format!("no private key ({e})"))?;
        Ok(Certificate { chain, key })
    }
}

/// What the server does and how.
#[derive(Debug)]
pub struct H3ServerOptions {
    /// Serve the files under this directory for paths that are not routes; it must exist.
    pub dir: Option<PathBuf>,
    /// Service time before every response (added to `/delay/D`).
    pub delay: Option<Duration>,
    /// A server-wide capacity in requests/s; requests beyond it queue.
    pub max_rate: Option<f64>,
    /// Connections beyond this many open at a time are refused.
    pub max_connections: Option<usize>,
    /// The largest request head.
    pub max_header_bytes: usize,
    /// QUIC closes a connection silent for this long.
    pub idle_timeout: Duration,
    /// The certificate presented.
    pub cert: Certificate,
}

/// The server's counters.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    connections: AtomicU64,
    open: AtomicU64,
    refused: AtomicU64,
    requests: AtomicU64,
    bytes_in: AtomicU64,
    bytes_out: AtomicU64,
    /// Responses by status class: 2xx, 3xx, 4xx, 5xx.
    classes: [AtomicU64; 4],
}

impl Counters {
    fn status(&self, status: u16) {
        if let Some(c) = self
            .classes
            .get(usize::from(status / 100).saturating_sub(2))
        {
            c.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn snapshot(&self) -> H3ServerStats {
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        H3ServerStats {
            connections: get(&self.connections),
            refused: get(&self.refused),
            requests: get(&self.requests),
            bytes_in: get(&self.bytes_in),
            bytes_out: get(&self.bytes_out),
            classes: self.classes.each_ref().map(get),
        }
    }
}

/// What the server did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct H3ServerStats {
    /// QUIC connections accepted.
    pub connections: u64,
    /// Connections refused (beyond `max_connections`).
    pub refused: u64,
    /// Requests whose head arrived whole.
    pub requests: u64,
    /// Request stream bytes read (frames).
    pub bytes_in: u64,
    /// Response stream bytes written (frames).
    pub bytes_out: u64,
    /// Responses by status class: 2xx, 3xx, 4xx, 5xx.
    pub classes: [u64; 4],
}

impl std::fmt::Display for H3ServerStats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let [ok, redirect, client, server] = self.classes;
        write!(
            f,
            "{} connections ({} refused), {} requests (2xx {ok}, 3xx {redirect}, 4xx {client}, 5xx {server}), {} bytes in, {} bytes out",
            self.connections, self.refused, self.requests, self.bytes_in, self.bytes_out
        )
    }
}

/// What every connection shares, read-only but for the counters.
#[derive(Debug)]
struct Shared {
    options: H3ServerOptions,
    root: Option<crate::serve::http::file::Root>,
    service: Service,
    counters: Arc<Counters>,
}

/// Serves `socket` until `shutdown`, then returns the final counters. Fails only if the server
/// cannot start (a missing directory, a certificate rustls refuses, no runtime).
pub fn run(
    socket: UdpSocket,
    options: H3ServerOptions,
    shutdown: Shutdown,
) -> io::Result<H3ServerStats> {
    let counters = Arc::new(Counters::default());
    let (runtime, endpoint, shared) = prepare(socket, options, counters.clone())?;
    runtime.block_on(accept(endpoint, shared, shutdown));
    Ok(counters.snapshot())
}

/// A server running on a background thread ([`spawn`]); dropping it stops the server.
#[derive(Debug)]
pub struct H3ServerHandle {
    /// The UDP address the server is bound to.
    pub addr: SocketAddr,
    shutdown: Shutdown,
    counters: Arc<Counters>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl H3ServerHandle {
    /// The counters so far.
    pub fn stats(&self) -> H3ServerStats {
        self.counters.snapshot()
    }

    /// Stops the server and returns its final counters.
    pub fn stop(mut self) -> H3ServerStats {
        self.finish();
        self.counters.snapshot()
    }

    fn finish(&mut self) {
        self.shutdown.trigger();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for H3ServerHandle {
    fn drop(&mut self) {
        self.finish();
    }
}

/// Runs [`run`] on a background thread; start-up errors are returned here.
pub fn spawn(socket: UdpSocket, options: H3ServerOptions) -> io::Result<H3ServerHandle> {
    let addr = socket.local_addr()?;
    let counters = Arc::new(Counters::default());
    let (runtime, endpoint, shared) = prepare(socket, options, counters.clone())?;
    let shutdown = Shutdown::new();
    let stop = shutdown.clone();
    let thread = std::thread::Builder::new()
        .name("serve-http3".into())
        .spawn(move || runtime.block_on(accept(endpoint, shared, stop)))?;
    Ok(H3ServerHandle {
        addr,
        shutdown,
        counters,
        thread: Some(thread),
    })
}

fn prepare(
    socket: UdpSocket,
    options: H3ServerOptions,
    counters: Arc<Counters>,
) -> io::Result<(tokio::runtime::Runtime, quinn::Endpoint, Arc<Shared>)> {
    let invalid = |what: String| io::Error::new(io::ErrorKind::InvalidInput, what);
    let root =
        match &options.dir {
            None => None,
            Some(dir) => Some(crate::serve::http::file::Root::open(dir).map_err(|e| {
                io::Error::new(e.kind(), format!("directory {}: {e}", dir.display()))
            })?),
        };
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut tls = rustls::ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13])
        .map_err(|e| invalid(format!("TLS set-up: {e}")))?
        .with_no_client_auth()
        .with_single_cert(options.cert.chain.clone(), options.cert.key.clone_key())
        .map_err(|e| invalid(format!("the certificate: {e}")))?;
    tls.alpn_protocols = vec![crate::wire::h3::ALPN.to_vec()];
    tls.max_early_data_size = u32::MAX;
    let crypto = quinn::crypto::rustls::QuicServerConfig::try_from(Arc::new(tls))
        .map_err(|e| invalid(format!("QUIC's TLS set-up: {e}")))?;
    let mut config = quinn::ServerConfig::with_crypto(Arc::new(crypto));
    let mut transport = quinn::TransportConfig::default();
    transport.max_concurrent_bidi_streams(quinn::VarInt::from_u32(STREAMS));
    transport.max_concurrent_uni_streams(quinn::VarInt::from_u32(8));
    transport.stream_receive_window(quinn::VarInt::from_u32(4 << 20));
    transport.send_window(64 << 20);
    let idle = quinn::IdleTimeout::try_from(options.idle_timeout)
        .map_err(|_| invalid("the idle timeout is too long".into()))?;
    transport.max_idle_timeout(Some(idle));
    config.transport_config(Arc::new(transport));
    let service = Service::new(options.delay, options.max_rate);
    let shared = Arc::new(Shared {
        options,
        root,
        service,
        counters,
    });
    let runtime = super::threads::runtime()?;
    socket.set_nonblocking(true)?;
    let endpoint = {
        let _context = runtime.enter();
        let rt = quinn::default_runtime()
            .ok_or_else(|| io::Error::other("no async runtime for QUIC"))?;
        quinn::Endpoint::new(quinn::EndpointConfig::default(), Some(config), socket, rt)?
    };
    Ok((runtime, endpoint, shared))
}

/// Accepts connections until `shutdown`, then closes them all.
async fn accept(endpoint: quinn::Endpoint, shared: Arc<Shared>, shutdown: Shutdown) {
    loop {
        let incoming = tokio::select! {
            _ = shutdown.wait() => break,
            i = endpoint.accept() => match i {
                Some(i) => i,
                None => break,
            },
        };
        let c = &shared.counters;
        let full = shared
            .options
            .max_connections
            .is_some_and(|max| c.open.load(Ordering::Relaxed) >= max as u64);
        if full {
            c.refused.fetch_add(1, Ordering::Relaxed);
            incoming.refuse();
            continue;
        }
        tokio::spawn(connection(incoming, shared.clone()));
    }
    endpoint.close(quinn::VarInt::from_u32(0x100), b"server shutting down");
    let _ = tokio::time::timeout(Duration::from_millis(500), endpoint.wait_idle()).await;
}

/// Serves one connection: its control stream, the client's unidirectional streams (read and
/// dropped: with no dynamic table there is nothing in them to act on), its request streams.
async fn connection(incoming: quinn::Incoming, shared: Arc<Shared>) {
    let Ok(conn) = incoming.await else {
        return;
    };
    let c = shared.counters.clone();
    c.connections.fetch_add(1, Ordering::Relaxed);
    c.open.fetch_add(1, Ordering::Relaxed);
    let _control = match conn.open_uni().await {
        Ok(mut s) => {
            let mut open = Vec::new();
            crate::wire::h3::put_control_open(&mut open);
            let _ = s.write_all(&open).await;
            Some(s)
        }
        Err(_) => None,
    };
    let uni = conn.clone();
    tokio::spawn(async move {
        while let Ok(mut s) = uni.accept_uni().await {
            tokio::spawn(
                async move { while let Ok(Some(_)) = s.read_chunk(usize::MAX, true).await {} },
            );
        }
    });
    while let Ok((send, recv)) = conn.accept_bi().await {
        let shared = shared.clone();
        tokio::spawn(async move { stream::serve(send, recv, &shared).await });
    }
    c.open.fetch_sub(1, Ordering::Relaxed);
}
