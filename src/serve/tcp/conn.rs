//! One connection: find out who the client is (wirebench preamble or plain bytes), then hand the
//! connection to the echo, sink or source loop that fits.

use super::blocking::BlockingStream;
use super::filler::Filler;
use super::framer::Framer;
use super::stats::Tally;
use super::transfer::{echo, sink, source, within, Reply, Stop, Wire};
use super::Shared;
use crate::serve::{Mode, Shutdown};
use crate::wire::framing::{self, Detect, Preamble, ERROR_PREFIX, MAX_PREAMBLE};
use std::io;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::timeout;

/// The read buffer of a connection: the most one read takes, and all a connection holds.
pub(crate) const BUF: usize = 64 * 1024;

/// How long a source server waits for a preamble before it takes the client for a plain one that
/// will never speak (`nc` reading a stream), and how long bytes that may be the start of a
/// preamble are given to complete. A wirebench client sends its preamble right after connecting.
const PLAIN_WAIT: Duration = Duration::from_millis(200);

/// After an error line, how long (and how many bytes) the server reads until the client closes.
/// Closing a socket with unread bytes makes the kernel send a reset, which can destroy the error
/// line before the client reads it.
const LINGER: Duration = Duration::from_secs(1);
const LINGER_BYTES: usize = 1 << 20;

/// Serves one connection until the client closes, it sends a bad frame, or an I/O error.
pub(crate) async fn serve(
    mut stream: TcpStream,
    shared: &Shared,
    tally: &Tally,
    shutdown: &Shutdown,
) {
    let mut buf = Vec::with_capacity(BUF);
    let mode = shared.options.mode;
    let idle = shared.options.idle_timeout;
    let hello = match handshake(&mut stream, &mut buf, mode, idle).await {
        // A wirebench intent the mode cannot serve is refused here, in the event loop, where
        // the refusal's linger can time out.
        Ok(Hello::Wirebench(p, _)) if !fits(p, mode) => Ok(Hello::Bad(mismatch(mode))),
        other => other,
    };
    let outcome = match hello {
        Ok(Hello::Closed) => Ok(()),
        Ok(Hello::Bad(why)) => Err(Stop::Refuse(why)),
        Err(_) => Err(Stop::Io),
        Ok(hello) if shared.options.blocking && mode != Mode::Source => {
            // Mismatches were refused above, so only a bad frame can end this early.
            if let Ok(mut blocking) = BlockingStream::new(stream, shutdown.clone(), idle) {
                if let Err(Stop::Bad) = converse(&mut blocking, hello, buf, shared, tally).await {
                    tally.bad_frame();
                }
            }
            return;
        }
        Ok(hello) => converse(&mut stream, hello, buf, shared, tally).await,
    };
    match outcome {
        Ok(()) | Err(Stop::Io) => {} // the client closed or reset: a normal end
        Err(Stop::Bad) => tally.bad_frame(),
        Err(Stop::Refuse(why)) => {
            tally.bad_frame();
            let _ = refuse(&mut stream, &why).await;
        }
    }
}

/// Runs the loop the client's hello asks for.
async fn converse<S: Wire>(
    stream: &mut S,
    hello: Hello,
    mut buf: Vec<u8>,
    shared: &Shared,
    tally: &Tally,
) -> Result<(), Stop> {
    match hello {
        Hello::Plain => plain(stream, buf, shared, tally).await,
        Hello::Wirebench(preamble, start) => {
            buf.drain(..start);
            wirebench(stream, buf, preamble, shared, tally).await
        }
        Hello::Closed | Hello::Bad(_) => Ok(()),
    }
}

/// Whether a server in `mode` serves a client announcing `p`.
fn fits(p: Preamble, mode: Mode) -> bool {
    matches!(
        (p, mode),
        (Preamble::Exchange { .. }, Mode::Echo)
            | (Preamble::Stream { .. }, Mode::Sink)
            | (Preamble::Source { .. }, Mode::Source)
    )
}

/// What the first bytes of a connection said.
#[derive(Debug)]
enum Hello {
    /// The client closed without sending anything.
    Closed,
    /// A plain client; the buffer holds its first bytes (possibly none).
    Plain,
    /// A wirebench client; its payload starts at this offset of the buffer.
    Wirebench(Preamble, usize),
    /// A malformed preamble, and why.
    Bad(String),
}

/// Reads until the first bytes tell a wirebench client from a plain one.
/// A client that sends nothing for `idle` ends here (an error), as in the transfer loops.
async fn handshake(
    stream: &mut TcpStream,
    buf: &mut Vec<u8>,
    mode: Mode,
    idle: Option<Duration>,
) -> io::Result<Hello> {
    loop {
        let detected = framing::detect(buf);
        let patient = detected == Detect::NeedMore && !buf.is_empty();
        let n = if patient || (mode == Mode::Source && buf.is_empty()) {
            match timeout(PLAIN_WAIT, stream.read_buf(buf)).await {
                Ok(read) => read?,
                Err(_) => return Ok(Hello::Plain),
            }
        } else {
            within(idle, stream.read_buf(buf)).await?
        };
        match framing::detect(buf) {
            Detect::Plain => return Ok(Hello::Plain),
            Detect::NeedMore if n == 0 && buf.is_empty() => return Ok(Hello::Closed),
            Detect::NeedMore if n == 0 => return Ok(Hello::Plain),
            Detect::NeedMore => {}
            Detect::Wirebench => {
                let head = &buf[..buf.len().min(MAX_PREAMBLE)];
                if let Some(i) = head.iter().position(|&b| b == b'\n') {
                    return Ok(match Preamble::parse(&buf[..=i]) {
                        Ok(p) => Hello::Wirebench(p, i + 1),
                        Err(why) => Hello::Bad(why.to_string()),
                    });
                }
                if buf.len() >= MAX_PREAMBLE {
                    return Ok(Hello::Bad(format!(
                        "preamble is longer than {MAX_PREAMBLE} bytes"
                    )));
                }
                if n == 0 {
                    return Ok(Hello::Bad("connection closed inside the preamble".into()));
                }
            }
        }
    }
}

/// Serves a wirebench client by its preamble, if the intent fits the server's mode.
async fn wirebench<S: Wire>(
    stream: &mut S,
    buf: Vec<u8>,
    preamble: Preamble,
    shared: &Shared,
    tally: &Tally,
) -> Result<(), Stop> {
    let delay = &shared.service;
    match (preamble, shared.options.mode) {
        (Preamble::Exchange { request, reply }, Mode::Echo) => {
            let reply = if reply == request {
                Reply::Same
            } else {
                Reply::Filler(Filler::plain(reply as usize))
            };
            echo(
                stream,
                buf,
                Framer::sized(request),
                &reply,
                (delay, shared.faults()),
                tally,
                shared.options.idle_timeout,
            )
            .await
        }
        (Preamble::Stream { request, report }, Mode::Sink) => {
            if report {
                stream.write_all(framing::OK_LINE).await?;
            }
            let bytes = sink(
                stream,
                buf,
                Framer::sized(request),
                tally,
                shared.options.idle_timeout,
            )
            .await?;
            if report {
                // The client half-closed: tell it what arrived, then close.
                stream.write_all(&framing::received_line(bytes)).await?;
                stream.shutdown().await?;
            }
            Ok(())
        }
        (Preamble::Source { message }, Mode::Source) => {
            let filler = Filler::plain(message as usize);
            let idle = shared.options.idle_timeout;
            source(stream, buf.len(), &filler, delay, tally, idle).await
        }
        (_, mode) => Err(Stop::Refuse(mismatch(mode))),
    }
}

/// The error text for a client whose intent does not fit `mode`.
fn mismatch(mode: Mode) -> String {
    let (server, client) = match mode {
        Mode::Echo => ("echo", "rr"),
        Mode::Sink => ("sink", "stream"),
        Mode::Source => ("source", "source"),
    };
    format!("server is in {server} mode; use --mode {client}")
}

/// Serves a plain client by the server's own framing and mode.
async fn plain<S: Wire>(
    stream: &mut S,
    buf: Vec<u8>,
    shared: &Shared,
    tally: &Tally,
) -> Result<(), Stop> {
    let delay = &shared.service;
    match shared.options.mode {
        Mode::Echo => {
            let reply = match &shared.plain_reply {
                Some(filler) => Reply::Filler(filler.clone()),
                None => Reply::Same,
            };
            echo(
                stream,
                buf,
                shared.plain_framer(),
                &reply,
                (delay, shared.faults()),
                tally,
                shared.options.idle_timeout,
            )
            .await
        }
        Mode::Sink => sink(
            stream,
            buf,
            shared.plain_framer(),
            tally,
            shared.options.idle_timeout,
        )
        .await
        .map(|_| ()),
        Mode::Source => {
            let (filler, idle) = (&shared.plain_source, shared.options.idle_timeout);
            source(stream, buf.len(), filler, delay, tally, idle).await
        }
    }
}

/// Tells a wirebench client what is wrong, then closes gracefully.
async fn refuse(stream: &mut TcpStream, why: &str) -> io::Result<()> {
    let mut line = Vec::with_capacity(ERROR_PREFIX.len() + why.len() + 1);
    line.extend_from_slice(ERROR_PREFIX);
    line.extend_from_slice(why.as_bytes());
    line.push(b'\n');
    stream.write_all(&line).await?;
    stream.shutdown().await?;
    let drain = async {
        let mut scratch = vec![0; 16 * 1024];
        let mut total = 0;
        while total < LINGER_BYTES {
            match stream.read(&mut scratch).await {
                Ok(0) | Err(_) => break,
                Ok(n) => total += n,
            }
        }
    };
    let _ = timeout(LINGER, drain).await;
    Ok(())
}
