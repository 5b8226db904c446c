//! What datagrams cannot do, checked when the plan is made: replies found by a delimiter,
//! modes that need a connection, sizes past the UDP limit, and wirebench framing smaller than
//! its header.

use crate::driver::workload::{ClientMode, Reply, Request, Workload};
use crate::error::{usage_of, UsageError};
use crate::wire::datagram::{HEADER_LEN, MAX_DATAGRAM};

/// Refuses a workload datagrams cannot carry, naming the flags to change.
pub(super) fn datagrams(w: &Workload) -> Result<(), UsageError> {
    if matches!(w.mode, ClientMode::Crr | ClientMode::Source) {
        return usage_of(
            &["--mode"],
            format!(
                "--mode {} needs a connection; over udp:// use --mode rr or --mode stream",
                w.mode.name()
            ),
        );
    }
    if matches!(w.reply, Reply::Until(_)) {
        return usage_of(&["--until", "--expect-size"], "--until finds replies in a byte stream; a UDP reply is one datagram: use --expect-size or nothing");
    }
    let reply = match w.reply {
        Reply::Size(n) => n,
        Reply::Until(_) => 0,
    };
    let largest = w.request.len().max(reply);
    if largest > MAX_DATAGRAM {
        return usage_of(&["--size", "--expect-size"], format!(
            "a {largest}-byte datagram is over the UDP limit of {MAX_DATAGRAM} bytes: use a smaller --size or --expect-size"
        ));
    }
    if let Request::Sized {
        size,
        preamble: true,
    } = w.request
    {
        if size < HEADER_LEN {
            return usage_of(&["--size", "--raw", "--payload"], format!(
                "--size {size} is below the {HEADER_LEN}-byte wirebench datagram header: use --size {HEADER_LEN} or more, or --raw / --payload for plain datagrams"
            ));
        }
    }
    Ok(())
}
