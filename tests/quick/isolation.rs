//! No test touches the user's home: every spawn of the binary gets the tests' own
//! XDG_DATA_HOME, so `cargo test` adds nothing to ~/.local/share/wirebench/history.db.

use std::path::Path;

/// The binary's path is named only in tests/common, whose `bin()` and `bin_via()` set the
/// tests' own history directory; any other file naming it would spawn the binary with the
/// user's history.
#[test]
fn only_common_names_the_binary() {
    let tests = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let needle = ["CARGO_BIN_EXE", "_wirebench"].concat();
    let mut offenders = Vec::new();
    // tests/*.rs and the files of test binaries in folders (tests/quick/), not tests/common.
    let mut dirs = vec![tests.clone()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() && !path.ends_with("common") {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).unwrap();
                if text.contains(&needle) {
                    offenders.push(path.display().to_string());
                }
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "these spawn the binary without the tests' XDG_DATA_HOME; use common::bin() or \
         common::bin_via(): {offenders:?}"
    );
}
