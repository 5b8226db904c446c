//! File sets (issue 20, item 1): `wirebench files make` writes the same bytes from the same
//! seed; `{file}` in a URL draws from a set's manifest by popularity, among the most popular
//! files up to `--dataset`; bad input is one line and exit 2.

use super::common;

use common::{bin, free_port, listens, run_bounded, usage_error};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Child;
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(30);

/// A fresh temp directory of this test's own.
fn temp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("wb-files-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// `wirebench files make DIR ARGS`, which must succeed.
fn make(dir: &Path, args: &[&str]) {
    let out = bin()
        .args(["files", "make", dir.to_str().unwrap()])
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Every file under `dir` (the manifest too) by its relative path, with its bytes.
fn contents(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap().map(|e| e.unwrap().path()) {
            if e.is_dir() {
                dirs.push(e);
            } else {
                let rel = e.strip_prefix(dir).unwrap().display().to_string();
                out.insert(rel, std::fs::read(&e).unwrap());
            }
        }
    }
    out
}

#[test]
fn a_file_set_is_identical_byte_for_byte_from_its_seed() {
    let (a, b, c) = (temp("a"), temp("b"), temp("c"));
    let args = [
        "--total",
        "3M",
        "--count",
        "300",
        "--sizes",
        "lognormal:8k:1.0",
    ];
    make(&a, &[&args[..], &["--seed", "11"]].concat());
    make(&b, &[&args[..], &["--seed", "11"]].concat());
    make(&c, &[&args[..], &["--seed", "12"]].concat());
    let (ca, cb, cc) = (contents(&a), contents(&b), contents(&c));
    assert_eq!(ca.len(), 301, "300 files and the manifest");
    assert!(ca == cb, "the same seed wrote other bytes");
    assert!(ca != cc, "another seed wrote the same set");
    // The manifest lists every file with its size on disk, adding up to --total.
    let manifest = String::from_utf8(ca["manifest.tsv"].clone()).unwrap();
    let mut total = 0;
    for line in manifest.lines().filter(|l| !l.starts_with('#')) {
        let (path, size) = line.split_once('\t').unwrap();
        let size: usize = size.parse().unwrap();
        assert_eq!(ca[path].len(), size, "{path}");
        total += size;
    }
    assert_eq!(total, 3 << 20);
    // Random bytes: no file repeats another's start.
    let starts: std::collections::HashSet<&[u8]> = ca
        .values()
        .filter(|v| v.len() >= 16)
        .map(|v| &v[..16])
        .collect();
    assert_eq!(starts.len(), ca.values().filter(|v| v.len() >= 16).count());
    // SPECweb99's sizes by default, without a count: files until the total is reached.
    make(&c.join("spec"), &["--total", "2M", "--seed", "1"]);
    let spec = contents(&c.join("spec"));
    assert_eq!(
        spec.values().map(Vec::len).sum::<usize>() - spec["manifest.tsv"].len(),
        2 << 20
    );
    for d in [a, b, c] {
        let _ = std::fs::remove_dir_all(d);
    }
}

#[test]
fn bad_file_set_input_is_one_line_and_exit_2() {
    let dir = temp("bad");
    make(&dir, &["--total", "64k", "--count", "8"]);
    let d = dir.to_str().unwrap();
    let fresh = temp("fresh");
    let f = fresh.to_str().unwrap();
    let url = "http://127.0.0.1:9/{file}";
    let cases: [(&[&str], &str); 12] = [
        (&["files", "make", f, "--total", "0"], "--total 0"),
        (
            &["files", "make", f, "--total", "1M", "--sizes", "pareto:1"],
            "--sizes 'pareto:1'",
        ),
        (
            &[
                "files",
                "make",
                f,
                "--total",
                "1M",
                "--sizes",
                "lognormal:8k",
            ],
            "lognormal:MEDIAN:SIGMA",
        ),
        (
            &["files", "make", f, "--total", "10", "--count", "11"],
            "--count 11",
        ),
        (
            &["files", "make", d, "--total", "1M"],
            "not an empty directory",
        ),
        (
            &["run", "http://127.0.0.1:9/k/{zipf}", "-n", "1"],
            "{zipf:N:s}",
        ),
        (&["run", url, "-n", "1"], "--manifest DIR"),
        (&["run", url, "--manifest", f, "-n", "1"], "files make"),
        (
            &["run", "http://127.0.0.1:9/x", "--manifest", d, "-n", "1"],
            "no request names {file}",
        ),
        (
            &["run", url, "--manifest", d, "--dataset", "1M", "-n", "1"],
            "more than the set's 65,536 bytes",
        ),
        (
            &[
                "run",
                url,
                "--manifest",
                d,
                "--popularity",
                "pareto",
                "-n",
                "1",
            ],
            "--popularity 'pareto'",
        ),
        (
            &["run", "http://127.0.0.1:9/x", "--dataset", "1M", "-n", "1"],
            "--dataset chooses",
        ),
    ];
    for (args, want) in cases {
        let out = usage_error(args, LIMIT);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(want), "{args:?}: {err}");
    }
    assert!(!fresh.exists(), "bad input wrote nothing");
    let _ = std::fs::remove_dir_all(dir);
}

/// nginx serving `root`, logging each request's path to `dir/access.log`.
fn nginx(dir: &Path, root: &Path) -> (Child, u16) {
    let (d, port) = (dir.display(), free_port());
    let conf = format!(
        "worker_processes 1; daemon off; pid {d}/nginx.pid; error_log {d}/error.log;
         events {{ worker_connections 64; }}
         http {{ log_format p '$uri $status'; access_log {d}/access.log p;
           client_body_temp_path {d}/body; proxy_temp_path {d}/proxy;
           fastcgi_temp_path {d}/fcgi; uwsgi_temp_path {d}/uwsgi; scgi_temp_path {d}/scgi;
           keepalive_requests 1000000;
           server {{ listen 127.0.0.1:{port}; root {}; }} }}",
        root.display()
    );
    std::fs::write(dir.join("nginx.conf"), conf).unwrap();
    let mut ngx = common::spawn_nginx(dir);
    assert!(listens(&mut ngx, port), "nginx did not start on {port}");
    (ngx, port)
}

/// Requests per path in nginx's log since `from` lines, all of which must have been served 200.
fn served(log: &Path, from: usize) -> (BTreeMap<String, u64>, usize) {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    let mut counts = BTreeMap::new();
    for line in &lines[from..] {
        let (path, status) = line.split_once(' ').unwrap();
        assert_eq!(status, "200", "{line}");
        *counts.entry(path.to_string()).or_insert(0) += 1;
    }
    (counts, lines.len())
}

#[test]
fn the_served_requests_follow_the_popularity() {
    let dir = temp("zipf");
    let set = dir.join("set");
    std::fs::create_dir_all(&dir).unwrap();
    // 200 files of 1 KiB: a --dataset of 50 KiB is the 50 most popular.
    make(
        &set,
        &["--total", "200k", "--count", "200", "--sizes", "fixed:1k"],
    );
    let (mut ngx, port) = nginx(&dir, &set);
    let log = dir.join("access.log");
    let url = format!("http://127.0.0.1:{port}/{{file}}");
    let run = |extra: &[&str]| {
        let mut args = vec![
            "run",
            &url,
            "--manifest",
            set.to_str().unwrap(),
            "-n",
            "5000",
            "-c",
            "2",
            "-q",
        ];
        args.extend_from_slice(extra);
        let (out, _) = run_bounded(&args, LIMIT);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    // nginx writes its log as it goes; wait for every line.
    let counted = |from: usize| {
        for _ in 0..100 {
            let (c, n) = served(&log, from);
            if n - from >= 5000 {
                return (c, n);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        served(&log, from)
    };
    run(&["--dataset", "50k", "--seed", "4"]);
    let (zipf, at) = counted(0);
    run(&["--dataset", "50k", "--seed", "4"]);
    let (again, at) = counted(at);
    run(&["--popularity", "uniform", "--seed", "4"]);
    let (uniform, _) = counted(at);
    // SAFETY: kill(2) on the PID of the nginx master this test started.
    unsafe { libc::kill(ngx.id() as i32, libc::SIGTERM) };
    let _ = ngx.wait();
    let _ = std::fs::remove_dir_all(&dir);

    assert_eq!(zipf.values().sum::<u64>(), 5000);
    assert_eq!(zipf, again, "the same seed drew other files");
    // Only the 50 most popular files, ranked by Zipf's law with s = 1: chi-square against
    // P(k) = (1/k) / H(50), 49 degrees of freedom (0.1 % critical value 85.35).
    let h: f64 = (1..=50).map(|k| 1.0 / k as f64).sum();
    let mut chi2 = 0.0;
    for k in 0..50u64 {
        let path = format!("/{:03}/{k:06}", k / 1000);
        let seen = *zipf.get(&path).unwrap_or(&0) as f64;
        let expected = 5000.0 / ((k + 1) as f64 * h);
        chi2 += (seen - expected).powi(2) / expected;
    }
    assert_eq!(zipf.len(), 50, "paths outside the data set: {zipf:?}");
    assert!(chi2 < 85.35, "chi-square {chi2}: {zipf:?}");
    // Uniform over all 200: every file about 25 times, the most popular no more than others.
    assert_eq!(uniform.values().sum::<u64>(), 5000);
    assert!(uniform.len() >= 195, "{} files of 200 drawn", uniform.len());
    let top = uniform.get("/000/000000").copied().unwrap_or(0);
    assert!(
        top < 60,
        "rank 0 drawn {top} times of 5000, uniform expects 25"
    );
}
