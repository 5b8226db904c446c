//! grpc:// against a gRPC server not written here: grpcio (Debian's python3-grpcio, which
//! .ci/run installs), running a greeter service this test writes with generic handlers (no
//! generated code on either side) and no reflection. The server counts the calls and stream
//! messages it served; wirebench's counts are the same. Without reflection a run names
//! `--proto`; with it, the types come from the .proto this test writes.

use super::common;

use common::usage_error;
use common::{run_json, wait_exit};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(60);

const GREETER_PROTO: &str = r#"syntax = "proto3";
package helloworld;
service Greeter {
  rpc SayHello (HelloRequest) returns (HelloReply) {}
  rpc SayHellos (HelloRequest) returns (stream HelloReply) {}
}
message HelloRequest {
  string name = 1;
  uint32 count = 2;
}
message HelloReply {
  string message = 1;
}
"#;

/// A greeter on grpcio's generic handlers: messages are bytes, encoded here by hand. It prints
/// its port, serves until its stdin closes, then prints `SayHello SayHellos messages`.
const GREETER: &str = r#"
import sys, threading
from concurrent import futures
import grpc

lock = threading.Lock()
counts = [0, 0, 0]

def varint(b, i):
    v = s = 0
    while True:
        c = b[i]; i += 1
        v |= (c & 0x7f) << s; s += 7
        if c < 0x80:
            return v, i

def fields(b):
    i, out = 0, {}
    while i < len(b):
        key, i = varint(b, i)
        if key & 7 == 0:
            v, i = varint(b, i)
        else:
            n, i = varint(b, i)
            v, i = b[i:i + n], i + n
        out[key >> 3] = v
    return out

def reply(text):
    t = text.encode()
    return bytes([10, len(t)]) + t

def say_hello(req, ctx):
    with lock:
        counts[0] += 1
    return reply("Hello " + fields(req).get(1, b"").decode())

def say_hellos(req, ctx):
    f = fields(req)
    with lock:
        counts[1] += 1
    for i in range(f.get(2, 0)):
        with lock:
            counts[2] += 1
        yield reply("Hello %d" % i)

handler = grpc.method_handlers_generic_handler("helloworld.Greeter", {
    "SayHello": grpc.unary_unary_rpc_method_handler(say_hello),
    "SayHellos": grpc.unary_stream_rpc_method_handler(say_hellos),
})
server = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
server.add_generic_rpc_handlers((handler,))
port = server.add_insecure_port("127.0.0.1:0")
server.start()
print(port, flush=True)
sys.stdin.read()
server.stop(1).wait()
print(*counts, flush=True)
"#;

struct Greeter {
    child: Child,
    out: BufReader<std::process::ChildStdout>,
    port: u16,
}

fn greeter(dir: &std::path::Path) -> Greeter {
    let script = dir.join("greeter.py");
    std::fs::write(&script, GREETER).unwrap();
    let mut child = Command::new("/usr/bin/python3")
        .arg(&script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("/usr/bin/python3 with grpcio (Debian's python3-grpcio; .ci/run installs it)");
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    let port = line
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("no port from the greeter: {line:?}"));
    Greeter { child, out, port }
}

impl Greeter {
    /// Stops it (closing its stdin) and returns its counts: SayHello calls, SayHellos calls,
    /// stream messages.
    fn stop(mut self) -> [u64; 3] {
        drop(self.child.stdin.take());
        let mut line = String::new();
        self.out.read_line(&mut line).unwrap();
        let status = wait_exit(&mut self.child, LIMIT);
        assert!(status.success(), "{status:?}");
        let n: Vec<u64> = line
            .split_whitespace()
            .map(|w| w.parse().unwrap())
            .collect();
        n.try_into()
            .unwrap_or_else(|_| panic!("no counts from the greeter: {line:?}"))
    }
}

fn n(v: &serde_json::Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

#[test]
fn grpcio_counts_what_wirebench_counts() {
    let dir = std::env::temp_dir().join(format!("wb-grpcio-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let proto = dir.join("greeter.proto");
    std::fs::File::create(&proto)
        .unwrap()
        .write_all(GREETER_PROTO.as_bytes())
        .unwrap();
    let proto = proto.to_str().unwrap();
    let g = greeter(&dir);
    let base = format!("grpc://127.0.0.1:{}/helloworld.Greeter", g.port);
    let hello = format!("{base}/SayHello");

    // No reflection here: the run says so and names --proto.
    let out = usage_error(&["run", &hello, "-n", "1"], LIMIT);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("reflection") && err.contains("--proto"),
        "{err}"
    );

    let data = r#"{"name":"wirebench {seq}"}"#;
    let (unary, code) = run_json(
        &[
            &hello,
            "--proto",
            proto,
            "--data",
            data,
            "-n",
            "60",
            "-c",
            "2",
            "--pipeline",
            "3",
        ],
        LIMIT,
    );
    assert_eq!(code, 0, "{unary}");
    assert_eq!(n(&unary["ok"]), 60, "{unary}");
    let (timed, code) = run_json(&[&hello, "--proto", proto, "-d", "1s"], LIMIT);
    assert_eq!(code, 0, "{timed}");
    let timed_ok = n(&timed["ok"]);
    assert!(timed_ok > 0, "{timed}");

    // Server streaming: every message of every stream.
    let (streams, code) = run_json(
        &[
            &format!("{base}/SayHellos"),
            "--proto",
            proto,
            "--data",
            r#"{"name":"x","count":7}"#,
            "-n",
            "12",
        ],
        LIMIT,
    );
    assert_eq!(code, 0, "{streams}");
    assert_eq!(n(&streams["ok"]), 12, "{streams}");

    let [hellos, streamed, messages] = g.stop();
    // By time, a call or so may still have been in flight as the second ended.
    let counted = 60 + timed_ok;
    assert!(
        (counted..=counted + 1).contains(&hellos),
        "grpcio served {hellos} SayHello calls, wirebench counted {counted}"
    );
    assert_eq!(streamed, 12);
    assert_eq!(messages, 12 * 7);
    let _ = std::fs::remove_dir_all(&dir);
}
