//! The target of a run: its URL parsed and resolved, the scheme looked up among those the
//! registered drivers serve.

use crate::driver::target::Target;
use crate::error::{usage, UsageError};
use std::net::ToSocketAddrs;

/// Resolves `tcp://HOST:PORT` into an address; other schemes are usage errors.
pub fn parse_target(url: &str) -> Result<Target, UsageError> {
    let Some((scheme, rest)) = url.split_once("://") else {
        return usage(format!(
            "'{url}' is not a URL: write the target as tcp://HOST:PORT, e.g. tcp://127.0.0.1:7000"
        ));
    };
    let Some(known) = crate::driver::scheme(scheme) else {
        return usage(format!(
            "unknown scheme '{scheme}' in '{url}': wirebench speaks {} (e.g. tcp://127.0.0.1:7000)",
            spoken()
        ));
    };
    let (authority, path) = match rest.find(['/', '?']) {
        Some(i) if known.path => (&rest[..i], rest[i..].to_string()),
        _ => (rest.trim_end_matches('/'), "/".to_string()),
    };
    let path = if path.starts_with('?') {
        format!("/{path}")
    } else {
        path
    };
    if authority.is_empty() || authority.contains(['@', ' ']) {
        return usage(format!(
            "'{url}' has no usable host: write {scheme}://HOST:PORT, e.g. {scheme}://127.0.0.1:8080"
        ));
    }
    let with_port = match (known.default_port, authority.rsplit_once(':')) {
        (Some(port), None) => format!("{authority}:{port}"),
        _ => authority.to_string(),
    };
    let hostport = with_port.as_str();
    // In "[::1]" the last colon is inside the address: there is no port.
    let port = hostport
        .rsplit_once(':')
        .map(|(_, p)| p)
        .filter(|p| !p.contains(']'));
    check_port(url, scheme, port)?;
    let addr = hostport
        .to_socket_addrs()
        .ok()
        .and_then(|mut addrs| addrs.next())
        .ok_or_else(|| {
            UsageError(format!(
                "cannot resolve host in '{url}': check the name, or use an address such as 127.0.0.1"
            ))
        })?;
    Ok(Target {
        scheme: known,
        url: url.to_string(),
        addr,
        host: authority.to_string(),
        path,
    })
}

/// The schemes wirebench speaks, for messages: "tcp://, udp:// and http://" (https:// goes
/// without saying).
fn spoken() -> String {
    let mut names: Vec<String> = crate::driver::schemes()
        .filter(|s| !s.tls)
        .map(|s| format!("{}://", s.name))
        .collect();
    names.dedup();
    match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => names.concat(),
    }
}

/// The port of a URL must be there, be a number, and lie in 1–65535 (0 is no port to connect
/// to); each fault gets its own message, so `:99999` is not reported as a missing port.
fn check_port(url: &str, scheme: &str, port: Option<&str>) -> Result<(), UsageError> {
    let example = format!("e.g. {scheme}://127.0.0.1:7000");
    match port {
        None | Some("") => usage(format!(
            "'{url}' lacks a port: write {scheme}://HOST:PORT, {example}"
        )),
        Some(p) if !p.bytes().all(|b| b.is_ascii_digit()) => usage(format!(
            "'{url}' has port '{p}', which is not a number: write {scheme}://HOST:PORT, {example}"
        )),
        Some(p) => match p.parse::<u16>() {
            Ok(n) if n > 0 => Ok(()),
            _ => usage(format!(
                "'{url}': port {p} is out of range: use a port from 1 to 65535, {example}"
            )),
        },
    }
}
