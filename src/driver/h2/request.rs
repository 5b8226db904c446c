//! HTTP/2 requests from the run's templates. What does not change is built once per worker
//! (method, URI, header names and values, a file body, its length), so a request without
//! placeholders costs clones of shared buffers; what does change is rendered per request.

use crate::driver::http::spec::{Body, HttpRequest, HttpSpec};
use crate::driver::http::template::{Rng, Template, Vars};
use bytes::Bytes;
use http::header::{HeaderName, HeaderValue, CONTENT_LENGTH};
use http::uri::{Authority, PathAndQuery, Scheme, Uri};
use http::uri::{InvalidUri, InvalidUriParts};
use http::{Method, Request, Version};
use std::sync::Arc;

/// A request HTTP/2 cannot carry, found at plan time (bad input).
#[derive(Debug, thiserror::Error)]
pub enum RequestError {
    /// `-X` that is no method.
    #[error("-X {0}: not an HTTP method")]
    Method(String),
    /// A host that is no `:authority`.
    #[error("'{0}' is not a valid :authority ({1})")]
    Authority(String, InvalidUri),
    /// `-H` whose name HTTP/2 does not take.
    #[error("-H '{0}': not an HTTP/2 header name")]
    HeaderName(String),
    /// `-H` whose value is not a header value.
    #[error("-H '{0}': not a valid header value")]
    HeaderValue(String),
    /// `-H Host:` that is no host.
    #[error("-H '{0}': not a valid host")]
    Host(String),
    /// A path HTTP/2 does not take.
    #[error("the path is not valid for HTTP/2 ({0})")]
    Path(InvalidUri),
    /// Scheme, authority and path that make no URI.
    #[error("not a valid URI ({0})")]
    Uri(InvalidUriParts),
}

/// A request, rendered (encoded into a header block by [`Shapes::encode`]), and its body.
pub(crate) type Rendered = (Request<()>, Option<Bytes>);

/// Something fixed for the run, or a template rendered per request.
#[derive(Debug)]
enum Part<T> {
    Fixed(T),
    Template(Template),
}

/// One request shape (`--targets` gives several), prepared for HTTP/2.
#[derive(Debug)]
struct Shape {
    method: Method,
    scheme: Scheme,
    /// `:authority`: the URL's host, or the value of a `-H Host:` header (its template is the
    /// whole `Host: value` line).
    authority: Part<Authority>,
    path: Part<PathAndQuery>,
    /// The whole URI when neither authority nor path has placeholders.
    uri: Option<Uri>,
    /// Header fields; a template renders the whole `Name: value` line.
    headers: Vec<(HeaderName, Part<HeaderValue>)>,
    /// The body and, when fixed, its Content-Length.
    body: Option<(Option<HeaderValue>, Part<Bytes>)>,
    /// When nothing is templated: the HPACK header block, encoded once, and the body.
    block: Option<(Vec<u8>, Option<Bytes>)>,
}

/// The run's request shapes, prepared once per worker.
#[derive(Debug)]
pub(crate) struct Shapes(Vec<Shape>);

/// A file body shared with the plan, not copied per worker.
struct Shared(Arc<Vec<u8>>);

impl AsRef<[u8]> for Shared {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

/// The value of a rendered `Name: value` line.
fn value_of(line: &[u8]) -> &[u8] {
    let at = line.iter().position(|&b| b == b':').map_or(0, |i| i + 1);
    line[at..].trim_ascii()
}

/// Renders a template with placeholder values that only serve to check its syntax.
fn sample(t: &Template) -> Vec<u8> {
    let mut rng = Rng::new();
    let mut out = Vec::new();
    t.render(
        &mut Vars {
            seq: 0,
            worker: 0,
            rng: &mut rng,
        },
        &mut out,
    );
    out
}

impl Shapes {
    /// Prepares every request of `spec`; an error names what HTTP/2 cannot carry.
    pub(crate) fn new(spec: &HttpSpec, https: bool) -> Result<Shapes, RequestError> {
        spec.requests
            .iter()
            .map(|r| Shape::new(r, &spec.host, https))
            .collect::<Result<Vec<_>, _>>()
            .map(Shapes)
    }

    /// How many shapes there are (request `seq` has shape `seq % count`).
    pub(crate) fn count(&self) -> usize {
        self.0.len()
    }

    /// Whether shape `i` renders the same request every time (no placeholder anywhere), so a
    /// protocol may encode it once.
    pub(crate) fn is_fixed(&self, i: usize) -> bool {
        self.0[i].block.is_some()
    }

    /// Renders the request with unique number `vars.seq`; None if a placeholder produced
    /// something HTTP/2 cannot carry (never for the placeholders wirebench has).
    pub(crate) fn render(&self, vars: &mut Vars<'_>, scratch: &mut Vec<u8>) -> Option<Rendered> {
        let shape = &self.0[(vars.seq % self.0.len() as u64) as usize];
        shape.render(vars, scratch)
    }

    /// Appends the HPACK header block of the request with unique number `vars.seq` to `out`
    /// (for the framing layer) and returns its body; None as for [`Shapes::render`]. A shape
    /// without placeholders costs a copy of its block, encoded once.
    pub(super) fn encode(
        &self,
        vars: &mut Vars<'_>,
        scratch: &mut Vec<u8>,
        out: &mut Vec<u8>,
    ) -> Option<Option<Bytes>> {
        let shape = &self.0[(vars.seq % self.0.len() as u64) as usize];
        if let Some((block, body)) = &shape.block {
            out.extend_from_slice(block);
            return Some(body.clone());
        }
        let (req, body) = shape.render(vars, scratch)?;
        encode(&req, out);
        Some(body)
    }
}

/// Appends the header block of `req`: the pseudo-header fields as h2 sends them for an
/// HTTP/2 request (RFC 9113 §8.3.1), then the header fields.
fn encode(req: &Request<()>, out: &mut Vec<u8>) {
    fields(req, |name, value| {
        super::framing::put_field(out, name, value)
    });
}

/// Hands each field of `req` to `put` as (name, value) in the order HTTP/2 and HTTP/3 send
/// them: the pseudo-header fields (`:method`, `:scheme`, `:authority`, `:path`), then the
/// header fields.
pub(crate) fn fields(req: &Request<()>, mut put: impl FnMut(&[u8], &[u8])) {
    let uri = req.uri();
    put(b":method", req.method().as_str().as_bytes());
    put(b":scheme", uri.scheme_str().unwrap_or("http").as_bytes());
    if let Some(a) = uri.authority() {
        put(b":authority", a.as_str().as_bytes());
    }
    let path = uri.path_and_query().map_or("/", |p| p.as_str());
    put(
        b":path",
        if path.is_empty() {
            b"/"
        } else {
            path.as_bytes()
        },
    );
    for (name, value) in req.headers() {
        put(name.as_str().as_bytes(), value.as_bytes());
    }
}

impl Shape {
    fn new(r: &HttpRequest, host: &str, https: bool) -> Result<Shape, RequestError> {
        let method = Method::from_bytes(r.method.as_bytes())
            .map_err(|_| RequestError::Method(r.method.clone()))?;
        let mut authority = Part::Fixed(
            Authority::try_from(host).map_err(|e| RequestError::Authority(host.into(), e))?,
        );
        let headers = headers(r, &mut authority)?;
        let path = path(&r.path)?;
        let scheme = if https { Scheme::HTTPS } else { Scheme::HTTP };
        let uri = match (&authority, &path) {
            (Part::Fixed(a), Part::Fixed(p)) => Some(uri(&scheme, a.clone(), p.clone())?),
            _ => None,
        };
        let mut shape = Shape {
            method,
            scheme,
            authority,
            path,
            uri,
            headers,
            body: body(r.body.as_ref()),
            block: None,
        };
        let fixed = shape.uri.is_some()
            && shape
                .headers
                .iter()
                .all(|(_, v)| matches!(v, Part::Fixed(_)))
            && !matches!(shape.body, Some((_, Part::Template(_))));
        if fixed {
            let mut rng = Rng::new();
            let mut vars = Vars {
                seq: 0,
                worker: 0,
                rng: &mut rng,
            };
            if let Some((req, body)) = shape.render(&mut vars, &mut Vec::new()) {
                let mut block = Vec::new();
                encode(&req, &mut block);
                shape.block = Some((block, body));
            }
        }
        Ok(shape)
    }

    fn render(&self, vars: &mut Vars<'_>, scratch: &mut Vec<u8>) -> Option<Rendered> {
        let mut req = Request::new(());
        *req.method_mut() = self.method.clone();
        // Version 2 makes h2 send :authority and :scheme, not a Host header.
        *req.version_mut() = Version::HTTP_2;
        *req.uri_mut() = match &self.uri {
            Some(u) => u.clone(),
            None => {
                let path = match &self.path {
                    Part::Fixed(p) => p.clone(),
                    Part::Template(t) => {
                        scratch.clear();
                        t.render(vars, scratch);
                        PathAndQuery::from_maybe_shared(Bytes::copy_from_slice(scratch)).ok()?
                    }
                };
                let authority = match &self.authority {
                    Part::Fixed(a) => a.clone(),
                    Part::Template(t) => {
                        scratch.clear();
                        t.render(vars, scratch);
                        Authority::try_from(value_of(scratch)).ok()?
                    }
                };
                uri(&self.scheme, authority, path).ok()?
            }
        };
        if self.headers.is_empty() && self.body.is_none() {
            return Some((req, None));
        }
        let map = req.headers_mut();
        map.reserve(self.headers.len() + 1);
        for (name, value) in &self.headers {
            let value = match value {
                Part::Fixed(v) => v.clone(),
                Part::Template(t) => {
                    scratch.clear();
                    t.render(vars, scratch);
                    HeaderValue::from_bytes(value_of(scratch)).ok()?
                }
            };
            map.append(name.clone(), value);
        }
        let body = match &self.body {
            None => None,
            Some((length, Part::Fixed(b))) => {
                if let Some(l) = length {
                    map.insert(CONTENT_LENGTH, l.clone());
                }
                Some(b.clone())
            }
            Some((_, Part::Template(t))) => {
                scratch.clear();
                t.render(vars, scratch);
                map.insert(CONTENT_LENGTH, HeaderValue::from(scratch.len()));
                Some(Bytes::copy_from_slice(scratch))
            }
        };
        Some((req, body))
    }
}

/// The header fields of `r`, checked for HTTP/2. A `-H Host:` header is no field: it sets
/// `authority` instead (HTTP/2 carries the host as :authority, RFC 9113 §8.3.1).
fn headers(
    r: &HttpRequest,
    authority: &mut Part<Authority>,
) -> Result<Vec<(HeaderName, Part<HeaderValue>)>, RequestError> {
    let mut headers = Vec::new();
    for h in &r.headers {
        let line = sample(h);
        let text = String::from_utf8_lossy(&line).into_owned();
        let name = line.split(|&b| b == b':').next().unwrap_or_default();
        let name = HeaderName::from_bytes(name.trim_ascii())
            .map_err(|_| RequestError::HeaderName(text.clone()))?;
        let value = HeaderValue::from_bytes(value_of(&line))
            .map_err(|_| RequestError::HeaderValue(text.clone()))?;
        if name == http::header::HOST {
            let a = Authority::try_from(value_of(&line))
                .map_err(|_| RequestError::Host(text.clone()))?;
            *authority = match h.is_literal() {
                true => Part::Fixed(a),
                false => Part::Template(h.clone()),
            };
            continue;
        }
        let value = match h.is_literal() {
            true => Part::Fixed(value),
            false => Part::Template(h.clone()),
        };
        headers.push((name, value));
    }
    Ok(headers)
}

/// The request path, checked for HTTP/2 (a template by a sample rendering).
fn path(path: &Template) -> Result<Part<PathAndQuery>, RequestError> {
    let bad = RequestError::Path;
    if path.is_literal() {
        let fixed = PathAndQuery::from_maybe_shared(Bytes::from(sample(path))).map_err(bad)?;
        return Ok(Part::Fixed(fixed));
    }
    PathAndQuery::try_from(sample(path).as_slice()).map_err(bad)?;
    Ok(Part::Template(path.clone()))
}

/// The body and, when it is fixed, its Content-Length.
fn body(body: Option<&Body>) -> Option<(Option<HeaderValue>, Part<Bytes>)> {
    let fixed = |b: Bytes| (Some(HeaderValue::from(b.len())), Part::Fixed(b));
    match body? {
        Body::Bytes(b) => Some(fixed(Bytes::from_owner(Shared(b.clone())))),
        Body::Template(t) if t.is_literal() => Some(fixed(Bytes::from(sample(t)))),
        Body::Template(t) => Some((None, Part::Template(t.clone()))),
    }
}

fn uri(scheme: &Scheme, authority: Authority, path: PathAndQuery) -> Result<Uri, RequestError> {
    let mut parts = http::uri::Parts::default();
    parts.scheme = Some(scheme.clone());
    parts.authority = Some(authority);
    parts.path_and_query = Some(path);
    Uri::from_parts(parts).map_err(RequestError::Uri)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::http::flags::{FileSetArgs, HttpArgs};
    use crate::driver::http::plan;
    use clap::Parser;

    /// HTTP's own flags alone, parsed as `run` parses them.
    #[derive(Parser)]
    struct Flags {
        #[command(flatten)]
        http: HttpArgs,
    }

    /// The shapes of the request a run of `url` with HTTP's `flags` sends, built as the plan
    /// builds them (the driver's own plan step; no command line).
    fn shapes(url: &str, flags: &[&str]) -> Shapes {
        let target = crate::driver::url::parse_target(url).unwrap();
        let argv = std::iter::once(&"wirebench").chain(flags);
        let http = Flags::try_parse_from(argv).unwrap().http;
        let file_set = FileSetArgs::default();
        let args = plan::Args {
            http: &http,
            file_set: &file_set,
            seed: 1,
        };
        Shapes::new(&plan::spec(&args, &target).unwrap(), target.tls()).unwrap()
    }

    fn render(s: &Shapes, seq: u64) -> Rendered {
        let mut rng = Rng::new();
        let mut vars = Vars {
            seq,
            worker: 1,
            rng: &mut rng,
        };
        s.render(&mut vars, &mut Vec::new()).unwrap()
    }

    #[test]
    fn fixed_and_templated_parts() {
        let s = shapes(
            "http://127.0.0.1:9/a/{seq}?w={worker}",
            &[
                "--http2",
                "-H",
                "X-Id: {seq}",
                "-H",
                "Accept: text/plain",
                "--body",
                "n={seq}",
            ],
        );
        let (req, body) = render(&s, 42);
        assert_eq!(req.version(), Version::HTTP_2);
        assert_eq!(req.method(), Method::POST);
        assert_eq!(req.uri().to_string(), "http://127.0.0.1:9/a/42?w=1");
        assert_eq!(req.headers()["x-id"], "42");
        assert_eq!(req.headers()["accept"], "text/plain");
        assert_eq!(req.headers()["content-length"], "4");
        assert_eq!(body.unwrap(), "n=42");
    }

    #[test]
    fn a_host_header_becomes_the_authority() {
        let s = shapes(
            "https://127.0.0.1:9/",
            &["--http2", "-H", "Host: example.org"],
        );
        let (req, body) = render(&s, 0);
        assert_eq!(req.uri().to_string(), "https://example.org/");
        assert!(req.headers().get("host").is_none() && body.is_none());
    }
}
