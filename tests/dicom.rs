//! dicom:// against the real thing: DCMTK's storescp as the target (Debian's dcmtk package,
//! installed by .ci/run), echoscu and storescu as a second opinion, dcmftest and dcmdump to
//! check what storescp wrote. Bad input and refusing or foreign peers: one line, exit 2 or 1.

mod common;

use common::{execute_json, free_port, listens, run_bounded, usage_error, ServerProcess};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(60);

/// A directory of its own under the system's temp dir, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(what: &str) -> TempDir {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .subsec_nanos();
        let dir = std::env::temp_dir().join(format!(
            "wirebench-dicom-{what}-{}-{nanos}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    fn files(&self) -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = std::fs::read_dir(&self.0)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        v.sort();
        v
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A storescp child on a free port writing into a temp dir; killed (by its PID) when dropped.
struct Storescp {
    child: Child,
    url: String,
    port: u16,
    out: TempDir,
}

impl Storescp {
    /// storescp with AE title STORESCP and `args`, with TCP_NODELAY=1 in its environment
    /// (DCMTK 3.6.7 leaves Nagle's algorithm on otherwise, and every response then waits for
    /// the client's delayed ACK: about 40 ms an operation, the DCMTK study's stall).
    fn start(args: &[&str]) -> Storescp {
        Storescp::start_with(true, args)
    }

    /// storescp as above, with `TCP_NODELAY=1` in its environment or as shipped.
    fn start_with(nodelay: bool, args: &[&str]) -> Storescp {
        let env: &[(&str, &str)] = if nodelay {
            &[("TCP_NODELAY", "1")]
        } else {
            &[]
        };
        Storescp::start_env(env, args)
    }

    /// storescp with exactly `env` of DCMTK's TCP variables in its environment.
    fn start_env(env: &[(&str, &str)], args: &[&str]) -> Storescp {
        let out = TempDir::new("scp");
        let port = free_port();
        let mut command = Command::new("storescp");
        command
            .env_remove("TCP_NODELAY")
            .env_remove("TCP_BUFFER_LENGTH");
        command.envs(env.iter().copied());
        let mut child = command
            .args(["-aet", "STORESCP", "-od"])
            .arg(&out.0)
            .args(args)
            .arg(port.to_string())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("storescp must be installed (apt-get install dcmtk; .ci/run does it)");
        assert!(
            listens(&mut child, port),
            "storescp did not listen on {port}"
        );
        Storescp {
            child,
            url: format!("dicom://127.0.0.1:{port}/STORESCP"),
            port,
            out,
        }
    }
}

impl Drop for Storescp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn count(json: &serde_json::Value, key: &str) -> u64 {
    json[key]
        .as_u64()
        .unwrap_or_else(|| panic!("no {key}: {json}"))
}

/// `dcmftest FILES…`: every file must be a DICOM Part 10 file ("yes: FILE").
fn assert_part10(files: &[PathBuf]) {
    let out = Command::new("dcmftest").args(files).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        text.lines().filter(|l| l.starts_with("yes: ")).count(),
        files.len(),
        "{text}"
    );
}

/// The SOP Instance UID dcmdump reads in `file`.
fn sop_instance(file: &Path) -> String {
    let out = Command::new("dcmdump")
        .args(["+P", "0008,0018"])
        .arg(file)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let uid = text
        .split(['[', ']'])
        .nth(1)
        .unwrap_or_default()
        .to_string();
    assert!(
        uid.starts_with("2.25."),
        "dcmdump of {}: {text}",
        file.display()
    );
    uid
}

#[test]
fn stores_1000_generated_ct_images_that_storescp_writes_as_valid_files() {
    let scp = Storescp::start(&[]);
    let (json, code) = execute_json(&[&scp.url, "--op", "store", "-n", "1000", "-c", "2"], LIMIT);
    assert_eq!(code, 0, "{json}");
    assert_eq!(
        (count(&json, "ok"), count(&json["errors"], "total")),
        (1000, 0)
    );
    // Every image carried its 512 KiB of pixels and more; the report says so, and claims no
    // reply size (a response's size is the peer's); the result obeys the JSON schema.
    assert!(count(&json["throughput"], "sent_bytes") > 1000 * 512 * 1024);
    assert_eq!(count(&json["config"], "request_bytes"), 512 * 1024);
    assert!(
        json["config"]["reply_bytes"].is_null(),
        "{}",
        json["config"]
    );
    let schema = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/schema/result.v1.json"
    ))
    .unwrap();
    let validator = jsonschema::draft202012::new(&serde_json::from_str(&schema).unwrap()).unwrap();
    assert!(validator.is_valid(&json), "{json}");
    let files = scp.out.files();
    assert_eq!(files.len(), 1000, "storescp wrote {} files", files.len());
    // storescp names a file after its SOP Instance UID: 1000 names, 1000 distinct UIDs.
    let sample: Vec<PathBuf> = files.iter().step_by(100).cloned().collect();
    assert_part10(&sample);
    for f in &sample {
        let uid = sop_instance(f);
        assert!(
            f.ends_with(format!("CT.{uid}")),
            "{} holds {uid}",
            f.display()
        );
    }
}

#[test]
fn echo_per_connection_and_per_operation() {
    let scp = Storescp::start(&[]);
    let (json, code) = execute_json(&[&scp.url, "-n", "200"], LIMIT);
    assert_eq!((code, count(&json, "ok")), (0, 200), "{json}");
    let (json, code) = execute_json(
        &[&scp.url, "--op", "echo", "--mode", "crr", "-n", "20"],
        LIMIT,
    );
    assert_eq!((code, count(&json, "ok")), (0, 20), "{json}");
    // crr connects once per operation.
    assert_eq!(count(&json["connect"], "count"), 20, "{json}");
    // The open loop applies too.
    let (json, code) = execute_json(&[&scp.url, "--rate", "100", "-d", "1s"], LIMIT);
    assert_eq!(code, 0, "{json}");
    assert!((90..=110).contains(&count(&json, "ok")), "{json}");
    // echoscu agrees that the peer answers C-ECHO.
    let status = Command::new("echoscu")
        .args(["-aec", "STORESCP", "127.0.0.1", &scp.port.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
}

#[test]
fn storescu_sends_our_image_and_we_send_files() {
    let scp = Storescp::start(&[]);
    let dir = TempDir::new("files");
    for i in 0..5 {
        let file = dir.0.join(format!("img{i}.dcm"));
        let (out, _) = run_bounded(
            &[
                "run",
                "dicom://127.0.0.1:1",
                "--save-example",
                file.to_str().unwrap(),
                "--size",
                "64k",
            ],
            LIMIT,
        );
        assert!(out.status.success());
    }
    assert_part10(&dir.files());
    let first = &dir.files()[0];
    let status = Command::new("storescu")
        .args(["-aec", "STORESCP", "127.0.0.1", &scp.port.to_string()])
        .arg(first)
        .status()
        .unwrap();
    assert!(status.success(), "storescu refused our file");
    let uid = sop_instance(first);
    assert!(scp.out.0.join(format!("CT.{uid}")).exists());
    // --files sends each file with its own UID: 5 files, 5 more stored.
    let files = dir.0.to_str().unwrap();
    let (json, code) = execute_json(
        &[&scp.url, "--op", "store", "--files", files, "-n", "5"],
        LIMIT,
    );
    assert_eq!((code, count(&json, "ok")), (0, 5), "{json}");
    assert_eq!(scp.out.files().len(), 5, "the storescu file and 4 new UIDs");
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let url = "dicom://127.0.0.1:1/STORESCP";
    let out = usage_error(&["run", url, "--calling-ae", "SEVENTEEN_CHARS_X"], LIMIT);
    assert!(String::from_utf8_lossy(&out.stderr).contains("at most 16"));
    usage_error(&["run", "dicom://127.0.0.1:1/SEVENTEEN_CHARS_XX"], LIMIT);
    let dir = TempDir::new("bad");
    std::fs::write(dir.0.join("notes.txt"), "not an image").unwrap();
    let out = usage_error(
        &[
            "run",
            url,
            "--op",
            "store",
            "--files",
            dir.0.to_str().unwrap(),
        ],
        LIMIT,
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("notes.txt") && err.contains("not a DICOM"),
        "{err}"
    );
    usage_error(&["run", url, "--op", "echo", "--size", "1k"], LIMIT);
    usage_error(&["run", url, "--pipeline", "2"], LIMIT);
    usage_error(&["run", url, "--mode", "stream"], LIMIT);
    usage_error(&["run", "tcp://127.0.0.1:1", "--calling-ae", "X"], LIMIT);
}

/// Runs against a peer that will not serve us: exit 1, one line naming why, in bounded time.
fn refused(url: &str) -> String {
    let (out, took) = run_bounded(&["run", url, "-n", "5", "-q", "--timeout", "2s"], LIMIT);
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(took < Duration::from_secs(15), "took {took:?}");
    err
}

#[test]
fn a_rejected_association_is_named_with_its_reason() {
    let scp = Storescp::start(&["--refuse"]);
    let err = refused(&scp.url);
    assert!(
        err.contains("association rejected (permanent) by the service user"),
        "{err}"
    );
}

#[test]
fn a_server_that_is_not_dicom_is_named() {
    let srv = ServerProcess::start(&[]);
    let url = srv.url.replace("tcp://", "dicom://") + "/STORESCP";
    let err = refused(&url);
    assert!(err.contains("does not speak DICOM"), "{err}");
}

/// One implicit VR element of group 0000 with a 2-byte value (PS3.7 §E.1).
fn us(out: &mut Vec<u8>, elem: u16, v: u16) {
    out.extend_from_slice(&0u16.to_le_bytes());
    out.extend_from_slice(&elem.to_le_bytes());
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&v.to_le_bytes());
}

/// A storage SCP of a few lines that accepts every context and answers every C-STORE with
/// `status`: what storescp cannot be made to do.
fn failing_scp(status: u16) -> (String, std::thread::JoinHandle<()>) {
    use std::io::{Read, Write};
    use wirebench::driver::dicom::pdu;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("dicom://{}/FAILING", listener.local_addr().unwrap());
    let serve = std::thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        let mut buf = Vec::new();
        let mut chunk = [0u8; 65536];
        let (mut message_id, mut associated) = (0u16, false);
        loop {
            while let Some((kind, len)) = pdu::peek(&buf).filter(|&(_, l)| buf.len() >= l) {
                let body = buf[pdu::HEADER..len].to_vec();
                buf.drain(..len);
                let reply = match kind {
                    pdu::ASSOCIATE_RQ if !associated => {
                        associated = true;
                        accept(&body)
                    }
                    pdu::P_DATA_TF => {
                        let mut reply = Vec::new();
                        for pdv in pdu::pdvs(&body).map(Result::unwrap) {
                            if pdv.command {
                                // (0000,0110) Message ID, after group length, class UID, command.
                                let at = pdv
                                    .data
                                    .windows(4)
                                    .position(|w| w == [0, 0, 0x10, 0x01])
                                    .unwrap();
                                message_id =
                                    u16::from_le_bytes([pdv.data[at + 8], pdv.data[at + 9]]);
                            } else if pdv.last {
                                let mut c = Vec::new();
                                us(&mut c, 0x0100, 0x8001);
                                us(&mut c, 0x0120, message_id);
                                us(&mut c, 0x0800, 0x0101);
                                us(&mut c, 0x0900, status);
                                let mut cmd = Vec::new();
                                cmd.extend_from_slice(&[0, 0, 0, 0, 4, 0, 0, 0]);
                                cmd.extend_from_slice(&(c.len() as u32).to_le_bytes());
                                cmd.extend_from_slice(&c);
                                pdu::p_data(&mut reply, pdv.pc, true, &[&cmd], 0);
                            }
                        }
                        reply
                    }
                    pdu::RELEASE_RQ => {
                        let _ = s.write_all(&pdu::release_rp());
                        return;
                    }
                    _ => return,
                };
                s.write_all(&reply).unwrap();
            }
            match s.read(&mut chunk) {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        }
    });
    (url, serve)
}

/// An A-ASSOCIATE-AC accepting every proposed context in explicit VR little endian
/// (PS3.8 §9.3.3), the request's fixed fields echoed.
fn accept(rq: &[u8]) -> Vec<u8> {
    let mut body = rq[..68].to_vec();
    let item = |out: &mut Vec<u8>, kind: u8, v: &[u8]| {
        out.extend_from_slice(&[kind, 0]);
        out.extend_from_slice(&(v.len() as u16).to_be_bytes());
        out.extend_from_slice(v);
    };
    item(&mut body, 0x10, b"1.2.840.10008.3.1.1.1");
    let mut rest = &rq[68..];
    while rest.len() >= 4 {
        let len = u16::from_be_bytes([rest[2], rest[3]]) as usize;
        if rest[0] == 0x20 {
            let mut v = vec![rest[4], 0, 0, 0];
            item(&mut v, 0x40, b"1.2.840.10008.1.2.1");
            item(&mut body, 0x21, &v);
        }
        rest = &rest[4 + len..];
    }
    let mut user = Vec::new();
    item(&mut user, 0x51, &16384u32.to_be_bytes());
    item(&mut body, 0x50, &user);
    let mut pdu = vec![0x02, 0];
    pdu.extend_from_slice(&(body.len() as u32).to_be_bytes());
    pdu.extend_from_slice(&body);
    pdu
}

#[test]
fn dimse_failure_statuses_count_as_errors_of_kind_status() {
    let (url, serve) = failing_scp(0xA700);
    let (json, code) = execute_json(&[&url, "--op", "store", "--size", "64k", "-n", "3"], LIMIT);
    serve.join().unwrap();
    assert_eq!(code, 1, "{json}");
    assert_eq!(count(&json, "ok"), 0, "{json}");
    let kinds = json["errors"]["by_kind"].as_array().unwrap();
    assert_eq!(kinds.len(), 1, "{json}");
    assert_eq!(
        (kinds[0]["kind"].as_str(), kinds[0]["count"].as_u64()),
        (Some("status"), Some(3))
    );
    let sample = kinds[0]["sample"].as_str().unwrap();
    assert!(
        sample.contains("C-STORE") && sample.contains("out of resources"),
        "{sample}"
    );
}

/// `wirebench diagnose dicom://…` on the DCMTK study's two storescp: as shipped (Nagle on, each
/// C-STORE response waits for our delayed ACK) it names the stall on the server's side and
/// DCMTK's own cure, TCP_NODELAY=1 in storescp's environment; started with it, no stall.
#[test]
fn diagnose_names_storescps_nagle_stall_and_its_environment_cure() {
    let diagnose = |url: &str| -> serde_json::Value {
        let args = [
            "diagnose", url, "--op", "store", "--size", "64k", "-d", "1s", "--json", "-q",
        ];
        let (out, _) = run_bounded(&args, Duration::from_secs(90));
        let text = String::from_utf8_lossy(&out.stdout);
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"))
    };
    let finding = |doc: &serde_json::Value| {
        doc["findings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["id"] == "nagle_delayed_ack")
            .cloned()
    };
    let shipped = Storescp::start_with(false, &[]);
    let doc = diagnose(&shipped.url);
    let nagle = finding(&doc).unwrap_or_else(|| panic!("no Nagle finding: {doc:#}"));
    assert_eq!(nagle["side"], "server", "{nagle:#}");
    assert!(
        nagle["fix"].as_str().unwrap().contains("TCP_NODELAY=1"),
        "{nagle:#}"
    );
    drop(shipped);
    let cured = Storescp::start_with(true, &[]);
    let doc = diagnose(&cured.url);
    assert!(finding(&doc).is_none(), "{doc:#}");
}

/// examples/dcmtk.toml, shortened (20 images of 64 KiB, 1 s diagnosis steps) against three
/// storescp this test starts as the example says: the runs' tables and each target's
/// diagnosis in report.md, the shipped one's Nagle stall named; study.json valid.
#[test]
fn the_dcmtk_example_runs_and_reports_each_configuration_with_its_diagnosis() {
    let shipped = Storescp::start_env(&[], &[]);
    let nodelay = Storescp::start_env(&[("TCP_NODELAY", "1")], &[]);
    let buffer = Storescp::start_env(&[("TCP_BUFFER_LENGTH", "129076")], &[]);
    let path = format!("{}/examples/dcmtk.toml", env!("CARGO_MANIFEST_DIR"));
    let mut text = std::fs::read_to_string(path).unwrap();
    for (from, to) in [
        ("127.0.0.1:11112", &shipped),
        ("127.0.0.1:11113", &nodelay),
        ("127.0.0.1:11114", &buffer),
    ] {
        assert!(text.contains(from), "{from} not in the example");
        text = text.replace(from, &format!("127.0.0.1:{}", to.port));
    }
    for (from, to) in [
        ("size = \"512k\"", "size = \"64k\""),
        ("requests = 1000", "requests = 20\nduration = \"1s\""),
    ] {
        assert!(text.contains(from), "{from} not in the example");
        text = text.replace(from, to);
    }
    let dir = TempDir::new("dcmtk-example");
    let plan = dir.0.join("dcmtk.toml");
    std::fs::write(&plan, text).unwrap();
    let out = dir.0.join("out");
    let (o, _) = run_bounded(
        &[
            "study",
            plan.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
        Duration::from_secs(120),
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    let study = common::study::valid_study(&out);
    let diagnoses = study["diagnoses"].as_array().expect("diagnoses");
    assert_eq!(diagnoses.len(), 3);
    let ids = |d: &serde_json::Value| -> Vec<String> {
        d["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["id"].as_str().unwrap().to_string())
            .collect()
    };
    assert!(
        ids(&diagnoses[0]).contains(&"nagle_delayed_ack".to_string()),
        "{:#}",
        diagnoses[0]
    );
    assert!(
        !ids(&diagnoses[1]).contains(&"nagle_delayed_ack".to_string()),
        "{:#}",
        diagnoses[1]
    );
    let page = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(
        page.contains("Diagnosis: dicom://") && page.contains(r#"class="findings""#),
        "no diagnosis in report.html"
    );
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    for want in [
        "## Diagnosis",
        "### shipped",
        "### nodelay",
        "### buffer",
        "Nagle",
        "TCP_NODELAY=1",
    ] {
        assert!(report.contains(want), "no {want} in:\n{report}");
    }
}
