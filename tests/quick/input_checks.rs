//! Input a request cannot carry is refused before anything is sent (issue 16 item 10): a URL
//! path with a space, credentials in a URL, an unclosed IPv6 bracket, a header with CR/LF.

use super::common;

use common::usage_error;
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(60);

fn stderr_of(args: &[&str]) -> String {
    String::from_utf8_lossy(&usage_error(args, LIMIT).stderr).into_owned()
}

#[test]
fn urls_and_headers_a_request_cannot_carry_are_one_line_and_exit_2() {
    // Nothing listens on these ports: the check comes before any connection.
    let err = stderr_of(&["run", "http://127.0.0.1:9/a b", "-d", "1s"]);
    assert!(err.contains("a space") && err.contains("%20"), "{err}");
    let err = stderr_of(&["run", "http://127.0.0.1:9/q?x=é", "-d", "1s"]);
    assert!(err.contains("%C3%A9"), "{err}");

    let err = stderr_of(&["run", "http://user:hunter2@127.0.0.1:9/", "-d", "1s"]);
    assert!(
        err.contains("not supported") && err.contains("-H 'Authorization"),
        "{err}"
    );
    assert!(
        !err.contains("hunter2"),
        "the password is not echoed: {err}"
    );

    for url in ["tcp://[::1", "http://[::1/x"] {
        let err = stderr_of(&["run", url, "-d", "1s"]);
        assert!(
            err.contains("'[' of the IPv6 address is not closed"),
            "{err}"
        );
    }

    // usage_error checks the one line; the CR LF is shown escaped.
    let err = stderr_of(&["run", "http://127.0.0.1:9/", "-H", "X-A: 1\r\nX-B: 2"]);
    assert!(err.contains(r"X-A: 1\r\nX-B: 2"), "{err}");
    let err = stderr_of(&["run", "http://127.0.0.1:9/", "-H", "X\nY: 2"]);
    assert!(err.contains(r"X\nY: 2"), "{err}");

    let dir = std::env::temp_dir().join(format!("wb-input-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let list = dir.join("targets.txt");
    std::fs::write(&list, "GET /ok\nGET /a b\n").unwrap();
    let list = list.to_str().unwrap();
    let err = stderr_of(&["run", "http://127.0.0.1:9/", "--targets", list]);
    assert!(err.contains("line 2") && err.contains("%20"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
