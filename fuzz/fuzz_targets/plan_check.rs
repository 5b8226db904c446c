//! Plan files validated as `wirebench study FILE --dry-run` does (the command's flags parsed
//! and checked, every target expanded). Validation must stay linear in the file: libFuzzer's
//! `-timeout` (bench/fuzz.sh: 10 s) turns a slow input into a finding, and so does this
//! target's own budget, far above what a linear validation takes.
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::time::{Duration, Instant};

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let started = Instant::now();
        wirebench::fuzzing::plan(text);
        // 1 s, and 100 µs per byte beyond: 100,000 keys took minutes when it was quadratic.
        let budget = Duration::from_secs(1) + Duration::from_micros(100) * text.len() as u32;
        let took = started.elapsed();
        assert!(took < budget, "{} bytes validated in {took:?}", text.len());
    }
});
