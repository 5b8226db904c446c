//! Many connections from one process: every one served, none leaked, memory bounded.

use super::common;

use common::run_json;
use std::net::TcpListener;
use std::time::{Duration, Instant};
use wirebench::serve::tcp::{spawn, TcpServerOptions};

#[test]
fn two_thousand_connections_are_all_served_and_closed() {
    wirebench::sys::usage::raise_fd_limit();
    let srv = spawn(
        TcpListener::bind("127.0.0.1:0").unwrap(),
        TcpServerOptions::default(),
    )
    .unwrap();
    let url = format!("tcp://{}", srv.addr);
    let (json, code) = run_json(
        &[&url, "-c", "2000", "-d", "3s", "--timeout", "5s"],
        Duration::from_secs(60),
    );
    assert_eq!(code, 0, "{}", json["errors"]);
    assert_eq!(json["connect"]["count"], 2000, "{}", json["connect"]);
    assert!(json["ok"].as_u64().unwrap() >= 2000, "{}", json["ok"]);
    assert!(
        json["generator"]["peak_rss_kib"].as_u64().unwrap() < 100 * 1024,
        "{}",
        json["generator"]
    );
    let stats = srv.stats();
    assert_eq!(
        stats.connections, 2000,
        "one per connection, no hidden probe: {stats:?}"
    );
    // Every connection closes once the client has gone.
    let deadline = Instant::now() + Duration::from_secs(5);
    while srv.stats().open > 0 {
        assert!(Instant::now() < deadline, "still open: {:?}", srv.stats());
        std::thread::sleep(Duration::from_millis(20));
    }
    // Replies still in flight at the deadline are not counted by the client: at most one per
    // connection.
    let (served, ok) = (srv.stop().requests, json["ok"].as_u64().unwrap());
    assert!(
        (ok..=ok + 2000).contains(&served),
        "server {served}, client {ok}"
    );
}
