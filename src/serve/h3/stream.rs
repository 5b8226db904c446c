//! One HTTP/3 request stream of `serve http3`: the request head read (bounded), the route
//! chosen as `serve http` chooses it, the service time waited, the response written.

use super::{Counters, Shared};
use crate::serve::delay::Pause;
use crate::serve::http::file;
use crate::serve::http::request::{route, Route};
use crate::serve::http::response::{bodiless, text, OCTETS};
use crate::wire::h3::frame::{self, Event, FrameReader};
use crate::wire::h3::qpack;
use bytes::Bytes;
use quinn::{RecvStream, SendStream, VarInt};
use std::io::Read;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// A fixed block that `/bytes/N` bodies are cut from: any size in constant memory.
const BLOCK: usize = 64 << 10;

/// What the request head said.
struct Head {
    method: String,
    path: String,
    /// DATA frames of the body that came with the head, framed again for an echo.
    early: Vec<u8>,
}

/// Why a stream ended without a response.
enum Gone {
    /// The client reset or stopped it, or the connection ended.
    Peer,
    /// The request broke HTTP/3 (a body before the head, a head too large or malformed).
    Malformed,
}

/// Serves one request stream.
pub(super) async fn serve(mut send: SendStream, mut recv: RecvStream, shared: &Shared) {
    let c = &shared.counters;
    let mut reader = FrameReader::new(shared.options.max_header_bytes);
    let head = match read_head(&mut recv, &mut reader, c).await {
        Ok(h) => h,
        Err(Gone::Malformed) => {
            let code = VarInt::from_u32(frame::MESSAGE_ERROR as u32);
            let _ = recv.stop(code);
            let _ = send.reset(code);
            return;
        }
        Err(Gone::Peer) => return,
    };
    let arrival = Instant::now();
    c.requests.fetch_add(1, Ordering::Relaxed);
    let files = shared.root.is_some();
    let route = route(&head.path, files);
    let method = head.method.as_str();
    let (head_only, get) = (method == "HEAD", matches!(method, "GET" | "HEAD"));
    let known = matches!(
        method,
        "GET" | "HEAD" | "POST" | "PUT" | "DELETE" | "PATCH" | "OPTIONS"
    );
    let due = (!shared.service.is_instant()).then(|| shared.service.due(arrival));
    let extra = match route {
        Route::Delay(d) => d,
        _ => Duration::ZERO,
    };
    let due = match (due, extra.is_zero()) {
        (Some(at), _) => Some(at + extra),
        (None, false) => Some(arrival + extra),
        (None, true) => None,
    };
    if let Some(at) = due {
        shared.service.wait_until(&mut Pause::default(), at).await;
    }
    let mut out = Vec::with_capacity(256);
    let done = match route {
        _ if !known => simple(&mut send, &mut out, 405, None, false, c).await,
        Route::Echo if matches!(method, "POST" | "PUT") => {
            echo(&mut send, &mut recv, &mut reader, &head.early, c).await
        }
        Route::Echo => simple(&mut send, &mut out, 405, None, head_only, c).await,
        Route::Bytes(_) | Route::File(_) if !get => {
            simple(&mut send, &mut out, 405, None, false, c).await
        }
        Route::Bytes(n) => bytes(&mut send, &mut out, n, head_only, c).await,
        Route::File(rel) => match shared.root.as_ref().map(|root| root.open_file(&rel)) {
            Some(Ok(served)) => serve_file(&mut send, &mut out, served, head_only, c).await,
            Some(Err(status)) => simple(&mut send, &mut out, status, None, head_only, c).await,
            None => simple(&mut send, &mut out, 404, None, head_only, c).await,
        },
        Route::Delay(_) => simple(&mut send, &mut out, 200, None, head_only, c).await,
        Route::Status(code) => simple(&mut send, &mut out, code, None, head_only, c).await,
        Route::NotFound => simple(&mut send, &mut out, 404, None, head_only, c).await,
        Route::BadParam(why) => simple(&mut send, &mut out, 400, Some(why), head_only, c).await,
    };
    if done.is_ok() {
        let _ = send.finish();
        // The stream ends once the client has what was sent (or the connection ends).
        let _ = send.stopped().await;
    }
}

/// Reads until the request's HEADERS frame; its `:method` and `:path`.
async fn read_head(
    recv: &mut RecvStream,
    reader: &mut FrameReader,
    c: &Counters,
) -> Result<Head, Gone> {
    let (mut head, mut bad, mut early) = (None, false, Vec::new());
    while head.is_none() {
        let chunk = match recv.read_chunk(usize::MAX, true).await {
            Ok(Some(chunk)) => chunk.bytes,
            Ok(None) => return Err(Gone::Malformed),
            Err(_) => return Err(Gone::Peer),
        };
        c.bytes_in.fetch_add(chunk.len() as u64, Ordering::Relaxed);
        let fed = reader.feed(&chunk, |event| match event {
            Event::Headers(section) if head.is_none() => {
                let (mut method, mut path) = (None, None);
                let ok = qpack::decode(section, |name, value| match name {
                    b":method" => method = Some(String::from_utf8_lossy(value).into_owned()),
                    b":path" => path = Some(String::from_utf8_lossy(value).into_owned()),
                    _ => {}
                });
                match (ok, method, path) {
                    (Ok(()), Some(method), Some(path)) => {
                        head = Some(Head {
                            method,
                            path,
                            early: Vec::new(),
                        })
                    }
                    _ => bad = true,
                }
            }
            // A body after the head is read by the route that wants it (echo); a DATA frame
            // before it, or a second head, breaks the protocol.
            Event::Data(_) if head.is_none() => bad = true,
            Event::Data(d) => frame::put_frame(&mut early, frame::DATA, d),
            _ => {}
        });
        if fed.is_err() || bad {
            return Err(Gone::Malformed);
        }
    }
    let mut head = head.ok_or(Gone::Malformed)?;
    head.early = early;
    Ok(head)
}

/// Writes a response head: `status`, and a Content-Length and type unless `length` is None.
fn put_head(out: &mut Vec<u8>, status: u16, length: Option<(u64, &str)>) {
    let mut section = Vec::with_capacity(64);
    qpack::put_prefix(&mut section);
    let mut digits = Vec::new();
    crate::serve::http::response::push_u64(&mut digits, u64::from(status));
    qpack::put_field(&mut section, b":status", &digits);
    qpack::put_field(&mut section, b"server", b"wirebench");
    if let Some((len, ty)) = length {
        digits.clear();
        crate::serve::http::response::push_u64(&mut digits, len);
        qpack::put_field(&mut section, b"content-length", &digits);
        qpack::put_field(&mut section, b"content-type", ty.as_bytes());
    }
    crate::wire::h3::put_headers(out, &section);
}

async fn write(send: &mut SendStream, out: &[u8], c: &Counters) -> Result<(), Gone> {
    send.write_all(out).await.map_err(|_| Gone::Peer)?;
    c.bytes_out.fetch_add(out.len() as u64, Ordering::Relaxed);
    Ok(())
}

/// A response with the short text body `CODE Reason[: why]\n` (none for 204 and 304).
async fn simple(
    send: &mut SendStream,
    out: &mut Vec<u8>,
    status: u16,
    why: Option<&str>,
    head_only: bool,
    c: &Counters,
) -> Result<(), Gone> {
    c.status(status);
    let mut body = Vec::new();
    if !bodiless(status) {
        text(&mut body, status, why);
    }
    out.clear();
    put_head(out, status, Some((body.len() as u64, "text/plain")));
    if !head_only && !body.is_empty() {
        frame::put_frame(out, frame::DATA, &body);
    }
    write(send, out, c).await
}

/// `/bytes/N`: N bytes cut from one shared block, handed to QUIC without copies.
async fn bytes(
    send: &mut SendStream,
    out: &mut Vec<u8>,
    n: u64,
    head_only: bool,
    c: &Counters,
) -> Result<(), Gone> {
    c.status(200);
    out.clear();
    put_head(out, 200, Some((n, OCTETS)));
    if head_only || n == 0 {
        return write(send, out, c).await;
    }
    frame::put_head(out, frame::DATA, n);
    write(send, out, c).await?;
    static ZEROS: [u8; BLOCK] = [b'x'; BLOCK];
    let block = Bytes::from_static(&ZEROS);
    let mut left = n;
    while left > 0 {
        let take = left.min(BLOCK as u64) as usize;
        send.write_chunk(block.slice(..take))
            .await
            .map_err(|_| Gone::Peer)?;
        c.bytes_out.fetch_add(take as u64, Ordering::Relaxed);
        left -= take as u64;
    }
    Ok(())
}

/// `POST|PUT /echo`: the body back as it arrives, one DATA frame per piece read.
async fn echo(
    send: &mut SendStream,
    recv: &mut RecvStream,
    reader: &mut FrameReader,
    early: &[u8],
    c: &Counters,
) -> Result<(), Gone> {
    c.status(200);
    let mut out = Vec::new();
    put_head(&mut out, 200, None);
    out.extend_from_slice(early);
    write(send, &out, c).await?;
    loop {
        let chunk = match recv.read_chunk(usize::MAX, true).await {
            Ok(Some(chunk)) => chunk.bytes,
            Ok(None) => return Ok(()),
            Err(_) => return Err(Gone::Peer),
        };
        c.bytes_in.fetch_add(chunk.len() as u64, Ordering::Relaxed);
        out.clear();
        let fed = reader.feed(&chunk, |event| {
            if let Event::Data(d) = event {
                frame::put_frame(&mut out, frame::DATA, d);
            }
        });
        if fed.is_err() {
            return Err(Gone::Malformed);
        }
        if !out.is_empty() {
            write(send, &out, c).await?;
        }
    }
}

/// A file under `--dir`, read in blocks.
async fn serve_file(
    send: &mut SendStream,
    out: &mut Vec<u8>,
    served: file::Served,
    head_only: bool,
    c: &Counters,
) -> Result<(), Gone> {
    c.status(200);
    out.clear();
    let ty = served.content_type;
    put_head(out, 200, Some((served.len, ty)));
    if head_only || served.len == 0 {
        return write(send, out, c).await;
    }
    frame::put_head(out, frame::DATA, served.len);
    write(send, out, c).await?;
    let (mut file, mut left) = (served.file, served.len);
    let mut buf = vec![0u8; BLOCK];
    while left > 0 {
        let want = left.min(BLOCK as u64) as usize;
        let n = match file.read(&mut buf[..want]) {
            Ok(0) | Err(_) => {
                // The file shrank: the response cannot be whole.
                let _ = send.reset(VarInt::from_u32(0x102));
                return Err(Gone::Peer);
            }
            Ok(n) => n,
        };
        write(send, &buf[..n], c).await?;
        left -= n as u64;
    }
    Ok(())
}
