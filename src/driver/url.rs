//! A target URL parsed and resolved, the scheme looked up among those the
//! registered drivers serve.

use crate::driver::target::{Family, Target};
use crate::error::{usage, UsageError};
use std::net::ToSocketAddrs;

/// Resolves `tcp://HOST:PORT` into an address; other schemes are usage errors.
pub fn parse_target(raw: &str) -> Result<Target, UsageError> {
    // Messages show the URL with its control characters escaped, so that they stay one line.
    let url = &shown(raw);
    let Some((scheme, rest)) = raw.split_once("://") else {
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
    if known.family == Family::Http {
        check_path(&format!("'{url}'"), &path)?;
    }
    check_authority(url, scheme, authority)?;
    if authority.is_empty() || authority.contains(|c: char| c.is_whitespace() || c.is_control()) {
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
            UsageError::new(format!(
                "cannot resolve host in '{url}': check the name, or use an address such as 127.0.0.1"
            ))
        })?;
    Ok(Target {
        scheme: known,
        url: raw.to_string(),
        addr,
        host: authority.to_string(),
        path,
    })
}

/// `text` as a one-line message shows it: control characters escaped (`\r`, `\n`, `\t`,
/// `\u{1b}`), the rest as it is.
pub(crate) fn shown(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            c if c.is_control() => c.escape_default().to_string(),
            c => c.to_string(),
        })
        .collect()
}

/// An HTTP path and query go onto the request line as written: a byte a URL cannot carry (a
/// space, a control character, anything beyond ASCII) would make the request malformed, so it
/// is refused with its percent-encoding, as curl refuses it ("URL rejected: Malformed input").
/// `at` names where the path was written, for the message.
pub(crate) fn check_path(at: &str, path: &str) -> Result<(), UsageError> {
    let Some(bad) = path.chars().find(|c| !c.is_ascii_graphic()) else {
        return Ok(());
    };
    let what = match bad {
        ' ' => "a space".to_string(),
        c if c.is_control() => format!("the control character '{}'", shown(&c.to_string())),
        c => format!("'{c}'"),
    };
    let mut utf8 = [0; 4];
    let encoded: String = bad
        .encode_utf8(&mut utf8)
        .bytes()
        .map(|b| format!("%{b:02X}"))
        .collect();
    usage(format!(
        "{at}: the path has {what}, which a URL cannot carry: percent-encode it as {encoded}"
    ))
}

/// The faults of the `HOST:PORT` part that name resolution would only report as "cannot
/// resolve": credentials (`user:pass@`) and an IPv6 address whose brackets are missing or open.
fn check_authority(url: &str, scheme: &str, authority: &str) -> Result<(), UsageError> {
    if authority.contains('@') {
        // The URL is not echoed: it holds a password.
        let instead = if scheme.starts_with("http") {
            "give credentials as a header, e.g. -H 'Authorization: Basic BASE64(user:pass)'"
        } else {
            "leave the user name out"
        };
        return usage(format!(
            "a user name and password in the URL (user:pass@HOST) are not supported: {instead}"
        ));
    }
    let example = format!("{scheme}://[::1]:7000");
    if authority.starts_with('[') && !authority.contains(']') {
        return usage(format!(
            "'{url}': the '[' of the IPv6 address is not closed: write {scheme}://[ADDRESS]:PORT, e.g. {example}"
        ));
    }
    let host = authority.rsplit_once(':').map_or(authority, |(h, _)| h);
    if !authority.starts_with('[') && (host.contains(':') || authority.contains(']')) {
        return usage(format!(
            "'{url}': an IPv6 address goes in brackets: write {scheme}://[ADDRESS]:PORT, e.g. {example}"
        ));
    }
    Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;

    fn message(url: &str) -> String {
        let e = parse_target(url).expect_err(url).0;
        assert!(!e.contains(['\r', '\n']), "one line: {e:?}");
        e
    }

    #[test]
    fn a_path_a_url_cannot_carry_is_refused_with_its_encoding() {
        let e = message("http://127.0.0.1:9/a b");
        assert!(e.contains("a space") && e.contains("%20"), "{e}");
        assert!(message("http://127.0.0.1:9/q?x=1\t2").contains("%09"));
        assert!(message("http://127.0.0.1:9/a\r\nX: y").contains("%0D"));
        assert!(message("http://127.0.0.1:9/ä").contains("%C3%A4"));
        for good in [
            "http://127.0.0.1:9/a%20b?x=1&y=[2]",
            "http://127.0.0.1:9/item/{seq}",
        ] {
            assert!(parse_target(good).is_ok(), "{good}");
        }
    }

    #[test]
    fn credentials_and_open_brackets_get_their_own_message() {
        let e = message("http://user:secret@127.0.0.1:9/");
        assert!(
            e.contains("not supported") && e.contains("Authorization"),
            "{e}"
        );
        assert!(!e.contains("secret"), "the password is not echoed: {e}");
        assert!(message("tcp://u@127.0.0.1:9").contains("not supported"));
        for url in ["tcp://[::1", "tcp://[::1:7000", "http://[::1/"] {
            assert!(message(url).contains("not closed"), "{url}");
        }
        assert!(message("tcp://::1:7000").contains("brackets"));
        assert!(parse_target("tcp://[::1]:7000").is_ok());
    }
}
