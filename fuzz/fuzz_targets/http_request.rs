//! The reference HTTP server's request head parser, router and body decoder. The first byte
//! is the size of the pieces the body arrives in.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&piece, wire)) = data.split_first() else {
        return;
    };
    wirebench::fuzzing::http_request(wire, piece as usize);
});
