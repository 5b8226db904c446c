//! The message flags of `wirebench run` that TCP (and UDP, which shares them) reads: what a
//! request is and how its reply ends. clap parses them (`cli::RunArgs` flattens this group);
//! the plan validates them.

use clap::Args;

/// TCP and UDP: a request's bytes and its reply's end.
#[derive(Debug, Args, Clone, Default, PartialEq, Eq, serde::Serialize)]
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
