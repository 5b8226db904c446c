//! The project stands alone: a clone holds everything its README, docs, plans, sources, tests
//! and benchmarks point to. Nothing names a directory outside the repository, the method and
//! the five studies are written in docs/ with their sources, and every file the README names
//! exists.

use std::path::{Path, PathBuf};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Every text file under `dir` (or `dir` itself), skipping generated and binary files.
fn text_files(dir: &Path, out: &mut Vec<PathBuf>) {
    if dir.is_file() {
        out.push(dir.to_path_buf());
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.map(|e| e.unwrap().path()) {
        if e.is_dir() {
            text_files(&e, out);
        } else if std::fs::read_to_string(&e).is_ok() {
            out.push(e);
        }
    }
}

#[test]
fn nothing_points_outside_the_repository() {
    let mut files = vec![];
    for d in [
        "README.md",
        "docs",
        "examples",
        "src",
        "tests",
        "bench",
        ".ci",
        "schema",
    ] {
        text_files(&root().join(d), &mut files);
    }
    assert!(files.len() > 50, "found only {} files", files.len());
    // Spelled in two pieces so that this file does not find itself.
    let needles = [format!("../{}", "shared"), format!("/work/{}", "shared")];
    let mut found = vec![];
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        for (i, line) in text.lines().enumerate() {
            if needles.iter().any(|n| line.contains(n.as_str())) {
                found.push(format!("{}:{}: {line}", f.display(), i + 1));
            }
        }
    }
    assert!(
        found.is_empty(),
        "points outside the repository:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_method_and_the_studies_are_written_down_with_their_sources() {
    let read = |p: &str| std::fs::read_to_string(root().join(p)).unwrap();
    let method = read("docs/method.md");
    for source in [
        "HdrHistogram",
        "How NOT to Measure Latency",
        "RFC 2544",
        "RFC 6349",
        "RFC 3550",
        "RFC 896",
        "RFC 1122",
        "Multiple Loss Ratio Search",
        "Rigorous Benchmarking in Reasonable Time",
        "Statistically Rigorous Java",
        "Conducting Repeatable Experiments",
        "Taking Serial Correlation into Account",
    ] {
        assert!(
            method.contains(source),
            "docs/method.md does not cite {source}"
        );
    }
    let studies = read("docs/studies.md");
    for (plan, title) in [
        ("examples/mint.toml", "MINT Performance Testing"),
        ("examples/handle.toml", "Performance Testing"),
        ("examples/flash.toml", "Making the \"Box\" Transparent"),
        ("examples/dcmtk.toml", "DCMTK through localhost is slow"),
        ("examples/dim.toml", "DIM Performance Measurements"),
    ] {
        assert!(studies.contains(title), "docs/studies.md lacks {title}");
        assert!(
            studies.contains(plan),
            "docs/studies.md does not name {plan}"
        );
        let header = read(plan);
        assert!(
            header.contains("docs/studies.md"),
            "{plan} does not cite docs/studies.md"
        );
    }
}

/// Every repository path the README and the plans name (`docs/…`, `tests/…`, `bench/…`,
/// `examples/…`, `schema/…`, `src/…`) exists in the clone.
#[test]
fn every_path_the_readme_names_exists() {
    let mut missing = vec![];
    for doc in [
        "README.md",
        "docs/method.md",
        "docs/studies.md",
        "examples/dim.toml",
        "examples/mint.toml",
        "examples/flash.toml",
        "examples/handle.toml",
        "examples/dcmtk.toml",
    ] {
        let text = std::fs::read_to_string(root().join(doc)).unwrap();
        for word in text.split(|c: char| c.is_whitespace() || "`()[]'\",;:*<>".contains(c)) {
            let word = word.trim_end_matches(['.', '…']);
            let named = ["docs/", "tests/", "bench/", "examples/", "schema/", "src/"]
                .iter()
                .any(|p| word.starts_with(p));
            // Globs and placeholders (`bench/results/*`, `examples/NAME.toml`) are not paths.
            let placeholder = word
                .as_bytes()
                .windows(2)
                .any(|w| w.iter().all(u8::is_ascii_uppercase));
            if !named || placeholder || word.contains(['*', '{', '%']) {
                continue;
            }
            if !root().join(word).exists() {
                missing.push(format!("{doc}: {word}"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "named but not in the repository:\n{}",
        missing.join("\n")
    );
}

/// The README's test command is the one CI runs: every package `.ci/run` installs is named
/// there, and one failing test binary does not hide the others (`--no-fail-fast`).
#[test]
fn the_readme_names_what_ci_installs_and_runs() {
    let ci = std::fs::read_to_string(root().join(".ci/run")).unwrap();
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let mut packages = vec![];
    for line in ci.lines() {
        let Some((_, rest)) = line.split_once("need+=(") else {
            continue;
        };
        let list = rest.split(')').next().unwrap();
        packages.extend(list.split_whitespace().map(str::to_string));
    }
    assert!(packages.len() >= 10, "{packages:?}");
    for p in &packages {
        assert!(
            readme.contains(p.as_str()),
            "README does not name the package {p}"
        );
    }
    // The line that runs the tests (CI builds them first with `--no-run`, timed apart).
    let test_line = ci
        .lines()
        .find(|l| l.starts_with("cargo test") && !l.contains("--no-run"))
        .unwrap();
    assert!(test_line.contains("--no-fail-fast"), "{test_line}");
    assert!(readme.contains("--no-fail-fast"));
    assert!(readme.contains("about 20 minutes"));
}
