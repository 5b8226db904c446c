//! DIMSE command sets (PS3.7 §9.3, §E.1): the C-ECHO and C-STORE requests we send and the
//! responses we read, always in implicit VR little endian (PS3.7 §6.3.1), with the status
//! codes of PS3.7 Annex C named.

use crate::driver::Failure;
use crate::record::ErrorKind;

/// The Verification SOP class (PS3.4 Annex A).
pub const VERIFICATION: &str = "1.2.840.10008.1.1";
/// C-STORE-RQ's command field (PS3.7 §9.3.1.1).
const C_STORE_RQ: u16 = 0x0001;
/// C-STORE-RSP.
pub const C_STORE_RSP: u16 = 0x8001;
/// C-ECHO-RQ (PS3.7 §9.3.5.1).
const C_ECHO_RQ: u16 = 0x0030;
/// C-ECHO-RSP.
pub const C_ECHO_RSP: u16 = 0x8030;
/// Command Data Set Type: no data set follows (PS3.7 §E.1).
const NO_DATASET: u16 = 0x0101;
/// Command Data Set Type: a data set follows (any other value; DCMTK sends 0x0000 too).
const WITH_DATASET: u16 = 0x0000;

/// One implicit VR element of group 0000: tag, 4-byte length, value (PS3.5 §7.1.3).
fn element(out: &mut Vec<u8>, elem: u16, value: &[u8]) {
    out.extend_from_slice(&0u16.to_le_bytes());
    out.extend_from_slice(&elem.to_le_bytes());
    out.extend_from_slice(&(value.len() as u32).to_le_bytes());
    out.extend_from_slice(value);
}

/// A UID value padded to even length with a NUL (PS3.5 §9.1).
fn uid(out: &mut Vec<u8>, elem: u16, text: &str) {
    let mut v = text.as_bytes().to_vec();
    if v.len() % 2 == 1 {
        v.push(0);
    }
    element(out, elem, &v);
}

/// Prefixes the command elements with Command Group Length (0000,0000), the byte count of the
/// elements after it (PS3.7 §E.1).
fn with_group_length(body: Vec<u8>) -> Vec<u8> {
    let mut out = Vec::with_capacity(12 + body.len());
    element(&mut out, 0x0000, &(body.len() as u32).to_le_bytes());
    out.extend_from_slice(&body);
    out
}

/// C-ECHO-RQ (PS3.7 Table 9.3-12).
pub fn echo_rq(message_id: u16) -> Vec<u8> {
    let mut b = Vec::with_capacity(96);
    uid(&mut b, 0x0002, VERIFICATION);
    element(&mut b, 0x0100, &C_ECHO_RQ.to_le_bytes());
    element(&mut b, 0x0110, &message_id.to_le_bytes());
    element(&mut b, 0x0800, &NO_DATASET.to_le_bytes());
    with_group_length(b)
}

/// C-STORE-RQ (PS3.7 Table 9.3-1), priority medium.
pub fn store_rq(message_id: u16, sop_class: &str, sop_instance: &str) -> Vec<u8> {
    let mut b = Vec::with_capacity(160);
    uid(&mut b, 0x0002, sop_class);
    element(&mut b, 0x0100, &C_STORE_RQ.to_le_bytes());
    element(&mut b, 0x0110, &message_id.to_le_bytes());
    element(&mut b, 0x0700, &0u16.to_le_bytes());
    element(&mut b, 0x0800, &WITH_DATASET.to_le_bytes());
    uid(&mut b, 0x1000, sop_instance);
    with_group_length(b)
}

/// The fields of a response we act on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Response {
    /// Command Field (0000,0100).
    pub command: u16,
    /// Message ID Being Responded To (0000,0120).
    pub responds_to: u16,
    /// Status (0000,0900).
    pub status: u16,
}

/// Reads a response command set; None if it lacks a command field or a status.
pub fn parse_response(mut b: &[u8]) -> Option<Response> {
    let (mut command, mut responds_to, mut status) = (None, 0, None);
    while b.len() >= 8 {
        let group = u16::from_le_bytes([b[0], b[1]]);
        let elem = u16::from_le_bytes([b[2], b[3]]);
        let len = u32::from_le_bytes([b[4], b[5], b[6], b[7]]) as usize;
        let v = b.get(8..8 + len)?;
        let us = (v.len() == 2).then(|| u16::from_le_bytes([v[0], v[1]]));
        match (group, elem) {
            (0, 0x0100) => command = us,
            (0, 0x0120) => responds_to = us.unwrap_or(0),
            (0, 0x0900) => status = us,
            _ => {}
        }
        b = &b[8 + len..];
    }
    Some(Response {
        command: command?,
        responds_to,
        status: status?,
    })
}

/// A status other than Success as the failure it counts as (PS3.7 Annex C, PS3.4 §B.2.3):
/// every non-zero status is an error of kind `status`, named by its class.
pub fn status_failure(op: &'static str, status: u16) -> Failure {
    let code = match status {
        0x0001 | 0x0107 | 0x0116 | 0xB000..=0xBFFF => {
            "warning (0x0001, 0xBxxx: e.g. coercion of data elements)"
        }
        0xA700..=0xA7FF => "0xA7xx: refused, out of resources",
        0xA900..=0xA9FF => "0xA9xx: data set does not match SOP class",
        0xC000..=0xCFFF => "0xCxxx: cannot understand",
        0x0110 => "0x0110: processing failure",
        0x0117 => "0x0117: invalid SOP instance",
        0x0122 => "0x0122: SOP class not supported",
        0x0124 => "0x0124: not authorized",
        0x0210 => "0x0210: duplicate invocation",
        0x0211 => "0x0211: unrecognized operation",
        0x0212 => "0x0212: mistyped argument",
        0xFE00 => "0xFE00: cancelled",
        _ => "an unlisted status",
    };
    Failure {
        kind: ErrorKind::Status,
        what: op,
        code: Some(code),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn echo_request_and_a_response() {
        let rq = echo_rq(7);
        // Group length counts everything after its own 12 bytes.
        assert_eq!(
            u32::from_le_bytes(rq[8..12].try_into().unwrap()) as usize,
            rq.len() - 12
        );
        assert_eq!(parse_response(&rq), None, "a request has no status");
        let mut b = Vec::new();
        element(&mut b, 0x0100, &C_ECHO_RSP.to_le_bytes());
        element(&mut b, 0x0120, &7u16.to_le_bytes());
        element(&mut b, 0x0900, &0xA700u16.to_le_bytes());
        let r = parse_response(&with_group_length(b)).unwrap();
        assert_eq!(
            (r.command, r.responds_to, r.status),
            (C_ECHO_RSP, 7, 0xA700)
        );
    }

    #[test]
    fn statuses_are_named() {
        let f = status_failure("C-STORE", 0xA702);
        assert_eq!(f.kind, ErrorKind::Status);
        assert!(f.message().contains("out of resources"), "{}", f.message());
    }
}
