//! RESP, Redis's serialization protocol (<https://redis.io/docs/latest/develop/reference/protocol-spec/>):
//! a command is an array of bulk strings; a reply is one value, found whole in a buffer.

/// `words` as a RESP command: `*N\r\n` then `$LEN\r\nWORD\r\n` per word.
pub fn command<S: AsRef<[u8]>>(words: &[S]) -> Vec<u8> {
    let mut out = format!("*{}\r\n", words.len()).into_bytes();
    for w in words {
        let w = w.as_ref();
        out.extend_from_slice(format!("${}\r\n", w.len()).as_bytes());
        out.extend_from_slice(w);
        out.extend_from_slice(b"\r\n");
    }
    out
}

/// One value at the start of a buffer.
#[derive(Debug, PartialEq, Eq)]
pub struct Value {
    /// Its length in bytes.
    pub len: usize,
    /// Whether it is an error (`-ERR …`).
    pub error: bool,
}

/// Bytes that are not RESP.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum NotResp {
    /// A value that starts with none of RESP's type bytes.
    #[error("the reply starts with '{}', which is not RESP: is it a Redis server?", [*.0].escape_ascii())]
    Kind(u8),
    /// A length or count that is not a number.
    #[error("'{}' is not a RESP length", .0.escape_ascii())]
    Length(Vec<u8>),
}

/// The value at the start of `buf`: None while it is incomplete, an error for bytes that are
/// not RESP.
pub fn value(buf: &[u8]) -> Result<Option<Value>, NotResp> {
    let Some(end) = line_end(buf) else {
        return Ok(None);
    };
    let after = end + 2;
    let (kind, line) = match buf.split_first() {
        Some((k, _)) => (*k, &buf[1..end]),
        None => return Ok(None),
    };
    match kind {
        b'+' | b':' => Ok(Some(Value {
            len: after,
            error: false,
        })),
        b'-' => Ok(Some(Value {
            len: after,
            error: true,
        })),
        b'$' => match number(line)? {
            n if n < 0 => Ok(Some(Value {
                len: after,
                error: false,
            })),
            n => {
                let len = after + n as usize + 2;
                Ok((buf.len() >= len).then_some(Value { len, error: false }))
            }
        },
        b'*' => {
            let mut len = after;
            for _ in 0..number(line)?.max(0) {
                match value(&buf[len..])? {
                    Some(v) => len += v.len,
                    None => return Ok(None),
                }
            }
            Ok(Some(Value { len, error: false }))
        }
        other => Err(NotResp::Kind(other)),
    }
}

/// Where the first line of `buf` ends (its `\r\n`).
fn line_end(buf: &[u8]) -> Option<usize> {
    buf.windows(2).position(|w| w == b"\r\n")
}

/// A RESP length or count.
fn number(line: &[u8]) -> Result<i64, NotResp> {
    std::str::from_utf8(line)
        .ok()
        .and_then(|t| t.parse().ok())
        .ok_or_else(|| NotResp::Length(line.to_vec()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_and_values() {
        assert_eq!(command(&["GET", "k"]), b"*2\r\n$3\r\nGET\r\n$1\r\nk\r\n");
        let v = |b: &[u8]| value(b).unwrap();
        assert_eq!(
            v(b"+PONG\r\n+"),
            Some(Value {
                len: 7,
                error: false
            })
        );
        assert_eq!(
            v(b"-ERR x\r\n"),
            Some(Value {
                len: 8,
                error: true
            })
        );
        assert_eq!(
            v(b"$3\r\nbar\r\n"),
            Some(Value {
                len: 9,
                error: false
            })
        );
        assert_eq!(
            v(b"$-1\r\n"),
            Some(Value {
                len: 5,
                error: false
            })
        );
        assert_eq!(v(b"$3\r\nba"), None);
        assert_eq!(
            v(b"*2\r\n:1\r\n$1\r\na\r\n"),
            Some(Value {
                len: 15,
                error: false
            })
        );
        assert_eq!(v(b"*2\r\n:1\r\n"), None);
        assert_eq!(v(b"+PON"), None);
        let not = value(b"HTTP/1.1 200 OK\r\n").unwrap_err();
        assert_eq!(not, NotResp::Kind(b'H'));
        assert!(not.to_string().contains("'H', which is not RESP"), "{not}");
        let not = value(b"$x\r\n").unwrap_err();
        assert_eq!(not.to_string(), "'x' is not a RESP length");
    }
}
