//! Documents given to `report`, `merge` and `diff`.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        wirebench::fuzzing::document(text);
    }
});
