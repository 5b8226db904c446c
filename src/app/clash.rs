//! The flags users bring from the tools they come from. wirebench keeps its own flags, but a
//! flag that means something in wrk, wrk2, oha, hey, h2load, ab, curl, iperf3, k6 or netperf
//! gets a line naming what the user meant in wirebench, before clap would say something less
//! helpful ("'1000' is not a URL", "use '-- -R'", or a similar-looking flag of another meaning).
//! And a command line with a URL but no command (`wirebench -c 100 -d 10s URL`, as wrk and oha
//! are typed) is a `run`.

use crate::units::parse_duration;

/// The commands that generate load: their flags are where foreign ones turn up.
const LOADS: [&str; 4] = ["run", "compare", "peak", "diagnose"];

/// The schemes of the targets a `run` takes.
const SCHEMES: [&str; 6] = [
    "tcp://", "udp://", "http://", "https://", "dicom://", "redis://",
];

/// The arguments with `run` put in as the command when there is none but a target URL is
/// there (`wirebench -c 100 -d 10s http://host/`); None when a command (or only flags like
/// `--help`) is given.
pub(crate) fn implied_run(args: &[String], commands: &[String]) -> Option<Vec<String>> {
    let first = args.get(1)?;
    if commands.iter().any(|c| c == first) {
        return None;
    }
    let words = args.iter().skip(1).take_while(|a| *a != "--");
    let url = words.clone().any(|a| {
        SCHEMES
            .iter()
            .any(|s| a.starts_with(s) || a.contains(&format!("={s}")))
    });
    if !url || first == "help" {
        return None;
    }
    let mut out = vec![args[0].clone(), "run".to_string()];
    out.extend(args.iter().skip(1).cloned());
    Some(out)
}

/// A usage error for a foreign flag in `args` (the process arguments, the program name first).
pub(crate) fn hint(args: &[String]) -> Option<String> {
    if !LOADS.contains(&args.get(1)?.as_str()) {
        return None;
    }
    let mut words: Vec<&str> = args
        .iter()
        .take_while(|a| *a != "--")
        .map(String::as_str)
        .collect();
    words.push("");
    words.windows(2).find_map(|w| foreign(w[0], w[1]))
}

/// What `flag` (followed by `next`, perhaps its value) means in wirebench, if it is a flag of
/// another tool that wirebench spells differently or does not need.
fn foreign(flag: &str, next: &str) -> Option<String> {
    // `--vus=10` as well as `--vus 10`.
    let (flag, value) = match flag.split_once('=') {
        Some((f, v)) if f.starts_with("--") => (f, v),
        _ => (flag, next),
    };
    let v = if value.is_empty() { "N" } else { value };
    let line = match flag {
        "-q" if is_rate(value) => format!(
            "-q is --quiet in wirebench and takes no value (oha's and hey's -q is a rate): \
             did you mean --rate {v}?"
        ),
        "-t" => return threads(value),
        "-R" => {
            format!("-R is wrk2's rate: in wirebench it is --rate {v} (an open loop, as wrk2's)")
        }
        "--rps" | "--qps" | "-qps" => format!("{flag} is --rate {v} in wirebench"),
        "-m" | "--max-concurrent-streams" => format!(
            "h2load's {flag} (streams at once on each connection) is --pipeline {v} in \
             wirebench, with --http2"
        ),
        "-k" | "--keepalive" => format!(
            "wirebench keeps connections alive by default ({flag} of ab; --no-keepalive opens \
             one per request); for curl's -k (no certificate check) write --insecure"
        ),
        "-u" if value.parse::<u64>().is_ok() => {
            format!("k6's -u (virtual users) is -c {v} (--connections) in wirebench")
        }
        "-u" | "--udp" => format!(
            "iperf3's {flag} (UDP) is a udp:// URL in wirebench: wirebench run udp://HOST:PORT"
        ),
        "-P" | "--parallel" => {
            format!("iperf3's {flag} (parallel streams) is -c {v} (--connections) in wirebench")
        }
        "--vus" | "--concurrency" => format!("{flag} is -c {v} (--connections) in wirebench"),
        "-J" => "iperf3's -J is --json in wirebench".to_string(),
        "--time" => format!("iperf3's --time is -d {v} (--duration) in wirebench"),
        "--latency" => "wirebench always reports the latency distribution (wrk's --latency): \
             leave --latency out"
            .to_string(),
        "--no-tui" => "wirebench has no TUI (oha's --no-tui): its progress line shows only on a \
             terminal, and --quiet hides it; leave --no-tui out"
            .to_string(),
        _ => return None,
    };
    Some(line)
}

/// `-t` is --threads in wirebench (as in wrk); a time (iperf3's `-t 10s`) or a netperf test
/// (`-t TCP_RR`) is told what it is here. A bare number stays threads: `-t 10` is wrk's
/// threads as much as iperf3's seconds.
fn threads(v: &str) -> Option<String> {
    if v.parse::<usize>().is_ok() {
        return None;
    }
    if parse_duration(v).is_ok() {
        return Some(format!(
            "-t is --threads in wirebench (iperf3's -t is a time): did you mean -d {v} \
             (--duration)?"
        ));
    }
    let mode = match v.to_ascii_uppercase().as_str() {
        "TCP_RR" => "a tcp:// URL with --mode rr (the default)",
        "TCP_CRR" => "a tcp:// URL with --mode crr",
        "TCP_STREAM" => "a tcp:// URL with --mode stream",
        "TCP_MAERTS" => "a tcp:// URL with --mode source",
        "UDP_RR" => "a udp:// URL (request/response, the default)",
        "UDP_STREAM" => "a udp:// URL with --mode stream",
        _ => return None,
    };
    Some(format!(
        "-t is --threads in wirebench; netperf's test {v} is {mode}"
    ))
}

/// `1000`, `1000/s` or `2.5k`-free plain numbers: what a rate flag would be given.
fn is_rate(v: &str) -> bool {
    v.trim_end_matches("/s")
        .parse::<f64>()
        .is_ok_and(|r| r.is_finite() && r > 0.0)
}

/// Whether clap's suggestion `suggested` for the unknown flag `typed` is a likely typo
/// ([`crate::error::close`]).
pub(crate) fn close(typed: &str, suggested: &str) -> bool {
    crate::error::close(typed, suggested)
}

#[cfg(test)]
mod tests {
    use super::{close, hint, implied_run};

    fn of(line: &str) -> Option<String> {
        hint(&line.split(' ').map(String::from).collect::<Vec<_>>())
    }

    #[test]
    fn a_rate_after_quiet_is_taken_for_ohas_rate() {
        let h = of("wb run tcp://127.0.0.1:1 -q 1000").unwrap();
        assert!(h.contains("did you mean --rate 1000?"), "{h}");
        assert!(of("wb peak http://h/ -q 500/s").is_some());
        assert_eq!(of("wb run -q tcp://127.0.0.1:1"), None);
        assert_eq!(of("wb serve tcp -q 1000"), None);
    }

    #[test]
    fn a_time_after_threads_is_taken_for_iperfs_time() {
        let h = of("wb run tcp://127.0.0.1:1 -t 10s").unwrap();
        assert!(h.contains("did you mean -d 10s"), "{h}");
        assert_eq!(of("wb run tcp://127.0.0.1:1 -t 4"), None);
        assert_eq!(of("wb run tcp://127.0.0.1:1 -t many"), None);
        let h = of("wb run tcp://127.0.0.1:1 -t TCP_CRR").unwrap();
        assert!(h.contains("--mode crr"), "{h}");
    }

    #[test]
    fn flags_of_other_tools_are_told_their_name_here() {
        for (line, want) in [
            ("wb run http://h/ -R 1000", "--rate 1000"),
            ("wb run http://h/ -m 16", "--pipeline 16"),
            ("wb run https://h/ -k", "--insecure"),
            ("wb run tcp://h:1 -u", "udp://"),
            ("wb run http://h/ -u 50", "-c 50"),
            ("wb run tcp://h:1 -P 4", "-c 4"),
            ("wb run tcp://h:1 -J", "--json"),
            ("wb run http://h/ --latency", "always reports the latency"),
            ("wb run http://h/ --no-tui", "--quiet"),
            ("wb run http://h/ --vus 10", "-c 10"),
            ("wb run http://h/ --vus=10", "-c 10"),
            ("wb peak http://h/ --rps 50", "--rate 50"),
        ] {
            let h = of(line).unwrap_or_else(|| panic!("no hint for {line}"));
            assert!(h.contains(want), "{line}: {h}");
        }
        // After `--` the words are not wirebench's.
        assert_eq!(of("wb run http://h/ -- -R 5"), None);
    }

    #[test]
    fn a_url_without_a_command_is_a_run() {
        let commands: Vec<String> = ["run", "serve", "help"].map(String::from).to_vec();
        let line = |l: &str| l.split(' ').map(String::from).collect::<Vec<_>>();
        assert_eq!(
            implied_run(&line("wb -c 100 -d 10s http://h/"), &commands),
            Some(line("wb run -c 100 -d 10s http://h/"))
        );
        assert_eq!(implied_run(&line("wb run http://h/"), &commands), None);
        assert_eq!(implied_run(&line("wb --help"), &commands), None);
        assert_eq!(implied_run(&line("wb -c 4"), &commands), None);
    }

    #[test]
    fn only_close_spellings_are_suggested() {
        assert!(close("--rat", "--rate"));
        assert!(close("--connection", "--connections"));
        assert!(close("--timout", "--timeout"));
        assert!(!close("--latency", "--rate"));
        assert!(!close("--no-tui", "--until"));
        assert!(!close("--vus", "--runs"));
    }
}
