//! Request heads (parsed with `httparse`) into what the server needs: the method, the route,
//! whether the connection stays open, and how the body is framed (decoded by [`super::body`]).

use crate::units::{parse_duration, parse_size};
use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::path::PathBuf;
use std::time::Duration;

/// The most header fields a request may have (more: 431).
pub(crate) const MAX_HEADERS: usize = 64;
/// The largest body `/bytes/N` serves: 1 TiB.
pub(crate) const MAX_BYTES: u64 = 1 << 40;

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
    let (fields, body) = match Fields::read(req.headers).and_then(|f| Ok((f, f.body(http10)?))) {
        Ok(read) => read,
        Err((status, why)) => return Parse::Bad(status, why),
    };
    Parse::Complete(
        Head {
            method: Method::parse(method),
            route: route(path, files),
            http10,
            keep_alive: !fields.close && (!http10 || fields.keep),
            body,
            expect_continue: fields.expect_continue,
        },
        used,
    )
}

/// What the header fields say about the body's framing and the connection.
#[derive(Clone, Copy, Debug, Default)]
struct Fields {
    /// `Connection: close`.
    close: bool,
    /// `Connection: keep-alive` (HTTP/1.0).
    keep: bool,
    /// `Content-Length`.
    length: Option<u64>,
    /// `Transfer-Encoding: chunked`.
    chunked: bool,
    /// `Expect: 100-continue`.
    expect_continue: bool,
}

impl Fields {
    /// Reads the fields the server acts on; one it cannot frame a body by is an error to answer
    /// with (status, why).
    fn read(headers: &[httparse::Header<'_>]) -> Result<Fields, (u16, &'static str)> {
        let mut f = Fields::default();
        for h in headers {
            let name = h.name.as_bytes();
            if name.eq_ignore_ascii_case(b"content-length") {
                let n = decimal(h.value).ok_or((400, "bad Content-Length"))?;
                if f.length.is_some_and(|l| l != n) {
                    return Err((400, "conflicting Content-Length fields"));
                }
                f.length = Some(n);
            } else if name.eq_ignore_ascii_case(b"transfer-encoding") {
                if !trim(h.value).eq_ignore_ascii_case(b"chunked") || f.chunked {
                    return Err((501, "only Transfer-Encoding: chunked is supported"));
                }
                f.chunked = true;
            } else if name.eq_ignore_ascii_case(b"connection") {
                for token in h.value.split(|&b| b == b',').map(trim) {
                    f.close |= token.eq_ignore_ascii_case(b"close");
                    f.keep |= token.eq_ignore_ascii_case(b"keep-alive");
                }
            } else if name.eq_ignore_ascii_case(b"expect") {
                f.expect_continue = trim(h.value).eq_ignore_ascii_case(b"100-continue");
            }
        }
        Ok(f)
    }

    /// How the body is framed, or an error to answer with (status, why).
    fn body(self, http10: bool) -> Result<BodyLen, (u16, &'static str)> {
        match (self.chunked, self.length) {
            (true, Some(_)) => Err((400, "both Content-Length and Transfer-Encoding")),
            (true, None) if http10 => Err((400, "Transfer-Encoding in an HTTP/1.0 request")),
            (true, None) => Ok(BodyLen::Chunked),
            (false, Some(n)) if n > 0 => Ok(BodyLen::Length(n)),
            (false, _) => Ok(BodyLen::None),
        }
    }
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
}
