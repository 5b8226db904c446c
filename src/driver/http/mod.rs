//! HTTP/1.1: what one operation is over a keep-alive connection. Requests are rendered from
//! templates; responses are parsed as a stream (status line and headers with httparse, then a
//! body by Content-Length, chunked, or up to the close) and never held in memory, so a
//! gigabyte download costs a read buffer. Each response records its status, its time to first
//! byte, and counts as success when its status is accepted.

pub mod template;

use super::stream::{connect_stream, Stream};
use super::tls::TlsClient;
use super::{Done, Driver, Expiry, ReadOutcome, Sent, Session};
use crate::driver::http::template::{Rng, Vars};
use crate::plan::http::{Body, HttpSpec};
use crate::record::{ErrorKind, OpError};
use crate::sys::socket::SocketOptions;
use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Read buffer for small responses; a connection switches to [`BIG_READ`] once a response
/// announces a large body, so ten thousand connections stay small and one download is fast.
const SMALL_READ: usize = 16 * 1024;
const BIG_READ: usize = 256 * 1024;
/// While a long body arrives the reader is woken only when this much is buffered: a gigabyte
/// from nginx on loopback cost ~10,000 sleeps without it, ~350 with it, and twice the MB/s.
const BODY_LOWAT: u64 = 128 * 1024;
/// The longest status line plus headers a response may have.
const MAX_HEAD: usize = 64 * 1024;
/// The longest chunk-size or trailer line.
const MAX_LINE: usize = 4096;

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
            stream = stream.tls(tls, timeout).await?;
        }
        // Connect time includes the TLS handshake: both are paid before the first request.
        let took = started.elapsed();
        let session = HttpSession {
            stream,
            spec: self.spec.clone(),
            worker: self.worker,
            connections: self.connections,
            rng: Rng::new(),
            out: Vec::new(),
            out_pos: 0,
            body: Vec::new(),
            inbuf: vec![0; SMALL_READ].into_boxed_slice(),
            in_flight: VecDeque::new(),
            parser: Parser::default(),
            completed: Vec::new(),
            reusable: true,
            lowat: 1,
        };
        Ok((session, Some(took)))
    }
}

/// A request in flight: its send times and whether it was a HEAD (no body in the reply).
#[derive(Debug, Clone, Copy)]
struct Pending {
    sent: Sent,
    head: bool,
}

/// One open HTTP connection.
#[derive(Debug)]
pub struct HttpSession {
    stream: Stream,
    spec: Arc<HttpSpec>,
    worker: usize,
    connections: u64,
    rng: Rng,
    out: Vec<u8>,
    out_pos: usize,
    /// Scratch space for rendering a templated body (its length goes in the header first).
    body: Vec<u8>,
    inbuf: Box<[u8]>,
    in_flight: VecDeque<Pending>,
    parser: Parser,
    completed: Vec<Done>,
    reusable: bool,
    /// The SO_RCVLOWAT in force (1, the kernel's default, outside long bodies).
    lowat: u64,
}

/// Where the response parser is.
#[derive(Debug, Default)]
enum Phase {
    /// Reading the status line and headers.
    #[default]
    Head,
    /// This many body bytes to go.
    Body(u64),
    /// A chunked body: reading a chunk-size line, chunk data, or the trailer.
    ChunkSize,
    ChunkData(u64),
    ChunkEnd,
    Trailer,
    /// A body that ends when the server closes.
    UntilClose,
}

/// The response parser's state.
#[derive(Debug, Default)]
struct Parser {
    phase: Phase,
    /// The head so far (or the current chunk-size/trailer line).
    head: Vec<u8>,
    status: u16,
    first_byte: Option<Instant>,
    close: bool,
}

/// What the head of a response said.
struct Head {
    status: u16,
    length: Option<u64>,
    chunked: bool,
    close: bool,
    consumed: usize,
}

/// The `{seq}` of the engine's request `seq` (connection k's n-th request is `k << 40 | n`):
/// dense and unique over the run without shared state, in a run of `connections` connections.
pub(crate) fn unique_seq(seq: u64, connections: u64) -> u64 {
    (seq & ((1 << 40) - 1)) * connections + (seq >> 40)
}

fn parse_head(buf: &[u8]) -> Result<Option<Head>, String> {
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut resp = httparse::Response::new(&mut headers);
    let consumed = match resp.parse(buf) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(e) => return Err(format!("malformed response head: {e}")),
    };
    let status = resp.code.unwrap_or(0);
    let mut head = Head {
        status,
        length: None,
        chunked: false,
        close: resp.version == Some(0),
        consumed,
    };
    for h in resp.headers.iter() {
        let value = std::str::from_utf8(h.value).unwrap_or("").trim();
        if h.name.eq_ignore_ascii_case("content-length") {
            head.length = Some(
                value
                    .parse()
                    .map_err(|_| format!("bad Content-Length '{value}'"))?,
            );
        } else if h.name.eq_ignore_ascii_case("transfer-encoding") {
            head.chunked = value.to_ascii_lowercase().ends_with("chunked");
        } else if h.name.eq_ignore_ascii_case("connection") {
            let v = value.to_ascii_lowercase();
            head.close = v.contains("close") || (head.close && !v.contains("keep-alive"));
        }
    }
    Ok(Some(head))
}

impl HttpSession {
    /// Renders request `seq` into the output buffer.
    fn render(&mut self, seq: u64) {
        let unique = unique_seq(seq, self.connections);
        let spec = self.spec.clone();
        let req = &spec.requests[(unique % spec.requests.len() as u64) as usize];
        let mut vars = Vars {
            seq: unique,
            worker: self.worker,
            rng: &mut self.rng,
        };
        let out = &mut self.out;
        out.extend_from_slice(req.method.as_bytes());
        out.push(b' ');
        req.path.render(&mut vars, out);
        out.extend_from_slice(b" HTTP/1.1\r\n");
        if !req.has_host {
            out.extend_from_slice(b"Host: ");
            out.extend_from_slice(spec.host.as_bytes());
            out.extend_from_slice(b"\r\n");
        }
        for h in &req.headers {
            h.render(&mut vars, out);
            out.extend_from_slice(b"\r\n");
        }
        if !spec.keepalive {
            out.extend_from_slice(b"Connection: close\r\n");
        }
        let body: &[u8] = match &req.body {
            None => &[],
            Some(Body::Bytes(b)) => b,
            Some(Body::Template(t)) => {
                self.body.clear();
                t.render(&mut vars, &mut self.body);
                &self.body
            }
        };
        if req.body.is_some() {
            use std::io::Write;
            let _ = write!(out, "Content-Length: {}\r\n", body.len());
        }
        out.extend_from_slice(b"\r\n");
        out.extend_from_slice(body);
    }

    /// Feeds `n` fresh bytes of `inbuf` to the parser; completed responses go to `completed`.
    fn parse(&mut self, n: usize, now: Instant, out: &mut ReadOutcome) -> Result<(), OpError> {
        let mut at = 0;
        while at < n {
            if self.in_flight.is_empty() {
                return Err(OpError::new(
                    ErrorKind::Mismatch,
                    format!("{} bytes arrived with no request in flight", n - at),
                ));
            }
            at += self.step(at, n, now, out)?;
        }
        Ok(())
    }

    /// One step of the parser over `inbuf[at..n]`; returns the bytes it used.
    fn step(
        &mut self,
        at: usize,
        n: usize,
        now: Instant,
        out: &mut ReadOutcome,
    ) -> Result<usize, OpError> {
        let len = n - at;
        match self.parser.phase {
            Phase::Head => self.head_step(at, n, now),
            Phase::Body(left) => {
                let take = left.min(len as u64) as usize;
                out.bytes += take;
                self.parser.phase = Phase::Body(left - take as u64);
                self.finish_if_done();
                Ok(take)
            }
            Phase::UntilClose => {
                out.bytes += len;
                Ok(len)
            }
            Phase::ChunkData(left) => {
                let take = left.min(len as u64) as usize;
                out.bytes += take;
                self.parser.phase = match left - take as u64 {
                    0 => Phase::ChunkEnd,
                    rest => Phase::ChunkData(rest),
                };
                Ok(take)
            }
            Phase::ChunkSize | Phase::ChunkEnd | Phase::Trailer => self.line_step(at, n),
        }
    }

    /// Status line and headers: accumulate until complete, then decide how the body ends.
    fn head_step(&mut self, at: usize, n: usize, now: Instant) -> Result<usize, OpError> {
        let p = &mut self.parser;
        p.first_byte.get_or_insert(now);
        let keep = p.head.len();
        let take = (n - at).min(MAX_HEAD.saturating_sub(keep));
        p.head.extend_from_slice(&self.inbuf[at..at + take]);
        let head = match parse_head(&p.head) {
            Ok(Some(h)) => h,
            Ok(None) if p.head.len() >= MAX_HEAD => {
                return Err(OpError::new(
                    ErrorKind::Mismatch,
                    "response head over 64 KiB",
                ))
            }
            Ok(None) => return Ok(take),
            Err(why) => return Err(OpError::new(ErrorKind::Mismatch, why)),
        };
        let used = head.consumed - keep;
        p.head.clear();
        if (100..200).contains(&head.status) {
            return Ok(used); // an interim response (100 Continue): the real one follows
        }
        p.status = head.status;
        p.close = head.close;
        let is_head = self.in_flight.front().is_some_and(|r| r.head);
        let bodiless = is_head || head.status == 204 || head.status == 304;
        self.parser.phase = match (bodiless, head.chunked, head.length) {
            (true, _, _) => Phase::Body(0),
            (false, true, _) => Phase::ChunkSize,
            (false, false, Some(len)) => Phase::Body(len),
            (false, false, None) => Phase::UntilClose,
        };
        let big = match self.parser.phase {
            Phase::Body(len) => len > 1 << 20,
            Phase::UntilClose | Phase::ChunkSize => true,
            _ => false,
        };
        if big {
            self.grow();
        }
        self.finish_if_done();
        Ok(used)
    }

    /// Chunk framing lines: a chunk size, the CRLF after chunk data, trailer lines.
    fn line_step(&mut self, at: usize, n: usize) -> Result<usize, OpError> {
        let data = &self.inbuf[at..n];
        let p = &mut self.parser;
        let Some(i) = data.iter().position(|&b| b == b'\n') else {
            p.head.extend_from_slice(data);
            if p.head.len() > MAX_LINE {
                return Err(OpError::new(
                    ErrorKind::Mismatch,
                    "chunked body: line over 4 KiB",
                ));
            }
            return Ok(data.len());
        };
        p.head.extend_from_slice(&data[..i]);
        let line = std::mem::take(&mut p.head);
        let line = line.strip_suffix(b"\r").unwrap_or(&line);
        let bad = |why: &str| {
            Err(OpError::new(
                ErrorKind::Mismatch,
                format!("chunked body: {why}"),
            ))
        };
        p.phase = match p.phase {
            Phase::ChunkEnd if line.is_empty() => Phase::ChunkSize,
            Phase::ChunkEnd => return bad("no CRLF after chunk data"),
            Phase::ChunkSize => {
                let hex = line.split(|&b| b == b';').next().unwrap_or_default();
                match std::str::from_utf8(hex)
                    .ok()
                    .and_then(|h| u64::from_str_radix(h.trim(), 16).ok())
                {
                    Some(0) => Phase::Trailer,
                    Some(size) => Phase::ChunkData(size),
                    None => return bad("bad chunk size"),
                }
            }
            Phase::Trailer if line.is_empty() => {
                p.phase = Phase::Body(0);
                self.finish_if_done();
                return Ok(i + 1);
            }
            _ => Phase::Trailer,
        };
        Ok(i + 1)
    }

    /// Completes the response if its body is all there.
    fn finish_if_done(&mut self) {
        if !matches!(self.parser.phase, Phase::Body(0)) {
            return;
        }
        let Some(req) = self.in_flight.pop_front() else {
            return;
        };
        let p = std::mem::take(&mut self.parser);
        if p.close {
            self.reusable = false;
        }
        self.completed.push(Done {
            sent: req.sent,
            first_byte: p.first_byte,
            status: Some(p.status),
            accepted: self.spec.accept.accepts(p.status),
            failure: None,
        });
    }

    /// Within a long Content-Length body, a blocking read waits for [`BODY_LOWAT`] bytes; two
    /// setsockopt calls per body. The mark is raised only while at least twice that much of
    /// the body is still to come, and is back at 1 for the rest: a blocking recv(2) that has
    /// taken C bytes sleeps until the bytes *still queued* reach the mark (the kernel does
    /// not count the C), so with less than mark + C to come it would sleep until the timeout.
    fn tune_lowat(&mut self) {
        let want = match self.parser.phase {
            Phase::Body(left) if left >= 2 * BODY_LOWAT && self.inbuf.len() >= BIG_READ => {
                BODY_LOWAT
            }
            _ => 1,
        };
        if want != self.lowat && self.stream.set_rcvlowat(want as usize).is_ok() {
            self.lowat = want;
        }
    }

    fn grow(&mut self) {
        if self.inbuf.len() < BIG_READ {
            self.inbuf = vec![0; BIG_READ].into_boxed_slice();
        }
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
        let start = self.out.len();
        self.render(seq);
        let head = self.out[start..].starts_with(b"HEAD ");
        self.in_flight.push_back(Pending { sent, head });
    }

    async fn flush(&mut self) -> Result<usize, OpError> {
        self.stream.write_from(&self.out, &mut self.out_pos).await
    }

    async fn read(&mut self) -> Result<ReadOutcome, OpError> {
        self.completed.clear();
        self.tune_lowat();
        let n = self
            .stream
            .read(&mut self.inbuf)
            .await
            .map_err(|e| OpError::io("read response", &e))?;
        let mut out = ReadOutcome::default();
        if n == 0 {
            // The end of a body that runs to the close.
            if matches!(self.parser.phase, Phase::UntilClose) && !self.in_flight.is_empty() {
                self.parser.phase = Phase::Body(0);
                self.parser.close = true;
                self.finish_if_done();
                out.replies = self.completed.len();
                return Ok(out);
            }
            return Err(OpError::new(
                ErrorKind::ShortReply,
                "the server closed the connection",
            ));
        }
        self.parse(n, Instant::now(), &mut out)?;
        out.replies = self.completed.len();
        Ok(out)
    }

    fn completed(&self) -> &[Done] {
        &self.completed
    }

    fn reusable(&self) -> bool {
        self.reusable
    }

    fn expire(&mut self, now: Instant, timeout: Duration) -> Expiry {
        match self.oldest() {
            Some(at) if now >= at + timeout => Expiry::Reset,
            _ => Expiry::None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heads_parse() {
        let h = parse_head(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello")
            .unwrap()
            .unwrap();
        assert_eq!(
            (h.status, h.length, h.chunked, h.close),
            (200, Some(5), false, false)
        );
        assert_eq!(h.consumed, 38);
        let h = parse_head(
            b"HTTP/1.1 503 No\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n",
        )
        .unwrap()
        .unwrap();
        assert!(h.chunked && h.close);
        let h = parse_head(b"HTTP/1.0 200 OK\r\n\r\n").unwrap().unwrap();
        assert!(h.close && h.length.is_none());
        assert!(parse_head(b"HTTP/1.1 200 OK\r\nContent-Le")
            .unwrap()
            .is_none());
        assert!(parse_head(b"garbage\r\n\r\n").is_err());
    }
}
