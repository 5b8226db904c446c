//! DICOM upper-layer PDUs as a peer sends them: the PDU header, A-ASSOCIATE-AC, the reasons
//! of a rejection or an abort, and the PDVs of a P-DATA-TF.
#![no_main]
use libfuzzer_sys::fuzz_target;
use wirebench::driver::dicom::pdu;

fuzz_target!(|data: &[u8]| {
    if let Some((_, len)) = pdu::peek(data) {
        assert!(len >= 6, "a PDU is at least its header");
    }
    let body = data.get(6..).unwrap_or_default();
    let _ = pdu::parse_ac(body);
    let _ = pdu::rejection(body);
    let _ = pdu::abort_reason(body);
    let _ = pdu::uid_text(body);
    for pdv in pdu::pdvs(body) {
        if pdv.is_err() {
            break;
        }
    }
});
