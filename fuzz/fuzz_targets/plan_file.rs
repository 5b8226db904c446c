//! Plan files (`wirebench study FILE.toml`).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        if let Err(e) = wirebench::plan::file::parse(text) {
            assert!(!e.message.is_empty(), "an error says what is wrong");
        }
    }
});
