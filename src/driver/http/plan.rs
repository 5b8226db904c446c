//! The HTTP part of a plan, from HTTP's flags: method, path, headers and body as templates, the statuses that
//! count as success, keep-alive, and the list of requests from `--targets`.

use super::flags::{FileSetArgs, HttpArgs};
use crate::driver::http::spec::{Accept, Body, HttpRequest, HttpSpec};
use crate::driver::http::template::Template;
use crate::driver::target::{Family, Target};
use crate::error::{usage_of, UsageError};
use std::sync::Arc;

/// What the HTTP part of a plan is built from: the HTTP flags, the file set's, and the run's
/// seed.
pub struct Args<'a> {
    /// `-X`, `-H`, `--body`, `--accept`, `--mix`, `--targets` …
    pub http: &'a HttpArgs,
    /// `--manifest`, `--popularity`, `--dataset`.
    pub file_set: &'a FileSetArgs,
    /// The run's seed (the templates' keys, the mix's draws).
    pub seed: u64,
}

/// Builds the HTTP spec of a run against `target`.
pub fn spec(a: &Args, target: &Target) -> Result<HttpSpec, UsageError> {
    let accept = Accept::parse(a.http.accept.as_deref().unwrap_or("2xx"))
        .map_err(|e| UsageError::flag("--accept", e))?;
    let base = base_request(a, target)?;
    if let Some(mut mix) = super::mix::of(a, &base, target)? {
        let files = super::file_set::bind(a, &mut mix.requests)?;
        return Ok(HttpSpec {
            files: files.clone(),
            requests: mix.requests,
            host: target.host.clone(),
            accept,
            keepalive: !a.http.no_keepalive,
            path_text: with_files(mix.text, &files),
            http2: a.http.http2,
            http3: a.http.http3,
            seed: a.seed,
            mix: Some(mix.mix),
        });
    }
    let (mut requests, path_text) = match &a.http.targets {
        None => (vec![base], target.path.clone()),
        Some(file) => {
            let listed = targets(file, &base, target)?;
            let shown = listed_text(&listed);
            (listed.into_iter().map(|(r, _)| r).collect(), shown)
        }
    };
    let files = super::file_set::bind(a, &mut requests)?;
    Ok(HttpSpec {
        files: files.clone(),
        requests,
        host: target.host.clone(),
        accept,
        keepalive: !a.http.no_keepalive,
        path_text: with_files(path_text, &files),
        http2: a.http.http2,
        http3: a.http.http3,
        seed: a.seed,
        mix: None,
    })
}

/// The request the flags describe (`--method`, `-H`, `--body` and the URL's path), before
/// `--targets` or a mix make others of it.
fn base_request(a: &Args, target: &Target) -> Result<HttpRequest, UsageError> {
    let method = a
        .http
        .method
        .clone()
        .unwrap_or_else(|| if a.http.body.is_some() { "POST" } else { "GET" }.to_string());
    check_method(&method)?;
    let headers = a
        .http
        .headers
        .iter()
        .map(|h| header(h))
        .collect::<Result<Vec<_>, _>>()?;
    if a.http.http2 || a.http.http3 {
        a.http.headers.iter().try_for_each(|h| h2_header(h))?;
    }
    if a.http.http3 && !target.tls() {
        return usage_of(
            &["--http3"],
            format!(
                "--http3 runs over QUIC, which is always TLS: give https:// (e.g. {})",
                target.url.replacen("http://", "https://", 1)
            ),
        );
    }
    let has_host = a.http.headers.iter().any(|h| {
        h.split(':')
            .next()
            .is_some_and(|n| n.trim().eq_ignore_ascii_case("host"))
    });
    let body = a.http.body.as_deref().map(body).transpose()?;
    Ok(HttpRequest {
        method,
        path: Template::parse("URL path", &target.path)
            .map_err(|e| UsageError::target(&target.url, e))?,
        headers,
        has_host,
        body,
    })
}

/// The requests as reports name them, with the file set `{file}` draws from.
fn with_files(text: String, files: &Option<Arc<crate::driver::files::FileSet>>) -> String {
    match files {
        Some(f) => format!("{text} ({})", f.text()),
        None => text,
    }
}

pub(super) fn check_method(m: &str) -> Result<(), UsageError> {
    if m.is_empty() || !m.bytes().all(|b| b.is_ascii_uppercase() || b == b'-') {
        return usage_of(
            &["--method"],
            format!("-X '{m}' is not an HTTP method: use GET, POST, PUT, DELETE, HEAD, ..."),
        );
    }
    Ok(())
}

/// Parses one `-H 'Name: value'`. Messages show it with CR, LF and other controls escaped.
pub(super) fn header(h: &str) -> Result<Template, UsageError> {
    let shown = crate::driver::url::shown(h);
    let Some((name, value)) = h.split_once(':') else {
        return usage_of(
            &["--header"],
            format!("-H '{shown}' is not 'Name: value': write e.g. -H 'Accept: text/plain'"),
        );
    };
    let token = |b: u8| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b);
    if name.is_empty() || !name.bytes().all(token) {
        let name = crate::driver::url::shown(name);
        return usage_of(&["--header"], format!(
            "-H '{shown}': '{name}' is not a header name (letters, digits and -); write e.g. -H 'X-Id: {{seq}}'"
        ));
    }
    if value.contains(|c: char| c.is_control() && c != '\t') {
        return usage_of(&["--header"], format!(
            "-H '{shown}': a header value cannot contain a line break or control character: give each header its own -H"
        ));
    }
    Template::parse("-H", &format!("{name}: {}", value.trim()))
        .map_err(|e| UsageError::flag("--header", e))
}

/// HTTP/2 has no connection-specific header fields (RFC 9113 §8.2.2): a request that carries
/// one is malformed, so it is bad input here rather than an error on every request.
fn h2_header(h: &str) -> Result<(), UsageError> {
    let (name, value) = h.split_once(':').unwrap_or((h, ""));
    let name = name.trim().to_ascii_lowercase();
    let banned = [
        "connection",
        "keep-alive",
        "proxy-connection",
        "transfer-encoding",
        "upgrade",
    ];
    if banned.contains(&name.as_str()) || (name == "te" && value.trim() != "trailers") {
        let h = crate::driver::url::shown(h);
        return usage_of(&["--http2"], format!(
            "-H '{h}': HTTP/2 and HTTP/3 forbid connection-specific headers (Connection, Keep-Alive, Proxy-Connection, Transfer-Encoding, Upgrade, TE other than 'trailers'): leave it out with --http2 or --http3"
        ));
    }
    Ok(())
}

/// Parses `--body TEXT` or `--body @FILE`.
pub(super) fn body(text: &str) -> Result<Body, UsageError> {
    match text.strip_prefix('@') {
        Some(path) => crate::sys::file::read(path, crate::units::MAX_SIZE)
            .map(|b| Body::Bytes(Arc::new(b)))
            .map_err(|e| {
                UsageError::flags(
                    &["--body"],
                    format!("--body @{path}: {e}: check the path, or give a smaller file"),
                )
            }),
        None => Template::parse("--body", text)
            .map(Body::Template)
            .map_err(|e| UsageError::flag("--body", e)),
    }
}

/// The requests of `--targets` as a report names them: `GET /a, POST /b, GET /c, … (12 in
/// all)`, the first three and the count.
fn listed_text(listed: &[(HttpRequest, String)]) -> String {
    let first: Vec<String> = listed
        .iter()
        .take(3)
        .map(|(r, path)| format!("{} {path}", r.method))
        .collect();
    match listed.len() {
        n if n > 3 => format!("{}, … ({n} in all)", first.join(", ")),
        _ => first.join(", "),
    }
}

/// Reads `--targets FILE`: one request per line, `[METHOD] PATH-or-URL`; `#` starts a comment.
/// Each request comes with its path as written, for reports.
fn targets(
    file: &str,
    base: &HttpRequest,
    target: &Target,
) -> Result<Vec<(HttpRequest, String)>, UsageError> {
    let text = crate::sys::file::read_text(file, crate::sys::file::TARGETS_LIMIT).map_err(|e| {
        UsageError::flags(
            &["--targets"],
            format!("--targets {file}: {e}: check the path, or split the list"),
        )
    })?;
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (method, url) = match line.split_once(char::is_whitespace) {
            Some((m, u)) => (m.to_string(), u.trim()),
            None => (base.method.clone(), line),
        };
        check_method(&method).map_err(|e| {
            UsageError::flags(
                &["--targets"],
                format!("--targets {file} line {}: {}", n + 1, e.0),
            )
        })?;
        let path = path_on(target, url, &format!("--targets {file} line {}", n + 1))?;
        let request = HttpRequest {
            method,
            path: Template::parse("--targets", &path)
                .map_err(|e| UsageError::flag("--targets", e))?,
            ..base.clone()
        };
        out.push((request, crate::driver::url::shown(&path)));
    }
    if out.is_empty() {
        return usage_of(
            &["--targets"],
            format!(
                "--targets {file} lists no requests: write one per line, e.g. 'GET /index.html'"
            ),
        );
    }
    debug_assert!(target.family() == Family::Http);
    Ok(out)
}

/// The path of `url`, a path (/...) or an http:// URL on the run's host; `at` names where it
/// was written, for errors.
pub(super) fn path_on(target: &Target, url: &str, at: &str) -> Result<String, UsageError> {
    match url.strip_prefix("http://") {
        Some(rest) => {
            let t = crate::driver::url::parse_target(&format!("http://{rest}"))?;
            if t.addr != target.addr {
                return Err(UsageError::new(format!(
                    "{at}: {url} is not on {}: all requests share the run's host",
                    target.url
                )));
            }
            Ok(t.path)
        }
        None if url.starts_with('/') => {
            crate::driver::url::check_path(
                &format!("{at}: '{}'", crate::driver::url::shown(url)),
                url,
            )?;
            Ok(url.to_string())
        }
        None => Err(UsageError::new(format!(
            "{at}: '{url}' is neither a path (/...) nor an http:// URL"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_lists() {
        let a = Accept::parse("2xx,304").unwrap();
        assert!(a.accepts(200) && a.accepts(299) && a.accepts(304));
        assert!(!a.accepts(301) && !a.accepts(503));
        for bad in ["", "6xx", "2x", "abc", "99"] {
            assert!(Accept::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn header_syntax() {
        assert!(header("X-Id: {seq}").is_ok());
        for bad in [
            "NoColon",
            ": v",
            "Bad Name: v",
            "X: a\r\nB: c",
            "X\r\nY: v",
            "X: a\u{0}",
        ] {
            let e = header(bad).expect_err(bad).0;
            assert!(!e.contains(['\r', '\n', '\0']), "one line, escaped: {e:?}");
        }
        let e = header("X: a\r\nB: c").unwrap_err().0;
        assert!(e.contains("X: a\\r\\nB: c"), "shows the CR LF escaped: {e}");
    }
}
