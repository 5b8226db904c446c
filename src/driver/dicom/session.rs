//! One association: requests (C-ECHO-RQ, or C-STORE-RQ and its data set) written as P-DATA-TF
//! PDUs, responses read back, and the release: after each operation in crr mode (the
//! operation's time includes it), at the end of the run otherwise. An association dropped
//! before its release is aborted (A-ABORT), as PS3.8 §7.3 has a user do.

use super::dataset::{new_uid, CtImage, CT_IMAGE};
use super::dimse::{self, Response};
use super::pdu;
use super::spec::{Images, Op};
use super::{Shared, VERIFICATION_PC};
use crate::driver::http::template::Rng;
use crate::driver::stream::Stream;
use crate::driver::{Done, Expiry, ReadOutcome, Sent, Session};
use crate::record::{ErrorKind, OpError};
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Bytes read at a time; replies are small commands.
const READ_CHUNK: usize = 64 * 1024;
/// A PDU from the peer longer than this is refused (we announced 16 KiB).
const MAX_IN_PDU: usize = 4 << 20;

/// One open association.
#[derive(Debug)]
pub struct DicomSession {
    stream: Stream,
    shared: Arc<Shared>,
    /// The acceptor's maximum P-DATA-TF length (0: no limit).
    max_pdu: u32,
    /// PDUs to send, and how far they are sent.
    out: Vec<u8>,
    out_pos: usize,
    /// Payload bytes queued and not yet reported by `flush`.
    queued: usize,
    /// Input read and not yet parsed.
    inbuf: Vec<u8>,
    filled: usize,
    /// The response command being reassembled from its fragments.
    command: Vec<u8>,
    /// (message ID, send times) of the operations awaiting their response.
    in_flight: VecDeque<(u16, Sent)>,
    /// crr: the operation answered, waiting for the release to finish it.
    releasing: Option<Done>,
    /// The association was released (or the peer asked to): no more operations on it.
    ended: bool,
    completed: Vec<Done>,
    next_id: u16,
    rng: Rng,
}

impl DicomSession {
    pub(super) fn new(stream: Stream, shared: Arc<Shared>, max_pdu: u32) -> DicomSession {
        DicomSession {
            stream,
            shared,
            max_pdu,
            out: Vec::new(),
            out_pos: 0,
            queued: 0,
            inbuf: vec![0; READ_CHUNK],
            filled: 0,
            command: Vec::new(),
            in_flight: VecDeque::new(),
            releasing: None,
            ended: false,
            completed: Vec::new(),
            next_id: 1,
            rng: Rng::new(),
        }
    }

    /// Appends the PDUs of operation `seq` with message ID `id` to the output.
    #[allow(
        clippy::expect_used,
        reason = "the shared state of a generated-image store is built with its image"
    )]
    fn write_op(&mut self, seq: u64, id: u16) {
        let start = self.out.len();
        let shared = self.shared.clone();
        match (&shared.spec.op, &shared.spec.images) {
            (Op::Echo, _) => {
                let rq = dimse::echo_rq(id);
                pdu::p_data(&mut self.out, VERIFICATION_PC, true, &[&rq], self.max_pdu);
            }
            (Op::Store, Images::Generated(_)) => {
                let image = shared.image.as_ref().expect("prepared with the image");
                let uid = new_uid(&mut self.rng);
                let rq = dimse::store_rq(id, CT_IMAGE, &uid);
                let pc = shared.contexts[1].id;
                pdu::p_data(&mut self.out, pc, true, &[&rq], self.max_pdu);
                let element = CtImage::uid_element(&uid);
                pdu::p_data(
                    &mut self.out,
                    pc,
                    false,
                    &image.parts(&element),
                    self.max_pdu,
                );
            }
            (Op::Store, Images::Files(files)) => {
                let i = (seq % files.len() as u64) as usize;
                let (file, pc) = (&files[i], shared.file_pc[i]);
                let rq = dimse::store_rq(id, &file.sop_class, &file.sop_instance);
                pdu::p_data(&mut self.out, pc, true, &[&rq], self.max_pdu);
                pdu::p_data(&mut self.out, pc, false, &[&file.dataset], self.max_pdu);
            }
        }
        self.queued += self.out.len() - start;
    }

    /// Writes whatever is still to go out (a release request queued by a read).
    async fn send_pending(&mut self) -> Result<usize, OpError> {
        if self.out_pos == self.out.len() {
            return Ok(0);
        }
        let n = self.stream.write_from(&self.out, &mut self.out_pos).await?;
        self.out.clear();
        self.out_pos = 0;
        Ok(n)
    }

    /// Parses every whole PDU in the input; completed operations go to `completed`.
    fn parse(&mut self) -> Result<(), OpError> {
        let mut at = 0;
        while let Some((kind, len)) = pdu::peek(&self.inbuf[at..self.filled]) {
            if len > MAX_IN_PDU {
                return Err(OpError::new(
                    ErrorKind::Mismatch,
                    format!(
                        "the peer sent a {len}-byte PDU, over the {OUR} bytes we announced",
                        OUR = pdu::OUR_MAX_PDU
                    ),
                ));
            }
            if self.filled - at < len {
                if self.inbuf.len() < len {
                    self.inbuf.resize(len, 0);
                }
                break;
            }
            let body = self.inbuf[at + pdu::HEADER..at + len].to_vec();
            at += len;
            self.pdu(kind, &body)?;
        }
        self.inbuf.copy_within(at..self.filled, 0);
        self.filled -= at;
        Ok(())
    }

    /// Acts on one PDU from the peer.
    fn pdu(&mut self, kind: u8, body: &[u8]) -> Result<(), OpError> {
        match kind {
            pdu::P_DATA_TF => {
                for pdv in pdu::pdvs(body) {
                    let pdv = pdv.map_err(|e| OpError::new(ErrorKind::Mismatch, e.to_string()))?;
                    if !pdv.command {
                        continue; // C-ECHO-RSP and C-STORE-RSP carry no data set
                    }
                    self.command.extend_from_slice(pdv.data);
                    if pdv.last {
                        let command = std::mem::take(&mut self.command);
                        let r = dimse::parse_response(&command).ok_or_else(|| {
                            OpError::new(
                                ErrorKind::Mismatch,
                                "a response command without command field or status",
                            )
                        })?;
                        self.response(r)?;
                    }
                }
                Ok(())
            }
            pdu::RELEASE_RP if self.releasing.is_some() => {
                self.ended = true;
                self.completed.extend(self.releasing.take());
                Ok(())
            }
            pdu::RELEASE_RQ => {
                self.ended = true;
                let _ = self.stream.try_write_now(&pdu::release_rp());
                Err(OpError::new(
                    ErrorKind::Reset,
                    "the peer released the association with operations in flight",
                ))
            }
            pdu::ABORT => {
                self.ended = true;
                Err(OpError::new(ErrorKind::Reset, pdu::abort_reason(body)))
            }
            other => Err(OpError::new(
                ErrorKind::Mismatch,
                format!(
                    "the peer sent an unexpected PDU of type 0x{other:02x} during the association"
                ),
            )),
        }
    }

    /// A response: the operation's outcome by its DIMSE status (PS3.7 Annex C).
    fn response(&mut self, r: Response) -> Result<(), OpError> {
        let Some(&(id, sent)) = self.in_flight.front() else {
            return Err(OpError::new(
                ErrorKind::Mismatch,
                "a response to no request",
            ));
        };
        let (op, expected) = match self.shared.spec.op {
            Op::Echo => ("C-ECHO", dimse::C_ECHO_RSP),
            Op::Store => ("C-STORE", dimse::C_STORE_RSP),
        };
        if r.command != expected || r.responds_to != id {
            return Err(OpError::new(
                ErrorKind::Mismatch,
                format!("expected the {op} response to message {id}, got command 0x{:04x} for message {}", r.command, r.responds_to),
            ));
        }
        self.in_flight.pop_front();
        let mut done = Done::ok(sent);
        if r.status != 0 {
            done.accepted = false;
            done.failure = Some(dimse::status_failure(op, r.status));
        }
        if self.shared.per_request && self.in_flight.is_empty() {
            // crr: release before the operation counts as done (PS3.8 §7.2).
            self.out.extend_from_slice(&pdu::release_rq());
            self.releasing = Some(done);
        } else {
            self.completed.push(done);
        }
        Ok(())
    }
}

impl Session for DicomSession {
    fn in_flight(&self) -> usize {
        self.in_flight.len() + usize::from(self.releasing.is_some())
    }

    fn oldest(&self) -> Option<Instant> {
        self.releasing
            .map(|d| d.sent.at)
            .or_else(|| self.in_flight.front().map(|&(_, s)| s.at))
    }

    fn queue(&mut self, seq: u64, sent: Sent) {
        let id = self.next_id;
        // Message IDs are 16 bits (PS3.7 §9.3.1.1); 0 is skipped, some peers treat it as unset.
        self.next_id = self.next_id.checked_add(1).unwrap_or(1);
        self.write_op(seq, id);
        self.in_flight.push_back((id, sent));
    }

    async fn flush(&mut self) -> Result<usize, OpError> {
        self.send_pending().await?;
        Ok(std::mem::take(&mut self.queued))
    }

    async fn read(&mut self) -> Result<ReadOutcome, OpError> {
        self.completed.clear();
        self.send_pending().await?;
        let n = self
            .stream
            .read(&mut self.inbuf[self.filled..])
            .await
            .map_err(|e| OpError::io("read response", &e))?;
        if n == 0 {
            self.ended = true;
            return Err(OpError::new(
                ErrorKind::ShortReply,
                "the peer closed the connection with an operation in flight",
            ));
        }
        self.filled += n;
        self.parse()?;
        if !self.out.is_empty() {
            // A release queued by this read goes out now: the engine may not flush again.
            let _ = self
                .stream
                .try_write_now(&self.out[self.out_pos..])
                .map(|w| self.out_pos += w);
            if self.out_pos == self.out.len() {
                self.out.clear();
                self.out_pos = 0;
            }
        }
        Ok(ReadOutcome {
            bytes: n,
            replies: self.completed.len(),
            ..ReadOutcome::default()
        })
    }

    fn completed(&self) -> &[Done] {
        &self.completed
    }

    fn reusable(&self) -> bool {
        !self.ended
    }

    /// Responses come in order: past the oldest's time limit the association is dropped.
    fn expire(&mut self, now: Instant, timeout: Duration) -> Expiry {
        match self.oldest() {
            Some(at) if now >= at + timeout => Expiry::Reset,
            _ => Expiry::None,
        }
    }

    fn segment(&self) -> Option<crate::record::Segment> {
        self.stream.segment()
    }

    /// Releases the association (PS3.8 §7.2) at the end of a run, waiting up to `limit`.
    async fn close(&mut self, limit: Duration) {
        if self.ended || !self.in_flight.is_empty() {
            return;
        }
        self.out.extend_from_slice(&pdu::release_rq());
        self.releasing = Some(Done::ok(Sent {
            intended: Instant::now(),
            at: Instant::now(),
        }));
        let release = async {
            while !self.ended {
                if self.read().await.is_err() {
                    return;
                }
            }
        };
        if tokio::time::timeout(limit, release).await.is_err() {
            // No answer to the release within the limit: abort instead (PS3.8 §7.3.1).
            let _ = self.stream.try_write_now(&pdu::abort());
        }
        self.releasing = None;
        self.ended = true;
    }
}

impl Drop for DicomSession {
    /// An association dropped unreleased (an error, a timeout, the run's hard stop) is aborted
    /// rather than just closed, so the peer knows why (PS3.8 §7.3.1); best effort, no waiting.
    fn drop(&mut self) {
        if !self.ended {
            let _ = self.stream.try_write_now(&pdu::abort());
        }
    }
}
