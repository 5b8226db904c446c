//! What an HTTP workload is: the requests (method, path, headers and body as templates), the
//! statuses that count as success, keep-alive and the version. The plan builds it from the
//! command line; the HTTP/1.1 and HTTP/2 drivers read it.

use super::template::{Rng, Template};
use std::sync::Arc;

/// Everything an HTTP session needs to build requests and judge replies.
#[derive(Clone, Debug)]
pub struct HttpSpec {
    /// The requests, used in turn (one unless `--targets` gives more), or one per kind of a mix.
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
    /// HTTP/3 over QUIC (`--http3`) instead of HTTP/1.1.
    pub http3: bool,
    /// The run's seed: request `n`'s random placeholders are drawn from it and `n` alone.
    pub seed: u64,
    /// A weighted mix of the requests (`--mix`): each request of the kind drawn for it, not
    /// the requests in turn.
    pub mix: Option<Mix>,
    /// The file set `{file}` draws from (`--manifest`, `--dataset`, `--popularity`).
    pub files: Option<Arc<crate::driver::files::FileSet>>,
}

/// A weighted mix of request kinds (`--mix`, a plan file's `[mix.NAME]`): request `n` is of
/// the kind drawn from the run's seed and `n` alone, each kind with its weight's share.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mix {
    /// The kinds' names, in the order of [`HttpSpec::requests`].
    pub names: Vec<String>,
    /// Their weights, each at least 1.
    pub weights: Vec<u64>,
}

/// The stream of the run's seed that a mix's choices are drawn from (apart from the keys).
const MIX_STREAM: u64 = 0x006d_6978;

impl Mix {
    /// The kind (an index into the names) of request `n`.
    pub fn pick(&self, seed: u64, n: u64) -> usize {
        let total: u64 = self.weights.iter().sum();
        let mut x = Rng::nth(crate::random::mix(seed, MIX_STREAM), n).below(total);
        for (i, &w) in self.weights.iter().enumerate() {
            if x < w {
                return i;
            }
            x -= w;
        }
        self.weights.len() - 1
    }
}

impl HttpSpec {
    /// The request to send as the run's `n`-th (its `{seq}`), and its kind in the mix: 1 for
    /// the first kind, 0 without a mix (then the requests are used in turn).
    pub fn choose(&self, n: u64) -> (&HttpRequest, u8) {
        match &self.mix {
            None => (&self.requests[(n % self.requests.len() as u64) as usize], 0),
            Some(m) => {
                let i = m.pick(self.seed, n);
                (&self.requests[i], (i + 1) as u8)
            }
        }
    }

    /// Whether any request draws random numbers (so the run's seed matters).
    pub fn is_random(&self) -> bool {
        self.requests.iter().any(|r| {
            r.path.is_random()
                || r.headers.iter().any(Template::is_random)
                || matches!(&r.body, Some(Body::Template(t)) if t.is_random())
        }) || self.mix.is_some()
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
    /// Bit c set: class cxx (1 to 5); a mask, as it is asked of every reply.
    classes: u8,
    codes: Vec<u16>,
}

/// An `--accept` item that is no status or class of statuses.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("--accept: '{0}' is not a status or class; write e.g. 2xx,3xx or 200,204")]
pub struct AcceptError(pub String);

impl Accept {
    /// Whether `code` counts as success.
    pub fn accepts(&self, code: u16) -> bool {
        let class = code / 100;
        (class < 8 && self.classes & (1 << class) != 0) || self.codes.contains(&code)
    }

    /// Parses `2xx,3xx` or `200,204` (or a mix).
    pub fn parse(text: &str) -> Result<Accept, AcceptError> {
        let (mut classes, mut codes) = (0u8, Vec::new());
        for item in text.split(',').map(str::trim) {
            let bad = || AcceptError(item.into());
            if let Some(c) = item.strip_suffix("xx") {
                let c: u16 = c.parse().map_err(|_| bad())?;
                if !(1..=5).contains(&c) {
                    return Err(bad());
                }
                classes |= 1u8 << c;
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

impl crate::driver::workload::Spec for HttpSpec {
    fn is_random(&self) -> bool {
        HttpSpec::is_random(self)
    }

    fn describe(&self, exchange: &mut crate::record::exchange::Exchange) {
        use crate::record::exchange::{FileSetFacts, HttpFacts, MixFacts};
        let first = &self.requests[0];
        let one_method = self.requests.iter().all(|r| r.method == first.method);
        exchange.http = Some(HttpFacts {
            // Several requests in turn (`--targets`): their methods are in `path`'s list.
            method: if one_method {
                first.method.clone()
            } else {
                "mixed".into()
            },
            path: self.path_text.clone(),
            requests: self.requests.len(),
            keepalive: self.keepalive,
            version: match (self.http2, self.http3) {
                (_, true) => "3",
                (true, _) => "2",
                _ => "1.1",
            },
        });
        exchange.mix = self.mix.as_ref().map(|m| MixFacts {
            names: m.names.clone(),
            weights: m.weights.clone(),
        });
        exchange.files = self.files.as_deref().map(|f| FileSetFacts {
            bytes: f.bytes,
            files: f.files,
            popularity: f.popularity.text(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mix_draws_each_kind_at_its_weight() {
        let mix = Mix {
            names: vec!["resolve".into(), "create".into(), "delete".into()],
            weights: vec![80, 19, 1],
        };
        let mut counts = [0u64; 3];
        for n in 0..100_000 {
            counts[mix.pick(5, n)] += 1;
        }
        // 80,000 / 19,000 / 1,000 expected: binomial sd 126, 124, 31.
        assert!((79_500..80_500).contains(&counts[0]), "{counts:?}");
        assert!((18_500..19_500).contains(&counts[1]), "{counts:?}");
        assert!((880..1120).contains(&counts[2]), "{counts:?}");
        // The same seed, the same kinds; request n's kind does not depend on the others.
        assert_eq!(mix.pick(5, 77), mix.pick(5, 77));
        let other: Vec<usize> = (0..64).map(|n| mix.pick(6, n)).collect();
        assert_ne!(other, (0..64).map(|n| mix.pick(5, n)).collect::<Vec<_>>());
    }
}
