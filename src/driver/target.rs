//! Where the load goes: a resolved [`Target`] and the [`Scheme`] of its URL, as each driver
//! declares its schemes (so the plan can parse a URL without knowing the protocols).

use std::net::SocketAddr;

pub use crate::record::exchange::{Family, ProtocolName};

/// One URL scheme a driver serves.
#[derive(Debug, PartialEq, Eq)]
pub struct Scheme {
    /// The scheme as written in URLs (`https`).
    pub name: &'static str,
    /// The protocol, as results name it (`http` for `https` too).
    pub protocol: ProtocolName,
    /// What kind of exchange it is.
    pub family: Family,
    /// The port when the URL gives none; `None` when a URL must give one.
    pub default_port: Option<u16>,
    /// Whether connections speak TLS.
    pub tls: bool,
    /// Whether its URLs carry a path (HTTP's path and query, DICOM's called AE title).
    pub path: bool,
}

/// A resolved target.
#[derive(Clone, Debug)]
pub struct Target {
    /// The URL's scheme, as a driver declared it.
    pub scheme: &'static Scheme,
    /// The URL as the user wrote it.
    pub url: String,
    /// The address connected to (the first the name resolved to).
    pub addr: SocketAddr,
    /// `HOST:PORT` as written (HTTP's Host header).
    pub host: String,
    /// The path and query (HTTP), `/` if none.
    pub path: String,
}

impl Target {
    /// Whether the target speaks TLS (`https://`).
    pub fn tls(&self) -> bool {
        self.scheme.tls
    }

    /// What kind of exchange the target's protocol is.
    pub fn family(&self) -> Family {
        self.scheme.family
    }
}
