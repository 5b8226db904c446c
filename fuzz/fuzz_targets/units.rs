//! Durations, sizes, bit rates, escapes, --accept and target URLs; the first byte picks one.
#![no_main]
use libfuzzer_sys::fuzz_target;
use wirebench::units;

fuzz_target!(|data: &[u8]| {
    let Some((&which, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    match which % 7 {
        0 => {
            let _ = units::parse_duration(text);
        }
        1 => {
            let _ = units::parse_size(text);
        }
        2 => {
            let _ = units::parse_message_size("--size", text);
        }
        3 => {
            let _ = units::parse_bits(text);
        }
        4 => {
            if let Ok(bytes) = units::unescape(text) {
                let shown = units::escape(&bytes);
                assert_eq!(
                    units::unescape(&shown).as_deref(),
                    Ok(&bytes[..]),
                    "{shown}"
                );
            }
        }
        5 => {
            let _ = wirebench::driver::http::spec::Accept::parse(text);
        }
        _ => {
            let _ = wirebench::driver::url::parse_target(text);
        }
    }
});
