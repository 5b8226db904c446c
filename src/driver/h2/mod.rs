//! HTTP/2 (`--http2`): h2c with prior knowledge on http://, ALPN `h2` on https://. One
//! session is one connection; `--pipeline K` requests in flight are K concurrent streams on it.
//!
//! The protocol runs on a client framing layer of wirebench's own ([`framing`]: frames, HPACK,
//! flow control, the streams' states). It replaced the hyperium `h2` crate, which took three
//! times its instructions per request (bench/results/h2_cost.txt): the crate decoded every
//! response head into a header map and encoded the same request head each time.
//!
//! Failures: a stream the server resets or refuses (RST_STREAM) is an error of that request
//! alone and the connection goes on; a connection that fails or closes fails its streams, is
//! not reused, and the engine opens another. A graceful GOAWAY (NO_ERROR, as nginx sends at its
//! `keepalive_requests`) is no failure: a read waits until every stream at or below its last
//! stream has finished, and the streams above it, which the server did not process, are handed
//! back to the engine ([`Session::goodbye`](super::Session::goodbye)) to go out again on a new
//! connection, as h2load does — unless the connection answered nothing at all, when they are
//! errors (a server that takes no stream would otherwise have them sent again forever). A
//! request past `--timeout` is cancelled alone (RST_STREAM CANCEL), unless the connection has
//! been silent all that time: then the whole connection is given up, as an HTTP/1.1 one is.
//!
//! Payload bytes are bodies both ways, as for HTTP/1.1; wire bytes are what the connection
//! wrote and read (frames, compressed headers).

mod framing;
#[doc(hidden)]
pub mod fuzz;
pub(crate) mod io;
pub(crate) mod request;

/// HTTP/2's name of an error code (RFC 9113 §7), for error messages (gRPC's too).
pub(crate) use framing::reason_name;

use super::stream::connect_stream;
use super::target::Scheme;
use super::tls::TlsClient;
use super::{Driver, Job, Placement, Protocol};
use crate::driver::http::spec::HttpSpec;
use crate::record::OpError;
use crate::sys::socket::SocketOptions;
pub use framing::FramedSession as H2Session;
use io::{Counts, Io};
pub use request::RequestError;
use request::Shapes;
use std::net::SocketAddr;
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Checks that every request of `spec` can be sent over HTTP/2 (at plan time: bad input).
pub fn check(spec: &HttpSpec, https: bool) -> Result<(), RequestError> {
    Shapes::new(spec, https).map(|_| ())
}

/// Opens HTTP/2 connections to one target.
#[derive(Debug)]
pub struct H2Driver {
    addr: SocketAddr,
    socket: SocketOptions,
    tls: Option<Arc<TlsClient>>,
    spec: Arc<HttpSpec>,
    shapes: Rc<Shapes>,
    worker: usize,
    connections: u64,
}

impl H2Driver {
    /// A driver for worker `worker` of a run with `connections` connections; TLS with `tls`.
    pub fn new(
        addr: SocketAddr,
        spec: Arc<HttpSpec>,
        socket: SocketOptions,
        worker: usize,
        connections: usize,
        tls: Option<Arc<TlsClient>>,
    ) -> H2Driver {
        #[allow(
            clippy::expect_used,
            reason = "the plan builds the same shapes and refuses the run as bad input if they fail"
        )]
        let shapes = Shapes::new(&spec, tls.is_some()).expect("checked when the plan was made");
        H2Driver {
            addr,
            socket,
            tls,
            spec,
            shapes: Rc::new(shapes),
            worker,
            connections: connections as u64,
        }
    }
}

impl Driver for H2Driver {
    type Session = H2Session;

    async fn connect(&self, timeout: Duration) -> Result<(H2Session, Option<Duration>), OpError> {
        let started = Instant::now();
        let (mut stream, _) = connect_stream(self.addr, self.socket, timeout, false).await?;
        // From here on the target is there: what fails now is its answer.
        if let Some(tls) = &self.tls {
            stream = stream.tls(tls, timeout).await.map_err(OpError::reached)?;
        }
        let fd = stream.fd();
        let counts = Rc::new(Counts::default());
        let io = Io::new(stream, counts.clone())?;
        let requests = framing::Requests {
            spec: self.spec.clone(),
            shapes: self.shapes.clone(),
            worker: self.worker,
            connections: self.connections,
        };
        let cleartext = self.tls.is_none();
        let s = H2Session::start(io, counts, requests, fd, cleartext, timeout)
            .await
            .map_err(OpError::reached)?;
        Ok((s, Some(started.elapsed())))
    }
}
/// HTTP/2 (`--http2`: h2c by prior knowledge on `http://`, ALPN h2 on `https://`).
#[derive(Debug)]
pub struct Http2 {
    spec: Arc<HttpSpec>,
    tls: Option<Arc<TlsClient>>,
}

impl Protocol for Http2 {
    const SCHEMES: &'static [Scheme] = &crate::driver::http::SCHEMES;
    const FLAGS: &'static [&'static str] = &[crate::driver::http::flags::HTTP];

    fn check(w: &crate::driver::workload::Workload) -> Result<(), crate::error::UsageError> {
        crate::driver::http::flags::check(w)
    }
    type Driver = H2Driver;

    fn carries(job: &Job) -> bool {
        job.workload.spec_of::<HttpSpec>().is_some_and(|h| h.http2)
    }

    fn prepare(job: &Job) -> Result<Http2, crate::driver::Error> {
        let tls = crate::driver::http::tls_client(job, true)?;
        let spec = crate::driver::http::http_spec(job)?;
        check(&spec, job.target.tls()).map_err(crate::driver::Error::Request)?;
        Ok(Http2 { spec, tls })
    }

    fn driver(&self, job: &Job, at: Placement) -> H2Driver {
        H2Driver::new(
            job.target.addr,
            self.spec.clone(),
            job.socket,
            at.worker,
            job.connections,
            self.tls.as_ref().map(|t| Arc::new(t.for_worker())),
        )
    }
}
