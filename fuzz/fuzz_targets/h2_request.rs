//! The HTTP/2 request checks: lines are the method, the host, the path, then header lines; a
//! line after an empty one is the body.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (head, body) = match text.split_once("\n\n") {
        Some((h, b)) => (h, Some(b)),
        None => (text, None),
    };
    let mut lines = head.split('\n');
    let (method, host, path) = (
        lines.next().unwrap_or(""),
        lines.next().unwrap_or(""),
        lines.next().unwrap_or("/"),
    );
    let headers: Vec<&str> = lines.collect();
    wirebench::fuzzing::h2_request(method, host, path, &headers, body);
});
