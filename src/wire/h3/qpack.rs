//! QPACK (RFC 9204) without a dynamic table: both ends of wirebench announce a table capacity
//! of 0 (the default of SETTINGS_QPACK_MAX_TABLE_CAPACITY), so every field section a peer
//! sends them refers to the static table at most, its Required Insert Count is 0, and no
//! encoder or decoder stream carries anything. Fields are written as an exact static match
//! (indexed), a static name with a literal value, or a literal name and value, all with raw
//! strings; fields read may be Huffman-coded (nghttp3's and quic-go's encoders code them).

use crate::wire::huffman;

/// The static table (RFC 9204 Appendix A), index 0 first.
pub const STATIC: [(&str, &str); 99] = [
    (":authority", ""),
    (":path", "/"),
    ("age", "0"),
    ("content-disposition", ""),
    ("content-length", "0"),
    ("cookie", ""),
    ("date", ""),
    ("etag", ""),
    ("if-modified-since", ""),
    ("if-none-match", ""),
    ("last-modified", ""),
    ("link", ""),
    ("location", ""),
    ("referer", ""),
    ("set-cookie", ""),
    (":method", "CONNECT"),
    (":method", "DELETE"),
    (":method", "GET"),
    (":method", "HEAD"),
    (":method", "OPTIONS"),
    (":method", "POST"),
    (":method", "PUT"),
    (":scheme", "http"),
    (":scheme", "https"),
    (":status", "103"),
    (":status", "200"),
    (":status", "304"),
    (":status", "404"),
    (":status", "503"),
    ("accept", "*/*"),
    ("accept", "application/dns-message"),
    ("accept-encoding", "gzip, deflate, br"),
    ("accept-ranges", "bytes"),
    ("access-control-allow-headers", "cache-control"),
    ("access-control-allow-headers", "content-type"),
    ("access-control-allow-origin", "*"),
    ("cache-control", "max-age=0"),
    ("cache-control", "max-age=2592000"),
    ("cache-control", "max-age=604800"),
    ("cache-control", "no-cache"),
    ("cache-control", "no-store"),
    ("cache-control", "public, max-age=31536000"),
    ("content-encoding", "br"),
    ("content-encoding", "gzip"),
    ("content-type", "application/dns-message"),
    ("content-type", "application/javascript"),
    ("content-type", "application/json"),
    ("content-type", "application/x-www-form-urlencoded"),
    ("content-type", "image/gif"),
    ("content-type", "image/jpeg"),
    ("content-type", "image/png"),
    ("content-type", "text/css"),
    ("content-type", "text/html; charset=utf-8"),
    ("content-type", "text/plain"),
    ("content-type", "text/plain;charset=utf-8"),
    ("range", "bytes=0-"),
    ("strict-transport-security", "max-age=31536000"),
    (
        "strict-transport-security",
        "max-age=31536000; includesubdomains",
    ),
    (
        "strict-transport-security",
        "max-age=31536000; includesubdomains; preload",
    ),
    ("vary", "accept-encoding"),
    ("vary", "origin"),
    ("x-content-type-options", "nosniff"),
    ("x-xss-protection", "1; mode=block"),
    (":status", "100"),
    (":status", "204"),
    (":status", "206"),
    (":status", "302"),
    (":status", "400"),
    (":status", "403"),
    (":status", "421"),
    (":status", "425"),
    (":status", "500"),
    ("accept-language", ""),
    ("access-control-allow-credentials", "FALSE"),
    ("access-control-allow-credentials", "TRUE"),
    ("access-control-allow-headers", "*"),
    ("access-control-allow-methods", "get"),
    ("access-control-allow-methods", "get, post, options"),
    ("access-control-allow-methods", "options"),
    ("access-control-expose-headers", "content-length"),
    ("access-control-request-headers", "content-type"),
    ("access-control-request-method", "get"),
    ("access-control-request-method", "post"),
    ("alt-svc", "clear"),
    ("authorization", ""),
    (
        "content-security-policy",
        "script-src 'none'; object-src 'none'; base-uri 'none'",
    ),
    ("early-data", "1"),
    ("expect-ct", ""),
    ("forwarded", ""),
    ("if-range", ""),
    ("origin", ""),
    ("purpose", "prefetch"),
    ("server", ""),
    ("timing-allow-origin", "*"),
    ("upgrade-insecure-requests", "1"),
    ("user-agent", ""),
    ("x-forwarded-for", ""),
    ("x-frame-options", "deny"),
    ("x-frame-options", "sameorigin"),
];

/// A field section that does not decode, or that refers to a dynamic table wirebench never
/// allowed: the stream (and, per RFC 9204 §2.2.3, the connection) must end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("HTTP/3: a QPACK field section that does not decode ({0})")]
pub struct BadSection(pub &'static str);

/// Appends an integer with an `n`-bit prefix (RFC 7541 §5.1, as RFC 9204 §4.1.1 uses it),
/// `flags` in the bits above the prefix.
fn put_int(out: &mut Vec<u8>, flags: u8, n: u32, mut v: u64) {
    let max = (1u64 << n) - 1;
    if v < max {
        out.push(flags | v as u8);
        return;
    }
    out.push(flags | max as u8);
    v -= max;
    while v >= 0x80 {
        out.push((v as u8 & 0x7f) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// The integer with an `n`-bit prefix at `*at`.
fn int(buf: &[u8], at: &mut usize, n: u32) -> Result<u64, BadSection> {
    let max = (1u64 << n) - 1;
    let first = *buf.get(*at).ok_or(BadSection("cut short"))?;
    *at += 1;
    let mut v = u64::from(first) & max;
    if v < max {
        return Ok(v);
    }
    let mut shift = 0;
    loop {
        let b = *buf.get(*at).ok_or(BadSection("cut short"))?;
        *at += 1;
        if shift > 56 {
            return Err(BadSection("an integer too large"));
        }
        v += u64::from(b & 0x7f) << shift;
        shift += 7;
        if b & 0x80 == 0 {
            return Ok(v);
        }
    }
}

/// Appends a raw string with an `n`-bit length prefix (Huffman bit clear), `flags` above it.
fn put_str(out: &mut Vec<u8>, flags: u8, n: u32, s: &[u8]) {
    put_int(out, flags, n, s.len() as u64);
    out.extend_from_slice(s);
}

/// The string at `*at` with an `n`-bit length prefix whose Huffman bit is the bit above it,
/// decoded into `out` (cleared first).
fn string(buf: &[u8], at: &mut usize, n: u32, out: &mut Vec<u8>) -> Result<(), BadSection> {
    let huffman = buf.get(*at).ok_or(BadSection("cut short"))? & (1 << n) != 0;
    let len = int(buf, at, n)? as usize;
    let s = buf
        .get(*at..at.saturating_add(len))
        .ok_or(BadSection("a string past the end"))?;
    *at += len;
    out.clear();
    match huffman {
        true => huffman::decode(s, out).map_err(|_| BadSection("bad Huffman code")),
        false => {
            out.extend_from_slice(s);
            Ok(())
        }
    }
}

/// Appends the prefix of a field section that uses no dynamic table: Required Insert Count 0,
/// Delta Base 0 (RFC 9204 §4.5.1).
pub fn put_prefix(out: &mut Vec<u8>) {
    out.extend_from_slice(&[0, 0]);
}

/// Appends one field line: indexed if the static table holds the field, else a literal value
/// with the static table's name if it holds the name, else literal name and value.
pub fn put_field(out: &mut Vec<u8>, name: &[u8], value: &[u8]) {
    let mut named = None;
    for (i, (n, v)) in STATIC.iter().enumerate() {
        if n.as_bytes() == name {
            if v.as_bytes() == value {
                // Indexed field line, static (§4.5.2): 1 T=1 index(6).
                return put_int(out, 0xc0, 6, i as u64);
            }
            named.get_or_insert(i);
        }
    }
    match named {
        // Literal with name reference, static (§4.5.4): 01 N=0 T=1 index(4).
        Some(i) => put_int(out, 0x50, 4, i as u64),
        // Literal with literal name (§4.5.6): 001 N=0 H=0 length(3).
        None => put_str(out, 0x20, 3, name),
    }
    put_str(out, 0x00, 7, value);
}

/// Reads a field section, handing each field to `on` as (name, value); an error for a
/// malformed one or one that refers to a dynamic table.
pub fn decode(block: &[u8], mut on: impl FnMut(&[u8], &[u8])) -> Result<(), BadSection> {
    let mut at = 0;
    if int(block, &mut at, 8)? != 0 {
        return Err(BadSection(
            "it refers to a dynamic table, which was not allowed",
        ));
    }
    int(block, &mut at, 7)?; // Delta Base: no meaning without a dynamic table.
    let (mut name, mut value) = (Vec::new(), Vec::new());
    let entry = |i: u64| {
        STATIC
            .get(i as usize)
            .ok_or(BadSection("a static index past the table"))
    };
    while at < block.len() {
        let b = block[at];
        if b & 0x80 != 0 {
            if b & 0x40 == 0 {
                return Err(BadSection("a dynamic table entry"));
            }
            let (n, v) = entry(int(block, &mut at, 6)?)?;
            on(n.as_bytes(), v.as_bytes());
        } else if b & 0x40 != 0 {
            if b & 0x10 == 0 {
                return Err(BadSection("a dynamic table name"));
            }
            let (n, _) = entry(int(block, &mut at, 4)?)?;
            string(block, &mut at, 7, &mut value)?;
            on(n.as_bytes(), &value);
        } else if b & 0x20 != 0 {
            string(block, &mut at, 3, &mut name)?;
            string(block, &mut at, 7, &mut value)?;
            on(&name, &value);
        } else {
            return Err(BadSection("a post-base (dynamic table) reference"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(block: &[u8]) -> Vec<(String, String)> {
        let mut got = Vec::new();
        decode(block, |n, v| {
            got.push((
                String::from_utf8_lossy(n).into_owned(),
                String::from_utf8_lossy(v).into_owned(),
            ))
        })
        .unwrap();
        got
    }

    #[test]
    fn fields_round_trip_in_each_form() {
        let want = [
            (":method", "GET"),
            (":path", "/bytes/100"),
            (":status", "200"),
            ("x-long-name-that-is-not-in-the-table", "v"),
            ("user-agent", &"w".repeat(300) as &str),
        ];
        let mut block = Vec::new();
        put_prefix(&mut block);
        for (n, v) in want {
            put_field(&mut block, n.as_bytes(), v.as_bytes());
        }
        // :method GET and :status 200 are one byte each (indexed).
        assert_eq!(block[2], 0xc0 | 17);
        let got = fields(&block);
        let want: Vec<_> = want
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect();
        assert_eq!(got, want);
    }

    /// RFC 9204 Appendix B.1's example: `:path /index.html` as a literal with a static name.
    #[test]
    fn the_rfc_example_decodes() {
        let block = [
            0x00, 0x00, 0x51, 0x0b, 0x2f, 0x69, 0x6e, 0x64, 0x65, 0x78, 0x2e, 0x68, 0x74, 0x6d,
            0x6c,
        ];
        assert_eq!(fields(&block), [(":path".into(), "/index.html".into())]);
    }

    #[test]
    fn a_huffman_value_decodes() {
        // "www.example.com" Huffman-coded (RFC 7541 §C.4.1), as a literal :authority value.
        let coded = [
            0xf1, 0xe3, 0xc2, 0xe5, 0xf2, 0x3a, 0x6b, 0xa0, 0xab, 0x90, 0xf4, 0xff,
        ];
        let mut block = vec![0, 0, 0x50, 0x80 | coded.len() as u8];
        block.extend_from_slice(&coded);
        assert_eq!(
            fields(&block),
            [(":authority".into(), "www.example.com".into())]
        );
    }

    #[test]
    fn dynamic_references_and_garbage_are_refused() {
        for bad in [
            &[0x01, 0x00][..],
            &[0, 0, 0x80],
            &[0, 0, 0x40],
            &[0, 0, 0x10],
            &[0, 0, 0xff, 0xff, 0xff],
            &[0, 0, 0x50, 0x05, b'a'],
            &[0],
        ] {
            assert!(decode(bad, |_, _| {}).is_err(), "{bad:?}");
        }
    }
}
