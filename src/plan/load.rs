//! When requests go out, from the flags: the closed loop, or an open-loop timetable
//! (`--rate`, `--stages`, a UDP stream's `--bandwidth`); and the warm-up before measuring.

use super::workload::mode;
use super::Warmup;
use crate::cli::{Arrival, RunArgs};
use crate::driver::workload::ClientMode;
use crate::driver::Pacing;
use crate::error::{usage_of, UsageError};
use crate::load::schedule::{parse_rate, parse_stages};
use crate::load::{LoadModel, Schedule};
use crate::units::{parse_bits, parse_duration};
use std::time::Duration;

/// The closed loop, or the open loop when `--rate`, `--stages` or (a stream its protocol paces
/// by bit rate, UDP's) `--bandwidth` gives a timetable; with that timetable as the user wrote
/// it, for reports (None in the closed loop, and for such a stream at its default bandwidth).
/// `pacing` is the target's protocol's, in this mode.
pub fn model(
    a: &RunArgs,
    pacing: Pacing,
    unit: usize,
    think: Option<crate::load::Think>,
    seed: u64,
) -> Result<(LoadModel, Option<String>), UsageError> {
    let poisson = a.arrival == Some(Arrival::Poisson);
    // A stream its protocol paces by bit rate (UDP's): --bandwidth, or the protocol's default.
    let bit_paced = pacing.bandwidth.is_some();
    let per_datagram = |bits: f64| Schedule::Constant {
        rate: bits / (unit as f64 * 8.0),
    };
    let schedule = match (&a.load.rate, &a.load.stages, &a.load.bandwidth, pacing.bandwidth) {
        (Some(r), _, _, _) => parse_rate(r).map_err(|e| UsageError::flag("--rate", e))?,
        (None, Some(s), _, _) => parse_stages(s).map_err(|e| UsageError::flag("--stages", e))?,
        (None, None, Some(b), Some(_)) => per_datagram(
            parse_bits(b)
                .map_err(|e| UsageError::flags(&["--bandwidth"], format!("--bandwidth: {e}")))?,
        ),
        (None, None, Some(_), None) => {
            return usage_of(
                &["--bandwidth", "--mode", "--rate"],
                "--bandwidth paces a UDP stream (udp://... --mode stream); for requests use --rate",
            )
        }
        (None, None, None, Some(bits)) => per_datagram(bits),
        (None, None, None, None) if poisson => {
            return Err(UsageError::flags(
                &["--arrival", "--rate"],
                "--arrival poisson spaces an open loop's requests: give the rate too, e.g. --rate 1000 --arrival poisson",
            ))
        }
        (None, None, None, None) => {
            let pipeline = super::pipeline_of(a)?.unwrap_or(1);
            return Ok((LoadModel::Closed { pipeline, think }, None));
        }
    };
    if !bit_paced && matches!(mode(a), ClientMode::Stream | ClientMode::Source) {
        return usage_of(
            &["--rate", "--stages", "--mode"],
            format!(
            "--rate and --stages pace requests; --mode {} over TCP moves bytes as fast as it can",
            mode(a).name()
        ),
        );
    }
    let window = pacing.window.unwrap_or(crate::load::UNLIMITED);
    let window = super::pipeline_of(a)?.unwrap_or(window);
    let (schedule, text) = match poisson {
        // The gaps from a stream of their own, apart from the templates' keys.
        true => (
            Schedule::poisson(schedule, crate::random::mix(seed, ARRIVALS)),
            schedule_text(a).map(|t| t + " Poisson"),
        ),
        false => (schedule, schedule_text(a)),
    };
    Ok((LoadModel::Open { schedule, window }, text))
}

/// How long `--warmup auto` may last before measuring starts anyway.
pub const AUTO_WARMUP_CAP: Duration = Duration::from_secs(30);

/// The stream of the run's seed that Poisson gaps are drawn from.
const ARRIVALS: u64 = 0xa771_7a15;

fn warmup(text: &str) -> Result<Warmup, UsageError> {
    if let Some(rest) = text.strip_prefix("auto") {
        let cap = match rest.strip_prefix(':') {
            None if rest.is_empty() => AUTO_WARMUP_CAP,
            Some(cap) => parse_duration(cap)
                .ok()
                .filter(|d| *d >= Duration::from_secs(1))
                .ok_or_else(|| {
                    UsageError::flag("--warmup", format!(
                        "--warmup '{text}': the cap after auto: must be a duration of at least 1s, such as auto:60s"
                    ))
                })?,
            None => {
                return Err(UsageError::flag(
                    "--warmup",
                    "--warmup auto takes an optional cap after a colon, such as auto:60s",
                ))
            }
        };
        return Ok(Warmup::Auto(cap));
    }
    if let Ok(n) = text.parse::<u64>() {
        if n == 0 {
            return usage_of(&["--warmup"], "--warmup 0 warms up nothing: leave it out, or give a count or a duration such as 2s");
        }
        return Ok(Warmup::Count(n));
    }
    parse_duration(text).map(Warmup::Duration).map_err(|_| {
        UsageError::flags(
            &["--warmup"],
            format!(
                "--warmup '{text}' is neither a request count (1000), a duration (2s) nor auto"
            ),
        )
    })
}

/// The open-loop timetable as the user wrote it, for reports (`--rate 1000` reads `1000/s`).
fn schedule_text(a: &RunArgs) -> Option<String> {
    let rate = a.load.rate.as_ref().map(|r| match r.contains('/') {
        true => r.clone(),
        false => format!("{r}/s"),
    });
    rate.or_else(|| a.load.stages.clone()).or_else(|| {
        a.load
            .bandwidth
            .as_ref()
            .map(|b| b.trim_end_matches("/s").to_string() + "/s")
    })
}

/// The warm-up of `a`, if any: a count needs request/response.
pub fn warmup_of(a: &RunArgs, mode: ClientMode) -> Result<Option<Warmup>, UsageError> {
    let warmup = a.warmup.as_deref().map(warmup).transpose()?;
    if matches!(warmup, Some(Warmup::Count(_))) && mode.bulk() {
        return usage_of(
            &["--warmup"],
            "--warmup by count needs request/response: give a duration such as --warmup 1s",
        );
    }
    if matches!(warmup, Some(Warmup::Auto(_))) && mode.bulk() {
        return Err(UsageError::flags(
            &["--warmup", "--mode"],
            "--warmup auto judges request/response rates: for a bulk transfer give a duration such as --warmup 2s",
        ));
    }
    Ok(warmup)
}

/// The default deadline's ceiling: k6's `maxDuration` for a run by iterations.
pub const DEADLINE_CAP: Duration = Duration::from_secs(600);

/// Start-up time every deadline allows besides the requests: threads, connections.
const DEADLINE_SLACK: Duration = Duration::from_secs(1);

/// `--deadline`, or for a run that counts requests (`-n`, a warm-up count) the default: the
/// worst case of its requests (each of a connection's share taking its connect and its reply
/// `--timeout`), at most [`DEADLINE_CAP`], and never before an open loop's timetable has sent
/// them all and their `--timeout` has passed. A run bounded by time alone needs none.
pub fn deadline_of(
    a: &RunArgs,
    load: &LoadModel,
    stop: super::Stop,
    warmup: Option<Warmup>,
    timeout: Duration,
    connections: usize,
) -> Result<Option<Duration>, UsageError> {
    let warm_count = match warmup {
        Some(Warmup::Count(n)) => n,
        _ => 0,
    };
    let counted = stop.requests.is_some() || warm_count > 0;
    if let Some(text) = &a.deadline {
        let d = super::duration_flag("--deadline", text)?;
        if d.is_zero() {
            return usage_of(
                &["--deadline"],
                "--deadline 0 would end the run before it starts: give a limit such as 30s",
            );
        }
        if !counted {
            return usage_of(&["--deadline", "--warmup"], "--deadline bounds a run by request count (-n, --warmup N); this one ends by its duration: drop --deadline, or shorten -d");
        }
        return Ok(Some(d));
    }
    if !counted {
        return Ok(None);
    }
    let warm_time = match warmup {
        Some(Warmup::Duration(w)) => w,
        _ => Duration::ZERO,
    };
    let owed = (stop.requests.unwrap_or(0) + warm_count).div_ceil(connections.max(1) as u64);
    let worst = timeout
        .saturating_mul(2)
        .saturating_mul(owed.min(u32::MAX as u64) as u32)
        .min(DEADLINE_CAP);
    let paced = load.schedule().map_or(Duration::ZERO, |s| {
        let warm = warm_count as f64 / s.rate_at(Duration::ZERO).max(1e-9);
        let last = stop.requests.map(|n| s.time_of(n.saturating_sub(1)));
        let measured = last.flatten().or(stop.duration).unwrap_or(Duration::ZERO);
        Duration::from_secs_f64(warm.min(1e9)) + measured + timeout
    });
    let measured = stop.duration.unwrap_or(Duration::ZERO);
    Ok(Some(
        warm_time + worst.max(paced).max(measured + timeout) + DEADLINE_SLACK,
    ))
}
