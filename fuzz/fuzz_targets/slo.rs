//! Latency and rate objectives (`--slo 'p99<10ms'`).
#![no_main]
use libfuzzer_sys::fuzz_target;
use wirebench::summary::slo::Slo;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(slo) = Slo::parse(text) {
            let _ = slo.show(1.5e308);
            let _ = slo.show(f64::NAN);
        }
    }
});
