//! lib.rs's "# Layout" states the order in which the rooms import each other; this reads the
//! sources and checks it, so the section cannot go false again unnoticed.

use std::path::{Path, PathBuf};

/// The rooms, each importing (outside its tests) only rooms to its right.
const ORDER: [&str; 14] = [
    "app", "report", "store", "summary", "engine", "plan", "cli", "load", "driver", "record",
    "wire", "sys", "units", "error",
];

/// The reference servers stand alone: these are all they may import.
const SERVE_MAY: [&str; 5] = ["serve", "wire", "sys", "units", "error"];

/// The summary is a pure function of a plan and its record: it names no driver (a protocol's
/// facts reach it as plain data, `record::exchange`), nor the rooms that run a plan or take
/// its command.
const SUMMARY_NEVER: [&str; 4] = ["app", "cli", "engine", "driver"];

/// What would read the machine instead of the record: files, the environment, processes,
/// clocks, and `sys`'s readers (its `tcpinfo` is a plain type a diagnosis holds).
const SUMMARY_NEVER_READS: [&str; 5] = ["std::fs", "std::env", "std::process", "::now(", "sys::"];

/// Every `.rs` file of a room: `src/ROOM.rs` and everything under `src/ROOM/`.
fn files(room: &str) -> Vec<PathBuf> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut out = vec![];
    let mut dirs = vec![src.join(room)];
    if src.join(format!("{room}.rs")).exists() {
        out.push(src.join(format!("{room}.rs")));
    }
    while let Some(d) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.map(|e| e.unwrap().path()) {
            if e.is_dir() {
                dirs.push(e);
            } else if e.extension().is_some_and(|x| x == "rs") {
                out.push(e);
            }
        }
    }
    out
}

/// A file's lines (numbered from 1) outside comments and its `#[cfg(test)]` tail.
fn code(path: &Path) -> Vec<(usize, String)> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut found = vec![];
    for (n, line) in text.lines().enumerate() {
        let line = line.trim_start();
        if line.starts_with("#[cfg(test)]") {
            break;
        }
        if !line.starts_with("//") {
            found.push((n + 1, line.to_string()));
        }
    }
    found
}

/// The rooms a file names as `crate::ROOM`, outside comments and its `#[cfg(test)]` tail.
fn imports(path: &Path) -> Vec<(usize, String)> {
    let mut found = vec![];
    for (n, line) in code(path) {
        for (i, _) in line.match_indices("crate::") {
            let rest = &line[i + "crate::".len()..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            found.push((n, name));
        }
    }
    found
}

#[test]
fn each_room_imports_only_the_rooms_to_its_right() {
    let mut wrong = vec![];
    for (at, room) in ORDER.iter().enumerate() {
        let files = files(room);
        assert!(!files.is_empty(), "no sources for {room}");
        for f in files {
            for (line, name) in imports(&f) {
                let Some(to) = ORDER.iter().position(|r| *r == name) else {
                    continue; // lib.rs's own items, the doc(hidden) fuzzing harness
                };
                if to < at {
                    wrong.push(format!("{}:{line}: {room} imports {name}", f.display()));
                }
            }
        }
    }
    for f in files("serve") {
        for (line, name) in imports(&f) {
            if ORDER.contains(&name.as_str()) && !SERVE_MAY.contains(&name.as_str()) {
                wrong.push(format!("{}:{line}: serve imports {name}", f.display()));
            }
        }
    }
    // The raw arguments are read by the commands and the plan, nothing else.
    for room in &ORDER[2..] {
        for f in files(room).into_iter().filter(|_| *room != "plan") {
            for (line, name) in imports(&f) {
                if name == "cli" {
                    wrong.push(format!("{}:{line}: {room} imports cli", f.display()));
                }
            }
        }
    }
    for f in files("summary") {
        for (line, name) in imports(&f) {
            if SUMMARY_NEVER.contains(&name.as_str()) {
                wrong.push(format!("{}:{line}: summary imports {name}", f.display()));
            }
        }
        for (line, text) in code(&f) {
            let reads = SUMMARY_NEVER_READS.iter().find(|r| text.contains(*r));
            if let Some(r) = reads.filter(|_| !text.contains("sys::tcpinfo::TcpInfo")) {
                wrong.push(format!(
                    "{}:{line}: summary reads the machine ({r})",
                    f.display()
                ));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "arrows against lib.rs's Layout:\n{}",
        wrong.join("\n")
    );
}
