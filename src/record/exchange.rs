//! What a run's operations were, in terms every room reads: the target, the protocol and its
//! family, the client mode, a request's size and how a reply ends, and the facts a protocol's
//! own result section reports (HTTP's requests, a mix's kinds, a file set) as plain data.
//!
//! The drivers fill it ([`Plan::exchange`](crate::plan::Plan::exchange) asks the workload,
//! whose protocol part adds its own facts); the summary reads it, so the summary names no
//! driver type and a protocol's figures reach the result without the summary knowing the
//! protocol.

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

/// What each client connection does (the validated `--mode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClientMode {
    /// Request/response on persistent connections.
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
    /// The protocol's name in reports (`http` for `https` too).
    pub protocol: &'static str,
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
