//! The client's HTTP/1.1 response parser. The first 4 bytes: requests in flight, which are
//! HEAD, and the sizes of the pieces the bytes arrive in.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&[requests, heads, a, b], wire)) = data.split_first_chunk::<4>() else {
        return;
    };
    let pieces = [a as usize * 64 + 1, b as usize + 1];
    let n = 1 + requests as usize % 8;
    wirebench::fuzzing::http_responses(wire, &pieces, n, heads as u64);
});
