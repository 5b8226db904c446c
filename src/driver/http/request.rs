//! Rendering an HTTP/1.1 request from its templates, and the request rendered once when every
//! request of a run is the same bytes.

use super::spec::{Body, HttpSpec};
use super::template::{Rng, Vars};
use std::sync::Arc;

/// Renders request `vars.seq` of `spec` onto `out` (`body`: scratch space for a templated
/// body); returns its kind in the mix (0: none) and its body's length.
pub(super) fn render_request(
    spec: &HttpSpec,
    vars: &mut Vars<'_>,
    out: &mut Vec<u8>,
    scratch: &mut Vec<u8>,
) -> (u8, usize) {
    let (req, kind) = spec.choose(vars.seq);
    out.extend_from_slice(req.method.as_bytes());
    out.push(b' ');
    req.path.render(vars, out);
    out.extend_from_slice(b" HTTP/1.1\r\n");
    if !req.has_host {
        out.extend_from_slice(b"Host: ");
        out.extend_from_slice(spec.host.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    for h in &req.headers {
        h.render(vars, out);
        out.extend_from_slice(b"\r\n");
    }
    if !spec.keepalive {
        out.extend_from_slice(b"Connection: close\r\n");
    }
    let body: &[u8] = match &req.body {
        None => &[],
        Some(Body::Bytes(b)) => b,
        Some(Body::Template(t)) => {
            scratch.clear();
            t.render(vars, scratch);
            scratch
        }
    };
    if req.body.is_some() {
        use std::io::Write;
        let _ = write!(out, "Content-Length: {}\r\n", body.len());
    }
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(body);
    (kind, body.len())
}

/// A request that is the same every time, rendered once for the driver: its bytes, its body's
/// length and whether it is a HEAD.
#[derive(Debug)]
pub(super) struct Fixed {
    /// The request as sent.
    pub(super) bytes: Box<[u8]>,
    /// Its body's length.
    pub(super) body: usize,
    /// Whether it is a HEAD (no body in the reply).
    pub(super) head: bool,
}

/// The largest request kept rendered ([`Fixed`]), so a big file body is not held twice.
const FIXED_MAX: usize = 16 * 1024;

impl Fixed {
    /// The request of `spec` when every request is the same bytes: one request, no mix, and no
    /// placeholder in its path, headers or body. Rendering it per request was ~250 of the
    /// client's instructions per request (callgrind, GET against nginx).
    pub(super) fn of(spec: &HttpSpec) -> Option<Arc<Fixed>> {
        let [req] = &spec.requests[..] else {
            return None;
        };
        let literal = req.path.is_literal()
            && req.headers.iter().all(|h| h.is_literal())
            && match &req.body {
                None | Some(Body::Bytes(_)) => true,
                Some(Body::Template(t)) => t.is_literal(),
            };
        if spec.mix.is_some() || !literal {
            return None;
        }
        let mut rng = Rng::nth(spec.seed, 0);
        let mut vars = Vars {
            seq: 0,
            worker: 0,
            rng: &mut rng,
        };
        let (mut out, mut scratch) = (Vec::new(), Vec::new());
        let (_, body) = render_request(spec, &mut vars, &mut out, &mut scratch);
        (out.len() <= FIXED_MAX).then(|| {
            Arc::new(Fixed {
                head: out.starts_with(b"HEAD "),
                bytes: out.into_boxed_slice(),
                body,
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::http::spec::{Accept, HttpRequest, Mix};
    use crate::driver::http::template::Template;

    fn spec(path: &str, body: Option<&str>) -> HttpSpec {
        HttpSpec {
            requests: vec![HttpRequest {
                method: "POST".into(),
                path: Template::parse("url", path).unwrap(),
                headers: vec![Template::parse("-H", "X-A: b").unwrap()],
                has_host: false,
                body: body.map(|b| Body::Template(Template::parse("--body", b).unwrap())),
            }],
            host: "h:1".into(),
            accept: Accept::parse("2xx").unwrap(),
            keepalive: true,
            path_text: path.into(),
            http2: false,
            http3: false,
            seed: 1,
            mix: None,
            files: None,
        }
    }

    #[test]
    fn only_a_request_without_placeholders_is_rendered_once() {
        let f = Fixed::of(&spec("/a", Some("hi"))).expect("a literal request");
        let want = "POST /a HTTP/1.1\r\nHost: h:1\r\nX-A: b\r\nContent-Length: 2\r\n\r\nhi";
        assert_eq!(std::str::from_utf8(&f.bytes).unwrap(), want);
        assert_eq!((f.body, f.head), (2, false));
        assert!(Fixed::of(&spec("/a/{seq}", None)).is_none());
        assert!(Fixed::of(&spec("/a", Some("{rand:9}"))).is_none());
        let mut mixed = spec("/a", None);
        mixed.mix = Some(Mix {
            names: vec!["a".into()],
            weights: vec![1],
        });
        assert!(Fixed::of(&mixed).is_none());
        let mut two = spec("/a", None);
        two.requests.push(two.requests[0].clone());
        assert!(Fixed::of(&two).is_none());
        let big = "x".repeat(FIXED_MAX);
        assert!(Fixed::of(&spec("/a", Some(&big))).is_none());
    }
}
