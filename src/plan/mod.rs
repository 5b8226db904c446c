//! The validated plan of a run, built once from the command line; nothing downstream sees raw flags.

pub mod http;

use crate::cli::{ClientMode, RunArgs, SocketArgs};
use crate::error::{usage, UsageError};
use crate::load::schedule::{parse_rate, parse_stages};
use crate::load::LoadModel;
use crate::load::Schedule;
use crate::sys::socket::SocketOptions;
use crate::units::parse_bits;
use crate::units::{parse_duration, parse_message_size, unescape};
use crate::wire::framing::Preamble;
use std::net::{SocketAddr, ToSocketAddrs};
use std::time::Duration;

/// Request size when neither `--size` nor `--payload` is given.
pub const DEFAULT_SIZE: usize = 64;
/// Measuring time when neither `--duration` nor `--requests` is given.
pub const DEFAULT_DURATION: Duration = Duration::from_secs(10);

/// Everything a run needs, validated.
#[derive(Clone, Debug)]
pub struct Plan {
    /// Where the load goes.
    pub target: Target,
    /// What one operation is.
    pub workload: Workload,
    /// When operations are issued.
    pub load: LoadModel,
    /// Concurrent connections.
    pub connections: usize,
    /// Worker threads (never more than connections).
    pub threads: usize,
    /// When the measured part of the run ends.
    pub stop: Stop,
    /// The warm-up before it, if any.
    pub warmup: Option<Warmup>,
    /// Per request (and per connect) time limit.
    pub timeout: Duration,
    /// Client socket options.
    pub socket: SocketOptions,
    /// The open-loop schedule as the user wrote it, for reports.
    pub schedule_text: Option<String>,
    /// The TLS client for an `https://` target.
    pub tls: Option<std::sync::Arc<crate::driver::tls::TlsClient>>,
}

/// The transport a target speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    /// A byte stream (`tcp://`).
    Tcp,
    /// Datagrams (`udp://`).
    Udp,
    /// HTTP/1.1 over TCP (`http://`).
    Http,
}

impl Protocol {
    /// The URL scheme.
    pub fn name(self) -> &'static str {
        match self {
            Protocol::Tcp => "tcp",
            Protocol::Udp => "udp",
            Protocol::Http => "http",
        }
    }
}

/// A resolved target.
#[derive(Clone, Debug)]
pub struct Target {
    /// The transport.
    pub protocol: Protocol,
    /// The URL as the user wrote it.
    pub url: String,
    /// The address connected to (the first the name resolved to).
    pub addr: SocketAddr,
    /// `HOST:PORT` as written (HTTP's Host header).
    pub host: String,
    /// The path and query (HTTP), `/` if none.
    pub path: String,
    /// Whether the target speaks TLS (`https://`).
    pub tls: bool,
}

/// What one operation is.
#[derive(Clone, Debug)]
pub struct Workload {
    /// rr, crr, stream or source.
    pub mode: ClientMode,
    /// The request bytes (or the message unit in stream/source).
    pub request: Request,
    /// How a reply is recognised (rr and crr).
    pub reply: Reply,
    /// HTTP requests and what counts as success, for http:// targets.
    pub http: Option<std::sync::Arc<http::HttpSpec>>,
}

/// What a request is.
#[derive(Clone, Debug)]
pub enum Request {
    /// `size` synthetic bytes; with `preamble`, announced in wirebench framing.
    Sized {
        /// Bytes per request.
        size: usize,
        /// Whether each connection starts with the wirebench preamble.
        preamble: bool,
    },
    /// Exact bytes given by the user (`--payload`), sent as they are.
    Payload(Vec<u8>),
}

impl Request {
    /// Bytes per request.
    pub fn len(&self) -> usize {
        match self {
            Request::Sized { size, .. } => *size,
            Request::Payload(p) => p.len(),
        }
    }

    /// True for an empty request (never produced by validation).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// How the end of a reply is found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reply {
    /// Exactly this many bytes.
    Size(usize),
    /// Everything up to and including this delimiter.
    Until(Vec<u8>),
}

impl Workload {
    /// The preamble each connection opens with, if the request is in wirebench framing.
    pub fn preamble(&self) -> Option<Preamble> {
        let Request::Sized {
            size,
            preamble: true,
        } = self.request
        else {
            return None;
        };
        let size = size as u64;
        Some(match self.mode {
            ClientMode::Rr | ClientMode::Crr => Preamble::Exchange {
                request: size,
                reply: match &self.reply {
                    Reply::Size(n) => *n as u64,
                    Reply::Until(_) => size,
                },
            },
            ClientMode::Stream => Preamble::Stream {
                request: size,
                report: true,
            },
            ClientMode::Source => Preamble::Source { message: size },
        })
    }
}

/// When the measured part ends: after a duration, a request count, or whichever comes first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stop {
    /// Measuring time.
    pub duration: Option<Duration>,
    /// Requests in all, over every connection.
    pub requests: Option<u64>,
}

/// A warm-up, kept out of the statistics.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Warmup {
    /// For this long.
    Duration(Duration),
    /// For this many requests in all.
    Count(u64),
}

impl TryFrom<&SocketArgs> for SocketOptions {
    type Error = UsageError;

    fn try_from(a: &SocketArgs) -> Result<Self, UsageError> {
        let buf = |flag: &str, v: &Option<String>| -> Result<Option<usize>, UsageError> {
            v.as_deref()
                .map(|t| parse_message_size(flag, t).map_err(UsageError))
                .transpose()
        };
        Ok(SocketOptions {
            nodelay: !a.no_nodelay,
            sndbuf: buf("--sndbuf", &a.sndbuf)?,
            rcvbuf: buf("--rcvbuf", &a.rcvbuf)?,
        })
    }
}

/// Parses a duration flag into a usage error naming the flag.
pub fn duration_flag(flag: &str, text: &str) -> Result<Duration, UsageError> {
    parse_duration(text).map_err(|e| UsageError(format!("{flag}: {e}")))
}

/// Resolves `tcp://HOST:PORT` into an address; other schemes are usage errors.
pub fn parse_target(url: &str) -> Result<Target, UsageError> {
    let Some((scheme, rest)) = url.split_once("://") else {
        return usage(format!(
            "'{url}' is not a URL: write the target as tcp://HOST:PORT, e.g. tcp://127.0.0.1:7000"
        ));
    };
    let protocol = match scheme {
        "tcp" => Protocol::Tcp,
        "udp" => Protocol::Udp,
        "http" => Protocol::Http,
        "https" => Protocol::Http,
        _ => {
            return usage(format!(
                "unknown scheme '{scheme}' in '{url}': wirebench speaks tcp://, udp:// and http:// (e.g. tcp://127.0.0.1:7000)"
            ))
        }
    };
    let (authority, path) = match rest.find(['/', '?']) {
        Some(i) if protocol == Protocol::Http => (&rest[..i], rest[i..].to_string()),
        _ => (rest.trim_end_matches('/'), "/".to_string()),
    };
    let path = if path.starts_with('?') {
        format!("/{path}")
    } else {
        path
    };
    if authority.is_empty() || authority.contains(['@', ' ']) {
        return usage(format!(
            "'{url}' has no usable host: write {scheme}://HOST:PORT, e.g. {scheme}://127.0.0.1:8080"
        ));
    }
    let tls = scheme == "https";
    let with_port = match (protocol, authority.rsplit_once(':')) {
        (Protocol::Http, None) if tls => format!("{authority}:443"),
        (Protocol::Http, None) => format!("{authority}:80"),
        _ => authority.to_string(),
    };
    let hostport = with_port.as_str();
    // In "[::1]" the last colon is inside the address: there is no port.
    let port = hostport
        .rsplit_once(':')
        .map(|(_, p)| p)
        .filter(|p| !p.contains(']'));
    check_port(url, scheme, port)?;
    let addr = hostport
        .to_socket_addrs()
        .ok()
        .and_then(|mut addrs| addrs.next())
        .ok_or_else(|| {
            UsageError(format!(
                "cannot resolve host in '{url}': check the name, or use an address such as 127.0.0.1"
            ))
        })?;
    Ok(Target {
        protocol,
        url: url.to_string(),
        addr,
        host: authority.to_string(),
        path,
        tls,
    })
}

/// The port of a URL must be there, be a number, and lie in 1–65535 (0 is no port to connect
/// to); each fault gets its own message, so `:99999` is not reported as a missing port.
fn check_port(url: &str, scheme: &str, port: Option<&str>) -> Result<(), UsageError> {
    let example = format!("e.g. {scheme}://127.0.0.1:7000");
    match port {
        None | Some("") => usage(format!(
            "'{url}' lacks a port: write {scheme}://HOST:PORT, {example}"
        )),
        Some(p) if !p.bytes().all(|b| b.is_ascii_digit()) => usage(format!(
            "'{url}' has port '{p}', which is not a number: write {scheme}://HOST:PORT, {example}"
        )),
        Some(p) => match p.parse::<u16>() {
            Ok(n) if n > 0 => Ok(()),
            _ => usage(format!(
                "'{url}': port {p} is out of range: use a port from 1 to 65535, {example}"
            )),
        },
    }
}

/// Reads `--payload TEXT` or `--payload @FILE`.
fn payload(text: &str) -> Result<Vec<u8>, UsageError> {
    let bytes = match text.strip_prefix('@') {
        Some(path) => std::fs::read(path).map_err(|e| {
            UsageError(format!(
                "--payload @{path}: cannot read the file ({e}): check the path"
            ))
        })?,
        None => unescape(text).map_err(|e| UsageError(format!("--payload: {e}")))?,
    };
    if bytes.is_empty() {
        return usage("--payload is empty: give at least one byte");
    }
    if bytes.len() as u64 > crate::units::MAX_SIZE {
        return usage("--payload is over the 1 GiB limit: use a smaller file");
    }
    Ok(bytes)
}

fn workload(a: &RunArgs) -> Result<Workload, UsageError> {
    let request = match (&a.size, &a.payload) {
        (_, Some(p)) => {
            if a.raw {
                return usage("--raw applies to --size; --payload is always sent as it is");
            }
            Request::Payload(payload(p)?)
        }
        (size, None) => Request::Sized {
            size: match size {
                Some(s) => parse_message_size("--size", s).map_err(UsageError)?,
                None => DEFAULT_SIZE,
            },
            preamble: !a.raw,
        },
    };
    let reply = match (&a.expect_size, &a.until) {
        (Some(s), _) => Reply::Size(parse_message_size("--expect-size", s).map_err(UsageError)?),
        (None, Some(d)) => {
            let delim = unescape(d).map_err(|e| UsageError(format!("--until: {e}")))?;
            if delim.is_empty() {
                return usage(
                    "--until is empty: give the bytes that end a reply, e.g. 'END\\r\\n'",
                );
            }
            if matches!(request, Request::Sized { preamble: true, .. }) {
                return usage(
                    "--until needs --payload or --raw: the reference server's replies to --size requests are sized, not delimited",
                );
            }
            Reply::Until(delim)
        }
        (None, None) => Reply::Size(request.len()),
    };
    let bulk = matches!(a.mode, ClientMode::Stream | ClientMode::Source);
    if bulk && (a.expect_size.is_some() || a.until.is_some()) {
        return usage(format!(
            "--expect-size and --until apply to request/response; --mode {} has no replies",
            mode_name(a.mode)
        ));
    }
    if a.mode == ClientMode::Source && a.payload.is_some() {
        return usage("--mode source reads what the server pushes: use --size for the message size, not --payload");
    }
    Ok(Workload {
        mode: a.mode,
        request,
        reply,
        http: None,
    })
}

/// The flag spelling of a client mode.
pub fn mode_name(m: ClientMode) -> &'static str {
    match m {
        ClientMode::Rr => "rr",
        ClientMode::Crr => "crr",
        ClientMode::Stream => "stream",
        ClientMode::Source => "source",
    }
}

/// Flags that belong to other protocols are usage errors, not silently ignored.
fn check_flags_fit(a: &RunArgs, protocol: Protocol) -> Result<(), UsageError> {
    let http_only = [
        ("-X/--method", a.method.is_some()),
        ("-H/--header", !a.headers.is_empty()),
        ("--body", a.body.is_some()),
        ("--accept", a.accept.is_some()),
        ("--no-keepalive", a.no_keepalive),
        ("--targets", a.targets.is_some()),
        ("--http2", a.http2),
    ];
    let stream_only = [
        ("--size", a.size.is_some()),
        ("--payload", a.payload.is_some()),
        ("--expect-size", a.expect_size.is_some()),
        ("--until", a.until.is_some()),
        ("--raw", a.raw),
    ];
    let (wrong, fits) = match protocol {
        Protocol::Http => (stream_only.iter().find(|f| f.1), "tcp:// and udp://"),
        _ => (http_only.iter().find(|f| f.1), "http://"),
    };
    if let Some((flag, _)) = wrong {
        return usage(format!(
            "{flag} applies to {fits} targets, not to {}://",
            protocol.name()
        ));
    }
    if protocol == Protocol::Http && matches!(a.mode, ClientMode::Stream | ClientMode::Source) {
        return usage(
            "--mode stream and source are for tcp://; an HTTP download is a GET of a large body",
        );
    }
    Ok(())
}

/// What datagrams cannot do: replies found by a delimiter, modes that need a connection,
/// sizes past the UDP limit, and wirebench framing smaller than its header.
fn check_datagrams(a: &RunArgs, w: &Workload) -> Result<(), UsageError> {
    use crate::wire::datagram::{HEADER_LEN, MAX_DATAGRAM};
    if matches!(w.mode, ClientMode::Crr | ClientMode::Source) {
        return usage(format!(
            "--mode {} needs a connection; over udp:// use --mode rr or --mode stream",
            mode_name(w.mode)
        ));
    }
    if a.until.is_some() {
        return usage("--until finds replies in a byte stream; a UDP reply is one datagram: use --expect-size or nothing");
    }
    let reply = match w.reply {
        Reply::Size(n) => n,
        Reply::Until(_) => 0,
    };
    let largest = w.request.len().max(reply);
    if largest > MAX_DATAGRAM {
        return usage(format!(
            "a {largest}-byte datagram is over the UDP limit of {MAX_DATAGRAM} bytes: use a smaller --size or --expect-size"
        ));
    }
    if let Request::Sized {
        size,
        preamble: true,
    } = w.request
    {
        if size < HEADER_LEN {
            return usage(format!(
                "--size {size} is below the {HEADER_LEN}-byte wirebench datagram header: use --size {HEADER_LEN} or more, or --raw / --payload for plain datagrams"
            ));
        }
    }
    Ok(())
}

/// The closed loop, or the open loop when `--rate`, `--stages` or (UDP stream) `--bandwidth`
/// gives a timetable.
fn load_model(
    a: &RunArgs,
    protocol: Protocol,
    unit: usize,
    think: Option<Duration>,
) -> Result<LoadModel, UsageError> {
    let udp_stream = protocol == Protocol::Udp && a.mode == ClientMode::Stream;
    let per_datagram = |bits: f64| Schedule::Constant {
        rate: bits / (unit as f64 * 8.0),
    };
    let schedule =
        match (&a.rate, &a.stages, &a.bandwidth) {
            (Some(r), _, _) => parse_rate(r).map_err(UsageError)?,
            (None, Some(s), _) => parse_stages(s).map_err(UsageError)?,
            (None, None, Some(b)) if udp_stream => {
                per_datagram(parse_bits(b).map_err(|e| UsageError(format!("--bandwidth: {e}")))?)
            }
            (None, None, Some(_)) => return usage(
                "--bandwidth paces a UDP stream (udp://... --mode stream); for requests use --rate",
            ),
            // iperf3's default for UDP.
            (None, None, None) if udp_stream => per_datagram(1e6),
            (None, None, None) => {
                return Ok(LoadModel::Closed {
                    pipeline: a.pipeline.unwrap_or(1),
                    think,
                })
            }
        };
    if !udp_stream && matches!(a.mode, ClientMode::Stream | ClientMode::Source) {
        return usage(format!(
            "--rate and --stages pace requests; --mode {} over TCP moves bytes as fast as it can",
            mode_name(a.mode)
        ));
    }
    // Datagrams do not block one another: by default any number may be in flight.
    let window = match protocol {
        Protocol::Tcp | Protocol::Http => 1,
        Protocol::Udp => crate::load::UNLIMITED,
    };
    Ok(LoadModel::Open {
        schedule,
        window: a.pipeline.unwrap_or(window),
    })
}

fn warmup(text: &str) -> Result<Warmup, UsageError> {
    if let Ok(n) = text.parse::<u64>() {
        if n == 0 {
            return usage("--warmup 0 warms up nothing: leave it out, or give a count or a duration such as 2s");
        }
        return Ok(Warmup::Count(n));
    }
    parse_duration(text).map(Warmup::Duration).map_err(|_| {
        UsageError(format!(
            "--warmup '{text}' is neither a request count (1000) nor a duration (2s)"
        ))
    })
}

impl TryFrom<&RunArgs> for Plan {
    type Error = UsageError;

    fn try_from(a: &RunArgs) -> Result<Plan, UsageError> {
        let target = parse_target(&a.target)?;
        check_flags_fit(a, target.protocol)?;
        let mut workload = workload(a)?;
        if (a.insecure || a.cacert.is_some()) && !target.tls {
            return usage("--insecure and --cacert apply to https:// targets");
        }
        let tls = match target.tls {
            true => Some(std::sync::Arc::new(
                crate::driver::tls::TlsClient::new(
                    &target.host,
                    a.insecure,
                    a.cacert.as_deref(),
                    a.http2,
                )
                .map_err(UsageError)?,
            )),
            false => None,
        };
        if target.protocol == Protocol::Http {
            let spec = http::spec(a, &target)?;
            if spec.http2 {
                crate::driver::h2::check(&spec, target.tls).map_err(UsageError)?;
            }
            workload.http = Some(std::sync::Arc::new(spec));
            if a.no_keepalive {
                // A connection per request is the crr mode, HTTP-style.
                workload.mode = ClientMode::Crr;
            }
        }
        if target.protocol == Protocol::Udp {
            check_datagrams(a, &workload)?;
        }
        if a.connections == 0 {
            return usage("--connections 0: give at least one connection, e.g. -c 1");
        }
        if a.pipeline == Some(0) {
            return usage("--pipeline 0: give at least one request in flight, e.g. --pipeline 1");
        }
        if a.pipeline.is_some_and(|p| p > 1) && workload.mode != ClientMode::Rr {
            return usage(format!(
                "--pipeline applies to --mode rr only, not --mode {}",
                mode_name(workload.mode)
            ));
        }
        let think = a
            .think
            .as_deref()
            .map(|t| duration_flag("--think", t))
            .transpose()?;
        if think.is_some() && matches!(workload.mode, ClientMode::Stream | ClientMode::Source) {
            return usage(
                "--think applies to request/response modes (rr, crr), not to bulk transfer",
            );
        }
        let duration = a
            .duration
            .as_deref()
            .map(|t| duration_flag("--duration", t))
            .transpose()?;
        if duration == Some(Duration::ZERO) {
            return usage("--duration 0 measures nothing: give a duration such as 10s");
        }
        if a.requests == Some(0) {
            return usage("--requests 0 measures nothing: give a count such as -n 1000");
        }
        if a.requests.is_some() && matches!(workload.mode, ClientMode::Stream | ClientMode::Source)
        {
            return usage("--requests counts request/response operations: use --duration with --mode stream or source");
        }
        let load = load_model(a, target.protocol, workload.request.len(), think)?;
        // Without -d or -n a run lasts as long as its schedule (a ramp, stages), else 10 s.
        let natural = load.schedule().and_then(|s| s.length());
        let stop = Stop {
            duration: duration
                .or_else(|| (a.requests.is_none()).then_some(natural.unwrap_or(DEFAULT_DURATION))),
            requests: a.requests,
        };
        let timeout = duration_flag("--timeout", &a.timeout)?;
        if timeout.is_zero() {
            return usage("--timeout 0 would fail every request: give a limit such as 2s");
        }
        let warmup = a.warmup.as_deref().map(warmup).transpose()?;
        if matches!(warmup, Some(Warmup::Count(_)))
            && matches!(workload.mode, ClientMode::Stream | ClientMode::Source)
        {
            return usage(
                "--warmup by count needs request/response: give a duration such as --warmup 1s",
            );
        }
        let threads = match a.threads {
            Some(0) => return usage("--threads 0: give at least one thread"),
            Some(n) => n,
            None => std::thread::available_parallelism().map_or(1, |n| n.get()),
        }
        .min(a.connections);
        let socket = SocketOptions::try_from(&a.socket)?;
        Ok(Plan {
            target,
            workload,
            load,
            connections: a.connections,
            threads,
            stop,
            warmup,
            timeout,
            socket,
            tls,
            schedule_text: a
                .rate
                .as_ref()
                .map(|r| {
                    if r.contains('/') {
                        r.clone()
                    } else {
                        format!("{r}/s")
                    }
                })
                .or_else(|| a.stages.clone())
                .or_else(|| {
                    a.bandwidth
                        .as_ref()
                        .map(|b| b.trim_end_matches("/s").to_string() + "/s")
                }),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Cli, Command};
    use clap::Parser;

    fn plan(args: &[&str]) -> Result<Plan, UsageError> {
        let mut argv = vec!["wirebench", "run"];
        argv.extend_from_slice(args);
        let Command::Run(run) = Cli::try_parse_from(argv).unwrap().command else {
            unreachable!()
        };
        Plan::try_from(&run)
    }

    #[test]
    fn defaults() {
        let p = plan(&["tcp://127.0.0.1:9"]).unwrap();
        assert_eq!(p.stop.duration, Some(DEFAULT_DURATION));
        assert_eq!(p.workload.reply, Reply::Size(DEFAULT_SIZE));
        assert_eq!(
            p.workload.preamble(),
            Some(Preamble::Exchange {
                request: 64,
                reply: 64
            })
        );
        assert!(p.socket.nodelay);
        assert_eq!(p.threads, 1);
    }

    #[test]
    fn rejects_bad_input() {
        for args in [
            &["udpx://127.0.0.1:9"][..],
            &["tcp://127.0.0.1"],
            &["tcp://no-such-host.invalid:9"],
            &["tcp://127.0.0.1:9", "--size", "0"],
            &["tcp://127.0.0.1:9", "--size", "2G"],
            &["tcp://127.0.0.1:9", "-d", "ten"],
            &["tcp://127.0.0.1:9", "--mode", "stream", "--pipeline", "2"],
            &["tcp://127.0.0.1:9", "--size", "8", "--until", "\\n"],
            &["tcp://127.0.0.1:9", "--payload", "@/no/such/file"],
        ] {
            let err = plan(args).expect_err(&format!("{args:?}"));
            assert!(!err.0.contains('\n'), "one line: {}", err.0);
        }
    }

    #[test]
    fn each_port_fault_has_its_own_message() {
        let message = |url: &str| plan(&[url]).expect_err(url).0;
        for url in [
            "tcp://127.0.0.1:99999",
            "udp://127.0.0.1:65536",
            "tcp://127.0.0.1:0",
        ] {
            let e = message(url);
            assert!(
                e.contains("out of range") && e.contains("1 to 65535"),
                "{e}"
            );
            assert!(!e.contains("lacks"), "{e}");
        }
        for url in ["tcp://127.0.0.1", "tcp://127.0.0.1:", "tcp://[::1]"] {
            assert!(message(url).contains("lacks a port"), "{url}");
        }
        assert!(message("tcp://127.0.0.1:http").contains("not a number"));
        assert!(plan(&["tcp://127.0.0.1:65535"]).is_ok());
        assert!(plan(&["tcp://[::1]:7000"]).is_ok());
    }

    #[test]
    fn payload_and_until() {
        let p = plan(&[
            "tcp://127.0.0.1:9",
            "--payload",
            "get k\\r\\n",
            "--until",
            "END\\r\\n",
        ])
        .unwrap();
        assert!(matches!(&p.workload.request, Request::Payload(b) if b == b"get k\r\n"));
        assert_eq!(p.workload.reply, Reply::Until(b"END\r\n".to_vec()));
        assert_eq!(p.workload.preamble(), None);
    }

    #[test]
    fn open_loop_schedules() {
        let p = plan(&["tcp://127.0.0.1:9", "--rate", "20000"]).unwrap();
        assert!(p.load.schedule().is_some());
        assert_eq!(p.stop.duration, Some(DEFAULT_DURATION));
        let p = plan(&["tcp://127.0.0.1:9", "--stages", "1s@10,2s@20"]).unwrap();
        assert_eq!(p.stop.duration, Some(Duration::from_secs(3)));
        let p = plan(&["tcp://127.0.0.1:9", "--rate", "1..10/5s", "-d", "2s"]).unwrap();
        assert_eq!(p.stop.duration, Some(Duration::from_secs(2)));
        for bad in [
            &["tcp://127.0.0.1:9", "--rate", "0"][..],
            &["tcp://127.0.0.1:9", "--rate", "-5"],
            &["tcp://127.0.0.1:9", "--rate", "500..100/1s"],
            &["tcp://127.0.0.1:9", "--stages", "1s@"],
            &["tcp://127.0.0.1:9", "--rate", "10", "--mode", "stream"],
        ] {
            assert!(plan(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn warmup_by_count_or_duration() {
        let p = plan(&["tcp://127.0.0.1:9", "--warmup", "1000"]).unwrap();
        assert_eq!(p.warmup, Some(Warmup::Count(1000)));
        let p = plan(&["tcp://127.0.0.1:9", "--warmup", "2s"]).unwrap();
        assert_eq!(p.warmup, Some(Warmup::Duration(Duration::from_secs(2))));
    }
}
