//! `--link`: the nominal rate of the link to the target, given (`100Mbit`) or read from the
//! outgoing interface (`auto`), against which the summary sets the payload and wire rates.

use crate::driver::target::Target;
use crate::error::{usage_of, UsageError};
use crate::units::parse_bits;

/// The link a run is measured against.
#[derive(Clone, Debug, PartialEq)]
pub struct Link {
    /// Nominal rate in bits per second; None when `auto` found no speed (loopback, a virtual
    /// device that reports none), which the report says instead of a figure.
    pub bits_per_s: Option<f64>,
    /// Where the rate comes from, in words: `--link 100Mbit`, or `eth0 (/sys/class/net/eth0/speed)`.
    pub source: String,
}

/// The `--link` flag's value for `target`: a bit rate, or `auto`.
pub fn of(text: &str, target: &Target) -> Result<Link, UsageError> {
    if text.eq_ignore_ascii_case("auto") {
        return Ok(auto(target));
    }
    let bits = parse_bits(text).map_err(|e| {
        UsageError::flags(
            &["--link"],
            format!(
                "--link: {e}; give the link's nominal rate (e.g. --link 100Mbit) or --link auto"
            ),
        )
    })?;
    if bits < 1000.0 {
        return usage_of(&["--link"], format!(
            "--link {text}: below 1 kbit/s, no link is that slow; write the unit, e.g. --link 100Mbit"
        ));
    }
    Ok(Link {
        bits_per_s: Some(bits),
        source: format!("--link {text}"),
    })
}

/// The speed of the interface the kernel routes the target through, if it reports one.
fn auto(target: &Target) -> Link {
    let iface = match crate::sys::link::interface_toward(target.addr) {
        Ok(name) => name,
        Err(e) => {
            return Link {
                bits_per_s: None,
                source: format!("auto: no outgoing interface found ({e})"),
            }
        }
    };
    match crate::sys::link::speed_mbit(&iface) {
        Some(mbit) => Link {
            bits_per_s: Some(mbit as f64 * 1e6),
            source: format!("auto: {iface} (/sys/class/net/{iface}/speed)"),
        },
        None if iface == "lo" => Link {
            bits_per_s: None,
            source: "auto: lo, loopback has no link speed".into(),
        },
        None => Link {
            bits_per_s: None,
            source: format!("auto: {iface} reports no speed in /sys/class/net/{iface}/speed"),
        },
    }
}
