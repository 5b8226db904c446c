//! HTTP/2 for gRPC: a connection's handshake, a call's request head, and a connection of its
//! own for the few calls made one after another before a run ([`Exchange`]: reflection).

use super::status::status_of;
use crate::driver::h2::io::{Counts, Io};
use crate::driver::stream::Stream;
use crate::record::{ErrorKind, OpError};
use crate::wire::grpc::{self, Deframer};
use bytes::Bytes;
use h2::client::{Connection, SendRequest};
use std::future::{poll_fn, Future};
use std::pin::Pin;
use std::rc::Rc;
use std::time::Duration;

/// Opens HTTP/2 for gRPC on `stream` (TLS must have agreed to `h2`), within `timeout`.
pub(super) async fn handshake(
    stream: Stream,
    counts: Rc<Counts>,
    timeout: Duration,
) -> Result<(SendRequest<Bytes>, Connection<Io, Bytes>), OpError> {
    let io = Io::new(stream, counts)?;
    let shake = h2::client::Builder::new()
        .enable_push(false)
        .initial_window_size(4 << 20)
        .initial_connection_window_size(8 << 20)
        .max_concurrent_reset_streams(1024)
        .handshake::<_, Bytes>(io);
    match tokio::time::timeout(timeout, shake).await {
        Ok(Ok(pair)) => Ok(pair),
        Ok(Err(e)) => Err(OpError::new(
            ErrorKind::Other,
            format!("HTTP/2 handshake: {e}"),
        )),
        Err(_) => Err(OpError::new(
            ErrorKind::Timeout,
            format!("HTTP/2 handshake: no answer within {timeout:?}"),
        )),
    }
}

/// A connection of its own for a few calls made one after another (reflection).
pub struct Exchange {
    send: SendRequest<Bytes>,
    conn: Connection<Io, Bytes>,
    /// `http://HOST:PORT` (or https), the calls' URI without their path.
    base: String,
    timeout: Duration,
}

impl Exchange {
    /// Connects to `addr` (over `tls`, if given) for calls to `base`.
    pub(super) async fn connect(
        addr: std::net::SocketAddr,
        tls: Option<&crate::driver::tls::TlsClient>,
        base: String,
        timeout: Duration,
    ) -> Result<Exchange, String> {
        let options = crate::sys::socket::SocketOptions::default();
        let fail = |e: OpError| e.message;
        let (mut stream, _) = crate::driver::stream::connect_stream(addr, options, timeout, false)
            .await
            .map_err(fail)?;
        if let Some(tls) = tls {
            stream = stream.tls(tls, timeout).await.map_err(fail)?;
        }
        let (send, conn) = handshake(stream, Rc::default(), timeout)
            .await
            .map_err(fail)?;
        Ok(Exchange {
            send,
            conn,
            base,
            timeout,
        })
    }

    /// Calls `path` with one message; its reply messages, or why it failed.
    pub async fn call(&mut self, path: &str, msg: &[u8]) -> Result<Vec<Vec<u8>>, String> {
        let Exchange {
            send,
            conn,
            base,
            timeout,
        } = self;
        let uri = format!("{base}{path}");
        let call = async {
            poll_fn(|cx| send.poll_ready(cx))
                .await
                .map_err(|e| e.to_string())?;
            let head = request_head(&uri, &http::HeaderMap::new())?;
            let (response, mut tx) = send.send_request(head, false).map_err(|e| e.to_string())?;
            let mut framed = Vec::new();
            grpc::frame(msg, &mut framed);
            tx.send_data(Bytes::from(framed), true)
                .map_err(|e| e.to_string())?;
            let response = response.await.map_err(|e| e.to_string())?;
            let (parts, mut body) = response.into_parts();
            if parts.status != 200 {
                return Err(format!("HTTP status {}", parts.status));
            }
            if let Some((code, message)) = status_of(&parts.headers) {
                return Err(format!("{}: {message}", grpc::status_name(code)));
            }
            let mut replies = Vec::new();
            let mut d = Deframer::default();
            while let Some(chunk) = body.data().await {
                let chunk = chunk.map_err(|e| e.to_string())?;
                let _ = body.flow_control().release_capacity(chunk.len());
                d.push(&chunk, |m| replies.push(m.to_vec()))
                    .map_err(|e| e.to_string())?;
            }
            let trailers = body.trailers().await.map_err(|e| e.to_string())?;
            match trailers.as_ref().and_then(status_of) {
                Some((0, _)) => Ok(replies),
                Some((code, message)) => Err(format!("{}: {message}", grpc::status_name(code))),
                None => Err("a reply without grpc-status".into()),
            }
        };
        let drive = poll_fn(|cx| Pin::new(&mut *conn).poll(cx));
        let both = async {
            tokio::select! {
                r = call => r,
                r = drive => Err(match r {
                    Ok(()) => "the server closed the connection".to_string(),
                    Err(e) => e.to_string(),
                }),
            }
        };
        tokio::time::timeout(*timeout, both)
            .await
            .unwrap_or_else(|_| Err(format!("no answer within {timeout:?}")))
    }
}

/// A call's request head: POST to `uri` with gRPC's headers and `extra`.
pub(super) fn request_head(
    uri: &str,
    extra: &http::HeaderMap,
) -> Result<http::Request<()>, String> {
    let mut req = http::Request::builder()
        .method(http::Method::POST)
        .uri(uri)
        .version(http::Version::HTTP_2)
        .body(())
        .map_err(|e| format!("'{uri}' is no valid request URI ({e})"))?;
    let h = req.headers_mut();
    h.insert(
        "content-type",
        http::HeaderValue::from_static("application/grpc"),
    );
    h.insert("te", http::HeaderValue::from_static("trailers"));
    h.insert(
        "user-agent",
        http::HeaderValue::from_static(concat!("wirebench/", env!("CARGO_PKG_VERSION"))),
    );
    for (k, v) in extra {
        h.append(k.clone(), v.clone());
    }
    Ok(req)
}
