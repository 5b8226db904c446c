//! What a run's operations were, in terms every room reads: the target, the protocol and its
//! family, the client mode, a request's size and how a reply ends, and the facts a protocol's
//! own result section reports (HTTP's requests, a mix's kinds, a file set) as plain data.
//!
//! The drivers fill it ([`Plan::exchange`](crate::plan::Plan::exchange) asks the workload,
//! whose protocol part adds its own facts); the summary reads it, so the summary names no
//! driver type and a protocol's figures reach the result without the summary knowing the
//! protocol.

use serde::{Deserialize, Serialize};
use std::net::SocketAddr;

/// What kind of exchange a scheme's protocol is: decides which flags apply to it and which
/// report sections it has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// Requests and replies (or bulk bytes) over a byte stream.
    Stream,
    /// Datagrams: a request and its reply are one datagram each.
    Datagram,
    /// HTTP requests: method, path, headers, statuses.
    Http,
}

/// The protocol a target speaks, named as its driver names itself in results (`http` for
/// `https`, HTTP/2 and HTTP/3 too). A new driver adds its name here, beside its registration.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProtocolName {
    /// Wirebench framing, or raw bytes, over TCP.
    #[default]
    Tcp,
    /// Datagrams over UDP.
    Udp,
    /// HTTP/1.1, HTTP/2 or HTTP/3, with or without TLS.
    Http,
    /// DICOM's C-ECHO and C-STORE.
    Dicom,
    /// Redis's RESP commands.
    Redis,
    /// gRPC unary calls.
    Grpc,
}

impl ProtocolName {
    /// Every protocol, in the order of their names' first use.
    pub const ALL: [ProtocolName; 6] = [
        ProtocolName::Tcp,
        ProtocolName::Udp,
        ProtocolName::Http,
        ProtocolName::Dicom,
        ProtocolName::Redis,
        ProtocolName::Grpc,
    ];

    /// Its name in results and reports (`tcp`).
    pub fn name(self) -> &'static str {
        match self {
            ProtocolName::Tcp => "tcp",
            ProtocolName::Udp => "udp",
            ProtocolName::Http => "http",
            ProtocolName::Dicom => "dicom",
            ProtocolName::Redis => "redis",
            ProtocolName::Grpc => "grpc",
        }
    }
}

/// What each client connection does (the validated `--mode`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ClientMode {
    /// Request/response on persistent connections.
    #[default]
    Rr,
    /// Connect, request, response, close: a new connection for every request.
    Crr,
    /// Bulk send to a sink: MB/s.
    Stream,
    /// Read what the server pushes: messages/s and MB/s.
    Source,
}

impl ClientMode {
    /// The flag spelling (`--mode rr`).
    pub fn name(self) -> &'static str {
        match self {
            ClientMode::Rr => "rr",
            ClientMode::Crr => "crr",
            ClientMode::Stream => "stream",
            ClientMode::Source => "source",
        }
    }

    /// Whether the mode moves bytes in bulk (no replies).
    pub fn bulk(self) -> bool {
        matches!(self, ClientMode::Stream | ClientMode::Source)
    }

    /// Every mode.
    pub const ALL: [ClientMode; 4] = [
        ClientMode::Rr,
        ClientMode::Crr,
        ClientMode::Stream,
        ClientMode::Source,
    ];
}

impl std::fmt::Display for ProtocolName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::fmt::Display for ClientMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is no protocol's, or no mode's.
#[derive(Debug, thiserror::Error)]
#[error("{0:?} is not one of {1}")]
pub struct UnknownName(String, String);

impl std::str::FromStr for ProtocolName {
    type Err = UnknownName;

    fn from_str(name: &str) -> Result<ProtocolName, UnknownName> {
        let names = ProtocolName::ALL.map(ProtocolName::name);
        (ProtocolName::ALL.into_iter().find(|p| p.name() == name))
            .ok_or_else(|| UnknownName(name.into(), names.join(", ")))
    }
}

impl std::str::FromStr for ClientMode {
    type Err = UnknownName;

    fn from_str(name: &str) -> Result<ClientMode, UnknownName> {
        let names = ClientMode::ALL.map(ClientMode::name);
        (ClientMode::ALL.into_iter().find(|m| m.name() == name))
            .ok_or_else(|| UnknownName(name.into(), names.join(", ")))
    }
}

/// How the end of a reply is found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reply {
    /// Exactly this many bytes.
    Size(usize),
    /// Everything up to and including this delimiter.
    Until(Vec<u8>),
}

/// A run's operations as the summary reads them.
#[derive(Clone, Debug)]
pub struct Exchange {
    /// The URL as the user wrote it.
    pub url: String,
    /// The address connected to.
    pub addr: SocketAddr,
    /// The protocol, as results name it (`http` for `https` too).
    pub protocol: ProtocolName,
    /// What kind of exchange it is.
    pub family: Family,
    /// rr, crr, stream or source.
    pub mode: ClientMode,
    /// Bytes per request (the message unit of a stream or source).
    pub request_bytes: usize,
    /// How a reply ends.
    pub reply: Reply,
    /// Whether each connection opens with the wirebench preamble.
    pub preamble: bool,
    /// HTTP's requests, for the result's `http` section; None for other protocols.
    pub http: Option<HttpFacts>,
    /// The kinds of a weighted mix (`--mix`); None without one.
    pub mix: Option<MixFacts>,
    /// The file set requests draw from (`--manifest`, `--dataset`); None without one.
    pub files: Option<FileSetFacts>,
}

/// What an HTTP run sent, as its result's `http` section states it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpFacts {
    /// The requests' method, or `mixed` when they differ.
    pub method: String,
    /// The path as written (with several requests, their list).
    pub path: String,
    /// How many request shapes were used in turn.
    pub requests: usize,
    /// Whether connections were kept open between requests.
    pub keepalive: bool,
    /// The HTTP version spoken: `1.1`, `2` or `3`.
    pub version: &'static str,
}

/// A weighted mix's kinds, in the order the record counts them ([`crate::record::kinds`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MixFacts {
    /// The kinds' names.
    pub names: Vec<String>,
    /// Their weights, each at least 1.
    pub weights: Vec<u64>,
}

/// A file set requests draw from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileSetFacts {
    /// Its bytes in all: the data set's size.
    pub bytes: u64,
    /// How many files.
    pub files: u64,
    /// How popular each is, as written (`uniform`, `zipf:1.1`).
    pub popularity: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Results name protocols and modes as they did when the fields were strings: the JSON
    /// documents stay byte for byte what they were, and read back into the same values.
    #[test]
    fn names_are_the_documents_strings() {
        let protocols = ProtocolName::ALL.map(|p| serde_json::to_string(&p).unwrap());
        assert_eq!(
            protocols,
            ["tcp", "udp", "http", "dicom", "redis", "grpc"].map(|n| format!("\"{n}\""))
        );
        let modes = ClientMode::ALL.map(|m| serde_json::to_string(&m).unwrap());
        assert_eq!(
            modes,
            ["rr", "crr", "stream", "source"].map(|n| format!("\"{n}\""))
        );
        for p in ProtocolName::ALL {
            assert_eq!(p.name(), p.to_string());
            assert_eq!(p.name().parse::<ProtocolName>().unwrap(), p);
            let back: ProtocolName = serde_json::from_str(&format!("\"{p}\"")).unwrap();
            assert_eq!(back, p);
        }
        for m in ClientMode::ALL {
            assert_eq!(m.name().parse::<ClientMode>().unwrap(), m);
            let back: ClientMode = serde_json::from_str(&format!("\"{m}\"")).unwrap();
            assert_eq!(back, m);
        }
        let wrong = "quic".parse::<ProtocolName>().unwrap_err().to_string();
        assert_eq!(
            wrong,
            "\"quic\" is not one of tcp, udp, http, dicom, redis, grpc"
        );
    }
}
