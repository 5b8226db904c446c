//! The socket under an HTTP/2 connection: plain TCP (h2c) or TLS that agreed to `h2`, with
//! counts of the bytes that cross it; and the pre-flight check that a cleartext server speaks
//! HTTP/2 with prior knowledge at all.

use super::super::stream::Stream;
use super::super::tls;
use crate::record::{ErrorKind, OpError};
use std::cell::Cell;
use std::io::{IoSlice, Read, Write};
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;

/// The client connection preface (RFC 9113 §3.4).
const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
/// A SETTINGS frame header with no settings: length 0, type 4, no flags, stream 0.
const EMPTY_SETTINGS: [u8; 9] = [0, 0, 0, 4, 0, 0, 0, 0, 0];

/// Bytes that crossed one connection's socket (all frames, TLS records' payload).
#[derive(Debug, Default)]
pub(super) struct Counts {
    /// Bytes read from the server.
    pub read: Cell<u64>,
    /// Bytes written to the server.
    pub written: Cell<u64>,
}

#[derive(Debug)]
enum Inner {
    Tcp(TcpStream),
    Tls(Box<TlsStream<TcpStream>>),
}

/// What h2 reads and writes: the socket, counting.
#[derive(Debug)]
pub(super) struct Io {
    inner: Inner,
    counts: Rc<Counts>,
}

impl Io {
    /// Takes over a connected stream; a TLS one must have agreed to `h2` in ALPN.
    pub(super) fn new(stream: Stream, counts: Rc<Counts>) -> Result<Io, OpError> {
        let inner = match stream {
            Stream::Async(s) => Inner::Tcp(s),
            Stream::Tls(s) => match tls::not_h2(tls::alpn(&s)) {
                None => Inner::Tls(s),
                Some(why) => return Err(OpError::new(ErrorKind::Tls, why)),
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

    /// h2 writes a frame's header and its payload in one call when it can.
    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        let r = match &mut this.inner {
            Inner::Tcp(s) => Pin::new(s).poll_write_vectored(cx, bufs),
            Inner::Tls(s) => Pin::new(s.as_mut()).poll_write_vectored(cx, bufs),
        };
        this.counted(r)
    }

    fn is_write_vectored(&self) -> bool {
        match &self.inner {
            Inner::Tcp(s) => s.is_write_vectored(),
            Inner::Tls(s) => s.is_write_vectored(),
        }
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

/// Before the load on an http:// target: sends the HTTP/2 preface and an empty SETTINGS frame
/// and expects the server's first frame to be SETTINGS, as every HTTP/2 server's is. An
/// HTTP/1.1 server answers with a status line (or closes), which is named in the error. No
/// request is sent, so the server logs none.
pub fn probe_h2c(mut s: std::net::TcpStream, timeout: Duration) -> Result<(), String> {
    let io = |e: std::io::Error| format!("cannot check for HTTP/2: {e}");
    s.set_read_timeout(Some(timeout)).map_err(io)?;
    s.set_write_timeout(Some(timeout)).map_err(io)?;
    s.write_all(PREFACE).map_err(io)?;
    s.write_all(&EMPTY_SETTINGS).map_err(io)?;
    let mut got = Vec::with_capacity(256);
    let mut buf = [0u8; 256];
    while got.len() < 9 {
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {
                return Err(format!(
                    "no answer to the HTTP/2 preface within {timeout:?}: it does not speak HTTP/2 without TLS (h2c with prior knowledge)"
                ))
            }
            Err(e) => return Err(io(e)),
        }
    }
    let settings = got.len() >= 9 && got[3] == 4 && got[5..9] == [0, 0, 0, 0];
    if settings {
        return Ok(());
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
    Err(format!(
        "it {answer} to the HTTP/2 preface: it does not speak HTTP/2 without TLS (h2c with prior knowledge); enable it on the server (nginx: listen PORT http2) or leave out --http2"
    ))
}
