//! Result documents given to `wirebench merge`, two or more, cut apart at lines holding
//! `---` (each checked as merge checks it, then merged at once and one after another).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let docs: Vec<&str> = text.split("\n---\n").take(8).collect();
        wirebench::fuzzing::merge(&docs);
    }
});
