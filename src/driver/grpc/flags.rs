//! The flag group of `wirebench run` that gRPC reads: where the method's types come from, the
//! request message and the call's metadata. clap parses it (`cli::RunArgs` flattens this
//! group); [`super::Grpc`] validates it.

use clap::Args;

/// gRPC: the method's types, the request and the metadata.
#[derive(Debug, Args, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct GrpcArgs {
    /// gRPC: the request message in proto3's JSON mapping, or @FILE; templates such as {seq}
    /// are filled per call [default: {} (every field at its default)]
    #[arg(long, value_name = "JSON|@FILE", help_heading = "gRPC")]
    pub data: Option<String>,
    /// gRPC: read the method's types from this .proto file (parsed at run time) instead of
    /// the server's reflection service
    #[arg(long, value_name = "FILE", help_heading = "gRPC")]
    pub proto: Option<String>,
    /// gRPC: a directory where --proto's imports are looked for (repeatable) [default: the
    /// .proto's own directory]
    #[arg(long = "import-path", value_name = "DIR", help_heading = "gRPC")]
    pub import_path: Vec<String>,
    /// gRPC: metadata sent with each call, 'key: value' (repeatable; templates too)
    #[arg(long, value_name = "KEY: VALUE", help_heading = "gRPC")]
    pub metadata: Vec<String>,
    /// gRPC, client streaming: messages each call sends [default: 1]
    #[arg(long, value_name = "N", help_heading = "gRPC")]
    pub stream_count: Option<u64>,
    /// gRPC, client streaming: the pause between two messages of a call [default: 0]
    #[arg(long, value_name = "DURATION", help_heading = "gRPC")]
    pub stream_interval: Option<String>,
}

/// The group's name in [`crate::driver::Protocol::FLAGS`].
pub const GRPC: &str = "grpc";

impl crate::driver::FlagGroup for GrpcArgs {
    fn name(&self) -> &'static str {
        GRPC
    }

    fn given(&self) -> Option<&'static str> {
        [
            ("--data", self.data.is_some()),
            ("--proto", self.proto.is_some()),
            ("--import-path", !self.import_path.is_empty()),
            ("--metadata", !self.metadata.is_empty()),
            ("--stream-count", self.stream_count.is_some()),
            ("--stream-interval", self.stream_interval.is_some()),
        ]
        .into_iter()
        .find_map(|(flag, given)| given.then_some(flag))
    }

    fn fits(&self) -> &'static str {
        "grpc:// and grpcs://"
    }

    fn plan(&self) -> Vec<(&'static str, String)> {
        use crate::driver::plan_value as d;
        vec![
            ("--data", d(&self.data)),
            ("--proto", d(&self.proto)),
            ("--import-path", d(&self.import_path)),
            ("--metadata", d(&self.metadata)),
            ("--stream-count", d(&self.stream_count)),
            ("--stream-interval", d(&self.stream_interval)),
        ]
    }
}
