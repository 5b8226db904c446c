//! The library entry point (issue 18, item 4): `wirebench::measure` runs a plan in this
//! process against a reference server on loopback, each run with its own stop handle.

use clap::Parser;
use std::net::TcpListener;
use std::time::{Duration, Instant};
use wirebench::cli::{Cli, Command};
use wirebench::plan::Plan;
use wirebench::serve::tcp::{self, TcpServerOptions};
use wirebench::Stop;

/// The plan of `wirebench run ARGS`.
fn plan(args: &[&str]) -> Plan {
    let argv = ["wirebench", "run"].iter().chain(args).copied();
    let Command::Run(run) = Cli::try_parse_from(argv).expect("valid arguments").command else {
        unreachable!("the argument list names run")
    };
    Plan::try_from(&run).expect("a valid plan")
}

#[test]
fn a_stop_ends_only_the_runs_given_its_handle() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let srv = tcp::spawn(listener, TcpServerOptions::default()).unwrap();
    let url = format!("tcp://{}", srv.addr);
    let plan = plan(&[&url, "-d", "3s", "-c", "2"]);

    // Stopped before it starts: the run ends at once, with what it measured (about nothing).
    let stopped = Stop::new();
    stopped.request();
    let began = Instant::now();
    let first = wirebench::measure(&plan, &stopped).expect("a stopped run still summarises");
    assert!(
        began.elapsed() < Duration::from_secs(2),
        "{:?}",
        began.elapsed()
    );
    assert!(first.duration_s < 1.0, "{}", first.duration_s);

    // A stop asked for mid-run, from another thread, ends that run early.
    let stop = Stop::new();
    let asker = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(400));
            stop.request();
        })
    };
    let began = Instant::now();
    let second = wirebench::measure(&plan, &stop).expect("a run to the echo server");
    asker.join().unwrap();
    assert!(
        began.elapsed() < Duration::from_secs(2),
        "{:?}",
        began.elapsed()
    );
    assert!(second.ok > 0, "replies before the stop: {}", second.ok);
    assert_eq!(second.errors.total, 0);

    // The next run in the same process, with a fresh handle, runs its whole time: nothing
    // process-wide remembers the earlier stops.
    let short = self::plan(&[&url, "-d", "300ms", "-c", "2"]);
    let third = wirebench::measure(&short, &Stop::new()).expect("a run to the echo server");
    assert!(third.duration_s >= 0.25, "{}", third.duration_s);
    assert!(third.ok > 0 && third.errors.total == 0, "{third:?}");

    // The report renders the summary to any writer.
    let mut text = Vec::new();
    wirebench::report::table::write(&third, &mut text).unwrap();
    assert!(String::from_utf8(text).unwrap().contains(&url));
}
