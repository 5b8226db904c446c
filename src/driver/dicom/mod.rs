//! DICOM (`dicom://HOST:PORT/CALLED_AE`): each operation a C-ECHO or a C-STORE (PS3.7 §9.1)
//! on an association (PS3.8), one per connection or, with `--mode crr`, one per operation.
//!
//! The upper layer is our own small codec ([`pdu`]), not the dicom-rs crates: a session must be
//! driven by the engine's cancel-safe, non-blocking `flush`/`read` calls on its own socket, and
//! the hot path is only framing (a command and a data set cut into P-DATA-TF PDUs), which a few
//! hundred lines do without a DICOM dictionary to compile. [`dataset`] writes the images,
//! [`dimse`] the commands, and [`DicomSession`] runs an association.

pub mod dataset;
pub mod dimse;
pub mod flags;
pub mod pdu;
pub mod plan;
mod session;
pub mod spec;

use super::stream::{connect_stream, Stream};
use super::target::{Family, ProtocolName, Scheme};
use super::workload::ClientMode;
use super::{Driver, Job, Placement, Protocol};
use crate::record::{ErrorKind, OpError};
use crate::sys::socket::SocketOptions;
use dataset::{CtImage, CT_IMAGE, EXPLICIT_LE, IMPLICIT_LE};
use pdu::{Accepted, Proposed};
pub use session::DicomSession;
use spec::{DicomSpec, Images, Op};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The Verification context's ID; image contexts follow as 3, 5, 7 … (IDs are odd).
const VERIFICATION_PC: u8 = 1;
/// An answer to our association request longer than this is not DICOM talking.
const MAX_ANSWER: usize = 64 * 1024;

/// What every session of a run shares: the workload, the contexts proposed, the image.
#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) spec: Arc<DicomSpec>,
    /// The contexts proposed in every association.
    pub(crate) contexts: Vec<Proposed>,
    /// For `--files`: the context of each file.
    pub(crate) file_pc: Vec<u8>,
    /// For generated images: the image.
    pub(crate) image: Option<CtImage>,
    /// crr: each association carries one operation, then is released.
    pub(crate) per_request: bool,
}

/// DICOM over TCP (`dicom://`).
#[derive(Debug)]
pub struct Dicom {
    shared: Arc<Shared>,
}

impl Protocol for Dicom {
    const SCHEMES: &'static [Scheme] = &[Scheme {
        name: "dicom",
        protocol: ProtocolName::Dicom,
        family: Family::Stream,
        default_port: Some(104),
        tls: false,
        path: true,
    }];
    const FLAGS: &'static [&'static str] = &[flags::DICOM, super::tcp::flags::MESSAGE];
    type Driver = DicomDriver;

    // The message flags' checks come first, as for tcp://; what DICOM refuses of them
    // ([`plan::spec`]) and the request it sends are its build's.
    fn message(
        groups: &[&dyn crate::driver::FlagGroup],
        workload: &mut crate::driver::workload::Workload,
    ) -> Result<(), crate::error::UsageError> {
        crate::driver::group::<super::tcp::flags::MessageArgs>(groups)?.shape(workload)
    }

    fn build(
        given: &crate::driver::Given,
        workload: &mut crate::driver::workload::Workload,
    ) -> Result<(), crate::error::UsageError> {
        use crate::driver::workload::{Reply, Request};
        let args = plan::Args {
            dicom: given.group()?,
            message: given.group()?,
            mode: workload.mode,
            pipeline: given.pipeline,
        };
        let spec = plan::spec(&args, given.target)?;
        // The report's request size: one operation's data set (the command alone for echo);
        // a response's size is the peer's, so none is claimed.
        workload.request = Request::Sized {
            size: plan::request_bytes(&spec),
            preamble: false,
        };
        workload.reply = Reply::Size(0);
        workload.spec = Some(Arc::new(spec));
        Ok(())
    }

    fn prepare(job: &Job) -> Result<Dicom, crate::driver::Error> {
        let spec = job.workload.shared::<spec::DicomSpec>().ok_or_else(|| {
            crate::driver::Error::NoWorkload(
                "a dicom:// run needs its DICOM workload (a plan built by Plan::try_from)".into(),
            )
        })?;
        let mut contexts = vec![Proposed {
            id: VERIFICATION_PC,
            abstract_syntax: dimse::VERIFICATION.into(),
            transfer_syntaxes: vec![IMPLICIT_LE.into(), EXPLICIT_LE.into()],
        }];
        let mut file_pc = Vec::new();
        let mut image = None;
        match (&spec.op, &spec.images) {
            (Op::Echo, _) => {}
            (Op::Store, Images::Generated(size)) => {
                contexts.push(context(3, CT_IMAGE, EXPLICIT_LE));
                image = Some(CtImage::new(*size, &mut super::http::template::Rng::new()));
            }
            (Op::Store, Images::Files(files)) => {
                for f in files.iter() {
                    let known = contexts.iter().find(|c| {
                        c.abstract_syntax == f.sop_class
                            && c.transfer_syntaxes[0] == f.transfer_syntax
                    });
                    let id = match known {
                        Some(c) => c.id,
                        None if contexts.len() < 128 => {
                            let id = contexts.len() as u8 * 2 + 1;
                            contexts.push(context(id, &f.sop_class, &f.transfer_syntax));
                            id
                        }
                        None => return Err(crate::driver::Error::Negotiation("--files: the files need more than 127 presentation contexts (SOP class × transfer syntax); an association has at most 128: split the directory".into())),
                    };
                    file_pc.push(id);
                }
            }
        }
        Ok(Dicom {
            shared: Arc::new(Shared {
                spec,
                contexts,
                file_pc,
                image,
                per_request: job.workload.mode == ClientMode::Crr,
            }),
        })
    }

    fn driver(&self, job: &Job, at: Placement) -> DicomDriver {
        DicomDriver {
            addr: job.target.addr,
            socket: job.socket,
            blocking: at.blocking,
            shared: self.shared.clone(),
        }
    }
}

fn context(id: u8, class: &str, ts: &str) -> Proposed {
    Proposed {
        id,
        abstract_syntax: class.into(),
        transfer_syntaxes: vec![ts.into()],
    }
}

/// Opens associations to one target.
#[derive(Debug)]
pub struct DicomDriver {
    addr: SocketAddr,
    socket: SocketOptions,
    blocking: bool,
    shared: Arc<Shared>,
}

impl Driver for DicomDriver {
    type Session = DicomSession;

    /// Connects and negotiates an association within `timeout`; the handshake time is both.
    async fn connect(
        &self,
        timeout: Duration,
    ) -> Result<(DicomSession, Option<Duration>), OpError> {
        let began = Instant::now();
        let (mut stream, _) =
            connect_stream(self.addr, self.socket, timeout, self.blocking).await?;
        // The target is there: what fails now is its answer.
        let accepted = match tokio::time::timeout(timeout, self.associate(&mut stream)).await {
            Ok(r) => r.map_err(OpError::reached)?,
            Err(_) => {
                return Err(OpError::new(
                    ErrorKind::Timeout,
                    format!("no answer to the association request within {timeout:?}: is {} a DICOM server?", self.addr),
                ).reached())
            }
        };
        self.check_contexts(&accepted)?;
        let session = DicomSession::new(stream, self.shared.clone(), accepted.max_pdu);
        Ok((session, Some(began.elapsed())))
    }
}

impl DicomDriver {
    /// Sends A-ASSOCIATE-RQ and reads the answer (PS3.8 §7.1).
    async fn associate(&self, stream: &mut Stream) -> Result<Accepted, OpError> {
        let spec = &self.shared.spec;
        let rq = pdu::associate_rq(&spec.called, &spec.calling, &self.shared.contexts);
        stream.write_from(&rq, &mut 0).await?;
        let mut buf = Vec::with_capacity(1024);
        let mut chunk = [0u8; 4096];
        let (kind, len) = loop {
            if let Some((kind, len)) = pdu::peek(&buf) {
                if !matches!(kind, pdu::ASSOCIATE_AC | pdu::ASSOCIATE_RJ | pdu::ABORT)
                    || len > MAX_ANSWER
                {
                    return Err(not_dicom(self.addr, &buf));
                }
                if buf.len() >= len {
                    break (kind, len);
                }
            }
            let n = stream
                .read(&mut chunk)
                .await
                .map_err(|e| OpError::io("read the association answer", &e))?;
            if n == 0 {
                return Err(OpError::new(
                    ErrorKind::ShortReply,
                    format!("{} closed the connection without answering the association request: is it a DICOM server?", self.addr),
                ));
            }
            buf.extend_from_slice(&chunk[..n]);
        };
        let body = &buf[pdu::HEADER..len];
        match kind {
            pdu::ASSOCIATE_AC => {
                pdu::parse_ac(body).map_err(|e| OpError::new(ErrorKind::Mismatch, e.to_string()))
            }
            pdu::ASSOCIATE_RJ => Err(OpError::new(ErrorKind::Status, pdu::rejection(body))),
            _ => Err(OpError::new(ErrorKind::Reset, pdu::abort_reason(body))),
        }
    }

    /// The contexts this run needs must have been accepted (PS3.8 §9.3.3.2).
    fn check_contexts(&self, accepted: &Accepted) -> Result<(), OpError> {
        let needed: Vec<&Proposed> = match self.shared.spec.op {
            Op::Echo => self.shared.contexts.iter().take(1).collect(),
            Op::Store => self.shared.contexts.iter().skip(1).collect(),
        };
        for pc in needed {
            let result = accepted.contexts.iter().find(|(id, _)| *id == pc.id);
            let reason = match result {
                Some((_, Ok(_))) => continue,
                Some((_, Err(1))) => "refused by the user",
                Some((_, Err(3))) => "abstract syntax not supported",
                Some((_, Err(4))) => "transfer syntaxes not supported",
                Some((_, Err(_))) => "refused, no reason given",
                None => "not answered",
            };
            return Err(OpError::new(
                ErrorKind::Status,
                format!(
                    "the peer accepted the association but not the presentation context for SOP class {} in {}: {reason}",
                    pc.abstract_syntax,
                    pc.transfer_syntaxes.join(" or ")
                ),
            ));
        }
        Ok(())
    }
}

/// The error for a peer whose answer is not an association PDU.
fn not_dicom(addr: SocketAddr, answer: &[u8]) -> OpError {
    let head: String = answer
        .iter()
        .take(16)
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(" ");
    OpError::new(
        ErrorKind::Mismatch,
        format!("{addr} does not speak DICOM: it answered the association request with bytes {head} (an A-ASSOCIATE-AC starts with 02)"),
    )
}
