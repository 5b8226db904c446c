//! Frames as an HTTP/2 server sends them, to the client's protocol state: the first two bytes
//! pick the piece size (1..=256 bytes a read, or all at once) and the streams open (0..=31).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let [piece, streams, wire @ ..] = data else {
        return;
    };
    let piece = match piece {
        0 => wire.len(),
        p => *p as usize,
    };
    wirebench::fuzzing::h2_responses(wire, piece, (*streams % 32) as usize);
});
