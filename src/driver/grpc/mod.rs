//! gRPC (`grpc://HOST:PORT/package.Service/Method`, `grpcs://` over TLS): any method, no
//! generated code. The method's types come from the server's reflection service, asked once
//! before the run, or from `--proto FILE` parsed at run time ([`schema`]); the request is
//! `--data` JSON (proto3's mapping, templates per call) encoded through those types.
//!
//! One session is one HTTP/2 connection (`-c`); `--pipeline K` calls in flight are K streams
//! on it. A call is OK when its trailers say `grpc-status: 0`; any other status is an error of
//! kind `status` named by its code (UNAVAILABLE, DEADLINE_EXCEEDED …), the connection going
//! on; a stream the server resets, a GOAWAY, a connection that fails are errors as for HTTP/2.
//! `--timeout` is each call's deadline (`grpc-timeout`) as well as the client's limit.
//! Payload bytes are the request and reply messages; wire bytes all that crossed the socket.

pub mod call;
pub mod exchange;
pub mod flags;
pub mod schema;
pub mod shape;
mod status;

use super::stream::connect_stream;
use super::target::{Family, ProtocolName, Scheme};
use super::tls::TlsClient;
use super::workload::{Reply, Request, Spec, Workload};
use super::{Driver, Given, Job, Placement, Protocol};
use crate::driver::http::template::Template;
use crate::error::{usage_of, UsageError};
use crate::record::OpError;
use crate::sys::socket::SocketOptions;
use call::GrpcSession;
use prost_reflect::{DescriptorPool, MethodDescriptor};
use shape::{CallShape, Message};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The schemes: h2c, and TLS with ALPN `h2`.
pub const SCHEMES: [Scheme; 2] = [
    Scheme {
        name: "grpc",
        protocol: ProtocolName::Grpc,
        family: Family::Stream,
        default_port: None,
        tls: false,
        path: true,
    },
    Scheme {
        name: "grpcs",
        protocol: ProtocolName::Grpc,
        family: Family::Stream,
        default_port: None,
        tls: true,
        path: true,
    },
];

/// A gRPC run's own part of the workload, from its flags at plan time.
#[derive(Debug)]
pub struct GrpcSpec {
    /// `package.Service` and `Method`, from the URL's path.
    pub service: String,
    pub method: String,
    /// The request message's JSON (`--data`, a file's text for `@FILE`), a template.
    pub data: Template,
    /// `--metadata`, each a template of a `key: value` line.
    pub metadata: Vec<Template>,
    /// The types read from `--proto`, if given (else reflection, when the run starts).
    pub pool: Option<DescriptorPool>,
    /// `--stream-count` and `--stream-interval`, if given.
    pub stream_count: Option<u64>,
    pub stream_interval: Duration,
    /// `--timeout`: each call's deadline.
    pub timeout: Duration,
    /// The run's seed, for the templates.
    pub seed: u64,
}

impl Spec for GrpcSpec {
    fn is_random(&self) -> bool {
        self.data.is_random() || self.metadata.iter().any(Template::is_random)
    }
}

/// `package.Service` and `Method` from a URL's path.
fn method_of(path: &str, url: &str) -> Result<(String, String), UsageError> {
    let p = path.trim_matches('/');
    match p.rsplit_once('/') {
        Some((s, m)) if !s.is_empty() && !m.is_empty() && !s.contains('/') => {
            Ok((s.to_string(), m.to_string()))
        }
        _ => Err(UsageError::new(format!(
            "'{url}' names no method: write grpc://HOST:PORT/package.Service/Method, e.g. grpc://127.0.0.1:50051/wirebench.bench.Bench/Echo"
        ))),
    }
}

/// The message's JSON text from `--data` (inline, or `@FILE`); `{}` without it.
fn data_text(data: Option<&str>) -> Result<String, UsageError> {
    Ok(match data {
        None => "{}".to_string(),
        Some(d) => match d.strip_prefix('@') {
            Some(file) => std::fs::read_to_string(file).map_err(|e| {
                UsageError::flag("--data", format!("--data @{file}: cannot read it ({e})"))
            })?,
            None => d.to_string(),
        },
    })
}

/// One `--metadata 'key: value'`, a template; a literal one must be a valid HTTP/2 header.
fn metadata_of(m: &str) -> Result<Template, UsageError> {
    if !m.contains(':') {
        return usage_of(
            &["--metadata"],
            format!("--metadata '{m}': write 'key: value'"),
        );
    }
    let t = Template::parse("--metadata", m)
        .map_err(|e| UsageError::flag("--metadata", e.to_string()))?;
    if t.is_literal() && shape::header_of(m.as_bytes()).is_none() {
        return usage_of(
            &["--metadata"],
            format!(
                "--metadata '{m}': not a valid HTTP/2 header (lower-case key, printable value)"
            ),
        );
    }
    Ok(t)
}

/// gRPC, prepared: what every call sends.
#[derive(Debug)]
pub struct Grpc {
    shape: Arc<CallShape>,
    tls: Option<Arc<TlsClient>>,
}

impl Protocol for Grpc {
    const SCHEMES: &'static [Scheme] = &SCHEMES;
    const FLAGS: &'static [&'static str] = &[flags::GRPC];
    type Driver = GrpcDriver;

    fn check(w: &Workload) -> Result<(), UsageError> {
        if w.mode.bulk() {
            return usage_of(
                &["--mode"],
                format!(
                    "--mode {} moves bytes; a gRPC call is a request and its reply: leave --mode out",
                    w.mode.name()
                ),
            );
        }
        Ok(())
    }

    fn build(given: &Given, workload: &mut Workload) -> Result<(), UsageError> {
        let args = given.group::<flags::GrpcArgs>()?;
        let (service, method) = method_of(&given.target.path, &given.target.url)?;
        let text = data_text(args.data.as_deref())?;
        let data = Template::parse("--data", &text)
            .map_err(|e| UsageError::flag("--data", e.to_string()))?;
        let metadata = args
            .metadata
            .iter()
            .map(String::as_str)
            .map(metadata_of)
            .collect::<Result<Vec<_>, _>>()?;
        let pool = match &args.proto {
            Some(file) => {
                let pool = schema::from_proto(file, &args.import_path)
                    .map_err(|e| UsageError::flag("--proto", e))?;
                let m = schema::find(&pool, &service, &method)
                    .map_err(|e| UsageError::new(format!("--proto {file}: {e}")))?;
                check_message(&m, &data)?;
                Some(pool)
            }
            None if !args.import_path.is_empty() => {
                return usage_of(
                    &["--import-path"],
                    "--import-path applies with --proto FILE",
                )
            }
            None => None,
        };
        if args.stream_count == Some(0) {
            return usage_of(
                &["--stream-count"],
                "--stream-count 0 sends nothing: give 1 or more",
            );
        }
        let stream_interval = match &args.stream_interval {
            Some(d) => crate::units::parse_duration(d).map_err(|e| {
                UsageError::flag("--stream-interval", format!("--stream-interval: {e}"))
            })?,
            None => Duration::ZERO,
        };
        workload.request = Request::Payload(text.into_bytes());
        workload.reply = Reply::Size(0);
        workload.spec = Some(Arc::new(GrpcSpec {
            service,
            method,
            data,
            metadata,
            pool,
            stream_count: args.stream_count,
            stream_interval,
            timeout: given.timeout,
            seed: given.seed,
        }));
        Ok(())
    }

    fn prepare(job: &Job) -> Result<Grpc, super::Error> {
        let spec = job.workload.shared::<GrpcSpec>().ok_or_else(|| {
            super::Error::NoWorkload(format!("{}: the plan has no gRPC method", job.target.url))
        })?;
        let tls = crate::driver::http::tls_client(job, true)?;
        let scheme = if job.target.tls() { "https" } else { "http" };
        let base = format!("{scheme}://{}", job.target.host);
        let method = match &spec.pool {
            Some(pool) => schema::find(pool, &spec.service, &spec.method),
            None => reflect(job, &spec, tls.as_deref(), &base),
        }
        .map_err(|e| super::Error::Negotiation(format!("{}: {e}", job.target.url)))?;
        let shape = shape_of(&spec, &method, &base)
            .map_err(|e| super::Error::Negotiation(format!("{}: {e}", job.target.url)))?;
        Ok(Grpc {
            shape: Arc::new(shape),
            tls,
        })
    }

    fn driver(&self, job: &Job, at: Placement) -> GrpcDriver {
        GrpcDriver {
            addr: job.target.addr,
            socket: job.socket,
            tls: self.tls.as_ref().map(|t| Arc::new(t.for_worker())),
            shape: self.shape.clone(),
            worker: at.worker,
            connections: job.connections as u64,
        }
    }
}

/// The request's JSON (a sample rendering, if templated) fits the method's input type.
fn check_message(m: &MethodDescriptor, data: &Template) -> Result<(), UsageError> {
    let json = sample(data);
    schema::encode(&m.input(), &json)
        .map(|_| ())
        .map_err(|e| UsageError::flag("--data", e))
}

fn sample(t: &Template) -> String {
    let mut rng = crate::random::Rng::new();
    let mut out = Vec::new();
    t.render(
        &mut crate::driver::http::template::Vars {
            seq: 0,
            worker: 0,
            rng: &mut rng,
        },
        &mut out,
    );
    String::from_utf8_lossy(&out).into_owned()
}

/// The method's types from the server's reflection, on a connection of their own.
fn reflect(
    job: &Job,
    spec: &GrpcSpec,
    tls: Option<&TlsClient>,
    base: &str,
) -> Result<MethodDescriptor, String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start a runtime for reflection ({e})"))?;
    let timeout = spec.timeout.max(Duration::from_secs(2));
    let pool = runtime.block_on(async {
        let mut x = exchange::Exchange::connect(job.target.addr, tls, base.to_string(), timeout)
            .await
            .map_err(|e| format!("cannot reach it to read the method's types by reflection ({e}); start the server, or give --proto FILE"))?;
        schema::from_reflection(&mut x, &spec.service).await
    })?;
    schema::find(&pool, &spec.service, &spec.method)
}

/// What every call sends, for `method` on `base`.
fn shape_of(spec: &GrpcSpec, method: &MethodDescriptor, base: &str) -> Result<CallShape, String> {
    let uri: http::Uri = format!("{base}/{}/{}", spec.service, spec.method)
        .parse()
        .map_err(|e| format!("not a valid request URI ({e})"))?;
    let client_streaming = method.is_client_streaming();
    if spec.stream_count.is_some() && !client_streaming {
        return Err(format!(
            "--stream-count applies to client-streaming methods; {}/{} takes one request",
            spec.service, spec.method
        ));
    }
    let input = method.input();
    let message = if spec.data.is_literal() {
        let msg = schema::encode(&input, &sample(&spec.data))?;
        let mut framed = Vec::with_capacity(msg.len() + 5);
        crate::wire::grpc::frame(&msg, &mut framed);
        Message::Fixed(framed.into())
    } else {
        schema::encode(&input, &sample(&spec.data))?;
        Message::Template(spec.data.clone(), input)
    };
    let mut headers = http::HeaderMap::new();
    let timeout = crate::wire::grpc::timeout_header(spec.timeout);
    if let Ok(v) = http::HeaderValue::from_str(&timeout) {
        headers.insert("grpc-timeout", v);
    }
    let head = exchange::request_head(&uri.to_string(), &headers)?;
    let mut headers = head.headers().clone();
    let mut templated = Vec::new();
    for m in &spec.metadata {
        if m.is_literal() {
            if let Some((k, v)) = shape::header_of(sample(m).as_bytes()) {
                headers.append(k, v);
            }
        } else {
            templated.push(m.clone());
        }
    }
    Ok(CallShape {
        uri,
        headers,
        metadata: templated,
        message,
        client_stream: (
            if client_streaming {
                spec.stream_count.unwrap_or(1)
            } else {
                1
            },
            spec.stream_interval,
        ),
        seed: spec.seed,
    })
}

/// Opens gRPC connections to one target.
#[derive(Debug)]
pub struct GrpcDriver {
    addr: SocketAddr,
    socket: SocketOptions,
    tls: Option<Arc<TlsClient>>,
    shape: Arc<CallShape>,
    worker: usize,
    connections: u64,
}

impl Driver for GrpcDriver {
    type Session = GrpcSession;

    async fn connect(&self, timeout: Duration) -> Result<(GrpcSession, Option<Duration>), OpError> {
        let started = Instant::now();
        let (mut stream, _) = connect_stream(self.addr, self.socket, timeout, false).await?;
        if let Some(tls) = &self.tls {
            stream = stream.tls(tls, timeout).await.map_err(OpError::reached)?;
        }
        let fd = stream.fd();
        let counts = std::rc::Rc::new(crate::driver::h2::io::Counts::default());
        let pair = exchange::handshake(stream, counts.clone(), timeout)
            .await
            .map_err(OpError::reached)?;
        let session = GrpcSession::new(
            pair,
            self.shape.clone(),
            self.worker,
            self.connections,
            counts,
            fd,
        );
        Ok((session, Some(started.elapsed())))
    }
}
