//! A merge's series, second by second: the parts' points aligned (on wall-clock time, or one
//! after another), their counts added and each second's histograms added exactly, the seconds
//! shared out among the CPUs.

use super::MergeError;
use crate::record::SeriesPoint;
use crate::summary::Summary;
use hdrhistogram::Histogram;

/// Second by second: counts and histograms added (each second's p50/p99 exact), the largest
/// max kept. Concurrent parts are aligned on wall-clock time (a part that began k seconds
/// after the earliest adds into second k on); sequential parts follow one another: each one's
/// seconds start where the previous one's ended. A second some part kept no histogram of
/// (a result written before they were kept) has no p50/p99.
pub(super) fn series(parts: &[Summary], sequential: bool) -> Result<Vec<SeriesPoint>, MergeError> {
    let earliest = parts.iter().map(|p| p.started_unix_ms).min().unwrap_or(0);
    let mut out: Vec<SeriesPoint> = Vec::new();
    // Each second's histograms (result, point, text); `None` once some part kept none.
    let mut texts: Vec<Option<Vec<Text>>> = Vec::new();
    // Memory is sized by the seconds the parts span: bounded first by what they hold, so a
    // 7 kB document claiming second 2^63 (or a start years from the others') is refused, not
    // allocated (second = 100,000 cost 1.6 GB before).
    let held: usize = parts.iter().map(|p| p.series.len()).sum();
    let mut span = 0usize;
    let mut next = 0usize;
    for part in parts {
        let at = match sequential {
            true => next,
            false => (part.started_unix_ms.saturating_sub(earliest) / 1000) as usize,
        };
        next += part.series.len();
        for p in &part.series {
            span = span.max(at.saturating_add(usize::try_from(p.second).unwrap_or(usize::MAX)));
        }
    }
    if span > held.saturating_add(MAX_GAP) {
        return Err(MergeError::Span { span, held });
    }
    let mut next = 0;
    for (n, part) in parts.iter().enumerate() {
        let at = match sequential {
            true => next,
            // Rounded to the nearest second: shards of one start differ by milliseconds.
            false => ((part.started_unix_ms - earliest) as f64 / 1000.0).round() as usize,
        };
        next += part.series.len();
        for (k, p) in part.series.iter().enumerate() {
            let i = at + p.second as usize;
            while out.len() <= i {
                out.push(blank(p, out.len() as u64));
                texts.push(Some(Vec::new()));
            }
            add_point(&mut out[i], p);
            // A second some part kept no histogram of has no p50/p99 (None from then on).
            match (&mut texts[i], p.histogram.as_deref()) {
                (Some(all), Some(text)) => all.push((n, k, text)),
                (slot, None) if p.p50_us.is_some() => *slot = None,
                _ => {}
            }
        }
    }
    let sums = add_seconds(&texts)?;
    for (o, h) in out.iter_mut().zip(sums) {
        let max = o.max_us;
        match h {
            Some(h) => o.set_latency(&h),
            None => (o.p50_us, o.p99_us, o.histogram) = (None, None, None),
        }
        o.max_us = o.max_us.or(max);
    }
    Ok(out)
}

/// The most seconds a merge may span beyond the points its parts hold (gaps between parts
/// that ran at different times, and seconds a part has no point of): an hour.
const MAX_GAP: usize = 3600;

/// One second's histogram of one part: the part's index, the point's, and its text.
type Text<'a> = (usize, usize, &'a str);

/// Each second's histograms added, the seconds shared out among the CPUs (a merge of 200
/// shards of a minute adds 12,000 of them); the first error, by second, is the one said.
fn add_seconds(texts: &[Option<Vec<Text>>]) -> Result<Vec<Option<Histogram<u64>>>, MergeError> {
    let one = |second: &Option<Vec<Text>>| -> Result<Option<Histogram<u64>>, MergeError> {
        let Some(all) = second else {
            return Ok(None);
        };
        let mut total = crate::record::compact::Sum::default();
        for &(n, k, text) in all {
            total.add(text).map_err(|error| MergeError::Second {
                result: n + 1,
                point: k,
                error,
            })?;
        }
        Ok(Some(total.into_histogram()?))
    };
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let chunk = texts.len().div_ceil(threads).max(1);
    let done: Vec<Vec<_>> = std::thread::scope(|scope| {
        let workers: Vec<_> = texts
            .chunks(chunk)
            .map(|part| scope.spawn(move || part.iter().map(one).collect::<Vec<_>>()))
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().unwrap_or_default())
            .collect()
    });
    let sums: Vec<_> = done.into_iter().flatten().collect();
    if sums.len() != texts.len() {
        return Err(MergeError::Thread);
    }
    sums.into_iter().collect()
}

/// An empty point for `second`, shaped like `like` (an open loop's offered count starts at 0).
fn blank(like: &SeriesPoint, second: u64) -> SeriesPoint {
    SeriesPoint {
        second,
        duration_s: like.duration_s,
        ok: 0,
        after_window: 0,
        errors: 0,
        sent_bytes: 0,
        received_bytes: 0,
        wire_sent_bytes: 0,
        wire_received_bytes: 0,
        sent: 0,
        offered: like.offered.map(|_| 0),
        p50_us: None,
        p99_us: None,
        max_us: None,
        histogram: None,
    }
}

/// `p`'s counts added into `o`; the larger max and length kept.
fn add_point(o: &mut SeriesPoint, p: &SeriesPoint) {
    o.duration_s = o.duration_s.max(p.duration_s);
    o.ok += p.ok;
    o.after_window += p.after_window;
    o.errors += p.errors;
    o.sent_bytes += p.sent_bytes;
    o.received_bytes += p.received_bytes;
    o.wire_sent_bytes += p.wire_sent_bytes;
    o.wire_received_bytes += p.wire_received_bytes;
    o.sent += p.sent;
    o.offered = match (o.offered, p.offered) {
        (Some(a), Some(b)) => Some(a + b),
        (a, b) => a.or(b),
    };
    o.max_us = match (o.max_us, p.max_us) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    };
}
