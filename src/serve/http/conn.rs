//! One HTTP/1.1 connection: parse heads from a fixed read buffer, answer them in order into one
//! output buffer, write that buffer once per batch of pipelined requests.
//!
//! Memory per connection is bounded whatever arrives: the read buffer never grows (a head that
//! does not fit is refused with 431), bodies are decoded in place and passed on or dropped as
//! they arrive, and the output buffer is flushed once it holds [`FLUSH_AT`] bytes; large bodies
//! go out straight from the shared block or the file (`sendfile`), never through a copy.

mod io;

use super::body::{Decoder, Step};
use super::file;
use super::request::{self, BodyLen, Head, Method, Parse, Route};
use super::response::{self, push_hex, Length, Persist, BLOCK, BLOCK_LEN, OCTETS, TEXT};
use super::stats::{Local, Tally};
use super::Shared;
use crate::serve::delay::Pause;
use io::Wait;
use std::convert::Infallible;
use std::io::ErrorKind;
use std::path::Path;
use std::time::Duration;
use tokio::net::TcpStream;
use tokio::task::coop::consume_budget;
use tokio::time::Instant;

/// The smallest read buffer (it is at least the header size limit).
const READ_BUF: usize = 16 * 1024;
/// The output buffer is written out once it holds this much.
const FLUSH_AT: usize = 64 * 1024;
/// Bodies up to this long are copied into the output buffer, to go out with their head in one
/// write; longer ones are written from where they are.
const SMALL_BODY: u64 = 32 * 1024;
/// The output buffer's first capacity (see `io` for the most it keeps between batches).
const OUT_START: usize = 4 * 1024;

/// `Allow` for routes that only GET and HEAD.
const ALLOW_GET: &str = "GET, HEAD";
/// `Allow` for `/echo`.
const ALLOW_ECHO: &str = "POST, PUT";
/// `Allow` for a method the server does not know.
const ALLOW_ANY: &str = "GET, HEAD, POST, PUT, DELETE, PATCH, OPTIONS";

/// How a connection ends.
#[derive(Debug)]
enum End {
    /// Just drop it: the client closed, reset, went idle, or a response was cut short.
    Quiet,
    /// A response with `Connection: close` waits in the output buffer: write it, shut down
    /// the sending side, and read until the client closes (bounded by `io::LINGER`).
    Close,
}

/// Why a request body could not be read to its end.
#[derive(Debug)]
enum BodyEnd {
    /// Malformed chunked framing.
    Bad,
    /// The client closed, failed or stalled.
    Gone,
}

/// Serves one connection until the client closes, a request says close, an error, or a timeout.
pub(crate) async fn serve(stream: TcpStream, shared: &Shared, tally: &Tally) {
    let mut conn = Conn::new(stream, shared, tally);
    let end = match conn.requests().await {
        Err(end) => end,
        Ok(never) => match never {},
    };
    if let End::Close = end {
        if conn.flush().await.is_ok() {
            conn.linger().await;
        }
    }
    conn.tally.take(&mut conn.local);
}

/// A connection's state: its buffers and the counts not yet handed to its thread's block. Its
/// socket I/O is in `io`.
struct Conn<'a> {
    stream: TcpStream,
    shared: &'a Shared,
    tally: &'a Tally,
    local: Local,
    /// Bytes read; `start..end` are not yet used.
    buf: Box<[u8]>,
    start: usize,
    end: usize,
    /// The last read filled all the room it was given, so more is probably waiting: read it
    /// before writing, to answer more pipelined requests with one write.
    full: bool,
    /// Responses not yet written.
    out: Vec<u8>,
    /// Service time (`--delay`, `/delay/D`), to the microsecond.
    pause: Pause,
}

impl<'a> Conn<'a> {
    fn new(stream: TcpStream, shared: &'a Shared, tally: &'a Tally) -> Conn<'a> {
        let size = shared.options.max_header_bytes.max(READ_BUF);
        Conn {
            stream,
            shared,
            tally,
            local: Local::default(),
            buf: vec![0; size].into_boxed_slice(),
            start: 0,
            end: 0,
            full: false,
            out: Vec::with_capacity(OUT_START),
            pause: Pause::default(),
        }
    }

    /// Answers requests until the connection is to end, and says how.
    async fn requests(&mut self) -> Result<Infallible, End> {
        let shared = self.shared;
        let options = &shared.options;
        let files = shared.root.is_some();
        // The first head is due within the request timeout of the connection; later ones within
        // the request timeout of their first byte, which may take the idle timeout to come.
        let mut head_due = Some(Instant::now() + options.request_timeout);
        loop {
            match request::parse(&self.buf[self.start..self.end], files) {
                Parse::Complete(_, used) if used > options.max_header_bytes => {
                    return Err(self.fail(431, "the request head is over the size limit"));
                }
                Parse::Complete(head, used) => {
                    self.start += used;
                    head_due = None;
                    self.respond(head).await?;
                }
                Parse::Bad(status, why) => return Err(self.fail(status, why)),
                Parse::Partial => {
                    let pending = self.end - self.start;
                    if pending >= options.max_header_bytes {
                        return Err(self.fail(431, "the request head is over the size limit"));
                    }
                    let due = match head_due {
                        Some(due) => due,
                        None if pending == 0 => Instant::now() + options.idle_timeout,
                        None => *head_due.insert(Instant::now() + options.request_timeout),
                    };
                    match self.fill(due).await {
                        Ok(()) => {}
                        Err(Wait::TimedOut) if pending > 0 => {
                            return Err(self.fail(408, "the request head did not arrive in time"));
                        }
                        Err(Wait::Eof | Wait::TimedOut) => {
                            self.flush().await?;
                            return Err(End::Quiet);
                        }
                        Err(Wait::Failed) => return Err(End::Quiet),
                    }
                }
            }
        }
    }

    /// Answers one request whose head has been used; its body (if any) is next in the buffer.
    async fn respond(&mut self, head: Head) -> Result<(), End> {
        let persist = match (head.keep_alive, head.http10) {
            (false, _) => Persist::Close,
            (true, true) => Persist::KeepAlive10,
            (true, false) => Persist::KeepAlive,
        };
        if head.expect_continue && head.body != BodyLen::None && !head.http10 {
            self.out.extend_from_slice(b"HTTP/1.1 100 Continue\r\n\r\n");
            self.flush().await?;
        }
        let options = &self.shared.options;
        let method = head.method;
        let head_only = method == Method::Head;
        let get = matches!(method, Method::Get | Method::Head);
        let due = (!self.shared.service.is_instant())
            .then(|| self.shared.service.due(std::time::Instant::now()));
        if head.route == Route::Echo && matches!(method, Method::Post | Method::Put) {
            self.echo(head.body, persist, due).await?;
        } else {
            self.discard(head.body).await?;
            let extra = match head.route {
                Route::Delay(d) if d > options.max_delay => {
                    let why = "/delay/D: over the server's --max-delay";
                    self.simple(400, Some(why), head_only, persist, None);
                    return self.after(persist).await;
                }
                Route::Delay(d) => d,
                _ => Duration::ZERO,
            };
            let due = match (due, extra.is_zero()) {
                (Some(at), _) => Some(at + extra),
                (None, false) => Some(std::time::Instant::now() + extra),
                (None, true) => None,
            };
            self.pause(due, !extra.is_zero()).await?;
            match head.route {
                _ if method == Method::Other => {
                    self.simple(405, None, false, persist, Some(ALLOW_ANY));
                }
                Route::Echo => self.simple(405, None, head_only, persist, Some(ALLOW_ECHO)),
                Route::Bytes(_) | Route::File(_) if !get => {
                    self.simple(405, None, false, persist, Some(ALLOW_GET));
                }
                Route::Bytes(n) => self.bytes(n, head_only, persist).await?,
                Route::File(path) => self.file(&path, head_only, persist).await?,
                Route::Delay(_) => self.simple(200, None, head_only, persist, None),
                Route::Status(code) => self.simple(code, None, head_only, persist, None),
                Route::NotFound => self.simple(404, None, head_only, persist, None),
                Route::BadParam(why) => self.simple(400, Some(why), head_only, persist, None),
            }
        }
        self.after(persist).await
    }

    /// After a response is queued: close if it said so, flush if enough is queued.
    async fn after(&mut self, persist: Persist) -> Result<(), End> {
        if persist == Persist::Close {
            return Err(End::Close);
        }
        if self.out.len() >= FLUSH_AT {
            self.flush().await?;
        }
        Ok(())
    }

    /// Queues a response with a short text body (`CODE Reason[: why]\n`), none for 204, 205
    /// and 304, and none for HEAD.
    fn simple(
        &mut self,
        status: u16,
        why: Option<&str>,
        head_only: bool,
        persist: Persist,
        allow: Option<&str>,
    ) {
        self.local.status(status);
        let out = &mut self.out;
        if response::bodiless(status) {
            response::head(out, status, Length::Bodiless, TEXT, persist, allow);
        } else if status == 205 {
            response::head(out, status, Length::Fixed(0), TEXT, persist, allow);
        } else {
            let len = response::text_len(status, why);
            response::head(out, status, Length::Fixed(len), TEXT, persist, allow);
            if !head_only {
                response::text(out, status, why);
                self.local.wrote(len);
            }
        }
    }

    /// Queues an error response that closes the connection.
    fn fail(&mut self, status: u16, why: &'static str) -> End {
        self.simple(status, Some(why), false, Persist::Close, None);
        End::Close
    }

    /// Service time: sends what is queued, then waits until `due` (none: answers at once); to
    /// the µs when `precise` (a `/delay/D`) or a `--delay` is set.
    /// A client that leaves meanwhile (closes or resets) ends the wait and the connection: a
    /// `/delay/1h` must not hold a descriptor for an hour after its client went away.
    async fn pause(&mut self, due: Option<std::time::Instant>, precise: bool) -> Result<(), End> {
        if let Some(at) = due {
            self.flush().await?;
            let Conn {
                stream,
                shared,
                pause,
                buf,
                end,
                ..
            } = self;
            let wait = async {
                if precise {
                    pause.until(at).await;
                } else {
                    shared.service.wait_until(pause, at).await;
                }
            };
            tokio::select! {
                biased;
                () = wait => {}
                () = io::left(stream, buf, end) => return Err(End::Quiet),
            }
        }
        Ok(())
    }

    /// `/bytes/N`: small bodies are copied after the head, large ones written from the block.
    async fn bytes(&mut self, n: u64, head_only: bool, persist: Persist) -> Result<(), End> {
        self.local.status(200);
        response::head(&mut self.out, 200, Length::Fixed(n), OCTETS, persist, None);
        if head_only {
            return Ok(());
        }
        if n <= SMALL_BODY {
            self.out.extend_from_slice(&BLOCK[..n as usize]);
            self.local.wrote(n);
            return Ok(());
        }
        let first = (FLUSH_AT.saturating_sub(self.out.len()) as u64).min(n);
        self.out.extend_from_slice(&BLOCK[..first as usize]);
        self.local.wrote(first);
        self.flush().await?;
        // Byte i of the body is byte i % BLOCK_LEN of the block, however it was cut.
        let (mut at, mut left) = (first as usize % BLOCK_LEN, n - first);
        while left > 0 {
            let k = left.min((BLOCK_LEN - at) as u64) as usize;
            self.local.wrote(k as u64);
            self.tally.take(&mut self.local);
            self.write_all(&BLOCK[at..at + k]).await?;
            left -= k as u64;
            at = (at + k) % BLOCK_LEN;
            // A fast client must not keep the other connections of this thread waiting.
            consume_budget().await;
        }
        Ok(())
    }

    /// A file under `--dir`, with `sendfile(2)` after its head.
    async fn file(&mut self, rel: &Path, head_only: bool, persist: Persist) -> Result<(), End> {
        let shared = self.shared;
        let Some(root) = shared.root.as_ref() else {
            self.simple(404, None, head_only, persist, None);
            return Ok(());
        };
        let served = match root.open_file(rel) {
            Ok(served) => served,
            Err(status) => {
                self.simple(status, None, head_only, persist, None);
                return Ok(());
            }
        };
        self.local.status(200);
        let (len, kind) = (served.len, served.content_type);
        response::head(&mut self.out, 200, Length::Fixed(len), kind, persist, None);
        if head_only || len == 0 {
            return Ok(());
        }
        self.flush_more().await?;
        let mut offset: libc::off_t = 0;
        let mut left = len;
        while left > 0 {
            match file::send_some(&self.stream, &served.file, &mut offset, left) {
                // The file shrank since it was measured: the promised length cannot be kept.
                Ok(0) => return Err(End::Quiet),
                Ok(n) => {
                    left -= n;
                    self.local.wrote(n);
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => {
                    self.tally.take(&mut self.local);
                    self.writable().await?;
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => return Err(End::Quiet),
            }
            consume_budget().await;
        }
        self.tally.take(&mut self.local);
        Ok(())
    }

    /// `POST|PUT /echo`: the body back as it arrives, with the request's Content-Length, or
    /// chunked when the request was.
    async fn echo(
        &mut self,
        body: BodyLen,
        persist: Persist,
        due: Option<std::time::Instant>,
    ) -> Result<(), End> {
        self.pause(due, false).await?;
        let length = match body {
            BodyLen::None => Length::Fixed(0),
            BodyLen::Length(n) => Length::Fixed(n),
            BodyLen::Chunked => Length::Chunked,
        };
        self.local.status(200);
        response::head(&mut self.out, 200, length, OCTETS, persist, None);
        let chunked = length == Length::Chunked;
        let mut decoder = Decoder::new(body);
        loop {
            match self.next_piece(&mut decoder).await {
                Ok(Some((a, b))) => {
                    if chunked {
                        push_hex(&mut self.out, (b - a) as u64);
                        self.out.extend_from_slice(b"\r\n");
                    }
                    self.out.extend_from_slice(&self.buf[a..b]);
                    if chunked {
                        self.out.extend_from_slice(b"\r\n");
                    }
                    self.local.wrote((b - a) as u64);
                    if self.out.len() >= FLUSH_AT {
                        self.flush().await?;
                    }
                }
                Ok(None) => break,
                Err(_) => {
                    // The response has begun, so there is no telling the client: send what
                    // there is (earlier responses among it) and close.
                    let _ = self.flush().await;
                    return Err(End::Quiet);
                }
            }
        }
        if chunked {
            self.out.extend_from_slice(b"0\r\n\r\n");
        }
        Ok(())
    }

    /// Reads a body to its end and drops it, so the next request can be found.
    async fn discard(&mut self, body: BodyLen) -> Result<(), End> {
        if body == BodyLen::None {
            return Ok(());
        }
        let mut decoder = Decoder::new(body);
        loop {
            match self.next_piece(&mut decoder).await {
                Ok(Some(_)) => {}
                Ok(None) => return Ok(()),
                Err(BodyEnd::Bad) => return Err(self.fail(400, "malformed chunked body")),
                Err(BodyEnd::Gone) => {
                    let _ = self.flush().await;
                    return Err(End::Quiet);
                }
            }
        }
    }

    /// The next piece of body data, as a range of the read buffer valid until the next call;
    /// `None` once the body is over. Reads wait at most the idle timeout each.
    async fn next_piece(
        &mut self,
        decoder: &mut Decoder,
    ) -> Result<Option<(usize, usize)>, BodyEnd> {
        loop {
            match decoder.step(&self.buf[self.start..self.end]) {
                Step::Data(n) => {
                    let a = self.start;
                    self.start += n;
                    self.local.read(n as u64);
                    return Ok(Some((a, a + n)));
                }
                Step::Skip(n) => self.start += n,
                Step::Done(n) => {
                    self.start += n;
                    return Ok(None);
                }
                Step::Bad => return Err(BodyEnd::Bad),
                Step::NeedMore => {
                    let due = Instant::now() + self.shared.options.idle_timeout;
                    if self.fill(due).await.is_err() {
                        return Err(BodyEnd::Gone);
                    }
                }
            }
        }
    }
}
