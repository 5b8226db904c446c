//! What one operation is, from the flags: the request bytes, how a reply ends, the client mode;
//! flags that do not fit the target's protocol are refused, and the protocol builds the rest
//! from its own flags ([`crate::driver::Protocol::build`]).

use crate::cli::{self, RunArgs};
use crate::driver::target::Target;
use crate::driver::tls::TlsOptions;
use crate::driver::workload::{ClientMode, Reply, Request, Workload};
use crate::driver::{self, Given};
use crate::error::{usage_of, UsageError};
use crate::units::{parse_message_size, unescape};

/// Request size when neither `--size` nor `--payload` is given.
pub const DEFAULT_SIZE: usize = 64;

/// The workload of a run of `a` against `target`, with the run's `seed`: the message flags'
/// request and reply, then what the target's protocol builds from its own flags; and how the
/// client trusts a TLS server, as the flag group that holds the TLS flags says.
pub fn of(a: &RunArgs, target: &Target, seed: u64) -> Result<(Workload, TlsOptions), UsageError> {
    let groups = a.protocol.groups();
    driver::check_flags_fit(&groups, target)?;
    let mut workload = bytes(a)?;
    driver::check(target.scheme.name, &workload)?;
    let tls = driver::tls_of(&groups, target)?;
    let given = Given {
        groups: &groups,
        target,
        pipeline: super::pipeline_of(a)?,
        seed,
    };
    driver::build(&given, &mut workload)?;
    Ok((workload, tls))
}

/// Reads `--payload TEXT` or `--payload @FILE`.
fn payload(text: &str) -> Result<Vec<u8>, UsageError> {
    let bytes = match text.strip_prefix('@') {
        Some(path) => crate::sys::file::read(path, crate::units::MAX_SIZE).map_err(|e| {
            UsageError::flags(
                &["--payload"],
                format!("--payload @{path}: {e}: check the path, or give a smaller file"),
            )
        })?,
        None => unescape(text)
            .map_err(|e| UsageError::flags(&["--payload"], format!("--payload: {e}")))?,
    };
    if bytes.is_empty() {
        return usage_of(&["--payload"], "--payload is empty: give at least one byte");
    }
    if bytes.len() as u64 > crate::units::MAX_SIZE {
        return usage_of(
            &["--payload"],
            "--payload is over the 1 GiB limit: use a smaller file",
        );
    }
    Ok(bytes)
}

fn bytes(a: &RunArgs) -> Result<Workload, UsageError> {
    let request = match (&a.protocol.message.size, &a.protocol.message.payload) {
        (_, Some(p)) => {
            if a.protocol.message.raw {
                return usage_of(
                    &["--raw", "--size", "--payload"],
                    "--raw applies to --size; --payload is always sent as it is",
                );
            }
            Request::Payload(payload(p)?)
        }
        (size, None) => Request::Sized {
            size: match size {
                Some(s) => {
                    parse_message_size("--size", s).map_err(|e| UsageError::flag("--size", e))?
                }
                None => DEFAULT_SIZE,
            },
            preamble: !a.protocol.message.raw,
        },
    };
    let reply = match (&a.protocol.message.expect_size, &a.protocol.message.until) {
        (Some(s), _) => Reply::Size(
            parse_message_size("--expect-size", s)
                .map_err(|e| UsageError::flag("--expect-size", e))?,
        ),
        (None, Some(d)) => {
            let delim = unescape(d)
                .map_err(|e| UsageError::flags(&["--until"], format!("--until: {e}")))?;
            if delim.is_empty() {
                return usage_of(
                    &["--until"],
                    "--until is empty: give the bytes that end a reply, e.g. 'END\\r\\n'",
                );
            }
            if matches!(request, Request::Sized { preamble: true, .. }) {
                return usage_of(&["--until", "--payload", "--raw", "--size"], 
                    "--until needs --payload or --raw: the reference server's replies to --size requests are sized, not delimited",
                );
            }
            Reply::Until(delim)
        }
        (None, None) => Reply::Size(request.len()),
    };
    let bulk = matches!(mode(a), ClientMode::Stream | ClientMode::Source);
    if bulk && (a.protocol.message.expect_size.is_some() || a.protocol.message.until.is_some()) {
        return usage_of(
            &["--expect-size", "--until", "--mode"],
            format!(
                "--expect-size and --until apply to request/response; --mode {} has no replies",
                mode(a).name()
            ),
        );
    }
    if mode(a) == ClientMode::Source && a.protocol.message.payload.is_some() {
        return usage_of(&["--mode", "--size", "--payload"], "--mode source reads what the server pushes: use --size for the message size, not --payload");
    }
    Ok(Workload {
        mode: mode(a),
        request,
        reply,
        spec: None,
    })
}

/// The `--mode` of `a`.
pub(super) fn mode(a: &RunArgs) -> ClientMode {
    match a.mode {
        cli::ClientMode::Rr => ClientMode::Rr,
        cli::ClientMode::Crr => ClientMode::Crr,
        cli::ClientMode::Stream => ClientMode::Stream,
        cli::ClientMode::Source => ClientMode::Source,
    }
}
