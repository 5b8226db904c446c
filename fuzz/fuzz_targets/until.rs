//! The `--until` matcher: the delimiter as written (escapes), then a stream searched in
//! pieces, checked against a plain search of the whole stream.
#![no_main]
use libfuzzer_sys::fuzz_target;
use wirebench::units::unescape;
use wirebench::wire::delimiter::Delimiter;

fuzz_target!(|data: &[u8]| {
    let Some((&piece, rest)) = data.split_first() else {
        return;
    };
    let (written, stream) = match rest.iter().position(|&b| b == 0) {
        Some(i) => (&rest[..i], &rest[i + 1..]),
        None => (rest, &[][..]),
    };
    let Ok(written) = std::str::from_utf8(written) else {
        return;
    };
    let Ok(delim) = unescape(written) else {
        return;
    };
    if delim.is_empty() {
        return; // the plan refuses an empty --until
    }
    let d = Delimiter::new(&delim);
    let (mut matched, mut ends, mut base) = (0, Vec::new(), 0);
    for chunk in stream.chunks(piece as usize % 16 + 1) {
        let mut at = 0;
        while let Some(end) = d.find(&mut matched, &chunk[at..]) {
            at += end;
            ends.push(base + at);
        }
        base += chunk.len();
    }
    // The same ends, found whole: each delimiter after the end of the one before.
    let (mut want, mut from) = (Vec::new(), 0);
    while let Some(i) = stream[from..].windows(delim.len()).position(|w| w == delim) {
        from += i + delim.len();
        want.push(from);
    }
    assert_eq!(ends, want);
});
