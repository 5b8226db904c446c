//! grpc:// against `wirebench serve grpc`: calls whose types come from the server's reflection
//! or from `--proto`, counted as the server counts them; statuses other than OK as errors of
//! their code; bad input (an unknown method, JSON that does not fit, a .proto that does not
//! parse) in one line, exit 2.

use super::common;

use common::usage_error;
use common::{first_line_addr, run_json, serve_process, stdout_lines, stop_with_sigterm};
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(60);
const PROTO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/proto/wirebench/bench.proto");

fn n(v: &serde_json::Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

/// The count the server's last line gives before `what` (e.g. ` Echo calls`).
fn served(last: &str, what: &str) -> u64 {
    last.split(", ")
        .find_map(|p| p.split(" (").next().and_then(|p| p.strip_suffix(what)))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no count of{what}: {last}"))
}

#[test]
fn grpc_calls_are_what_the_server_answered() {
    let mut child = serve_process("grpc", &["--listen", "127.0.0.1:0"]);
    let lines = stdout_lines(&mut child);
    let addr = first_line_addr(&mut child, &lines, "grpc", LIMIT);
    let second = lines.recv_timeout(LIMIT).unwrap();
    assert!(second.starts_with("serving grpc"), "{second}");
    let echo = format!("grpc://{addr}/wirebench.bench.Bench/Echo");

    // Reflection (the default) and --proto give the same calls.
    let data = r#"{"payload":"aGVsbG8=","replySize":100}"#;
    let (by_reflection, code) = run_json(&[&echo, "-n", "40", "--data", data], LIMIT);
    assert_eq!(code, 0, "{by_reflection}");
    assert_eq!(n(&by_reflection["ok"]), 40);
    assert_eq!(by_reflection["protocol"], "grpc");
    let (by_proto, code) = run_json(
        &[&echo, "-n", "40", "--data", data, "--proto", PROTO],
        LIMIT,
    );
    assert_eq!(code, 0, "{by_proto}");
    assert_eq!(n(&by_proto["ok"]), 40);

    // The reply messages' payload: a 100-byte field with its tag and length (2 bytes).
    assert_eq!(
        n(&by_proto["throughput"]["received_bytes"]),
        40 * 102,
        "{by_proto}"
    );
    assert_eq!(
        by_reflection["throughput"]["received_bytes"], by_proto["throughput"]["received_bytes"],
        "{by_reflection}"
    );
    common::assert_schema("result.v1.json", &by_proto);

    // Many calls on each connection at once, with templates per call.
    let (pipelined, code) = run_json(
        &[
            &echo,
            "-n",
            "200",
            "-c",
            "2",
            "--pipeline",
            "8",
            "--data",
            r#"{"replySize":{rand:50}}"#,
            "--metadata",
            "x-call: {seq}",
        ],
        LIMIT,
    );
    assert_eq!(code, 0, "{pipelined}");
    assert_eq!(n(&pipelined["ok"]), 200);

    // A status other than OK is an error named by its code; the connection goes on.
    let (unavailable, code) = run_json(
        &[
            &echo,
            "-n",
            "10",
            "--data",
            r#"{"status":14,"message":"drain"}"#,
        ],
        LIMIT,
    );
    assert_eq!(code, 1, "{unavailable}");
    assert_eq!(n(&unavailable["ok"]), 0);
    let errors = &unavailable["errors"];
    assert_eq!(n(&errors["total"]), 10, "{errors}");
    let sample = errors["by_kind"][0]["sample"].as_str().unwrap();
    assert!(sample.contains("UNAVAILABLE"), "{sample}");

    // By time.
    let (timed, code) = run_json(&[&echo, "-d", "1s", "-c", "2"], LIMIT);
    assert_eq!(code, 0, "{timed}");
    let ok = n(&timed["ok"]);
    assert!(ok > 0, "{timed}");

    let last = stop_with_sigterm(&mut child, &lines, LIMIT);
    let counted = 40 + 40 + 200 + 10 + ok;
    let echoed = served(&last, " Echo calls");
    // A call or two per connection may still have been in flight when the second ended.
    assert!(
        (counted..=counted + 2).contains(&echoed),
        "the server answered {echoed} Echo calls, the client counted {counted}: {last}"
    );
    assert_eq!(served(&last, " calls not OK"), 10, "{last}");
}

#[test]
fn grpc_bad_input_is_one_line() {
    let mut child = serve_process("grpc", &["--listen", "127.0.0.1:0"]);
    let lines = stdout_lines(&mut child);
    let addr = first_line_addr(&mut child, &lines, "grpc", LIMIT);
    let base = format!("grpc://{addr}");
    let echo = format!("{base}/wirebench.bench.Bench/Echo");
    let err = |args: &[&str]| {
        let mut all = vec!["run"];
        all.extend_from_slice(args);
        let out = usage_error(&all, LIMIT);
        String::from_utf8_lossy(&out.stderr).into_owned()
    };

    // An unknown method or service names what the server offers, by reflection or --proto.
    let e = err(&[&format!("{base}/wirebench.bench.Bench/Nope"), "-n", "1"]);
    assert!(
        e.contains("wirebench.bench.Bench/Echo") && e.contains("Stream"),
        "{e}"
    );
    let e = err(&[&format!("{base}/no.Such/Thing"), "-n", "1"]);
    assert!(
        e.contains("no service no.Such") && e.contains("wirebench.bench.Bench"),
        "{e}"
    );
    let e = err(&[
        &format!("{base}/wirebench.bench.Bench/Nope"),
        "--proto",
        PROTO,
    ]);
    assert!(e.contains("wirebench.bench.Bench/Collect"), "{e}");
    // JSON that does not fit the message names the message and the field.
    let e = err(&[&echo, "-n", "1", "--data", r#"{"nope":1}"#]);
    assert!(e.contains("EchoRequest") && e.contains("nope"), "{e}");
    let e = err(&[
        &echo,
        "-n",
        "1",
        "--proto",
        PROTO,
        "--data",
        r#"{"replySize":"x"}"#,
    ]);
    assert!(
        e.contains("EchoRequest") && e.contains("replySize (uint32)"),
        "{e}"
    );
    // A .proto that does not parse: FILE:LINE:COL.
    let dir = std::env::temp_dir().join(format!("wb-grpc-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.proto");
    std::fs::write(
        &bad,
        "syntax = \"proto3\";\n\nmessage A {\n  int32 x = ;\n}\n",
    )
    .unwrap();
    let e = err(&[&echo, "--proto", bad.to_str().unwrap()]);
    assert!(e.contains(&format!("{}:4:", bad.display())), "{e}");
    // A URL without a method; client streaming flags on a unary method; flags of another
    // protocol.
    let e = err(&[&base, "-n", "1"]);
    assert!(e.contains("package.Service/Method"), "{e}");
    let e = err(&[&echo, "-n", "1", "--stream-count", "3"]);
    assert!(e.contains("client-streaming"), "{e}");
    err(&[&echo, "--mode", "stream"]);
    let e = err(&["tcp://127.0.0.1:9", "--data", "{}"]);
    assert!(e.contains("grpc://"), "{e}");
    // Nobody listening: reflection cannot be asked, and --proto is named.
    let e = err(&["grpc://127.0.0.1:9/a.B/C", "-n", "1"]);
    assert!(e.contains("--proto"), "{e}");
    stop_with_sigterm(&mut child, &lines, LIMIT);
}
