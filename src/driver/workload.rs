//! What one operation is, protocol by protocol's common terms: the client mode, the request
//! bytes and how a reply is recognised (and, for HTTP, the request shapes). The plan builds a
//! [`Workload`] from the command line, each protocol its part; drivers read it.

use crate::wire::framing::Preamble;
use std::any::Any;
use std::sync::Arc;

/// Request size when no flag says otherwise (`--size`, `--payload`).
pub const DEFAULT_SIZE: usize = 64;

use crate::record::exchange::Exchange;
pub use crate::record::exchange::{ClientMode, Reply};

/// What one operation is.
#[derive(Clone, Debug)]
pub struct Workload {
    /// rr, crr, stream or source.
    pub mode: ClientMode,
    /// The request bytes (or the message unit in stream/source).
    pub request: Request,
    /// How a reply is recognised (rr and crr).
    pub reply: Reply,
    /// The protocol's own part (HTTP's requests, DICOM's operation), built by its
    /// [`Protocol::build`](super::Protocol::build); None where the message flags say it all.
    pub spec: Option<Arc<dyn Spec>>,
}

/// A protocol's own part of a workload, built from its flag group and read back by its
/// drivers; the plan and the engine hold it without knowing its type.
pub trait Spec: Any + std::fmt::Debug + Send + Sync {
    /// Whether the workload draws random numbers (template keys), so that the run's seed is
    /// worth recording.
    fn is_random(&self) -> bool {
        false
    }

    /// Adds the protocol's own facts a result reports (HTTP's requests, a mix, a file set) to
    /// `exchange`, as plain data: how a protocol's figures reach the summary, which names no
    /// driver type.
    fn describe(&self, exchange: &mut Exchange) {
        let _ = exchange;
    }
}

/// What a request is.
#[derive(Clone, Debug)]
pub enum Request {
    /// `size` synthetic bytes; with `preamble`, announced in wirebench framing.
    Sized {
        /// Bytes per request.
        size: usize,
        /// Whether each connection starts with the wirebench preamble.
        preamble: bool,
    },
    /// Exact bytes given by the user (`--payload`), sent as they are.
    Payload(Vec<u8>),
}

impl Request {
    /// Bytes per request.
    pub fn len(&self) -> usize {
        match self {
            Request::Sized { size, .. } => *size,
            Request::Payload(p) => p.len(),
        }
    }

    /// True for an empty request (never produced by validation).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Workload {
    /// A workload in `mode` before any protocol shapes it: [`DEFAULT_SIZE`]-byte requests in
    /// wirebench framing, echoed.
    pub fn new(mode: ClientMode) -> Workload {
        Workload {
            mode,
            request: Request::Sized {
                size: DEFAULT_SIZE,
                preamble: true,
            },
            reply: Reply::Size(DEFAULT_SIZE),
            spec: None,
        }
    }

    /// The protocol's part, if it is a `T` (HTTP's [`HttpSpec`](super::http::spec::HttpSpec)).
    pub fn spec_of<T: Spec>(&self) -> Option<&T> {
        self.spec
            .as_deref()
            .and_then(|s| (s as &dyn Any).downcast_ref())
    }

    /// The protocol's part, if it is a `T`, shared (each worker's driver holds it).
    pub fn shared<T: Spec>(&self) -> Option<Arc<T>> {
        let spec: Arc<dyn Any + Send + Sync> = self.spec.clone()?;
        spec.downcast().ok()
    }

    /// What the run's operations are, in the terms the summary reads: this workload sent to
    /// `target`, with its protocol part's own facts.
    pub fn exchange(&self, target: &super::target::Target) -> Exchange {
        let mut exchange = Exchange {
            url: target.url.clone(),
            addr: target.addr,
            protocol: target.scheme.protocol,
            family: target.family(),
            mode: self.mode,
            request_bytes: self.request.len(),
            reply: self.reply.clone(),
            preamble: self.preamble().is_some(),
            http: None,
            mix: None,
            files: None,
        };
        if let Some(spec) = &self.spec {
            spec.describe(&mut exchange);
        }
        exchange
    }

    /// Whether the workload draws random numbers.
    pub fn is_random(&self) -> bool {
        self.spec.as_ref().is_some_and(|s| s.is_random())
    }

    /// The preamble each connection opens with, if the request is in wirebench framing.
    pub fn preamble(&self) -> Option<Preamble> {
        let Request::Sized {
            size,
            preamble: true,
        } = self.request
        else {
            return None;
        };
        let size = size as u64;
        Some(match self.mode {
            ClientMode::Rr | ClientMode::Crr => Preamble::Exchange {
                request: size,
                reply: match &self.reply {
                    Reply::Size(n) => *n as u64,
                    Reply::Until(_) => size,
                },
            },
            ClientMode::Stream => Preamble::Stream {
                request: size,
                report: true,
            },
            ClientMode::Source => Preamble::Source { message: size },
        })
    }
}
