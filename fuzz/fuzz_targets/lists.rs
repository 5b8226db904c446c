//! Swept flags' lists and doubling ranges (`-c 1..64`, `--size 64,1k`); the first byte picks
//! the kind of value.
#![no_main]
use libfuzzer_sys::fuzz_target;
use wirebench::load::sweep::{expand, is_sweep, named, Kind};

fuzz_target!(|data: &[u8]| {
    let Some((&which, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let kind = [Kind::Bytes, Kind::Count, Kind::Rate, Kind::Duration][which as usize % 4];
    let _ = is_sweep(kind, text);
    let _ = named(text);
    if let Ok(axis) = expand("--x", kind, text) {
        assert!(!axis.values.is_empty());
    }
});
