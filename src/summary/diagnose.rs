//! Diagnosis: plain-word notes on what a summary shows, with the evidence and the fix.

use crate::record::Host;
use crate::summary::{OpenLoop, Summary};
use crate::units::format_us;

/// CPU share of its threads above which the generator itself may be the bottleneck.
pub(crate) const SATURATED_PERCENT: f64 = 90.0;

/// The notes for a summary, most important first; `host` is what the engine read of this
/// machine as the run ended (the port range, for a run that ran out of ports).
pub fn notes(s: &Summary, host: &Host) -> Vec<String> {
    let mut notes = Vec::new();
    if let Some(e) = s.errors.by_kind.iter().find(|e| e.kind == "port_exhausted") {
        notes.push(port_exhaustion(e.count, host.port_range));
    }
    if let Some(l) = &s.latency {
        // The Flash study's lesson: a few slow requests can put the mean far above p95.
        if l.count >= 20 && l.mean_us > l.p95_us {
            notes.push(format!(
                "the mean ({}) is above p95 ({}): a few slow requests (max {}) dominate the mean; judge by the percentiles",
                format_us(l.mean_us), format_us(l.p95_us), format_us(l.max_us)
            ));
        }
    }
    if let Some(note) = s.warmup.as_ref().and_then(unsettled) {
        notes.push(note);
    }
    // A UDP stream above the path's rate: the host's own queue refused datagrams (never sent).
    if let Some(n) = s
        .datagrams
        .as_ref()
        .map(|d| d.host_queue_full)
        .filter(|n| *n > 0)
    {
        notes.push(format!(
            "the path is slower than the offered rate: this host's own queue toward the target was full and refused {n} datagrams (ENOBUFS), never sent and not in the sender's rate; lower --bandwidth to what the link carries"
        ));
    }
    let stream = s.mode.bulk();
    if let Some(o) = s.open_loop.as_ref().filter(|o| !o.kept_up && stream) {
        notes.push(stream_shortfall(s, o));
    } else if let Some(o) = s.open_loop.as_ref().filter(|o| !o.kept_up) {
        // Requests due and never sent are the load the run did not offer (`--rate 1e12`).
        let missed = match o.offered.saturating_sub(o.sent) {
            0 => String::new(),
            n => format!("; {n} of the {} requests due were never sent (add connections, --threads or --pipeline, or lower --rate)", o.offered),
        };
        notes.push(format!(
            "the target did not keep up with the offered load: offered {:.0}/s, sent {:.0}/s, answered ok {:.0}/s; {} requests went out behind schedule (largest lag {:.1} ms){missed}. Latency counts from each request's intended send time, so it includes the queueing; the service time row shows the server's own share",
            o.offered_per_s, o.sent_per_s, o.achieved_per_s, o.behind_schedule, o.max_lag_us / 1000.0
        ));
    } else if let Some(o) = s.open_loop.as_ref().filter(|o| o.behind_schedule > 0) {
        notes.push(format!(
            "{} {} went out more than 1 ms behind schedule (largest lag {:.1} ms){}",
            o.behind_schedule,
            if stream { "datagrams" } else { "requests" },
            o.max_lag_us / 1000.0,
            if stream {
                ""
            } else {
                "; their latency counts from the intended send time"
            },
        ));
    }
    if s.generator.cpu_percent_of_threads >= SATURATED_PERCENT {
        notes.push(format!(
            "the generator used {:.0}% of its {} thread(s): it may be the bottleneck, so these figures may describe the client; add --threads or connections, or run it on another machine",
            s.generator.cpu_percent_of_threads, s.generator.threads
        ));
    }
    notes
}

/// `--warmup auto` that ended at its cap (or a stop) before its last seconds were steady: the
/// measured window may still hold the target's warming, and the note says so where the JSON's
/// and the HTML page's notes are read (issue 38: only the terminal's header said it).
fn unsettled(w: &crate::summary::Warmup) -> Option<String> {
    let st = w.steady.as_ref().filter(|st| !st.steady)?;
    let cov = st.cov_pct.map_or("could not be judged".to_string(), |c| {
        format!("varied {c:.1}% (CoV)")
    });
    Some(format!(
        "the warm-up never settled: {} {cov} over its last {} s (steady at {:.0}% or less) when it ended after {:.1} s, so the figures may still be moving; lengthen its cap (--warmup auto:60s) or warm up for a fixed time",
        st.judged, st.window_s, st.bound_pct, w.duration_s
    ))
}

/// Why a stream fell short of its offered rate. A stream has no replies, so it is judged by
/// what it sent and, when the server counts, by what arrived: either the generator could not
/// send at the rate, or the target (or the path) lost what was sent.
fn stream_shortfall(s: &Summary, o: &OpenLoop) -> String {
    let mut why = Vec::new();
    if (o.sent as f64) < 0.99 * o.offered as f64 {
        why.push(format!(
            "the generator did not keep up with the offered rate: it sent {:.0}/s of {:.0}/s ({} datagrams behind schedule, largest lag {:.1} ms); add --threads and connections, or lower --bandwidth",
            o.sent_per_s, o.offered_per_s, o.behind_schedule, o.max_lag_us / 1000.0
        ));
    }
    if let Some(v) = s.datagrams.as_ref().and_then(|d| d.server.as_ref()) {
        if v.lost > 0 {
            why.push(format!(
                "the target did not keep up with the stream: the server received {} of the {} datagrams sent ({:.2}% lost; the target or the path dropped them); lower --bandwidth to find the rate it takes",
                v.received, v.sent, v.loss_percent
            ));
        }
    }
    if why.is_empty() {
        why.push(format!(
            "the stream did not keep up with the offered rate: offered {:.0}/s, sent {:.0}/s",
            o.offered_per_s, o.sent_per_s
        ));
    }
    why.join("; ")
}

/// Names ephemeral-port exhaustion, with this machine's port range (`range`, None when it
/// could not be read) and the ways out.
fn port_exhaustion(count: u64, range: Option<(u16, u16)>) -> String {
    let (range_text, rate) = match range {
        Some((lo, hi)) => {
            let ports = u64::from(hi.saturating_sub(lo)) + 1;
            (
                format!("{lo}-{hi} ({ports} ports)"),
                format!("about {} new connections/s", ports / 60),
            )
        }
        None => ("unknown".into(), "a few hundred new connections/s".into()),
    };
    format!(
        "local port exhaustion: {count} connects failed with EADDRNOTAVAIL. Each connection the client closes holds its port in TIME_WAIT for 60 s; net.ipv4.ip_local_port_range is {range_text}, so {rate} to one destination is the ceiling. Use persistent connections (--mode rr), widen the port range, or set net.ipv4.tcp_tw_reuse=1"
    )
}
