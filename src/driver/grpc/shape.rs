//! What every call of a run sends: its head (the method's path, gRPC's headers, the metadata,
//! `grpc-timeout`) and its request message, made once when nothing in them is templated, else
//! rendered per call from the templates and encoded through the method's types.

use crate::driver::http::template::{Rng, Template, Vars};
use crate::driver::Failure;
use crate::record::ErrorKind;
use bytes::Bytes;
use http::{HeaderMap, HeaderName, HeaderValue, Uri};
use prost_reflect::MessageDescriptor;
use std::time::Duration;

/// The request message.
#[derive(Debug)]
pub enum Message {
    /// Encoded and framed once.
    Fixed(Bytes),
    /// JSON rendered per call, then encoded as this type.
    Template(Template, MessageDescriptor),
}

/// What every call of a run sends.
#[derive(Debug)]
pub struct CallShape {
    /// `http://HOST:PORT/package.Service/Method` (https for grpcs).
    pub uri: Uri,
    /// gRPC's headers and the fixed metadata.
    pub headers: HeaderMap,
    /// Metadata with placeholders: each renders a whole `key: value` line.
    pub metadata: Vec<Template>,
    pub message: Message,
    /// Messages each call sends (1 but for client streaming) and the pause between them.
    pub client_stream: (u64, Duration),
    /// The run's seed, for the templates' draws.
    pub seed: u64,
}

/// A call made from the shape, or why it could not be.
#[allow(
    clippy::large_enum_variant,
    reason = "made and used at once, never stored"
)]
pub enum Made {
    /// Its head and its framed request message.
    Call(http::Request<()>, Bytes),
    /// A template rendered something the call cannot carry; the call fails alone.
    Failed(Failure),
}

const BAD_JSON: Failure = Failure {
    kind: ErrorKind::Other,
    what: "gRPC: --data rendered JSON that does not fit the request message",
    code: None,
};
const BAD_METADATA: Failure = Failure {
    kind: ErrorKind::Other,
    what: "gRPC: --metadata rendered a value HTTP/2 cannot carry",
    code: None,
};

/// A `key: value` line split into a header, checked; None if it is none.
pub fn header_of(line: &[u8]) -> Option<(HeaderName, HeaderValue)> {
    let at = line.iter().position(|&b| b == b':')?;
    let name = HeaderName::from_bytes(line[..at].trim_ascii()).ok()?;
    let value = HeaderValue::from_bytes(line[at + 1..].trim_ascii()).ok()?;
    Some((name, value))
}

impl CallShape {
    /// Call number `unique` (a run-wide number, its `{seq}`) of worker `worker`.
    pub fn make(&self, unique: u64, worker: usize) -> Made {
        let mut req = http::Request::new(());
        *req.method_mut() = http::Method::POST;
        *req.version_mut() = http::Version::HTTP_2;
        *req.uri_mut() = self.uri.clone();
        *req.headers_mut() = self.headers.clone();
        let templated = !self.metadata.is_empty() || matches!(self.message, Message::Template(..));
        if !templated {
            if let Message::Fixed(b) = &self.message {
                return Made::Call(req, b.clone());
            }
        }
        // The call's own draws, from the seed and its number alone (as HTTP's).
        let mut rng = Rng::nth(self.seed, unique);
        let mut vars = Vars {
            seq: unique,
            worker,
            rng: &mut rng,
        };
        let mut line = Vec::new();
        for m in &self.metadata {
            line.clear();
            m.render(&mut vars, &mut line);
            match header_of(&line) {
                Some((k, v)) => {
                    req.headers_mut().append(k, v);
                }
                None => return Made::Failed(BAD_METADATA),
            }
        }
        let body = match &self.message {
            Message::Fixed(b) => b.clone(),
            Message::Template(t, desc) => {
                line.clear();
                t.render(&mut vars, &mut line);
                let Ok(json) = std::str::from_utf8(&line) else {
                    return Made::Failed(BAD_JSON);
                };
                match super::schema::encode(desc, json) {
                    Ok(msg) => {
                        let mut framed = Vec::with_capacity(msg.len() + 5);
                        crate::wire::grpc::frame(&msg, &mut framed);
                        Bytes::from(framed)
                    }
                    Err(_) => return Made::Failed(BAD_JSON),
                }
            }
        };
        Made::Call(req, body)
    }
}
