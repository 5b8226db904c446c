//! The framing preamble a wirebench client sends first, as the reference TCP server reads it.
#![no_main]
use libfuzzer_sys::fuzz_target;
use wirebench::wire::framing::{detect, parse_received, Preamble};

fuzz_target!(|data: &[u8]| {
    let _ = detect(data);
    let _ = parse_received(data);
    if let Ok(p) = Preamble::parse(data) {
        // What parses is written back the same way.
        let again = Preamble::parse(&p.encode()).expect("an encoded preamble parses");
        assert_eq!(format!("{p:?}"), format!("{again:?}"));
    }
});
