//! Response heads and small bodies, written straight into a connection's output buffer without
//! `format!` (numbers by hand), and the fixed block that large `/bytes/N` bodies stream from.

/// The length of the block `/bytes/N` bodies are cut from.
pub(crate) const BLOCK_LEN: usize = 64 * 1024;

/// The bytes of every `/bytes/N` body, repeated: lines of 63 digits, letters and a dot, and a newline.
pub(crate) static BLOCK: [u8; BLOCK_LEN] = block();

const fn block() -> [u8; BLOCK_LEN] {
    const ALPHABET: &[u8; 63] = b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.";
    let mut b = [0u8; BLOCK_LEN];
    let mut i = 0;
    while i < BLOCK_LEN {
        b[i] = if i % 64 == 63 {
            b'\n'
        } else {
            ALPHABET[i % 64]
        };
        i += 1;
    }
    b
}

/// Content types the server names.
pub(crate) const TEXT: &str = "text/plain";
pub(crate) const OCTETS: &str = "application/octet-stream";

/// How the body of a response is delimited.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Length {
    /// `Content-Length: N`.
    Fixed(u64),
    /// No body and no length: 204 and 304.
    Bodiless,
    /// `Transfer-Encoding: chunked` (echoing a chunked request).
    Chunked,
}

/// What the response says about the connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Persist {
    /// HTTP/1.1 keep-alive: nothing to say.
    KeepAlive,
    /// An HTTP/1.0 client asked to keep the connection: `Connection: keep-alive`.
    KeepAlive10,
    /// `Connection: close`: the server closes after this response.
    Close,
}

/// Appends a response head.
pub(crate) fn head(
    out: &mut Vec<u8>,
    status: u16,
    length: Length,
    content_type: &str,
    persist: Persist,
    allow: Option<&str>,
) {
    out.extend_from_slice(b"HTTP/1.1 ");
    push_u64(out, u64::from(status));
    out.push(b' ');
    out.extend_from_slice(reason(status).as_bytes());
    out.extend_from_slice(b"\r\nServer: wirebench\r\n");
    match length {
        Length::Fixed(n) => {
            out.extend_from_slice(b"Content-Length: ");
            push_u64(out, n);
            out.extend_from_slice(b"\r\n");
        }
        Length::Chunked => out.extend_from_slice(b"Transfer-Encoding: chunked\r\n"),
        Length::Bodiless => {}
    }
    if length != Length::Bodiless {
        out.extend_from_slice(b"Content-Type: ");
        out.extend_from_slice(content_type.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    if let Some(allow) = allow {
        out.extend_from_slice(b"Allow: ");
        out.extend_from_slice(allow.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    match persist {
        Persist::KeepAlive => {}
        Persist::KeepAlive10 => out.extend_from_slice(b"Connection: keep-alive\r\n"),
        Persist::Close => out.extend_from_slice(b"Connection: close\r\n"),
    }
    out.extend_from_slice(b"\r\n");
}

/// Whether a response with `status` has no body whatever the method.
pub(crate) fn bodiless(status: u16) -> bool {
    status == 204 || status == 304
}

/// The length of the short text body of a `status` response: `CODE Reason[: why]\n`.
pub(crate) fn text_len(status: u16, why: Option<&str>) -> u64 {
    let why = why.map_or(0, |w| w.len() + 2);
    (3 + 1 + reason(status).len() + why + 1) as u64
}

/// Appends the short text body of a `status` response (see [`text_len`]).
pub(crate) fn text(out: &mut Vec<u8>, status: u16, why: Option<&str>) {
    push_u64(out, u64::from(status));
    out.push(b' ');
    out.extend_from_slice(reason(status).as_bytes());
    if let Some(why) = why {
        out.extend_from_slice(b": ");
        out.extend_from_slice(why.as_bytes());
    }
    out.push(b'\n');
}

/// Appends a number in decimal.
pub(crate) fn push_u64(out: &mut Vec<u8>, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[i..]);
}

/// Appends a number in hexadecimal (chunk sizes).
pub(crate) fn push_hex(out: &mut Vec<u8>, mut n: u64) {
    let mut digits = [0u8; 16];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b"0123456789abcdef"[(n & 15) as usize];
        n >>= 4;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[i..]);
}

/// The reason phrase of a status, from the `http` crate's table (the client's too, see
/// `record::reason`); `Status` for codes it does not name, so a status line always has one.
pub(crate) fn reason(status: u16) -> &'static str {
    http::StatusCode::from_u16(status)
        .ok()
        .and_then(|s| s.canonical_reason())
        .unwrap_or("Status")
}

/// A content type for a file, by its extension.
pub(crate) fn content_type(path: &std::path::Path) -> &'static str {
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    match ext.to_ascii_lowercase().as_str() {
        "html" | "htm" => "text/html; charset=utf-8",
        "txt" | "log" | "md" => "text/plain; charset=utf-8",
        "css" => "text/css",
        "js" | "mjs" => "text/javascript",
        "json" => "application/json",
        "xml" => "application/xml",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "ico" => "image/x-icon",
        "wasm" => "application/wasm",
        "pdf" => "application/pdf",
        _ => OCTETS,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heads_and_numbers() {
        let mut out = Vec::new();
        head(
            &mut out,
            200,
            Length::Fixed(1234567),
            OCTETS,
            Persist::KeepAlive,
            None,
        );
        assert_eq!(
            out,
            b"HTTP/1.1 200 OK\r\nServer: wirebench\r\nContent-Length: 1234567\r\nContent-Type: application/octet-stream\r\n\r\n"
        );
        out.clear();
        head(
            &mut out,
            204,
            Length::Bodiless,
            TEXT,
            Persist::Close,
            Some("GET"),
        );
        assert_eq!(
            out,
            b"HTTP/1.1 204 No Content\r\nServer: wirebench\r\nAllow: GET\r\nConnection: close\r\n\r\n"
        );
        out.clear();
        text(&mut out, 404, Some("no"));
        assert_eq!(out, b"404 Not Found: no\n");
        assert_eq!(text_len(404, Some("no")), out.len() as u64);
        out.clear();
        push_hex(&mut out, 0);
        push_hex(&mut out, 0x1a2f);
        push_u64(&mut out, 0);
        assert_eq!(out, b"01a2f0");
        assert_eq!(&BLOCK[60..66], b"YZ.\n01");
        assert_eq!(
            content_type("a/b.HTML".as_ref()),
            "text/html; charset=utf-8"
        );
    }
}
