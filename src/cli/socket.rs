//! Socket options that client (`run`) and server (`serve tcp`, `serve http`) share.

use clap::Args;

/// Socket options shared by client and server.
#[derive(Debug, Args, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct SocketArgs {
    /// Set TCP_NODELAY (disable Nagle's algorithm). This is the default.
    #[arg(long, conflicts_with = "no_nodelay")]
    pub nodelay: bool,
    /// Leave Nagle's algorithm on (clear TCP_NODELAY), to study its interaction with delayed ACK.
    #[arg(long)]
    pub no_nodelay: bool,
    /// Set SO_SNDBUF to this many bytes (e.g. 64k); switches off the kernel's send-buffer
    /// auto-tuning. `run` sweeps a list or doubling range: --sndbuf 16k..1M.
    #[arg(long, value_name = "BYTES")]
    pub sndbuf: Option<String>,
    /// Set SO_RCVBUF to this many bytes (e.g. 64k); switches off the kernel's receive-buffer
    /// auto-tuning. `run` sweeps a list or doubling range: --rcvbuf 16k..1M.
    #[arg(long, value_name = "BYTES")]
    pub rcvbuf: Option<String>,
}
