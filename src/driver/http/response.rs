//! Response parsing as a stream: the status line and headers (httparse), then the body by
//! Content-Length, chunked, or up to the close. Nothing of a response is kept but its status,
//! its time to first byte and where the parser is.

use super::HttpSession;
use crate::driver::{Done, ReadOutcome};
use crate::record::{ErrorKind, OpError};
use std::time::Instant;

/// The longest status line plus headers a response may have.
const MAX_HEAD: usize = 64 * 1024;
/// The most header lines a response may have.
const MAX_HEADERS: usize = 64;
/// The longest chunk-size or trailer line.
const MAX_LINE: usize = 4096;

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
pub(super) struct Parser {
    phase: Phase,
    /// The head so far (or the current chunk-size/trailer line).
    head: Vec<u8>,
    status: u16,
    first_byte: Option<Instant>,
    close: bool,
}

impl Parser {
    /// Bytes still to come of a body whose length is known (Content-Length).
    pub(super) fn body_left(&self) -> Option<u64> {
        match self.phase {
            Phase::Body(left) => Some(left),
            _ => None,
        }
    }
}

/// What the head of a response said.
#[derive(Clone, Copy, Debug)]
struct Head {
    status: u16,
    length: Option<u64>,
    chunked: bool,
    close: bool,
    consumed: usize,
}

/// A response head that does not parse.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
enum HeadError {
    /// httparse refuses it.
    #[error("malformed response head: {0}")]
    Malformed(httparse::Error),
    /// A Content-Length that is not a number.
    #[error("bad Content-Length '{0}'")]
    Length(String),
}

/// Applies the framing headers' values (raw bytes, as sent) to `head`.
fn framing(
    head: &mut Head,
    length: Option<&[u8]>,
    encoding: Option<&[u8]>,
    connection: Option<&[u8]>,
) -> Result<(), HeadError> {
    // A value that is not UTF-8 reads as empty, as it always has; no allocation per response.
    // An ASCII value (every one a server sends in practice) is trimmed without decoding it:
    // httparse admits no control character but tab in a value, so ASCII trimming is str's.
    fn text(v: &[u8]) -> &[u8] {
        if v.is_ascii() {
            return v.trim_ascii();
        }
        std::str::from_utf8(v).map_or(&b""[..], |t| t.trim().as_bytes())
    }
    if let Some(v) = length {
        let v = text(v);
        head.length = Some(match digits(v) {
            Some(n) => n,
            None => {
                let value = std::str::from_utf8(v).unwrap_or_default();
                value.parse().map_err(|_| HeadError::Length(value.into()))?
            }
        });
    }
    if let Some(v) = encoding.map(text) {
        head.chunked = v.len() >= 7 && v[v.len() - 7..].eq_ignore_ascii_case(b"chunked");
    }
    if let Some(v) = connection.map(text) {
        // The two values servers send, without a search for each word in them.
        if v.eq_ignore_ascii_case(b"keep-alive") {
            head.close = false;
            return Ok(());
        }
        if v.eq_ignore_ascii_case(b"close") {
            head.close = true;
            return Ok(());
        }
        let has = |word: &[u8]| v.windows(word.len()).any(|w| w.eq_ignore_ascii_case(word));
        head.close = has(b"close") || (head.close && !has(b"keep-alive"));
    }
    Ok(())
}

/// A Content-Length of plain decimal digits (at most 19, so no overflow) without decoding it
/// as text: that cost ~280 instructions per response (callgrind); anything else goes to
/// `str::parse`, which also words the error.
fn digits(v: &[u8]) -> Option<u64> {
    if v.is_empty() || v.len() > 19 || !v.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(v.iter().fold(0, |n, &d| n * 10 + u64::from(d - b'0')))
}

/// The longest head [`LastHead`] keeps.
const LAST_HEAD_MAX: usize = 2048;

/// A worker's last complete response head, as bytes, and what it said. A server answers
/// the same request with the same head but for its Date, which changes once a second; a head
/// that starts with the same bytes is the same head (the parser reads no further than the
/// blank line that ends it), so it is compared, not parsed again: one memcmp instead of
/// httparse's ~2,000 instructions per nginx head (callgrind).
#[derive(Debug, Default)]
pub(super) struct LastHead {
    bytes: Vec<u8>,
    head: Option<Head>,
}

impl LastHead {
    /// [`parse_head`] of `buf`, from the last head when `buf` starts with its bytes.
    fn parse(&mut self, buf: &[u8]) -> Result<Option<Head>, HeadError> {
        if let Some(h) = self.head {
            if buf.starts_with(&self.bytes) {
                return Ok(Some(h));
            }
        }
        let parsed = parse_head(buf)?;
        if let Some(h) = parsed {
            self.head = None;
            if h.consumed <= LAST_HEAD_MAX {
                self.bytes.clear();
                self.bytes.extend_from_slice(&buf[..h.consumed]);
                self.head = Some(h);
            }
        }
        Ok(parsed)
    }
}

/// Parses a response head; None until it is complete.
fn parse_head(buf: &[u8]) -> Result<Option<Head>, HeadError> {
    // Uninitialised: filling 64 empty headers per response cost more than parsing a short head.
    let mut headers =
        [const { std::mem::MaybeUninit::<httparse::Header<'_>>::uninit() }; MAX_HEADERS];
    let mut resp = httparse::Response::new(&mut []);
    let parsed = httparse::ParserConfig::default().parse_response_with_uninit_headers(
        &mut resp,
        buf,
        &mut headers,
    );
    let consumed = match parsed {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(e) => return Err(HeadError::Malformed(e)),
    };
    let status = resp.code.unwrap_or(0);
    let mut head = Head {
        status,
        length: None,
        chunked: false,
        close: resp.version == Some(0),
        consumed,
    };
    // Only three headers matter here, in the order sent: a value is looked at only for them
    // (nginx sends eight; decoding each as UTF-8 and trimming it cost ~900 instructions).
    // A name is compared only when its length is one of theirs.
    for h in resp.headers.iter() {
        let v = Some(h.value);
        let name = h.name.as_bytes();
        match name.len() {
            14 if name.eq_ignore_ascii_case(b"content-length") => {
                framing(&mut head, v, None, None)?
            }
            17 if name.eq_ignore_ascii_case(b"transfer-encoding") => {
                framing(&mut head, None, v, None)?
            }
            10 if name.eq_ignore_ascii_case(b"connection") => framing(&mut head, None, None, v)?,
            _ => {}
        }
    }
    Ok(Some(head))
}

impl HttpSession {
    /// Feeds `n` fresh bytes of `inbuf` to the parser; completed responses go to `completed`.
    pub(super) fn parse(
        &mut self,
        n: usize,
        now: Instant,
        out: &mut ReadOutcome,
    ) -> Result<(), OpError> {
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
        // A head that arrives whole in one read (the usual case) is parsed where it lies; only
        // a head split across reads is gathered in `head` (copying it cost ~150 instructions).
        let parsed = if keep == 0 {
            let whole = self
                .reuse
                .last_head
                .borrow_mut()
                .parse(&self.inbuf[at..at + take]);
            if let Ok(None) = whole {
                p.head.extend_from_slice(&self.inbuf[at..at + take]);
            }
            whole
        } else {
            p.head.extend_from_slice(&self.inbuf[at..at + take]);
            self.reuse.last_head.borrow_mut().parse(&p.head)
        };
        let head = match parsed {
            Ok(Some(h)) => h,
            Ok(None) if p.head.len() >= MAX_HEAD => {
                return Err(OpError::new(
                    ErrorKind::Mismatch,
                    "response head over 64 KiB",
                ))
            }
            Ok(None) => return Ok(take),
            Err(why) => return Err(OpError::new(ErrorKind::Mismatch, why.to_string())),
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

    /// The server closed the connection: completes a response whose body runs to the close;
    /// false if none was awaiting it.
    pub(super) fn end_at_close(&mut self) -> bool {
        if !matches!(self.parser.phase, Phase::UntilClose) || self.in_flight.is_empty() {
            return false;
        }
        self.parser.phase = Phase::Body(0);
        self.parser.close = true;
        self.finish_if_done();
        true
    }

    /// Completes the response if its body is all there.
    fn finish_if_done(&mut self) {
        if !matches!(self.parser.phase, Phase::Body(0)) {
            return;
        }
        let Some(req) = self.in_flight.pop_front() else {
            return;
        };
        // Reset in place for the next response (its head buffer keeps its memory): replacing
        // the whole parser dropped and made it anew per response.
        let p = &mut self.parser;
        p.phase = Phase::Head;
        p.head.clear();
        let (status, first_byte) = (std::mem::take(&mut p.status), p.first_byte.take());
        if std::mem::take(&mut p.close) {
            self.reusable = false;
        }
        self.completed.push(Done {
            sent: req.sent,
            first_byte,
            status: Some(status),
            accepted: self.spec.accept.accepts(status),
            failure: None,
            kind: req.kind,
        });
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

    #[test]
    fn only_the_three_framing_headers_are_read_among_many() {
        // nginx's head, names in odd case, values padded; a value not UTF-8 elsewhere is fine.
        let head = b"HTTP/1.0 200 OK\r\nServer: nginx/1.22.1\r\nDate: Tue, 24 Nov 2026 15:40:00 GMT\r\n\
            X-Bin: \xff\xfe\r\ncontent-LENGTH:  100 \r\nCONNECTION: Keep-Alive\r\nETag: \"1-64\"\r\n\r\n";
        let h = parse_head(head).unwrap().unwrap();
        assert_eq!(
            (h.status, h.length, h.chunked, h.close),
            (200, Some(100), false, false)
        );
        assert_eq!(h.consumed, head.len());
        let h = parse_head(b"HTTP/1.1 200 OK\r\ntransfer-encoding: gzip, Chunked\r\n\r\n")
            .unwrap()
            .unwrap();
        assert!(h.chunked && !h.close);
        let err = parse_head(b"HTTP/1.1 200 OK\r\nContent-Length: 1x\r\n\r\n").err();
        assert_eq!(
            err.map(|e| e.to_string()).as_deref(),
            Some("bad Content-Length '1x'")
        );
        let many: Vec<u8> = [
            &b"HTTP/1.1 200 OK\r\n"[..],
            &b"A: b\r\n".repeat(65),
            b"\r\n",
        ]
        .concat();
        assert!(
            parse_head(&many).is_err(),
            "more than 64 headers is a malformed head"
        );
    }

    #[test]
    fn a_head_like_the_last_is_read_from_it_and_any_other_is_parsed() {
        let mut last = LastHead::default();
        let a = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";
        let h = last.parse(a).unwrap().unwrap();
        assert_eq!((h.status, h.length, h.consumed), (200, Some(5), 38));
        assert_eq!(last.bytes, &a[..38]);
        // The same head with other bytes after it (the next response's): the same head.
        let again = [&a[..38], b"HTTP/1.1"].concat();
        let h = last.parse(&again).unwrap().unwrap();
        assert_eq!((h.status, h.length, h.consumed), (200, Some(5), 38));
        // A head that differs anywhere is parsed, and is the last from then on.
        let b = b"HTTP/1.1 404 Not Found\r\nContent-Length: 7\r\nConnection: close\r\n\r\n";
        let h = last.parse(b).unwrap().unwrap();
        assert_eq!((h.status, h.length, h.close), (404, Some(7), true));
        assert_eq!(last.bytes, b);
        // A part of the last head is not yet a head; a malformed one is an error.
        assert!(last.parse(&b[..30]).unwrap().is_none());
        assert!(last
            .parse(b"HTTP/1.1 404 Not Found\r\nbad header\r\n\r\n")
            .is_err());
        assert!(last.parse(b"garbage\r\n\r\n").is_err());
        let h = last.parse(b).unwrap().unwrap();
        assert_eq!(h.status, 404);
    }

    #[test]
    fn framing_values_in_any_form() {
        for (value, length) in [
            ("100", Some(100)),
            (" 7 ", Some(7)),
            ("0", Some(0)),
            ("+1", Some(1)),
        ] {
            let head = format!("HTTP/1.1 200 OK\r\nContent-Length:{value}\r\n\r\n");
            assert_eq!(parse_head(head.as_bytes()).unwrap().unwrap().length, length);
        }
        for bad in ["", "1 2", "-1", "99999999999999999999"] {
            let head = format!("HTTP/1.1 200 OK\r\nContent-Length: {bad}\r\n\r\n");
            assert!(parse_head(head.as_bytes()).is_err(), "{bad:?}");
        }
        for (value, close) in [
            ("keep-alive", false),
            ("Keep-Alive", false),
            ("close", true),
            ("CLOSE", true),
            ("Upgrade, close", true),
            ("TE, keep-alive", false),
            ("TE", true),
        ] {
            // HTTP/1.0: closed unless kept alive.
            let head = format!("HTTP/1.0 200 OK\r\nConnection: {value}\r\n\r\n");
            assert_eq!(
                parse_head(head.as_bytes()).unwrap().unwrap().close,
                close,
                "{value}"
            );
        }
    }
}
