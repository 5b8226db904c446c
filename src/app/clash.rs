//! Flags that mean something else in the tools our users come from: iperf3's `-t` is its time
//! (ours: threads), oha's and hey's `-q` their rate (ours: quiet). wirebench keeps its flags,
//! but a clash that shows in the arguments gets a line naming what the user probably meant,
//! before clap or the plan would say something less helpful ("'1000' is not a URL").

use crate::units::parse_duration;

/// The commands whose `-q` is quiet and `-t` threads.
const LOADS: [&str; 4] = ["run", "compare", "peak", "diagnose"];

/// A usage error for a clash in `args` (the process arguments, the program name first).
pub(crate) fn hint(args: &[String]) -> Option<String> {
    if !LOADS.contains(&args.get(1)?.as_str()) {
        return None;
    }
    let words = args.iter().take_while(|a| *a != "--").collect::<Vec<_>>();
    words
        .windows(2)
        .find_map(|w| match (w[0].as_str(), w[1].as_str()) {
            ("-q", v) if is_rate(v) => Some(format!(
                "-q is --quiet in wirebench and takes no value (oha's and hey's -q is a rate): \
             did you mean --rate {v}?"
            )),
            ("-t", v) if v.parse::<usize>().is_err() && parse_duration(v).is_ok() => Some(format!(
                "-t is --threads in wirebench (iperf3's -t is a time): did you mean -d {v} \
             (--duration)?"
            )),
            _ => None,
        })
}

/// `1000`, `1000/s` or `2.5k`-free plain numbers: what a rate flag would be given.
fn is_rate(v: &str) -> bool {
    v.trim_end_matches("/s")
        .parse::<f64>()
        .is_ok_and(|r| r.is_finite() && r > 0.0)
}

#[cfg(test)]
mod tests {
    use super::hint;

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
    }
}
