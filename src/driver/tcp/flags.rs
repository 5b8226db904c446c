//! The message flags of `wirebench run` that TCP (and UDP, which shares them) reads: what a
//! request is and how its reply ends. clap parses them (`cli::RunArgs` flattens this group);
//! [`MessageArgs::shape`] validates them into a workload's request and reply, for each protocol
//! that reads the group ([`crate::driver::Protocol::message`]).

use crate::driver::workload::{ClientMode, Reply, Request, Workload};
use crate::error::{usage_of, UsageError};
use crate::units::{parse_message_size, unescape};
use clap::Args;

/// TCP and UDP: a request's bytes and its reply's end.
#[derive(Debug, Args, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct MessageArgs {
    /// Request (or stream/source message) size in bytes; uses wirebench framing, so the reference
    /// server knows the sizes. A list or doubling range sweeps it, one run per size:
    /// --size 4,128,512..64k is 4, 128, 512, 1k, 2k … 64k [default: 64]
    #[arg(short = 's', long, value_name = "BYTES", conflicts_with = "payload")]
    pub size: Option<String>,

    /// Raw request bytes for third-party servers: TEXT with \r \n \t \xHH escapes, or @FILE.
    #[arg(long, value_name = "TEXT|@FILE")]
    pub payload: Option<String>,

    /// Reply size in bytes [default: the request size, i.e. an echo]
    #[arg(long, value_name = "BYTES", conflicts_with = "until")]
    pub expect_size: Option<String>,

    /// A reply ends with this delimiter (escapes allowed), e.g. 'END\r\n' for memcached.
    #[arg(long, value_name = "DELIM")]
    pub until: Option<String>,

    /// Send --size requests as plain bytes, without the one-line wirebench preamble, to a
    /// third-party fixed-size echo server.
    #[arg(long)]
    pub raw: bool,
}

/// The group's name in [`crate::driver::Protocol::FLAGS`].
pub const MESSAGE: &str = "message";

impl crate::driver::FlagGroup for MessageArgs {
    fn name(&self) -> &'static str {
        MESSAGE
    }

    fn given(&self) -> Option<&'static str> {
        [
            ("--size", self.size.is_some()),
            ("--payload", self.payload.is_some()),
            ("--expect-size", self.expect_size.is_some()),
            ("--until", self.until.is_some()),
            ("--raw", self.raw),
        ]
        .into_iter()
        .find_map(|(flag, given)| given.then_some(flag))
    }

    fn fits(&self) -> &'static str {
        "tcp:// and udp://"
    }

    fn plan(&self) -> Vec<(&'static str, String)> {
        use crate::driver::plan_value as d;
        vec![
            ("--size", d(&self.size)),
            ("--payload", d(&self.payload)),
            ("--expect-size", d(&self.expect_size)),
            ("--until", d(&self.until)),
            ("--raw", d(&self.raw)),
        ]
    }
}

impl MessageArgs {
    /// Makes `workload`'s request and reply from these flags, checked against its mode (bulk
    /// modes have no replies; a source reads what the server pushes).
    pub fn shape(&self, workload: &mut Workload) -> Result<(), UsageError> {
        let mode = workload.mode;
        let request = self.request()?;
        let reply = self.reply(&request)?;
        if mode.bulk() && (self.expect_size.is_some() || self.until.is_some()) {
            return usage_of(
                &["--expect-size", "--until", "--mode"],
                format!(
                    "--expect-size and --until apply to request/response; --mode {} has no replies",
                    mode.name()
                ),
            );
        }
        if mode == ClientMode::Source && self.payload.is_some() {
            return usage_of(&["--mode", "--size", "--payload"], "--mode source reads what the server pushes: use --size for the message size, not --payload");
        }
        workload.request = request;
        workload.reply = reply;
        Ok(())
    }

    /// The request: `--payload`'s bytes, or `--size` synthetic ones (framed unless `--raw`).
    fn request(&self) -> Result<Request, UsageError> {
        Ok(match (&self.size, &self.payload) {
            (_, Some(p)) => {
                if self.raw {
                    return usage_of(
                        &["--raw", "--size", "--payload"],
                        "--raw applies to --size; --payload is always sent as it is",
                    );
                }
                Request::Payload(payload(p)?)
            }
            (size, None) => Request::Sized {
                size: match size {
                    Some(s) => parse_message_size("--size", s)
                        .map_err(|e| UsageError::flag("--size", e))?,
                    None => crate::driver::workload::DEFAULT_SIZE,
                },
                preamble: !self.raw,
            },
        })
    }

    /// How a reply to `request` ends: `--expect-size` bytes, `--until` a delimiter, or an echo.
    fn reply(&self, request: &Request) -> Result<Reply, UsageError> {
        Ok(match (&self.expect_size, &self.until) {
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
        })
    }
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
