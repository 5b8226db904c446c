//! DIMSE command sets (C-ECHO-RSP, C-STORE-RSP) as a peer sends them.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = wirebench::driver::dicom::dimse::parse_response(data);
});
