//! WHAT one operation is: one module per protocol, each registered once in `registry!`.
//!
//! A protocol ([`Protocol`]) declares its URL schemes, checks the part of a [`Job`] the plan
//! leaves to it and builds what its workers share; per worker it makes a [`Driver`], which opens
//! sessions (a TCP connection, a connected UDP socket); a [`Session`] writes requests and
//! recognises replies. The engine reaches a protocol only through [`visit`], so it never names
//! one. None of them knows about rates, deadlines or phases.

pub mod dicom;
pub mod files;
pub mod grpc;
pub mod h2;
pub mod h3;
pub mod http;
pub mod redis;
mod session;
mod stream;
pub mod target;
pub mod tcp;
pub mod tls;
pub mod udp;
pub mod url;
pub mod workload;

pub use session::{Done, Driver, Expiry, Failure, ReadOutcome, Retry, Sent, Session, Waited};

use crate::error::UsageError;
use crate::sys::socket::SocketOptions;
use std::any::Any;
use std::sync::Arc;
use std::time::Duration;
use target::{Scheme, Target};
use tls::TlsOptions;
use workload::Workload;

/// Why a protocol cannot run a job: bad input, each said in one line that names the fix.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// No registered protocol serves this scheme with these options.
    #[error("no protocol runs {0}:// with these options")]
    NoProtocol(&'static str),
    /// The plan lacks the workload this protocol needs (a plan not built by `Plan::try_from`).
    #[error("{0}")]
    NoWorkload(String),
    /// The TLS client cannot be set up (a certificate file that cannot be read or used).
    #[error(transparent)]
    Tls(#[from] tls::TlsError),
    /// The requests cannot be sent by this protocol (HTTP/2's rules on headers and paths).
    #[error(transparent)]
    Request(#[from] h2::RequestError),
    /// What the workload asks cannot be negotiated (DICOM presentation contexts).
    #[error("{0}")]
    Negotiation(String),
}

/// The registered protocols, in the order they are tried: the first that serves a URL's scheme
/// and carries the job runs it (HTTP/2 before HTTP/1.1, which share their schemes). Each entry
/// is a protocol and the flag groups of `wirebench run` it brings, `field: Type` (groups that
/// several protocols read come with the first of them): a new protocol is its module and one
/// more entry here, and `run`'s flags, the plan's checks and a shard's plan follow.
macro_rules! registry {
    ($($protocol:ty { $($field:ident: $group:ty),* $(,)? }),+ $(,)?) => {
        /// The flags of `wirebench run` that belong to protocols: every registered protocol's
        /// flag groups, in registration order (`cli::RunArgs` flattens it).
        #[derive(Debug, Clone, Default, clap::Args, serde::Serialize, serde::Deserialize)]
        pub struct ProtocolArgs {
            $($(
                #[doc = concat!("The `", stringify!($field), "` flag group.")]
                #[command(flatten)]
                #[serde(flatten)]
                pub $field: $group,
            )*)+
        }

        impl ProtocolArgs {
            /// Every flag group, in the order a misplaced flag is looked for.
            pub fn groups(&self) -> Vec<&dyn FlagGroup> {
                vec![$($(&self.$field as &dyn FlagGroup,)*)+]
            }
        }

        /// Every scheme some protocol serves, in registration order.
        pub fn schemes() -> impl Iterator<Item = &'static Scheme> {
            [$(<$protocol as Protocol>::SCHEMES),+].into_iter().flatten()
        }

        /// Prepares the protocol that runs `job` and hands it to `visit`; the error is bad
        /// input (the protocol's own check, or a TLS set-up that cannot work).
        pub fn visit<V: Visit>(job: &Job, visit: V) -> Result<V::Output, Error> {
            $(
                if runs::<$protocol>(job) {
                    return Ok(visit.visit(Arc::new(<$protocol>::prepare(job)?)));
                }
            )+
            Err(Error::NoProtocol(job.target.scheme.name))
        }

        /// Whether the protocols that serve `scheme` read the flag group called `group`.
        pub fn reads(scheme: &str, group: &str) -> bool {
            [$((<$protocol as Protocol>::SCHEMES, <$protocol as Protocol>::FLAGS)),+]
                .into_iter()
                .any(|(s, f)| s.iter().any(|s| s.name == scheme) && f.contains(&group))
        }

        /// Each protocol that serves the target builds its part of `workload` from `given`,
        /// at plan time, in registration order.
        pub fn build(given: &Given, workload: &mut Workload) -> Result<(), UsageError> {
            $(
                if <$protocol as Protocol>::SCHEMES.iter().any(|s| s.name == given.target.scheme.name) {
                    <$protocol>::build(given, workload)?;
                }
            )+
            Ok(())
        }

        /// How an open loop paces the protocol that serves `scheme` in `mode` (the first
        /// registered; the default for a scheme none serves).
        pub fn pacing(scheme: &str, mode: workload::ClientMode) -> Pacing {
            $(
                if <$protocol as Protocol>::SCHEMES.iter().any(|s| s.name == scheme) {
                    return <$protocol>::pacing(mode);
                }
            )+
            Pacing::default()
        }

        /// The protocols that serve `scheme` make `workload`'s request and reply from their
        /// flag groups (of `groups`), at plan time, in registration order.
        pub fn message(
            scheme: &str,
            groups: &[&dyn FlagGroup],
            workload: &mut Workload,
        ) -> Result<(), UsageError> {
            $(
                if <$protocol as Protocol>::SCHEMES.iter().any(|s| s.name == scheme) {
                    <$protocol>::message(groups, workload)?;
                }
            )+
            Ok(())
        }

        /// The checks of the protocols that serve `scheme` on a workload built from the
        /// flags, at plan time.
        pub fn check(scheme: &str, w: &Workload) -> Result<(), UsageError> {
            $(
                if <$protocol as Protocol>::SCHEMES.iter().any(|s| s.name == scheme) {
                    <$protocol>::check(w)?;
                }
            )+
            Ok(())
        }
    };
}

/// A group of `wirebench run` flags that some protocols read ([`tcp::flags::MessageArgs`],
/// [`http::flags::HttpArgs`], [`dicom::flags::DicomArgs`]): a protocol lists the groups it
/// reads in [`Protocol::FLAGS`], and the plan refuses a flag of a group the target's protocol
/// does not read, naming the targets it applies to.
pub trait FlagGroup: Any {
    /// The group's name, as [`Protocol::FLAGS`] lists it.
    fn name(&self) -> &'static str;
    /// The first of its flags that was given, as the error names it (e.g. `-X/--method`).
    fn given(&self) -> Option<&'static str>;
    /// The targets it applies to, in words (e.g. `http://`).
    fn fits(&self) -> &'static str;
    /// Its flags and their values as a shard's plan compares them (`--redis-cmd`, `GET k`;
    /// `unset` when not given, as [`plan_value`] writes them): every flag but those that
    /// measure nothing (`--save-example`).
    fn plan(&self) -> Vec<(&'static str, String)>;
    /// How to trust a TLS server, for the group that holds the TLS flags (HTTP's), checked
    /// against `target` (TLS flags on a target without TLS are refused); None for the others.
    fn tls(&self, _target: &Target) -> Result<Option<TlsOptions>, UsageError> {
        Ok(None)
    }
    /// What `run` does instead of measuring when one of its flags asks (DICOM's
    /// `--save-example` writes a file), read with the other `groups`: None when none is given,
    /// else whether it worked.
    fn instead(&self, _groups: &[&dyn FlagGroup]) -> Option<Result<(), UsageError>> {
        None
    }
}

/// What `run` does instead of measuring, if a flag of `groups` asks ([`FlagGroup::instead`]):
/// None when none does, else whether it worked.
pub fn instead(groups: &[&dyn FlagGroup]) -> Option<Result<(), UsageError>> {
    groups.iter().find_map(|g| g.instead(groups))
}

/// A flag's value as a shard's plan compares it: the value of an option, `unset` for one not
/// given (`--rate unset vs 5000`, not `None vs Some(..)`), anything else as `Debug` writes it.
pub fn plan_value(v: &dyn std::fmt::Debug) -> String {
    let text = format!("{v:?}");
    match text.strip_prefix("Some(").and_then(|t| t.strip_suffix(')')) {
        Some(inner) => inner.trim_matches('"').to_string(),
        None if text == "None" => "unset".into(),
        None => text,
    }
}

/// How to trust a TLS server, from the group of `groups` that holds the TLS flags (checked
/// against `target`); the defaults when none does.
pub fn tls_of(groups: &[&dyn FlagGroup], target: &Target) -> Result<TlsOptions, UsageError> {
    for g in groups {
        if let Some(tls) = g.tls(target)? {
            return Ok(tls);
        }
    }
    Ok(TlsOptions::default())
}

/// How an open loop paces a protocol's requests, decided at plan time ([`Protocol::pacing`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pacing {
    /// Requests one connection may have in flight without `--pipeline`; None for any number
    /// (datagrams do not block one another).
    pub window: Option<usize>,
    /// When `--bandwidth` paces this mode (a UDP stream), the bit rate without it (iperf3's
    /// 1 Mbit/s); None when it does not.
    pub bandwidth: Option<f64>,
}

impl Default for Pacing {
    /// Request/reply over a stream: one request in flight, no bit rate.
    fn default() -> Pacing {
        Pacing {
            window: Some(1),
            bandwidth: None,
        }
    }
}

/// What a protocol builds its part of a workload from, at plan time ([`Protocol::build`]):
/// `run`'s flag groups, the target, and the run's settings any protocol may read.
pub struct Given<'a> {
    /// Every flag group of the command line; a protocol finds its own with [`Given::group`].
    pub groups: &'a [&'a dyn FlagGroup],
    /// Where the load goes.
    pub target: &'a Target,
    /// `--pipeline`, if given.
    pub pipeline: Option<usize>,
    /// The run's seed (`--seed`, or one drawn afresh).
    pub seed: u64,
    /// `--timeout`: how long a request may take (gRPC sends it as the call's deadline).
    pub timeout: Duration,
}

impl<'a> Given<'a> {
    /// The flag group of type `G`; an error only for a caller that left it out.
    pub fn group<G: FlagGroup>(&self) -> Result<&'a G, UsageError> {
        group(self.groups)
    }
}

/// The flag group of type `G` among `groups`; an error only for a caller that left it out.
pub fn group<'a, G: FlagGroup>(groups: &[&'a dyn FlagGroup]) -> Result<&'a G, UsageError> {
    groups
        .iter()
        .find_map(|g| (*g as &dyn Any).downcast_ref::<G>())
        .ok_or_else(|| {
            UsageError::new(format!(
                "the plan was made without the {} flags",
                std::any::type_name::<G>()
            ))
        })
}

/// Refuses a flag of `groups` that the protocol of `target` does not read.
pub fn check_flags_fit(groups: &[&dyn FlagGroup], target: &Target) -> Result<(), UsageError> {
    for g in groups {
        if let Some(flag) = g.given().filter(|_| !reads(target.scheme.name, g.name())) {
            return crate::error::usage_of(
                &[flag],
                format!(
                    "{flag} applies to {} targets, not to {}://",
                    g.fits(),
                    target.scheme.protocol
                ),
            );
        }
    }
    Ok(())
}

registry! {
    tcp::Tcp { message: tcp::flags::MessageArgs },
    udp::Udp {},
    h3::Http3 {},
    h2::Http2 {},
    http::Http1 { http: http::flags::HttpArgs, file_set: http::flags::FileSetArgs },
    dicom::Dicom { dicom: dicom::flags::DicomArgs },
    redis::Redis { redis: redis::flags::RedisArgs },
    grpc::Grpc { grpc: grpc::flags::GrpcArgs },
}

/// The scheme called `name`, if some protocol serves it.
pub fn scheme(name: &str) -> Option<&'static Scheme> {
    schemes().find(|s| s.name == name)
}

fn runs<P: Protocol>(job: &Job) -> bool {
    P::SCHEMES.iter().any(|s| s.name == job.target.scheme.name) && P::carries(job)
}

/// What every worker's driver is made from: the parts of the plan a protocol reads.
#[derive(Clone, Debug)]
pub struct Job {
    /// Where the load goes.
    pub target: Target,
    /// What one operation is.
    pub workload: Workload,
    /// Client socket options.
    pub socket: SocketOptions,
    /// Concurrent connections in all, over every worker.
    pub connections: usize,
    /// Requests one connection may have in flight.
    pub in_flight: usize,
    /// How to trust a TLS server.
    pub tls: TlsOptions,
}

/// Where one driver works.
#[derive(Clone, Copy, Debug)]
pub struct Placement {
    /// The worker's index.
    pub worker: usize,
    /// Whether it may block in its socket calls (a worker with a single closed-loop
    /// connection: a syscall less per read than waiting in epoll).
    pub blocking: bool,
}

/// One protocol, as the engine sees it.
pub trait Protocol: Sized + Send + Sync + 'static {
    /// The URL schemes it serves.
    const SCHEMES: &'static [Scheme];
    /// The driver each worker gets.
    type Driver: Driver;

    /// The flag groups it reads (each a [`FlagGroup::name`]); the plan refuses the others'.
    const FLAGS: &'static [&'static str];

    /// Makes the workload's request and reply from its flag groups (`groups`), at plan time,
    /// before [`Protocol::check`]: the message flags' bytes, checked against the mode, for the
    /// protocols that read them. The default leaves [`Workload::new`]'s echo.
    fn message(_groups: &[&dyn FlagGroup], _workload: &mut Workload) -> Result<(), UsageError> {
        Ok(())
    }

    /// Checks a workload built from the flags, at plan time: what this protocol cannot do
    /// (a UDP reply found by a delimiter); the error names the flags to change.
    fn check(_workload: &Workload) -> Result<(), UsageError> {
        Ok(())
    }

    /// Builds its part of a workload from its own flag group (`given`), at plan time, after
    /// [`Protocol::check`]: the [`workload::Spec`] its drivers read, and what that changes of
    /// the request and reply. The default leaves the workload as the message flags made it.
    fn build(_given: &Given, _workload: &mut Workload) -> Result<(), UsageError> {
        Ok(())
    }

    /// How an open loop paces it in `mode`; the default is request/reply over a stream.
    fn pacing(_mode: workload::ClientMode) -> Pacing {
        Pacing::default()
    }

    /// Whether it carries `job`, among the protocols that share its scheme.
    fn carries(_job: &Job) -> bool {
        true
    }

    /// Checks what the plan leaves to the protocol and builds what all workers share (a TLS
    /// client); the error is bad input, in one line.
    fn prepare(job: &Job) -> Result<Self, Error>;

    /// The driver of the worker at `at`.
    fn driver(&self, job: &Job, at: Placement) -> Self::Driver;
}

/// What is done with the prepared protocol of a job (the engine runs it): generic over the
/// protocol, so its drivers and sessions are called without dynamic dispatch.
pub trait Visit {
    /// What the visit returns.
    type Output;
    /// Runs with `protocol`.
    fn visit<P: Protocol>(self, protocol: Arc<P>) -> Self::Output;
}
