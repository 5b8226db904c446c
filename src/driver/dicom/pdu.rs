//! The DICOM upper layer's protocol data units (PS3.8 §9.3): the association request we send,
//! the acceptor's answer (accept, reject, abort), P-DATA-TF framing of DIMSE messages into
//! presentation data values no longer than the peer's maximum PDU length, and the release.
//! Multi-byte fields of the PDU headers are big endian (PS3.8 §9.3.1); the DIMSE messages they
//! carry are little endian.

/// PDU types (PS3.8 Table 9-11 and §9.3.2–§9.3.8).
pub const ASSOCIATE_RQ: u8 = 0x01;
/// A-ASSOCIATE-AC.
pub const ASSOCIATE_AC: u8 = 0x02;
/// A-ASSOCIATE-RJ.
pub const ASSOCIATE_RJ: u8 = 0x03;
/// P-DATA-TF.
pub const P_DATA_TF: u8 = 0x04;
/// A-RELEASE-RQ.
pub const RELEASE_RQ: u8 = 0x05;
/// A-RELEASE-RP.
pub const RELEASE_RP: u8 = 0x06;
/// A-ABORT.
pub const ABORT: u8 = 0x07;

/// The DICOM application context name (PS3.7 Annex A.2.1).
const APPLICATION_CONTEXT: &str = "1.2.840.10008.3.1.1.1";
/// Our implementation class UID (PS3.7 §D.3.3.2): a 2.25 UID made once from a random UUID.
pub const IMPLEMENTATION_UID: &str = "2.25.80537955976341927857676756120894174702";
/// Our implementation version name (at most 16 characters).
const IMPLEMENTATION_NAME: &str = "WIREBENCH";
/// The largest P-DATA-TF variable field we accept (PS3.8 §D.1); replies are small commands.
pub const OUR_MAX_PDU: u32 = 16384;
/// A PDU header: type, reserved, 4-byte length (PS3.8 §9.3.1).
pub const HEADER: usize = 6;
/// A PDV's header inside P-DATA-TF: 4-byte length, context ID, message control header.
const PDV_HEADER: usize = 6;

/// One presentation context to propose: its ID (odd, PS3.8 §9.3.2.2), abstract syntax (a SOP
/// class) and the transfer syntaxes we can send it in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Proposed {
    /// The context's ID: odd, 1 to 255.
    pub id: u8,
    /// The SOP class UID.
    pub abstract_syntax: String,
    /// Transfer syntax UIDs, preferred first.
    pub transfer_syntaxes: Vec<String>,
}

/// What an A-ASSOCIATE-AC granted: per context, the transfer syntax it accepted (None:
/// refused), and the longest P-DATA-TF variable field the acceptor takes (0: no limit).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Accepted {
    /// (context ID, accepted transfer syntax, or the refusal's reason code).
    pub contexts: Vec<(u8, Result<String, u8>)>,
    /// The acceptor's maximum length (PS3.8 §D.1).
    pub max_pdu: u32,
}

/// A 16-byte AE title field, space padded (PS3.8 §9.3.2).
fn ae_field(out: &mut Vec<u8>, ae: &str) {
    let mut field = [b' '; 16];
    field[..ae.len().min(16)].copy_from_slice(&ae.as_bytes()[..ae.len().min(16)]);
    out.extend_from_slice(&field);
}

/// An item: type, reserved, 2-byte length, value (PS3.8 §9.3.2.1–§9.3.2.3).
fn item(out: &mut Vec<u8>, kind: u8, value: &[u8]) {
    out.push(kind);
    out.push(0);
    out.extend_from_slice(&(value.len() as u16).to_be_bytes());
    out.extend_from_slice(value);
}

/// The A-ASSOCIATE-RQ PDU (PS3.8 §9.3.2).
pub fn associate_rq(called: &str, calling: &str, contexts: &[Proposed]) -> Vec<u8> {
    let mut body = Vec::with_capacity(512);
    body.extend_from_slice(&1u16.to_be_bytes()); // protocol version 1
    body.extend_from_slice(&[0, 0]);
    ae_field(&mut body, called);
    ae_field(&mut body, calling);
    body.extend_from_slice(&[0; 32]);
    item(&mut body, 0x10, APPLICATION_CONTEXT.as_bytes());
    for pc in contexts {
        let mut v = vec![pc.id, 0, 0, 0];
        item(&mut v, 0x30, pc.abstract_syntax.as_bytes());
        for ts in &pc.transfer_syntaxes {
            item(&mut v, 0x40, ts.as_bytes());
        }
        item(&mut body, 0x20, &v);
    }
    // User information (PS3.7 Annex D.3.3): maximum length, implementation class and name.
    let mut user = Vec::new();
    item(&mut user, 0x51, &OUR_MAX_PDU.to_be_bytes());
    item(&mut user, 0x52, IMPLEMENTATION_UID.as_bytes());
    item(&mut user, 0x55, IMPLEMENTATION_NAME.as_bytes());
    item(&mut body, 0x50, &user);
    pdu(ASSOCIATE_RQ, &body)
}

/// A whole PDU of `kind` around `body`.
fn pdu(kind: u8, body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER + body.len());
    out.push(kind);
    out.push(0);
    out.extend_from_slice(&(body.len() as u32).to_be_bytes());
    out.extend_from_slice(body);
    out
}

/// A-RELEASE-RQ (PS3.8 §9.3.6): four reserved bytes.
pub fn release_rq() -> Vec<u8> {
    pdu(RELEASE_RQ, &[0; 4])
}

/// A-RELEASE-RP (PS3.8 §9.3.7), the answer to a peer's release request.
pub fn release_rp() -> Vec<u8> {
    pdu(RELEASE_RP, &[0; 4])
}

/// A-ABORT from the service user, reason not specified (PS3.8 §9.3.8).
pub fn abort() -> Vec<u8> {
    pdu(ABORT, &[0; 4])
}

/// The type and the total length (header included) of the PDU at the start of `buf`, once
/// its header is there.
pub fn peek(buf: &[u8]) -> Option<(u8, usize)> {
    let h: [u8; HEADER] = buf.get(..HEADER)?.try_into().ok()?;
    let len = u32::from_be_bytes([h[2], h[3], h[4], h[5]]) as usize;
    Some((h[0], HEADER + len))
}

/// A PDU from the peer that does not parse.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PduError {
    /// An A-ASSOCIATE-AC shorter than its fixed fields.
    #[error("a short A-ASSOCIATE-AC")]
    ShortAc,
    /// An A-ASSOCIATE-AC item longer than the PDU.
    #[error("an A-ASSOCIATE-AC item runs past its PDU")]
    AcItem,
    /// A PDV item cut inside its length.
    #[error("a truncated PDV item")]
    ShortPdv,
    /// A PDV item longer than the P-DATA-TF.
    #[error("a PDV item runs past its P-DATA-TF")]
    PdvItem,
}

/// Parses an A-ASSOCIATE-AC's body (after the 6-byte header): the contexts' results and the
/// acceptor's maximum length.
pub fn parse_ac(body: &[u8]) -> Result<Accepted, PduError> {
    // Version, reserved, called and calling AE echoed, 32 reserved: 68 bytes (§9.3.3).
    let mut rest = body.get(68..).ok_or(PduError::ShortAc)?;
    let mut out = Accepted::default();
    while rest.len() >= 4 {
        let kind = rest[0];
        let len = u16::from_be_bytes([rest[2], rest[3]]) as usize;
        let value = rest.get(4..4 + len).ok_or(PduError::AcItem)?;
        match kind {
            0x21 if value.len() >= 4 => {
                let (id, result) = (value[0], value[2]);
                let ts = sub_items(&value[4..])
                    .find(|(k, _)| *k == 0x40)
                    .map(|(_, v)| uid_text(v));
                out.contexts.push((
                    id,
                    match (result, ts) {
                        (0, Some(ts)) => Ok(ts),
                        (r, _) => Err(r),
                    },
                ));
            }
            0x50 => {
                if let Some((_, v)) = sub_items(value).find(|(k, v)| *k == 0x51 && v.len() == 4) {
                    out.max_pdu = u32::from_be_bytes([v[0], v[1], v[2], v[3]]);
                }
            }
            _ => {}
        }
        rest = &rest[4 + len..];
    }
    Ok(out)
}

/// The sub-items of an item's value: (type, value).
fn sub_items(mut v: &[u8]) -> impl Iterator<Item = (u8, &[u8])> {
    std::iter::from_fn(move || {
        let len = u16::from_be_bytes([*v.get(2)?, *v.get(3)?]) as usize;
        let item = (v[0], v.get(4..4 + len)?);
        v = &v[4 + len..];
        Some(item)
    })
}

/// A UID's text without its NUL padding (PS3.5 §9.1).
pub fn uid_text(v: &[u8]) -> String {
    String::from_utf8_lossy(v)
        .trim_end_matches(['\0', ' '])
        .to_string()
}

/// What an A-ASSOCIATE-RJ says, in words (PS3.8 §9.3.4, Table 9-21).
pub fn rejection(body: &[u8]) -> String {
    let [_, result, source, reason] = body
        .get(..4)
        .and_then(|b| <[u8; 4]>::try_from(b).ok())
        .unwrap_or([0; 4]);
    let result = match result {
        1 => "permanent",
        2 => "transient",
        _ => "unknown result",
    };
    let (source, reason) = match (source, reason) {
        (1, 1) => ("the service user", "no reason given"),
        (1, 2) => ("the service user", "application context name not supported"),
        (1, 3) => ("the service user", "calling AE title not recognized"),
        (1, 7) => ("the service user", "called AE title not recognized"),
        (1, _) => ("the service user", "reserved reason"),
        (2, 1) => ("the ACSE provider", "no reason given"),
        (2, 2) => ("the ACSE provider", "protocol version not supported"),
        (2, _) => ("the ACSE provider", "reserved reason"),
        (3, 1) => ("the presentation provider", "temporary congestion"),
        (3, 2) => ("the presentation provider", "local limit exceeded"),
        (3, _) => ("the presentation provider", "reserved reason"),
        _ => ("an unknown source", "unknown reason"),
    };
    format!("association rejected ({result}) by {source}: {reason}")
}

/// What an A-ABORT says, in words (PS3.8 §9.3.8, Table 9-26).
pub fn abort_reason(body: &[u8]) -> String {
    let (source, reason) = (body.get(2).copied(), body.get(3).copied());
    let reason = match (source, reason) {
        (Some(0), _) => "by the service user",
        (Some(2), Some(1)) => "by the provider: unrecognized PDU",
        (Some(2), Some(2)) => "by the provider: unexpected PDU",
        (Some(2), Some(4)) => "by the provider: unrecognized PDU parameter",
        (Some(2), Some(5)) => "by the provider: unexpected PDU parameter",
        (Some(2), Some(6)) => "by the provider: invalid PDU parameter value",
        _ => "by the provider, reason not specified",
    };
    format!("the peer aborted the association {reason}")
}

/// Appends `message` as P-DATA-TF PDUs on context `pc`, one PDV each, every PDU's variable
/// field at most `max_pdu` bytes (PS3.8 §9.3.5; 0 means no limit, §D.1). `command` sets bit 0
/// of the message control header, and the last fragment carries bit 1 (PS3.8 §E.2).
pub fn p_data(out: &mut Vec<u8>, pc: u8, command: bool, message: &[&[u8]], max_pdu: u32) {
    let total: usize = message.iter().map(|p| p.len()).sum();
    let limit = if max_pdu == 0 {
        total.max(1)
    } else {
        (max_pdu as usize).saturating_sub(PDV_HEADER).max(1)
    };
    let mut parts = message.iter().copied();
    let mut cur: &[u8] = parts.next().unwrap_or(&[]);
    let mut left = total;
    loop {
        let n = limit.min(left);
        left -= n;
        out.push(P_DATA_TF);
        out.push(0);
        out.extend_from_slice(&((n + PDV_HEADER) as u32).to_be_bytes());
        out.extend_from_slice(&((n + 2) as u32).to_be_bytes());
        out.push(pc);
        out.push(u8::from(command) | if left == 0 { 2 } else { 0 });
        let mut want = n;
        while want > 0 {
            while cur.is_empty() {
                cur = parts.next().unwrap_or(&[]);
            }
            let take = want.min(cur.len());
            out.extend_from_slice(&cur[..take]);
            cur = &cur[take..];
            want -= take;
        }
        if left == 0 {
            return;
        }
    }
}

/// One PDV of a P-DATA-TF body: context ID, whether it is a command, whether it is the last
/// fragment, and its bytes.
pub struct Pdv<'a> {
    /// The presentation context ID.
    pub pc: u8,
    /// Bit 0 of the message control header.
    pub command: bool,
    /// Bit 1: the message's last fragment.
    pub last: bool,
    /// The fragment.
    pub data: &'a [u8],
}

/// The PDVs of a P-DATA-TF body; an item that runs past the body ends the iteration with Err.
pub fn pdvs(mut body: &[u8]) -> impl Iterator<Item = Result<Pdv<'_>, PduError>> {
    std::iter::from_fn(move || {
        if body.is_empty() {
            return None;
        }
        let Some(len) = body
            .get(..4)
            .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]) as usize)
        else {
            body = &[];
            return Some(Err(PduError::ShortPdv));
        };
        let Some(item) = body.get(4..4 + len).filter(|i| i.len() >= 2) else {
            body = &[];
            return Some(Err(PduError::PdvItem));
        };
        body = &body[4 + len..];
        Some(Ok(Pdv {
            pc: item[0],
            command: item[1] & 1 != 0,
            last: item[1] & 2 != 0,
            data: &item[2..],
        }))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fragments_to_the_peer_limit() {
        let data = [7u8; 100];
        let mut out = Vec::new();
        p_data(&mut out, 3, false, &[&data[..10], &data[10..]], 46);
        // 40 bytes of payload per PDU (46 - 6): 40, 40, 20.
        let mut seen = Vec::new();
        let mut rest = &out[..];
        while let Some((kind, len)) = peek(rest) {
            assert_eq!(kind, P_DATA_TF);
            assert!(len - HEADER <= 46);
            for pdv in pdvs(&rest[HEADER..len]) {
                let pdv = pdv.unwrap();
                assert_eq!((pdv.pc, pdv.command), (3, false));
                seen.push((pdv.data.len(), pdv.last));
            }
            rest = &rest[len..];
        }
        assert_eq!(seen, [(40, false), (40, false), (20, true)]);
    }

    #[test]
    fn associate_request_layout() {
        let rq = associate_rq(
            "STORESCP",
            "WIREBENCH",
            &[Proposed {
                id: 1,
                abstract_syntax: "1.2.840.10008.1.1".into(),
                transfer_syntaxes: vec!["1.2.840.10008.1.2".into()],
            }],
        );
        let (kind, len) = peek(&rq).unwrap();
        assert_eq!((kind, len), (ASSOCIATE_RQ, rq.len()));
        assert_eq!(&rq[10..26], b"STORESCP        ");
        assert_eq!(&rq[26..42], b"WIREBENCH       ");
        assert_eq!(rq[74], 0x10);
    }

    proptest::proptest! {
        /// Whatever a peer sends, the parsers answer (an error at worst) and never panic.
        #[test]
        fn peer_bytes_never_panic(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..400)) {
            let _ = parse_ac(&bytes);
            let _ = pdvs(&bytes).count();
            let _ = (rejection(&bytes), abort_reason(&bytes), peek(&bytes));
            let _ = crate::driver::dicom::dimse::parse_response(&bytes);
            let mut file = vec![0u8; 128];
            file.extend_from_slice(b"DICM");
            // A group 0002 tag first, so the file meta parser reads the random rest.
            file.extend_from_slice(&[2, 0]);
            file.extend_from_slice(&bytes);
            let _ = crate::driver::dicom::dataset::read_part10(&file);
        }
    }

    #[test]
    fn names_rejections() {
        let r = rejection(&[0, 1, 1, 7]);
        assert!(
            r.contains("permanent") && r.contains("called AE title not recognized"),
            "{r}"
        );
    }
}
