//! What an HTTP workload is: the requests (method, path, headers and body as templates), the
//! statuses that count as success, keep-alive and the version. The plan builds it from the
//! command line; the HTTP/1.1 and HTTP/2 drivers read it.

use super::template::Template;
use std::sync::Arc;

/// Everything an HTTP session needs to build requests and judge replies.
#[derive(Clone, Debug)]
pub struct HttpSpec {
    /// The requests, used in turn (one unless `--targets` gives more).
    pub requests: Vec<HttpRequest>,
    /// The `Host` header.
    pub host: String,
    /// Statuses that count as success.
    pub accept: Accept,
    /// Whether connections are kept open between requests.
    pub keepalive: bool,
    /// The URL's path as written, for reports.
    pub path_text: String,
    /// HTTP/2 (`--http2`) instead of HTTP/1.1.
    pub http2: bool,
    /// The run's seed: request `n`'s random placeholders are drawn from it and `n` alone.
    pub seed: u64,
}

impl HttpSpec {
    /// Whether any request draws random numbers (so the run's seed matters).
    pub fn is_random(&self) -> bool {
        self.requests.iter().any(|r| {
            r.path.is_random()
                || r.headers.iter().any(Template::is_random)
                || matches!(&r.body, Some(Body::Template(t)) if t.is_random())
        })
    }
}

/// One request shape.
#[derive(Clone, Debug)]
pub struct HttpRequest {
    /// GET, POST, ...
    pub method: String,
    /// The request target (path and query), templated.
    pub path: Template,
    /// Extra header lines (`Name: value`), templated.
    pub headers: Vec<Template>,
    /// Whether the user set Content-Length or Host themselves.
    pub has_host: bool,
    /// The body, if any.
    pub body: Option<Body>,
}

/// A request body.
#[derive(Clone, Debug)]
pub enum Body {
    /// Text with placeholders, rendered per request.
    Template(Template),
    /// A file's bytes, sent as they are.
    Bytes(Arc<Vec<u8>>),
}

/// Status codes that count as success: any of some classes or exact codes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Accept {
    classes: Vec<u16>,
    codes: Vec<u16>,
}

impl Accept {
    /// Whether `code` counts as success.
    pub fn accepts(&self, code: u16) -> bool {
        self.classes.contains(&(code / 100)) || self.codes.contains(&code)
    }

    /// Parses `2xx,3xx` or `200,204` (or a mix).
    pub fn parse(text: &str) -> Result<Accept, String> {
        let (mut classes, mut codes) = (Vec::new(), Vec::new());
        for item in text.split(',').map(str::trim) {
            let bad = || {
                format!(
                    "--accept: '{item}' is not a status or class; write e.g. 2xx,3xx or 200,204"
                )
            };
            if let Some(c) = item.strip_suffix("xx") {
                let c: u16 = c.parse().map_err(|_| bad())?;
                if !(1..=5).contains(&c) {
                    return Err(bad());
                }
                classes.push(c);
            } else {
                let c: u16 = item.parse().map_err(|_| bad())?;
                if !(100..=599).contains(&c) {
                    return Err(bad());
                }
                codes.push(c);
            }
        }
        Ok(Accept { classes, codes })
    }
}
