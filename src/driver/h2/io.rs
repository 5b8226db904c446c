//! The socket under an HTTP/2 connection: plain TCP (h2c) or TLS that agreed to `h2`, with
//! counts of the bytes that cross it, and the first bytes the server sent, which tell whether a
//! cleartext server speaks HTTP/2 with prior knowledge at all.

use super::super::stream::Stream;
use super::super::tls;
use crate::record::{ErrorKind, OpError};
use std::cell::Cell;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;

/// Bytes that crossed one connection's socket (all frames, TLS records' payload).
#[derive(Debug, Default)]
pub(crate) struct Counts {
    /// Bytes read from the server.
    pub read: Cell<u64>,
    /// Bytes written to the server.
    pub written: Cell<u64>,
    /// The first bytes the server sent (up to [`FIRST`]): whether it speaks HTTP/2 at all.
    pub first: std::cell::RefCell<Vec<u8>>,
}

/// How many of the server's first bytes are kept: a frame header, or a status line's start.
const FIRST: usize = 64;

#[derive(Debug)]
enum Inner {
    Tcp(TcpStream),
    Tls(Box<TlsStream<TcpStream>>),
}

/// What the framing layer reads and writes: the socket, counting.
#[derive(Debug)]
pub(crate) struct Io {
    inner: Inner,
    counts: Rc<Counts>,
}

impl Io {
    /// Takes over a connected stream; a TLS one must have agreed to `h2` in ALPN.
    pub(crate) fn new(stream: Stream, counts: Rc<Counts>) -> Result<Io, OpError> {
        let inner = match stream {
            Stream::Async(s) => Inner::Tcp(s),
            Stream::Tls(s) => match tls::not_h2(tls::alpn(&s)) {
                None => Inner::Tls(s),
                Some(why) => {
                    return Err(OpError::fatal(
                        ErrorKind::Tls,
                        format!("{why}: {}", tls::H2_FIX),
                    ))
                }
            },
            Stream::Blocking(_) => {
                return Err(OpError::new(
                    ErrorKind::Other,
                    "HTTP/2 needs an event-loop socket",
                ))
            }
        };
        Ok(Io { inner, counts })
    }
}

impl AsyncRead for Io {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let r = match &mut this.inner {
            Inner::Tcp(s) => Pin::new(s).poll_read(cx, buf),
            Inner::Tls(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
        };
        let n = (buf.filled().len() - before) as u64;
        if this.counts.read.get() < FIRST as u64 && n > 0 {
            let mut first = this.counts.first.borrow_mut();
            let take = (FIRST - first.len()).min(n as usize);
            first.extend_from_slice(&buf.filled()[before..before + take]);
        }
        this.counts.read.set(this.counts.read.get() + n);
        r
    }
}

impl Io {
    fn counted(&self, r: Poll<std::io::Result<usize>>) -> Poll<std::io::Result<usize>> {
        if let Poll::Ready(Ok(n)) = r {
            self.counts
                .written
                .set(self.counts.written.get() + n as u64);
        }
        r
    }
}

impl AsyncWrite for Io {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        let r = match &mut this.inner {
            Inner::Tcp(s) => Pin::new(s).poll_write(cx, buf),
            Inner::Tls(s) => Pin::new(s.as_mut()).poll_write(cx, buf),
        };
        this.counted(r)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match &mut self.get_mut().inner {
            Inner::Tcp(s) => Pin::new(s).poll_flush(cx),
            Inner::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match &mut self.get_mut().inner {
            Inner::Tcp(s) => Pin::new(s).poll_shutdown(cx),
            Inner::Tls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
        }
    }
}

/// Why a cleartext server whose first bytes were `got` does not speak HTTP/2 with prior
/// knowledge, or None if they begin with a SETTINGS frame, as every HTTP/2 server's do. An
/// HTTP/1.1 server answers the preface with a status line (or closes), named in the reason.
pub(super) fn not_h2c(got: &[u8]) -> Option<String> {
    if got.len() >= 9 && got[3] == 4 && got[5..9] == [0, 0, 0, 0] {
        return None;
    }
    let answer = match got.is_empty() {
        true => "closed the connection".to_string(),
        false => {
            let line = got
                .split(|&b| b == b'\r' || b == b'\n')
                .next()
                .unwrap_or_default();
            let line = String::from_utf8_lossy(&line[..line.len().min(60)]).into_owned();
            format!("answered '{}'", line.escape_debug())
        }
    };
    Some(format!(
        "it {answer} to the HTTP/2 preface: it does not speak HTTP/2 without TLS (h2c with prior knowledge); enable it on the server (nginx: listen PORT http2) or leave out --http2"
    ))
}
