//! The committed fuzz seeds (fuzz/corpus/, see bench/fuzz.sh) replayed through the library's
//! fuzz entry points on stable Rust, so a change that breaks one of their invariants fails
//! here without cargo-fuzz.

use std::path::Path;
use wirebench::fuzzing;

/// The seeds of fuzz target `target`.
fn seeds(target: &str) -> Vec<Vec<u8>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/corpus")
        .join(target);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|f| std::fs::read(f.unwrap().path()).unwrap())
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no seeds in {}", dir.display());
    files
}

#[test]
fn http_request_seeds_parse_and_decode() {
    for s in seeds("http_request") {
        let (piece, wire) = s.split_first().unwrap();
        fuzzing::http_request(wire, *piece as usize);
    }
}

#[test]
fn http_response_seeds_complete_their_responses() {
    let mut completed = 0;
    for s in seeds("http_response") {
        let (head, wire) = s.split_at(4);
        let n = 1 + head[0] as usize % 8;
        let pieces = [head[2] as usize * 64 + 1, head[3] as usize + 1];
        completed += fuzzing::http_responses(wire, &pieces, n, head[1] as u64);
    }
    // Every seed is well formed: 1 + 2 + 1 (HEAD) + 1 (to the close) + 1 + 3.
    assert_eq!(completed, 9);
}

#[test]
fn h2_request_seeds_pass_the_checks() {
    for s in seeds("h2_request") {
        let text = std::str::from_utf8(&s).unwrap();
        let (head, body) = match text.split_once("\n\n") {
            Some((h, b)) => (h, Some(b)),
            None => (text, None),
        };
        let lines: Vec<&str> = head.split('\n').collect();
        let ok = fuzzing::h2_request(lines[0], lines[1], lines[2], &lines[3..], body);
        assert!(ok, "{text}");
    }
    assert!(!fuzzing::h2_request(
        "GET",
        "h",
        "/",
        &["Bad Name: x"],
        None
    ));
}

#[test]
fn document_seeds_are_read_as_report_merge_and_diff_read_them() {
    let results = seeds("document")
        .iter()
        .filter(|s| fuzzing::document(std::str::from_utf8(s).unwrap()))
        .count();
    assert_eq!(results, 3, "the three result documents read back");
}

/// The fuzzer's finding in `document`: a crafted histogram whose run of empty buckets is
/// i64::MIN made hdrhistogram's decoder negate it (a panic with overflow checks, garbage
/// without), and a header may claim 4 GiB of counts. Both are refused before decoding.
#[test]
fn a_crafted_histogram_is_refused_before_it_is_decoded() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/findings");
    let text = std::fs::read_to_string(dir.join("document-hdrhistogram-negate-overflow.json"))
        .expect("the finding");
    assert!(!fuzzing::document(&text), "refused as damaged");
    // A header claiming 4 GiB of counts, and a zero run of i64::MIN, each alone.
    let mut header = vec![0x1c, 0x84, 0x93, 0x13, 0xff, 0xff, 0xff, 0xff];
    header.extend_from_slice(&[0; 4]);
    header.extend_from_slice(&3u32.to_be_bytes());
    header.extend_from_slice(&1u64.to_be_bytes());
    header.extend_from_slice(&3_600_000_000_000u64.to_be_bytes());
    header.extend_from_slice(&1f64.to_be_bytes());
    let err = wirebench::record::decode_histogram(&header)
        .unwrap_err()
        .to_string();
    assert!(err.contains("claims 4294967295 bytes"), "{err}");
    let mut min_run = header.clone();
    min_run[4..8].copy_from_slice(&9u32.to_be_bytes());
    min_run.extend_from_slice(&[0xff; 9]);
    let err = wirebench::record::decode_histogram(&min_run)
        .unwrap_err()
        .to_string();
    assert!(err.contains("empty buckets"), "{err}");
    // What wirebench writes decodes as it was.
    let mut h = wirebench::record::new_histogram();
    h.record(12_345).unwrap();
    let encoded = wirebench::summary::EncodedHistogram::of(&h);
    let bytes = base64_decode(&encoded.data);
    assert_eq!(wirebench::record::decode_histogram(&bytes).unwrap(), h);
}

/// The fuzzer's second finding in `document`: a histogram whose top quantile reads below its
/// min (its counts wrap) made summarising it panic in `clamp` when merged.
#[test]
fn a_histogram_whose_max_reads_below_its_min_is_summarised() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/findings");
    let bytes =
        std::fs::read(dir.join("document-histogram-min-above-max.json")).expect("the finding");
    fuzzing::document(&String::from_utf8_lossy(&bytes));
}

fn base64_decode(text: &str) -> Vec<u8> {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD
        .decode(text)
        .unwrap()
}

/// The fuzzer's sixth finding (`document`, a timeout): a sweep whose target name is 2.5 kB of
/// junk took 0.13 s to render, 30 s at 40 kB: the legend cut names one character at a time
/// (quadratic). Sixteen times that name now renders like any other.
#[test]
fn a_sweep_with_a_huge_target_name_renders_at_once() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/findings");
    let text = std::fs::read_to_string(dir.join("document-legend-fit-quadratic.json"))
        .expect("the finding");
    let mut doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    let name = doc["targets"][0]["name"].as_str().unwrap().repeat(16);
    doc["targets"][0]["name"] = name.into();
    let started = std::time::Instant::now();
    fuzzing::document(&doc.to_string());
    // A generous bound (it took 30 s before; the page itself takes milliseconds).
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
}

#[test]
fn h2_response_seeds_end_their_requests() {
    let mut ended = 0;
    for s in seeds("h2_response") {
        let (head, wire) = s.split_at(2);
        let piece = match head[0] {
            0 => wire.len(),
            p => p as usize,
        };
        ended += fuzzing::h2_responses(wire, piece, (head[1] % 32) as usize);
    }
    // Every seed answers or resets what it opens: 4 + 3 + 2 (a reset, a reply; the rest
    // above GOAWAY's last stream go again) + 2 + 2 + 1.
    assert!(ended >= 12, "{ended} requests ended");
}

#[test]
fn merge_seeds_are_read_and_the_alike_merge() {
    let mut merged = 0;
    for s in seeds("merge") {
        let text = std::str::from_utf8(&s).unwrap();
        let docs: Vec<&str> = text.split("\n---\n").collect();
        assert_eq!(docs.len(), 2);
        merged += fuzzing::merge(&docs) as usize;
    }
    // At least the one result twice (results of different targets may be refused).
    assert!(merged >= 1);
}

#[test]
fn plan_check_seeds_are_valid_plans() {
    for s in seeds("plan_check") {
        assert!(fuzzing::plan(std::str::from_utf8(&s).unwrap()));
    }
}
