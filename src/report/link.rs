//! The `--link` lines of the terminal report: the payload rate against the link's nominal
//! rate (in kB/s too, as the DIM study gave it: "11,450 of 12,500 KB/s"), then the estimated
//! wire rate at both framings, each saying what it counts.

use super::format::bit_rate;
use super::table::INDENT;
use crate::summary::link::{Link, Packet, Rate};
use crate::units::thousands;
use std::io::{self, Write};

/// The link lines, if the run was given `--link`.
pub(super) fn write(link: Option<&Link>, out: &mut dyn Write) -> io::Result<()> {
    let Some(l) = link else {
        return Ok(());
    };
    let Some(nominal) = l.bits_per_s else {
        writeln!(
            out,
            "{INDENT}link: {}: no % of a link to give (payload {} {})",
            l.source,
            bit_rate(l.payload_bits_per_s),
            l.direction
        )?;
        return Ok(());
    };
    let shape = l
        .packet
        .map(|p| format!("; {}", packet(&p)))
        .unwrap_or_default();
    writeln!(
        out,
        "{INDENT}link {} ({}){shape}",
        bit_rate(nominal),
        l.source
    )?;
    writeln!(
        out,
        "{INDENT}  payload {} {}: {} of {} kB/s, {:.1}% of the link",
        l.direction,
        bit_rate(l.payload_bits_per_s),
        thousands((l.payload_bits_per_s / 8e3).round() as u64),
        thousands((nominal / 8e3).round() as u64),
        l.payload_percent.unwrap_or(0.0)
    )?;
    wire_lines(l, out)
}

/// The estimated wire rate at both framings, when the packet size is known, and the RFC 6349
/// maximum payload with those packets.
fn wire_lines(l: &Link, out: &mut dyn Write) -> io::Result<()> {
    let (Some(frames), Some(line)) = (l.frames, l.line) else {
        return writeln!(
            out,
            "{INDENT}  wire rate: no packet size known (the MSS comes from TCP and UDP sessions)"
        );
    };
    wire(
        out,
        "incl. Ethernet header (as Linux and tc count frames)",
        frames,
    )?;
    wire(out, "incl. Ethernet header+FCS, preamble and gap", line)?;
    // Over 100% with the payload within the link: the limit counted less framing. (Over 100%
    // in payload too: the link given is not the bottleneck, or not the path's.)
    let within = l.payload_percent.is_some_and(|p| p <= 100.0);
    if within && line.percent.is_some_and(|p| p > OVER) {
        writeln!(
            out,
            "{INDENT}  (over 100%: the link's limit counts less framing than an Ethernet line, \
             as a Linux tc shaper counts frames without FCS, preamble and gap)"
        )?;
    }
    if let Some(max) = l.max_payload_bits_per_s {
        writeln!(
            out,
            "{INDENT}  RFC 6349 maximum payload with these packets: {}",
            bit_rate(max)
        )?;
    }
    Ok(())
}

/// A line rate above this % of the link cannot be Ethernet's (estimates are good to a few
/// tenths of a percent): the limit counted less framing.
const OVER: f64 = 100.5;

/// `1448 B payload under TCP (32 B) and IPv4 (20 B) headers`.
fn packet(p: &Packet) -> String {
    let transport = if p.transport_header_bytes == 8 {
        "UDP"
    } else {
        "TCP"
    };
    let ip = if p.ip_header_bytes == 40 {
        "IPv6"
    } else {
        "IPv4"
    };
    format!(
        "{:.0} B payload per packet under {transport} ({} B) and {ip} ({} B) headers",
        p.payload_bytes, p.transport_header_bytes, p.ip_header_bytes
    )
}

/// One wire-rate line.
fn wire(out: &mut dyn Write, what: &str, r: Rate) -> io::Result<()> {
    writeln!(
        out,
        "{INDENT}  wire rate {what}: {}, {:.1}% of the link",
        bit_rate(r.bits_per_s),
        r.percent.unwrap_or(0.0)
    )
}
