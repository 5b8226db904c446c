//! A mix of request kinds (`--mix`, a plan file's `[mix.NAME]` tables): each kind a request of
//! its own with a weight, drawn per request from the run's seed, and reported apart.
//!
//! On the command line a kind reads `NAME=WEIGHT [METHOD] PATH-or-URL`, as a `--targets` line
//! with a name and a weight in front; the run's `-X`, `-H` and `--body` apply to it. A plan
//! file's `[mix.NAME]` table (weight, method, url, headers, body) becomes the same flag with
//! a JSON object after the `=`, which may also be written by hand.

use super::plan::Args;
use super::plan::{body, check_method, header, path_on};
use crate::driver::http::spec::{HttpRequest, Mix};
use crate::driver::http::template::Template;
use crate::driver::target::Target;
use crate::error::{usage, UsageError};
use serde::{Deserialize, Serialize};

/// The requests of a mix, one per kind, and how reports name it.
pub struct Kinds {
    /// One request per kind, in the order given.
    pub requests: Vec<HttpRequest>,
    /// The kinds' names and weights.
    pub mix: Mix,
    /// `resolve 80: GET /h/{zipf:1000}, create 20: PUT /h/{seq}`, for reports.
    pub text: String,
}

/// A kind written as JSON (what a plan file's `[mix.NAME]` becomes, and what it is written
/// from: the keys it leaves out are left out).
#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct Written {
    weight: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    method: Option<String>,
    url: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    headers: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    body: Option<String>,
}

/// A `--mix` value as a plan file's `[mix.NAME]` table: its name, and the table's keys
/// (weight, method, url, headers, body) as JSON values; None for a value that is no kind.
pub fn table(text: &str) -> Option<(String, serde_json::Map<String, serde_json::Value>)> {
    let (name, spec) = named(text)?;
    let written = match spec.starts_with('{') {
        true => serde_json::from_str::<Written>(spec).ok()?,
        false => words(spec)?,
    };
    match serde_json::to_value(written) {
        Ok(serde_json::Value::Object(map)) => Some((name.to_string(), map)),
        _ => None,
    }
}

/// `NAME=SPEC` split at its `=`, both trimmed, when the name is letters, digits, `_` and `-`.
fn named(text: &str) -> Option<(&str, &str)> {
    let (name, spec) = text.split_once('=')?;
    let name = name.trim();
    let ok = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'-';
    (!name.is_empty() && name.bytes().all(ok)).then_some((name, spec.trim()))
}

/// A kind written as words: `WEIGHT [METHOD] PATH-or-URL`.
fn words(spec: &str) -> Option<Written> {
    let mut words = spec.split_whitespace();
    let weight = words.next().and_then(|w| w.parse().ok())?;
    let (method, url) = match (words.next(), words.next(), words.next()) {
        (Some(url), None, _) => (None, url),
        (Some(m), Some(url), None) => (Some(m.to_string()), url),
        _ => return None,
    };
    Some(Written {
        weight,
        method,
        url: url.to_string(),
        headers: Vec::new(),
        body: None,
    })
}

/// The most kinds a mix may have (each is recorded apart).
const MOST: usize = 64;

/// The run's mix, if `--mix` is given: each kind from `base` (the run's method, headers and
/// body) with what the kind sets itself.
pub fn of(a: &Args, base: &HttpRequest, target: &Target) -> Result<Option<Kinds>, UsageError> {
    if a.http.mix.is_empty() {
        return Ok(None);
    }
    if a.http.targets.is_some() {
        return usage("--mix and --targets both choose the requests: give the requests as --mix kinds, each with a weight");
    }
    if a.http.http2 || a.http.http3 {
        return usage("--mix is measured over HTTP/1.1 only for now: drop --http2 and --http3");
    }
    if a.http.mix.len() > MOST {
        return usage(format!(
            "--mix: {} kinds, at most {MOST}: merge some",
            a.http.mix.len()
        ));
    }
    let (mut requests, mut names, mut weights, mut shown) = (vec![], vec![], vec![], vec![]);
    for text in &a.http.mix {
        let (name, request, weight, path) = kind(a, text, base, target)?;
        if names.contains(&name) {
            return usage(format!(
                "--mix: the kind '{name}' is given twice: give each kind a name of its own"
            ));
        }
        shown.push(format!("{name} {weight}: {} {path}", request.method));
        requests.push(request);
        names.push(name);
        weights.push(weight);
    }
    Ok(Some(Kinds {
        requests,
        mix: Mix { names, weights },
        text: shown.join(", "),
    }))
}

/// One `--mix` value: its name, its request, its weight and its path as written.
fn kind(
    a: &Args,
    text: &str,
    base: &HttpRequest,
    target: &Target,
) -> Result<(String, HttpRequest, u64, String), UsageError> {
    let shown = crate::driver::url::shown(text);
    let bad = || {
        UsageError::flag("--mix", format!(
            "--mix '{shown}' is not NAME=WEIGHT [METHOD] PATH: write e.g. --mix 'read=80 GET /item/{{zipf:1000:1}}'"
        ))
    };
    let (name, spec) = named(text).ok_or_else(bad)?;
    let at = format!("--mix {name}");
    let written = match spec.starts_with('{') {
        true => serde_json::from_str::<Written>(spec).map_err(|e| {
            UsageError::flag(
                "--mix",
                format!("{at}: {e}: a kind takes weight, url and optionally method, headers, body"),
            )
        })?,
        false => words(spec).ok_or_else(bad)?,
    };
    if written.weight == 0 {
        return usage(format!(
            "{at}: weight 0 would never send this kind; give a weight of 1 or more, or leave the kind out"
        ));
    }
    let path = path_on(target, &written.url, &at)?;
    let own_body = written.body.as_deref().map(body).transpose()?;
    let method = match (&written.method, &own_body) {
        (Some(m), _) => m.clone(),
        (None, Some(_)) if a.http.method.is_none() => "POST".to_string(),
        (None, _) => base.method.clone(),
    };
    check_method(&method).map_err(|e| UsageError::flag("--mix", format!("{at}: {}", e.0)))?;
    let mut headers = base.headers.clone();
    for h in &written.headers {
        headers.push(header(h)?);
    }
    let host = |h: &String| {
        h.split(':')
            .next()
            .is_some_and(|n| n.trim().eq_ignore_ascii_case("host"))
    };
    let request = HttpRequest {
        method,
        path: Template::parse(&at, &path).map_err(UsageError::new)?,
        headers,
        has_host: base.has_host || written.headers.iter().any(host),
        body: own_body.or_else(|| base.body.clone()),
    };
    Ok((name.to_string(), request, written.weight, path))
}
