//! Request heads (parsed with `httparse`) into what the server needs, and request bodies
//! (Content-Length or chunked) decoded piece by piece in place, in constant memory.

use crate::units::{parse_duration, parse_size};
use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::path::PathBuf;
use std::time::Duration;

/// The most header fields a request may have (more: 431).
pub(crate) const MAX_HEADERS: usize = 64;
/// The largest body `/bytes/N` serves: 1 TiB.
pub(crate) const MAX_BYTES: u64 = 1 << 40;
/// The longest chunk-size line, or trailer line, of a chunked body.
const MAX_LINE: usize = 4096;
/// The most trailer bytes a chunked body may end with.
const MAX_TRAILER: usize = 16 * 1024;

/// Request methods; the server answers 405 to any other.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Method {
    Get,
    Head,
    Post,
    Put,
    Delete,
    Patch,
    Options,
    Other,
}

impl Method {
    fn parse(m: &str) -> Method {
        match m {
            "GET" => Method::Get,
            "HEAD" => Method::Head,
            "POST" => Method::Post,
            "PUT" => Method::Put,
            "DELETE" => Method::Delete,
            "PATCH" => Method::Patch,
            "OPTIONS" => Method::Options,
            _ => Method::Other,
        }
    }
}

/// What a request asks for.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Route {
    /// `/bytes/N`: an N-byte body.
    Bytes(u64),
    /// `/delay/D`: wait D, then a small body.
    Delay(Duration),
    /// `/status/CODE`: that status.
    Status(u16),
    /// `/echo`: the request body back.
    Echo,
    /// A file under `--dir`, by its percent-decoded path (leading slashes removed).
    File(PathBuf),
    /// Nothing here: 404.
    NotFound,
    /// A route with a bad parameter: 400, and why.
    BadParam(&'static str),
}

/// How the request body is framed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BodyLen {
    /// No body.
    None,
    /// `Content-Length: N` (N > 0).
    Length(u64),
    /// `Transfer-Encoding: chunked`.
    Chunked,
}

/// A parsed request head.
#[derive(Debug)]
pub(crate) struct Head {
    pub method: Method,
    pub route: Route,
    /// HTTP/1.0 rather than HTTP/1.1.
    pub http10: bool,
    /// The connection stays open after the response.
    pub keep_alive: bool,
    pub body: BodyLen,
    /// `Expect: 100-continue`.
    pub expect_continue: bool,
}

/// The outcome of parsing the start of a buffer.
#[derive(Debug)]
pub(crate) enum Parse {
    /// A whole head, and how many bytes it took.
    Complete(Head, usize),
    /// More bytes are needed.
    Partial,
    /// Not a request the server can frame: answer with this status, say why, and close.
    Bad(u16, &'static str),
}

/// Parses the request head at the start of `buf`. `files`: paths that are not routes name files
/// (`--dir`); otherwise they are 404 without further look.
pub(crate) fn parse(buf: &[u8], files: bool) -> Parse {
    if buf.is_empty() {
        return Parse::Partial;
    }
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut req = httparse::Request::new(&mut headers);
    let used = match req.parse(buf) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => return Parse::Partial,
        Err(httparse::Error::TooManyHeaders) => {
            return Parse::Bad(431, "more than 64 header fields")
        }
        Err(httparse::Error::Version) => return Parse::Bad(505, "only HTTP/1.0 and HTTP/1.1"),
        Err(_) => return Parse::Bad(400, "malformed request head"),
    };
    // A complete parse always has these.
    let (Some(method), Some(path), Some(version)) = (req.method, req.path, req.version) else {
        return Parse::Bad(400, "malformed request line");
    };
    let http10 = version == 0;
    let mut close = false;
    let mut keep = false;
    let mut length: Option<u64> = None;
    let mut chunked = false;
    let mut expect_continue = false;
    for h in req.headers.iter() {
        let name = h.name.as_bytes();
        if name.eq_ignore_ascii_case(b"content-length") {
            let Some(n) = decimal(h.value) else {
                return Parse::Bad(400, "bad Content-Length");
            };
            if length.is_some_and(|l| l != n) {
                return Parse::Bad(400, "conflicting Content-Length fields");
            }
            length = Some(n);
        } else if name.eq_ignore_ascii_case(b"transfer-encoding") {
            if !trim(h.value).eq_ignore_ascii_case(b"chunked") || chunked {
                return Parse::Bad(501, "only Transfer-Encoding: chunked is supported");
            }
            chunked = true;
        } else if name.eq_ignore_ascii_case(b"connection") {
            for token in h.value.split(|&b| b == b',').map(trim) {
                close |= token.eq_ignore_ascii_case(b"close");
                keep |= token.eq_ignore_ascii_case(b"keep-alive");
            }
        } else if name.eq_ignore_ascii_case(b"expect") {
            expect_continue = trim(h.value).eq_ignore_ascii_case(b"100-continue");
        }
    }
    let body = match (chunked, length) {
        (true, Some(_)) => {
            return Parse::Bad(400, "both Content-Length and Transfer-Encoding");
        }
        (true, None) if http10 => {
            return Parse::Bad(400, "Transfer-Encoding in an HTTP/1.0 request");
        }
        (true, None) => BodyLen::Chunked,
        (false, Some(n)) if n > 0 => BodyLen::Length(n),
        (false, _) => BodyLen::None,
    };
    Parse::Complete(
        Head {
            method: Method::parse(method),
            route: route(path, files),
            http10,
            keep_alive: !close && (!http10 || keep),
            body,
            expect_continue,
        },
        used,
    )
}

/// The route a request target names.
pub(crate) fn route(target: &str, files: bool) -> Route {
    // Absolute form (`http://host/path`), as sent to proxies: keep the path.
    let target = match target
        .strip_prefix("http://")
        .or_else(|| target.strip_prefix("https://"))
    {
        Some(rest) => rest.find('/').map_or("/", |i| &rest[i..]),
        None => target,
    };
    let path = target.split(['?', '#']).next().unwrap_or("");
    if path == "/echo" {
        return Route::Echo;
    }
    if let Some(n) = path.strip_prefix("/bytes/") {
        return match parse_size(n) {
            Ok(n) if n <= MAX_BYTES => Route::Bytes(n),
            Ok(_) => Route::BadParam("/bytes/N: at most 1 TiB (1024G)"),
            Err(_) => Route::BadParam("/bytes/N: a byte count, e.g. /bytes/100 or /bytes/4k"),
        };
    }
    if let Some(d) = path.strip_prefix("/delay/") {
        return match parse_duration(d) {
            Ok(d) => Route::Delay(d),
            Err(_) => Route::BadParam("/delay/D: a duration, e.g. /delay/5ms"),
        };
    }
    if let Some(code) = path.strip_prefix("/status/") {
        let three_digits = code.len() == 3 && code.bytes().all(|b| b.is_ascii_digit());
        return match code.parse::<u16>() {
            Ok(code) if three_digits && (200..=599).contains(&code) => Route::Status(code),
            Ok(code) if three_digits && (100..=199).contains(&code) => {
                Route::BadParam("/status/CODE: 1xx statuses are interim, give 200 to 599")
            }
            _ => Route::BadParam("/status/CODE: a status from 200 to 599"),
        };
    }
    if !files {
        return Route::NotFound;
    }
    match percent_decode(path.trim_start_matches('/')) {
        Some(p) => Route::File(PathBuf::from(OsString::from_vec(p))),
        None => Route::BadParam("bad percent-encoding in the path"),
    }
}

/// Decodes `%HH` escapes; `None` for a malformed escape or a NUL byte.
fn percent_decode(s: &str) -> Option<Vec<u8>> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    (!out.contains(&0)).then_some(out)
}

/// Strips optional whitespace around a header value or list element.
fn trim(v: &[u8]) -> &[u8] {
    v.trim_ascii()
}

/// A Content-Length value: digits only.
fn decimal(v: &[u8]) -> Option<u64> {
    let v = trim(v);
    if v.is_empty() || v.len() > 19 || !v.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(v).ok()?.parse().ok()
}

/// Decodes a request body in place: [`Decoder::step`] looks at the unread bytes and says what
/// the next ones are, so the body never needs a buffer of its own.
#[derive(Debug)]
pub(crate) enum Decoder {
    /// Content-Length: this many bytes are left.
    Length(u64),
    /// Chunked, in this state.
    Chunked(Chunk),
    /// The body is over.
    Done,
}

/// Where a chunked body is.
#[derive(Debug)]
pub(crate) enum Chunk {
    /// At a chunk-size line.
    Size,
    /// Inside a chunk, with this many bytes left.
    Data(u64),
    /// At the CRLF after a chunk's data.
    DataEnd,
    /// In the trailer section, having read this many bytes of it.
    Trailer(usize),
}

/// What the next bytes of a body are.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Step {
    /// This many bytes of body data.
    Data(usize),
    /// This many bytes of framing, to pass over.
    Skip(usize),
    /// Not enough bytes to tell.
    NeedMore,
    /// The body ends after this many more framing bytes.
    Done(usize),
    /// Malformed chunked framing.
    Bad,
}

impl Decoder {
    /// A decoder for a body framed as `body` says.
    pub(crate) fn new(body: BodyLen) -> Decoder {
        match body {
            BodyLen::None => Decoder::Done,
            BodyLen::Length(n) => Decoder::Length(n),
            BodyLen::Chunked => Decoder::Chunked(Chunk::Size),
        }
    }

    /// Looks at the unread bytes `input` and says what comes next; the caller consumes what it
    /// is told (data, skip or done) and calls again.
    pub(crate) fn step(&mut self, input: &[u8]) -> Step {
        match self {
            Decoder::Done => Step::Done(0),
            Decoder::Length(0) => {
                *self = Decoder::Done;
                Step::Done(0)
            }
            Decoder::Length(left) => take(left, input),
            Decoder::Chunked(state) => match state {
                Chunk::Size => match httparse::parse_chunk_size(input) {
                    Ok(httparse::Status::Complete((used, 0))) => {
                        *state = Chunk::Trailer(0);
                        Step::Skip(used)
                    }
                    Ok(httparse::Status::Complete((used, size))) => {
                        *state = Chunk::Data(size);
                        Step::Skip(used)
                    }
                    Ok(httparse::Status::Partial) if input.len() < MAX_LINE => Step::NeedMore,
                    _ => Step::Bad,
                },
                Chunk::Data(left) => {
                    let step = take(left, input);
                    if *left == 0 {
                        *state = Chunk::DataEnd;
                    }
                    step
                }
                Chunk::DataEnd => match input {
                    [b'\r', b'\n', ..] => {
                        *state = Chunk::Size;
                        Step::Skip(2)
                    }
                    [] | [b'\r'] => Step::NeedMore,
                    _ => Step::Bad,
                },
                Chunk::Trailer(seen) => {
                    let Some(i) = input.windows(2).position(|w| w == b"\r\n") else {
                        return if input.len() < MAX_LINE {
                            Step::NeedMore
                        } else {
                            Step::Bad
                        };
                    };
                    if i == 0 {
                        *self = Decoder::Done;
                        return Step::Done(2);
                    }
                    *seen += i + 2;
                    if *seen > MAX_TRAILER {
                        return Step::Bad;
                    }
                    Step::Skip(i + 2)
                }
            },
        }
    }
}

/// Up to `left` bytes of data from `input`.
fn take(left: &mut u64, input: &[u8]) -> Step {
    if input.is_empty() {
        return Step::NeedMore;
    }
    let n = (*left).min(input.len() as u64);
    *left -= n;
    Step::Data(n as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn complete(text: &str) -> (Head, usize) {
        match parse(text.as_bytes(), true) {
            Parse::Complete(h, n) => (h, n),
            other => panic!("{text:?}: {other:?}"),
        }
    }

    #[test]
    fn heads() {
        let (h, n) = complete("GET /bytes/4k HTTP/1.1\r\nHost: x\r\n\r\nGET /");
        assert_eq!(n, 35);
        assert_eq!(
            (h.method, h.route, h.keep_alive),
            (Method::Get, Route::Bytes(4096), true)
        );
        let (h, _) = complete("GET /delay/5ms?x=1 HTTP/1.0\r\n\r\n");
        assert_eq!(h.route, Route::Delay(Duration::from_millis(5)));
        assert!(h.http10 && !h.keep_alive);
        let (h, _) = complete("GET /status/503 HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n");
        assert_eq!((h.route, h.keep_alive), (Route::Status(503), true));
        let (h, _) =
            complete("POST /echo HTTP/1.1\r\nContent-Length: 5\r\nConnection: close\r\n\r\n");
        assert_eq!((h.body, h.keep_alive), (BodyLen::Length(5), false));
        let (h, _) = complete(
            "PUT /echo HTTP/1.1\r\nTransfer-Encoding: chunked\r\nExpect: 100-continue\r\n\r\n",
        );
        assert_eq!((h.body, h.expect_continue), (BodyLen::Chunked, true));
        let (h, _) = complete("BREW http://h:1/a/b%20c HTTP/1.1\r\n\r\n");
        assert_eq!(
            (h.method, h.route),
            (Method::Other, Route::File("a/b c".into()))
        );
        assert!(matches!(
            parse(b"GET / HTTP/1.1\r\nHost", true),
            Parse::Partial
        ));
        assert!(matches!(parse(b"", true), Parse::Partial));
    }

    #[test]
    fn bad_heads() {
        for (text, status) in [
            ("GET\x01 / HTTP/1.1\r\n\r\n", 400),
            ("GET / HTTP/2.0\r\n\r\n", 505),
            ("POST /echo HTTP/1.1\r\nContent-Length: x\r\n\r\n", 400),
            (
                "POST /echo HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
                400,
            ),
            (
                "POST /echo HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n",
                501,
            ),
            (
                "POST /echo HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 2\r\n\r\n",
                400,
            ),
        ] {
            match parse(text.as_bytes(), false) {
                Parse::Bad(s, _) => assert_eq!(s, status, "{text:?}"),
                other => panic!("{text:?}: {other:?}"),
            }
        }
        let many: String = (0..65).map(|i| format!("X-{i}: v\r\n")).collect();
        let text = format!("GET / HTTP/1.1\r\n{many}\r\n");
        assert!(matches!(parse(text.as_bytes(), false), Parse::Bad(431, _)));
    }

    #[test]
    fn routes() {
        assert_eq!(route("/bytes/1024G", false), Route::Bytes(MAX_BYTES));
        assert!(matches!(route("/bytes/1025G", false), Route::BadParam(_)));
        assert!(matches!(route("/bytes/x", false), Route::BadParam(_)));
        assert!(matches!(route("/status/150", false), Route::BadParam(_)));
        assert!(matches!(route("/status/600", false), Route::BadParam(_)));
        assert!(matches!(route("/status/0200", false), Route::BadParam(_)));
        assert_eq!(route("/status/204", false), Route::Status(204));
        assert_eq!(route("/other", false), Route::NotFound);
        assert_eq!(route("/%2e%2e/x", true), Route::File("../x".into()));
        assert!(matches!(route("/a%2", true), Route::BadParam(_)));
        assert!(matches!(route("/a%00", true), Route::BadParam(_)));
    }

    /// Feeds `wire` to a decoder in pieces of `step` bytes; returns the decoded data.
    fn decode(body: BodyLen, wire: &[u8], step: usize) -> Result<Vec<u8>, ()> {
        let mut d = Decoder::new(body);
        let (mut at, mut end, mut out) = (0, 0, Vec::new());
        loop {
            match d.step(&wire[at..end]) {
                Step::Data(n) => {
                    out.extend_from_slice(&wire[at..at + n]);
                    at += n;
                }
                Step::Skip(n) => at += n,
                Step::Done(n) => {
                    assert_eq!(at + n, wire.len(), "all of the body was used");
                    return Ok(out);
                }
                Step::NeedMore if end < wire.len() => end = (end + step).min(wire.len()),
                Step::NeedMore | Step::Bad => return Err(()),
            }
        }
    }

    #[test]
    fn bodies() {
        let wire = b"5;ext=1\r\nhello\r\n1\r\n \r\n6\r\nworld!\r\n0\r\nX-T: 1\r\n\r\n";
        for step in [1, 2, 7, 100] {
            assert_eq!(
                decode(BodyLen::Chunked, wire, step).unwrap(),
                b"hello world!",
                "step {step}"
            );
            assert_eq!(
                decode(BodyLen::Length(5), b"hello", step).unwrap(),
                b"hello"
            );
        }
        assert_eq!(decode(BodyLen::Chunked, b"0\r\n\r\n", 1).unwrap(), b"");
        assert!(decode(BodyLen::Chunked, b"5\r\nhelloXX", 3).is_err());
        assert!(decode(BodyLen::Chunked, b"zz\r\n", 3).is_err());
        assert!(decode(BodyLen::Chunked, b"5\r\nhel", 3).is_err());
    }
}
