//! gRPC on the wire, shared by the `grpc://` client and `serve grpc`: the five-byte prefix of
//! each message (gRPC over HTTP/2, "Length-Prefixed-Message"), the status codes' names, the
//! few protobuf fields the server reads and writes by hand, the reflection service's messages
//! (grpc.reflection.v1 and v1alpha, which share their fields) and the benchmark service's
//! `.proto`, compiled at run time.

/// The benchmark service's `.proto` (`proto/wirebench/bench.proto`), as reflection serves it.
pub const BENCH_PROTO: &str = include_str!("../../proto/wirebench/bench.proto");
/// Its file name, as imports and reflection name it.
pub const BENCH_FILE: &str = "wirebench/bench.proto";
/// The benchmark service's full name.
pub const BENCH_SERVICE: &str = "wirebench.bench.Bench";
/// The reflection services, newest first (a client tries them in this order).
pub const REFLECTION: [&str; 2] = [
    "grpc.reflection.v1.ServerReflection",
    "grpc.reflection.v1alpha.ServerReflection",
];
/// The reflection services' one method.
pub const REFLECTION_METHOD: &str = "ServerReflectionInfo";
/// The largest message either side takes, as gRPC's default (4 MiB).
pub const MAX_MESSAGE: usize = 4 << 20;

/// The names of gRPC's status codes, by code (the gRPC status code specification).
pub const STATUS_NAMES: [&str; 17] = [
    "OK",
    "CANCELLED",
    "UNKNOWN",
    "INVALID_ARGUMENT",
    "DEADLINE_EXCEEDED",
    "NOT_FOUND",
    "ALREADY_EXISTS",
    "PERMISSION_DENIED",
    "RESOURCE_EXHAUSTED",
    "FAILED_PRECONDITION",
    "ABORTED",
    "OUT_OF_RANGE",
    "UNIMPLEMENTED",
    "INTERNAL",
    "UNAVAILABLE",
    "DATA_LOSS",
    "UNAUTHENTICATED",
];

/// The name of status `code`, or `UNKNOWN_CODE` for a code gRPC does not define.
pub fn status_name(code: u32) -> &'static str {
    STATUS_NAMES
        .get(code as usize)
        .copied()
        .unwrap_or("UNKNOWN_CODE")
}

/// Appends `msg` with its prefix (uncompressed, its length big-endian).
pub fn frame(msg: &[u8], out: &mut Vec<u8>) {
    out.push(0);
    out.extend_from_slice(&(msg.len() as u32).to_be_bytes());
    out.extend_from_slice(msg);
}

/// Splits whole messages off the front of a reply body as it comes.
#[derive(Debug, Default)]
pub struct Deframer {
    buf: Vec<u8>,
}

/// Why a body is no sequence of gRPC messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum DeframeError {
    /// A message longer than [`MAX_MESSAGE`].
    #[error("a message of {0} bytes, over the 4 MiB limit")]
    TooLarge(usize),
    /// A compressed message, when no compression was agreed.
    #[error("a compressed message, but no compression was agreed")]
    Compressed,
}

impl Deframer {
    /// Takes `data` in; calls `each` with every message it completes.
    pub fn push(&mut self, data: &[u8], mut each: impl FnMut(&[u8])) -> Result<(), DeframeError> {
        self.buf.extend_from_slice(data);
        let mut at = 0;
        while self.buf.len() - at >= 5 {
            if self.buf[at] != 0 {
                return Err(DeframeError::Compressed);
            }
            let n = u32::from_be_bytes([
                self.buf[at + 1],
                self.buf[at + 2],
                self.buf[at + 3],
                self.buf[at + 4],
            ]) as usize;
            if n > MAX_MESSAGE {
                return Err(DeframeError::TooLarge(n));
            }
            if self.buf.len() - at - 5 < n {
                break;
            }
            each(&self.buf[at + 5..at + 5 + n]);
            at += 5 + n;
        }
        self.buf.drain(..at);
        Ok(())
    }

    /// Bytes of a message begun and not finished.
    pub fn pending(&self) -> usize {
        self.buf.len()
    }
}

/// The value of a `grpc-timeout` header for `d` (at most 8 digits, in the coarsest unit that
/// keeps it whole enough).
pub fn timeout_header(d: std::time::Duration) -> String {
    let us = d.as_micros();
    if us < 100_000_000 {
        format!("{us}u")
    } else if d.as_millis() < 100_000_000 {
        format!("{}m", d.as_millis())
    } else {
        format!("{}S", d.as_secs().min(99_999_999))
    }
}

/// One field of a protobuf message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field<'a> {
    /// A varint (wire type 0).
    Varint(u64),
    /// A length-delimited value (wire type 2): bytes, a string, a message.
    Bytes(&'a [u8]),
    /// A fixed 32- or 64-bit value (wire types 5 and 1).
    Fixed(u64),
}

/// The fields of a protobuf message, in order, `(number, value)`; None where it breaks off.
pub fn fields(mut msg: &[u8]) -> impl Iterator<Item = Option<(u32, Field<'_>)>> + '_ {
    std::iter::from_fn(move || {
        if msg.is_empty() {
            return None;
        }
        let next = (|| {
            let key = varint(&mut msg)?;
            let field = match key & 7 {
                0 => Field::Varint(varint(&mut msg)?),
                2 => {
                    let n = usize::try_from(varint(&mut msg)?).ok()?;
                    let (v, rest) = (msg.get(..n)?, msg.get(n..)?);
                    msg = rest;
                    Field::Bytes(v)
                }
                1 => Field::Fixed(u64::from_le_bytes(take(&mut msg, 8)?.try_into().ok()?)),
                5 => Field::Fixed(u64::from(u32::from_le_bytes(
                    take(&mut msg, 4)?.try_into().ok()?,
                ))),
                _ => return None,
            };
            Some(((key >> 3) as u32, field))
        })();
        if next.is_none() {
            msg = &[];
        }
        Some(next)
    })
}

fn take<'a>(msg: &mut &'a [u8], n: usize) -> Option<&'a [u8]> {
    let (v, rest) = (msg.get(..n)?, msg.get(n..)?);
    *msg = rest;
    Some(v)
}

fn varint(msg: &mut &[u8]) -> Option<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let (&b, rest) = msg.split_first()?;
        *msg = rest;
        v |= u64::from(b & 0x7f) << shift;
        if b < 0x80 {
            return Some(v);
        }
    }
    None
}

/// Appends a varint.
pub fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Appends field `number` as a varint (nothing for 0, proto3's default).
pub fn put_uint(out: &mut Vec<u8>, number: u32, v: u64) {
    if v != 0 {
        put_varint(out, u64::from(number) << 3);
        put_varint(out, v);
    }
}

/// Appends field `number` as a length-delimited value.
pub fn put_bytes(out: &mut Vec<u8>, number: u32, v: &[u8]) {
    put_varint(out, u64::from(number) << 3 | 2);
    put_varint(out, v.len() as u64);
    out.extend_from_slice(v);
}

/// A reflection request (ServerReflectionRequest), as a client sends it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReflectionRequest {
    /// `list_services` (field 7).
    ListServices,
    /// `file_by_filename` (field 3).
    FileByName(String),
    /// `file_containing_symbol` (field 4).
    FileContainingSymbol(String),
    /// Anything else (extensions), which the benchmark server does not answer.
    Other,
}

impl ReflectionRequest {
    /// Its protobuf encoding.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        match self {
            ReflectionRequest::ListServices => put_bytes(&mut out, 7, b""),
            ReflectionRequest::FileByName(f) => put_bytes(&mut out, 3, f.as_bytes()),
            ReflectionRequest::FileContainingSymbol(s) => put_bytes(&mut out, 4, s.as_bytes()),
            ReflectionRequest::Other => {}
        }
        out
    }

    /// Reads one (the server's side).
    pub fn decode(msg: &[u8]) -> ReflectionRequest {
        let text = |v: &[u8]| String::from_utf8_lossy(v).into_owned();
        let mut req = ReflectionRequest::Other;
        for (n, f) in fields(msg).map_while(|f| f) {
            req = match (n, f) {
                (7, Field::Bytes(_)) => ReflectionRequest::ListServices,
                (3, Field::Bytes(v)) => ReflectionRequest::FileByName(text(v)),
                (4, Field::Bytes(v)) => ReflectionRequest::FileContainingSymbol(text(v)),
                (1, _) => continue, // host
                _ => ReflectionRequest::Other,
            };
        }
        req
    }
}

/// A reflection reply (ServerReflectionResponse), as far as a client reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReflectionReply {
    /// `file_descriptor_response` (field 4): encoded FileDescriptorProtos.
    Files(Vec<Vec<u8>>),
    /// `list_services_response` (field 6): the services' full names.
    Services(Vec<String>),
    /// `error_response` (field 7): a status code and its message.
    Error(u32, String),
}

impl ReflectionReply {
    /// Its protobuf encoding (the server's side).
    pub fn encode(&self) -> Vec<u8> {
        let mut inner = Vec::new();
        let number = match self {
            ReflectionReply::Files(files) => {
                for f in files {
                    put_bytes(&mut inner, 1, f);
                }
                4
            }
            ReflectionReply::Services(names) => {
                for n in names {
                    let mut service = Vec::new();
                    put_bytes(&mut service, 1, n.as_bytes());
                    put_bytes(&mut inner, 1, &service);
                }
                6
            }
            ReflectionReply::Error(code, message) => {
                put_uint(&mut inner, 1, u64::from(*code));
                put_bytes(&mut inner, 2, message.as_bytes());
                7
            }
        };
        let mut out = Vec::new();
        put_bytes(&mut out, number, &inner);
        out
    }

    /// Reads one; None if it holds none of the three answers.
    pub fn decode(msg: &[u8]) -> Option<ReflectionReply> {
        let mut reply = None;
        for field in fields(msg).map_while(|f| f) {
            let (n, Field::Bytes(inner)) = field else {
                continue;
            };
            reply = match n {
                4 => Some(ReflectionReply::Files(
                    fields(inner)
                        .map_while(|f| f)
                        .filter_map(|(n, f)| match (n, f) {
                            (1, Field::Bytes(v)) => Some(v.to_vec()),
                            _ => None,
                        })
                        .collect(),
                )),
                6 => Some(ReflectionReply::Services(
                    fields(inner)
                        .map_while(|f| f)
                        .filter_map(|(n, f)| match (n, f) {
                            (1, Field::Bytes(service)) => Some(service),
                            _ => None,
                        })
                        .flat_map(|s| {
                            fields(s)
                                .map_while(|f| f)
                                .filter_map(|(n, f)| match (n, f) {
                                    (1, Field::Bytes(name)) => {
                                        Some(String::from_utf8_lossy(name).into_owned())
                                    }
                                    _ => None,
                                })
                        })
                        .collect(),
                )),
                7 => {
                    let (mut code, mut text) = (2, String::new());
                    for (n, f) in fields(inner).map_while(|f| f) {
                        match (n, f) {
                            (1, Field::Varint(c)) => code = c as u32,
                            (2, Field::Bytes(t)) => text = String::from_utf8_lossy(t).into_owned(),
                            _ => {}
                        }
                    }
                    Some(ReflectionReply::Error(code, text))
                }
                _ => reply,
            };
        }
        reply
    }
}

/// The benchmark service's file, compiled from [`BENCH_PROTO`]: its encoded
/// FileDescriptorProto, as reflection serves it. Fails only if that source is broken.
pub fn bench_descriptor() -> Result<Vec<u8>, String> {
    use prost::Message;
    struct Source;
    impl protox::file::FileResolver for Source {
        fn open_file(&self, name: &str) -> Result<protox::file::File, protox::Error> {
            match name {
                BENCH_FILE => protox::file::File::from_source(name, BENCH_PROTO),
                _ => Err(protox::Error::file_not_found(name)),
            }
        }
    }
    let mut compiler = protox::Compiler::with_file_resolver(Source);
    compiler.open_file(BENCH_FILE).map_err(|e| e.to_string())?;
    let set = compiler.file_descriptor_set();
    set.file
        .first()
        .map(|f| f.encode_to_vec())
        .ok_or_else(|| "the benchmark .proto compiled to nothing".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_split_as_they_come() {
        let mut body = Vec::new();
        frame(b"hello", &mut body);
        frame(b"", &mut body);
        frame(&[7; 300], &mut body);
        let mut d = Deframer::default();
        let mut got = Vec::new();
        for chunk in body.chunks(3) {
            d.push(chunk, |m| got.push(m.len())).unwrap();
        }
        assert_eq!(got, [5, 0, 300]);
        assert_eq!(d.pending(), 0);
        assert_eq!(
            Deframer::default().push(&[1, 0, 0, 0, 0], |_| {}),
            Err(DeframeError::Compressed)
        );
    }

    #[test]
    fn reflection_round_trips() {
        for r in [
            ReflectionRequest::ListServices,
            ReflectionRequest::FileByName("a/b.proto".into()),
            ReflectionRequest::FileContainingSymbol("x.Y".into()),
        ] {
            assert_eq!(ReflectionRequest::decode(&r.encode()), r);
        }
        for r in [
            ReflectionReply::Files(vec![vec![1, 2], vec![]]),
            ReflectionReply::Services(vec!["a.B".into(), "c.D".into()]),
            ReflectionReply::Error(5, "not found".into()),
        ] {
            assert_eq!(ReflectionReply::decode(&r.encode()), Some(r));
        }
    }

    #[test]
    fn timeouts_in_eight_digits() {
        use std::time::Duration;
        assert_eq!(timeout_header(Duration::from_secs(2)), "2000000u");
        assert_eq!(timeout_header(Duration::from_secs(1000)), "1000000m");
        assert_eq!(status_name(14), "UNAVAILABLE");
        assert_eq!(status_name(99), "UNKNOWN_CODE");
    }

    #[test]
    fn the_bench_proto_compiles() {
        let file = bench_descriptor().unwrap();
        assert!(file.windows(4).any(|w| w == b"Echo"));
    }
}
