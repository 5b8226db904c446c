//! The datagram header and the flow report answer, as the UDP server and client read them.
#![no_main]
use libfuzzer_sys::fuzz_target;
use wirebench::wire::datagram::{has_magic, parse_report_answer, Header, Kind};

fuzz_target!(|data: &[u8]| {
    let _ = has_magic(data);
    let _ = data.first().map(|&b| Kind::from_u8(b));
    if let Some(h) = Header::decode(data) {
        let mut buf = vec![0u8; data.len().max(64)];
        h.encode(&mut buf);
        let again = Header::decode(&buf).expect("an encoded header decodes");
        assert_eq!(format!("{h:?}"), format!("{again:?}"));
    }
    let _ = parse_report_answer(data);
});
