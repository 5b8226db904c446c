//! Limits of the client itself: a generator whose threads are saturated (then the figures
//! describe the client, docs/method.md, "Comparing fairly"), and ephemeral ports running out when
//! every request opens a connection (each closed connection keeps its port in TIME_WAIT for
//! 60 s, so the port range over 60 s is the most new connections per second to one
//! destination).

use super::{Change, Confidence, Evidence, Finding, Variant};
use crate::summary::diagnose::SATURATED_PERCENT;
use crate::summary::{ClientMode, Summary};

/// How long Linux keeps a closed connection's port in TIME_WAIT, s (TCP_TIMEWAIT_LEN).
const TIME_WAIT_S: f64 = 60.0;
/// Worker threads sleeping less often than this per second always had work.
const RARE_SLEEPS: f64 = 100.0;
/// A connect rate above this share of the port ceiling is close enough to name.
const NEAR_CEILING: f64 = 0.8;

/// More threads, when the generator is saturated and has connections to spread over them.
pub fn variants(base: &Summary, ev: &Evidence) -> Vec<(&'static str, Change)> {
    let g = &base.generator;
    let more = (g.threads * 2).min(ev.cpus).min(base.config.connections);
    if saturated(base, ev) && more > g.threads {
        vec![("generator_bound", Change::Threads(more))]
    } else {
        Vec::new()
    }
}

/// Whether the generator's threads were saturated: they used nearly all their CPU time, or
/// they could have run nearly all the time and hardly ever slept (a contended host gave them
/// less CPU; a thread that waits for replies sleeps once per wait).
fn saturated(base: &Summary, ev: &Evidence) -> bool {
    let never_slept = ev.generator_sleeps_per_s.is_some_and(|s| s < RARE_SLEEPS);
    base.generator.cpu_percent_of_threads >= SATURATED_PERCENT
        || (never_slept
            && ev
                .generator_busy_percent
                .is_some_and(|b| b >= SATURATED_PERCENT))
}

/// The generator is the bottleneck.
pub fn generator_bound(base: &Summary, ev: &Evidence, variants: &[Variant]) -> Option<Finding> {
    let g = &base.generator;
    if !saturated(base, ev) {
        return None;
    }
    let mut evidence = vec![
        format!(
            "the generator used {:.0}% of its {} thread(s): {:.2} s user + {:.2} s system in {:.2} s",
            g.cpu_percent_of_threads, g.threads, g.cpu_user_s, g.cpu_sys_s, base.duration_s
        ),
        format!("{} CPU(s) available to the client", ev.cpus),
    ];
    if let (Some(b), Some(s)) = (ev.generator_busy_percent, ev.generator_sleeps_per_s) {
        evidence.push(format!("its worker threads were running or waiting for a CPU {b:.0}% of the time and slept {s:.0} times/s (/proc/self/task/*/schedstat, status)"));
    }
    let mut gain = None;
    for v in variants
        .iter()
        .filter(|v| v.hypothesis == "generator_bound")
    {
        let r = v.figures.ops_per_s / base.throughput.ops_per_s.max(1e-9);
        evidence.push(format!(
            "with {}: {:.0} ops/s instead of {:.0} ({:.2}×)",
            v.flags, v.figures.ops_per_s, base.throughput.ops_per_s, r
        ));
        gain = Some(r);
    }
    Some(Finding {
        id: "generator_bound".into(),
        title: "the generator is saturated: these figures describe the client, not the target".into(),
        confidence: if gain.is_some_and(|r| r >= 1.2) { Confidence::High } else { Confidence::Medium },
        side: "client".into(),
        evidence,
        fix: format!("Give the client more threads (--threads, up to the {} CPU(s)) with at least as many connections; pin the client and the server to different CPUs (taskset -c), or run the client on another machine.", ev.cpus),
        rank: 0,
    })
}

/// Ports running out (or about to) with a connection per request.
pub fn port_exhaustion(base: &Summary, ev: &Evidence) -> Option<Finding> {
    let failed = base
        .errors
        .by_kind
        .iter()
        .find(|e| e.kind == "port_exhausted")
        .map_or(0, |e| e.count);
    let per_request =
        base.mode == ClientMode::Crr || base.http.as_ref().is_some_and(|h| !h.keepalive);
    let [lo, hi] = ev.port_range.unwrap_or([32768, 60999]);
    let ports = f64::from(hi.saturating_sub(lo)) + 1.0;
    let ceiling = ports / TIME_WAIT_S;
    let rate = base.throughput.ops_per_s;
    let reused = ev.loopback && matches!(ev.tw_reuse, Some(1 | 2));
    let confidence = if failed > 0 {
        Confidence::High
    } else if !per_request || rate < NEAR_CEILING * ceiling {
        return None;
    } else if reused {
        Confidence::Low
    } else {
        Confidence::Medium
    };
    let mut evidence = Vec::new();
    if failed > 0 {
        evidence.push(format!(
            "{failed} connects failed with EADDRNOTAVAIL (no local port left)"
        ));
    }
    evidence.push(format!("net.ipv4.ip_local_port_range {lo}-{hi}: {ports:.0} ports; each closed connection holds its port in TIME_WAIT for 60 s, so about {ceiling:.0} new connections/s to one destination is the ceiling"));
    evidence.push(format!(
        "{rate:.0} new connections/s in this run; {} sockets in TIME_WAIT toward the target after it",
        ev.time_wait
    ));
    if let Some(r) = ev.tw_reuse {
        evidence.push(format!("net.ipv4.tcp_tw_reuse = {r}{}", if reused { ": on loopback the kernel reuses TIME_WAIT ports, so here the limit bends; across a link it bites" } else { "" }));
    }
    Some(Finding {
        id: "port_exhaustion".into(),
        title: if failed > 0 {
            "ephemeral ports ran out: a connection per request leaves each port in TIME_WAIT".into()
        } else {
            format!("a connection per request at {rate:.0}/s is near the ephemeral-port ceiling of ~{ceiling:.0}/s")
        },
        confidence,
        side: "client".into(),
        evidence,
        fix: "Use persistent connections (--mode rr, HTTP keep-alive), widen net.ipv4.ip_local_port_range, or set net.ipv4.tcp_tw_reuse=1; a server that closes first holds the TIME_WAIT itself.".into(),
        rank: 0,
    })
}
