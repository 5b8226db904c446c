//! What one operation is, from the flags: the client mode; flags that do not fit the target's
//! protocol are refused, and the protocol makes the request, the reply and the rest from its
//! own flags ([`crate::driver::Protocol::message`], [`crate::driver::Protocol::build`]).

use crate::cli::{self, RunArgs};
use crate::driver::target::Target;
use crate::driver::tls::TlsOptions;
use crate::driver::workload::{ClientMode, Workload};
use crate::driver::{self, Given};
use crate::error::UsageError;

/// The workload of a run of `a` against `target`, with the run's `seed`: the request and reply
/// the target's protocol makes from its flags ([`crate::driver::Protocol::message`]), then the
/// rest it builds from them; and how the client trusts a TLS server, as the flag group that
/// holds the TLS flags says.
pub fn of(a: &RunArgs, target: &Target, seed: u64) -> Result<(Workload, TlsOptions), UsageError> {
    let groups = a.protocol.groups();
    driver::check_flags_fit(&groups, target)?;
    let mut workload = Workload::new(mode(a));
    driver::message(target.scheme.name, &groups, &mut workload)?;
    driver::check(target.scheme.name, &workload)?;
    let tls = driver::tls_of(&groups, target)?;
    let given = Given {
        groups: &groups,
        target,
        pipeline: super::pipeline_of(a)?,
        seed,
        timeout: super::duration_flag("--timeout", &a.timeout)?,
    };
    driver::build(&given, &mut workload)?;
    Ok((workload, tls))
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
