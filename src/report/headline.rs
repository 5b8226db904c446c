//! The headline of the terminal report: counts and rates, then what only some runs have: the
//! open loop's keeping to its timetable, a stream's count at the receiver, datagrams (the
//! client's view and the server's) and HTTP (statuses, goodput, time to first byte).

use super::format::{bit_rate, byte_rate, bytes, plural, rate, size};
use super::table::{is_bulk, INDENT};
use crate::summary::Summary;
use crate::units::{format_us, thousands};
use std::io::{self, Write};

/// The headline: counts and rates, then the lines of the open loop, datagrams and HTTP.
pub(super) fn write(s: &Summary, out: &mut dyn Write) -> io::Result<()> {
    let t = &s.throughput;
    let sent = byte_rate(t.sent_mb_per_s * 1e6);
    let received = byte_rate(t.received_mb_per_s * 1e6);
    if is_bulk(s) {
        writeln!(
            out,
            "{INDENT}{}   messages/s {}   sent {sent}   received {received}",
            bit_rate(t.gbit_per_s * 1e9),
            rate(t.messages_per_s),
        )?;
        if s.datagrams.is_some() {
            sender_receiver(s, out)?;
        } else if t.receiver_bytes.is_some() || t.receiver_unreported > 0 {
            receiver(t, out)?;
        }
        // A byte stream has no request/response to count as ok: say what it moved instead.
        // The message count is the rate's own numerator (rate × the time it is over).
        writeln!(
            out,
            "{INDENT}messages {}   sent {}   received {}   errors {}",
            thousands((t.messages_per_s * s.duration_s).round() as u64),
            bytes(t.sent_bytes),
            bytes(t.received_bytes),
            thousands(s.errors.total)
        )?;
        open_loop(s, out)?;
        return datagrams(s, out);
    }
    // HTTP's payload is its bodies: named so, with the whole messages on a line of their own.
    let body = if s.http.is_some() { "body " } else { "" };
    writeln!(
        out,
        "{INDENT}ok {}   errors {}   ops/s {}   {body}sent {sent}   {body}received {received}",
        thousands(s.ok),
        thousands(s.errors.total),
        rate(t.ops_per_s),
    )?;
    late_replies(s, out)?;
    open_loop(s, out)?;
    datagrams(s, out)?;
    http(s, out)
}

/// Replies that came after the window closed: named, as they are in `ok` but not in the rates.
fn late_replies(s: &Summary, out: &mut dyn Write) -> io::Result<()> {
    let open = s.open_loop.as_ref().map_or(0, |o| o.replies_after_window);
    let n = s.throughput.ok_after_window.max(open);
    if n == 0 {
        return Ok(());
    }
    writeln!(
        out,
        "{INDENT}after the window: {} (in flight or queued when it closed; in ok, not in ops/s or the per-second rows)",
        plural(n, "reply", "replies"),
    )
}

/// HTTP: statuses by code, body goodput, and time to first byte.
fn http(s: &Summary, out: &mut dyn Write) -> io::Result<()> {
    let Some(h) = &s.http else {
        return Ok(());
    };
    let codes: Vec<String> = h
        .status
        .iter()
        .map(|c| format!("{} × {}", c.code, thousands(c.count)))
        .collect();
    writeln!(
        out,
        "{INDENT}status: {}   body {} ({})",
        if codes.is_empty() {
            "none".to_string()
        } else {
            codes.join(", ")
        },
        size(h.body_bytes),
        byte_rate(h.goodput_mb_per_s * 1e6),
    )?;
    let t = &s.throughput;
    drained(t, out)?;
    let secs = s.duration_s.max(1e-9);
    // What arrived after the window is body (a reply's head comes first), so the wire bytes
    // within it are the whole less that.
    let wire_in = t.wire_received_bytes - t.drained_bytes.unwrap_or(0).min(t.wire_received_bytes);
    writeln!(
        out,
        "{INDENT}wire (with headers): sent {}   received {}",
        byte_rate(t.wire_sent_bytes as f64 / secs),
        byte_rate(wire_in as f64 / secs),
    )?;
    if h.server_closes > 0 {
        // Named after the signal: "GOAWAY 12" is what an h2load user looks for.
        let how = match &*h.version {
            "2" => "GOAWAY NO_ERROR",
            _ => "Connection: close",
        };
        writeln!(
            out,
            "{INDENT}server closes {} ({how}): a new connection each; {} it had not processed sent again, not errors",
            thousands(h.server_closes),
            plural(h.resent, "request", "requests"),
        )?;
    }
    if let Some(t) = &h.ttfb {
        writeln!(
            out,
            "{INDENT}time to first byte: p50 {}   p99 {}   max {}",
            format_us(t.p50_us),
            format_us(t.p99_us),
            format_us(t.max_us)
        )?;
    }
    Ok(())
}

/// A TCP stream: what the receiver counted against what was written, and what the rates
/// are: the bytes it got within the window, with what drained after it apart.
fn receiver(t: &crate::summary::Throughput, out: &mut dyn Write) -> io::Result<()> {
    let rates = match (t.window_bytes, t.receiver_bytes) {
        (Some(w), Some(c)) if w != c => {
            format!(
                "the rates above are the {} that arrived within the window (acknowledged)",
                bytes(w)
            )
        }
        (Some(_), Some(_)) => "the rates above are its count".to_string(),
        (Some(w), None) => format!(
            "the rates above are the {} it acknowledged within the window",
            bytes(w)
        ),
        (None, _) => "the rates above are bytes written, not bytes received".to_string(),
    };
    match t.receiver_bytes {
        Some(b) => writeln!(
            out,
            "{INDENT}the receiver counted {} of the {} sent ({:.2}%): {rates}",
            bytes(b),
            bytes(t.sent_bytes),
            100.0 * b as f64 / t.sent_bytes.max(1) as f64
        )?,
        None => writeln!(
            out,
            "{INDENT}the receiver's count is missing for {} connection(s): {rates}",
            thousands(t.receiver_unreported)
        )?,
    }
    drained(t, out)
}

/// What reached the receiver after the window (drained from buffers and queues), if any.
fn drained(t: &crate::summary::Throughput, out: &mut dyn Write) -> io::Result<()> {
    match t.drained_bytes {
        Some(d) if d > 0 => writeln!(
            out,
            "{INDENT}drained after the window: {} (on the way when it ended: in buffers and queues; counted, not in the rates)",
            bytes(d)
        ),
        _ => Ok(()),
    }
}

/// A UDP stream, as iperf3 prints it: the sender's line, then the receiver's (what the sink
/// counted, at the rate the headline gives: what arrived within the window), what drained
/// after the window, or that the server did not report.
fn sender_receiver(s: &Summary, out: &mut dyn Write) -> io::Result<()> {
    let t = &s.throughput;
    let unit = s.config.request_bytes.max(1) as u64;
    writeln!(
        out,
        "{INDENT}sender:   {} datagrams   {}   {}",
        thousands(t.sent_bytes / unit),
        bytes(t.sent_bytes),
        bit_rate(t.sender_gbit_per_s.unwrap_or(t.gbit_per_s) * 1e9),
    )?;
    let server = s.datagrams.as_ref().and_then(|d| d.server.as_ref());
    match (t.receiver_bytes, server) {
        (Some(b), Some(v)) => writeln!(
            out,
            "{INDENT}receiver: {} datagrams   {}   {}   lost {} ({:.2}%)   out of order {}   duplicated {}   jitter {}",
            thousands(b / unit),
            bytes(b),
            bit_rate(t.gbit_per_s * 1e9),
            thousands(v.lost),
            v.loss_percent,
            thousands(v.out_of_order),
            thousands(v.duplicated),
            format_us(v.jitter_us),
        )?,
        _ => writeln!(
            out,
            "{INDENT}receiver: no count: the server did not report what it received, so the rates above are the sender's (an error of the run)",
        )?,
    }
    drained(t, out)
}

/// UDP: the client's view (answered, lost, late, duplicated, reordered) and the server's.
fn datagrams(s: &Summary, out: &mut dyn Write) -> io::Result<()> {
    let Some(d) = &s.datagrams else {
        return Ok(());
    };
    if !is_bulk(s) && d.answered == 0 && d.sent > 0 {
        // Nothing came back: loss cannot be told from refusal or a dead server, so no loss
        // figure is printed; the errors table says what the socket reported.
        let refused = s
            .errors
            .by_kind
            .iter()
            .find(|e| e.kind == "refused")
            .map_or(0, |e| e.count);
        writeln!(
            out,
            "{INDENT}datagrams: sent {}   answered 0: no reply at all ({} refused by ICMP port unreachable, {} without an answer)",
            thousands(d.sent),
            thousands(refused),
            thousands(d.lost),
        )?;
    } else if !is_bulk(s) {
        writeln!(
            out,
            "{INDENT}datagrams: sent {}   answered {}   lost {} ({:.2}%)   late {}   duplicated {}   reordered {}",
            thousands(d.sent),
            thousands(d.answered),
            thousands(d.lost),
            d.loss_percent,
            thousands(d.late),
            thousands(d.duplicated),
            thousands(d.reordered),
        )?;
    }
    // A stream's receiver line already says what the server counted.
    if let Some(v) = d.server.as_ref().filter(|_| !is_bulk(s)) {
        writeln!(
            out,
            "{INDENT}as the server counted: sent {}   received {}   lost {} ({:.2}%)   out of order {}   duplicated {}   jitter {}",
            thousands(v.sent),
            thousands(v.received),
            thousands(v.lost),
            v.loss_percent,
            thousands(v.out_of_order),
            thousands(v.duplicated),
            format_us(v.jitter_us),
        )?;
    }
    Ok(())
}

/// The open loop's lines: offered vs sent vs achieved and the lag behind schedule, then the
/// distribution of every send's lag (how well the generator kept to its timetable).
fn open_loop(s: &Summary, out: &mut dyn Write) -> io::Result<()> {
    let Some(o) = &s.open_loop else {
        return Ok(());
    };
    // A stream has no replies, so nothing is achieved beyond what was sent.
    let achieved = match is_bulk(s) {
        true => String::new(),
        false => format!("   achieved {}/s", rate(o.achieved_per_s)),
    };
    // Requests due in the measured time that never went out: the run did not offer its load.
    let missed = match o.offered.saturating_sub(o.sent) {
        0 => String::new(),
        n => format!("   never sent {}", thousands(n)),
    };
    writeln!(
        out,
        "{INDENT}open loop{}: offered {}/s   sent {}/s{achieved}{missed}   behind schedule {} (max lag {})",
        if o.schedule.is_empty() {
            String::new()
        } else {
            format!(" {}", o.schedule)
        },
        rate(o.offered_per_s),
        rate(o.sent_per_s),
        thousands(o.behind_schedule),
        format_us(o.max_lag_us),
    )?;
    match &o.send_lag {
        Some(l) => writeln!(
            out,
            "{INDENT}send lag (actual − intended send): p50 {}   p99 {}   max {}",
            format_us(l.p50_us),
            format_us(l.p99_us),
            format_us(l.max_us),
        ),
        None => Ok(()),
    }
}
