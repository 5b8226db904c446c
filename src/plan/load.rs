//! When requests go out, from the flags: the closed loop, or an open-loop timetable
//! (`--rate`, `--stages`, a UDP stream's `--bandwidth`); and the warm-up before measuring.

use super::workload::mode;
use super::Warmup;
use crate::cli::RunArgs;
use crate::driver::target::Family;
use crate::driver::workload::ClientMode;
use crate::error::{usage, UsageError};
use crate::load::schedule::{parse_rate, parse_stages};
use crate::load::{LoadModel, Schedule};
use crate::units::{parse_bits, parse_duration};
use std::time::Duration;

/// The closed loop, or the open loop when `--rate`, `--stages` or (UDP stream) `--bandwidth`
/// gives a timetable; with that timetable as the user wrote it, for reports (None in the closed
/// loop, and for a UDP stream at its default bandwidth).
pub fn model(
    a: &RunArgs,
    family: Family,
    unit: usize,
    think: Option<Duration>,
) -> Result<(LoadModel, Option<String>), UsageError> {
    let udp_stream = family == Family::Datagram && mode(a) == ClientMode::Stream;
    let per_datagram = |bits: f64| Schedule::Constant {
        rate: bits / (unit as f64 * 8.0),
    };
    let schedule =
        match (&a.rate, &a.stages, &a.bandwidth) {
            (Some(r), _, _) => parse_rate(r).map_err(UsageError)?,
            (None, Some(s), _) => parse_stages(s).map_err(UsageError)?,
            (None, None, Some(b)) if udp_stream => {
                per_datagram(parse_bits(b).map_err(|e| UsageError(format!("--bandwidth: {e}")))?)
            }
            (None, None, Some(_)) => return usage(
                "--bandwidth paces a UDP stream (udp://... --mode stream); for requests use --rate",
            ),
            // iperf3's default for UDP.
            (None, None, None) if udp_stream => per_datagram(1e6),
            (None, None, None) => {
                let pipeline = super::pipeline_of(a)?.unwrap_or(1);
                return Ok((LoadModel::Closed { pipeline, think }, None));
            }
        };
    if !udp_stream && matches!(mode(a), ClientMode::Stream | ClientMode::Source) {
        return usage(format!(
            "--rate and --stages pace requests; --mode {} over TCP moves bytes as fast as it can",
            mode(a).name()
        ));
    }
    // Datagrams do not block one another: by default any number may be in flight.
    let window = match family {
        Family::Stream | Family::Http => 1,
        Family::Datagram => crate::load::UNLIMITED,
    };
    let window = super::pipeline_of(a)?.unwrap_or(window);
    Ok((LoadModel::Open { schedule, window }, schedule_text(a)))
}

fn warmup(text: &str) -> Result<Warmup, UsageError> {
    if let Ok(n) = text.parse::<u64>() {
        if n == 0 {
            return usage("--warmup 0 warms up nothing: leave it out, or give a count or a duration such as 2s");
        }
        return Ok(Warmup::Count(n));
    }
    parse_duration(text).map(Warmup::Duration).map_err(|_| {
        UsageError(format!(
            "--warmup '{text}' is neither a request count (1000) nor a duration (2s)"
        ))
    })
}

/// The open-loop timetable as the user wrote it, for reports (`--rate 1000` reads `1000/s`).
fn schedule_text(a: &RunArgs) -> Option<String> {
    let rate = a.rate.as_ref().map(|r| match r.contains('/') {
        true => r.clone(),
        false => format!("{r}/s"),
    });
    rate.or_else(|| a.stages.clone()).or_else(|| {
        a.bandwidth
            .as_ref()
            .map(|b| b.trim_end_matches("/s").to_string() + "/s")
    })
}

/// The warm-up of `a`, if any: a count needs request/response.
pub fn warmup_of(a: &RunArgs, mode: ClientMode) -> Result<Option<Warmup>, UsageError> {
    let warmup = a.warmup.as_deref().map(warmup).transpose()?;
    if matches!(warmup, Some(Warmup::Count(_))) && mode.bulk() {
        return usage(
            "--warmup by count needs request/response: give a duration such as --warmup 1s",
        );
    }
    Ok(warmup)
}
