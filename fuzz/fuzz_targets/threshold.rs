//! `--fail-if` thresholds.
#![no_main]
use libfuzzer_sys::fuzz_target;
use wirebench::summary::threshold::Threshold;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(t) = Threshold::parse(text) {
            let c = t.check(&[], &[]);
            let _ = t.line(&c);
        }
    }
});
