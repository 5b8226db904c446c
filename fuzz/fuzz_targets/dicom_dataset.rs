//! DICOM Part 10 files (`--dicom-file`): the preamble, the file meta information, the data set.
#![no_main]
use libfuzzer_sys::fuzz_target;
use wirebench::driver::dicom::dataset::{read_part10, write_part10};

fuzz_target!(|data: &[u8]| {
    if let Ok(f) = read_part10(data) {
        let again = read_part10(&write_part10(&f)).expect("a written file reads back");
        assert_eq!(again.dataset, f.dataset);
        assert_eq!(again.sop_instance, f.sop_instance);
    }
});
