//! HTTP's flags of `wirebench run`: the requests (method, headers, body, mix, targets), TLS,
//! and the file sets `{file}` draws from. clap parses them (`cli::RunArgs` flattens these
//! groups); the plan validates them.

use crate::driver::target::Target;
use crate::driver::tls::TlsOptions;
use crate::driver::workload::Workload;
use crate::error::{usage_of, UsageError};
use clap::Args;

/// HTTP and HTTPS: the requests and how the server is trusted.
#[derive(Debug, Args, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct HttpArgs {
    /// HTTP: the request method.
    #[arg(short = 'X', long, value_name = "METHOD")]
    pub method: Option<String>,

    /// HTTP: a request header 'Name: value' (repeatable; {seq}, {worker}, {rand:N}, {uuid} allowed).
    #[arg(short = 'H', long = "header", value_name = "HEADER")]
    #[serde(rename = "header")]
    pub headers: Vec<String>,

    /// HTTP: the request body, TEXT (placeholders allowed) or @FILE (sent as it is).
    #[arg(long, value_name = "TEXT|@FILE")]
    pub body: Option<String>,

    /// HTTP: statuses that count as success, e.g. 2xx,3xx or 200,204 [default: 2xx]
    #[arg(long, value_name = "LIST")]
    pub accept: Option<String>,

    /// HTTP: a new connection for every request (Connection: close); connect time is reported
    /// on its own.
    #[arg(long)]
    pub no_keepalive: bool,

    /// HTTP/2 instead of HTTP/1.1: on http:// with prior knowledge (h2c: the connection starts
    /// with the HTTP/2 preface, no Upgrade), on https:// by ALPN "h2". -c is the connections;
    /// --pipeline K the concurrent streams on each, 1 unless given (like h2load -m K).
    #[arg(long)]
    pub http2: bool,

    /// HTTP/3 over QUIC instead of HTTP/1.1 (https:// only: QUIC is always TLS; ALPN "h3").
    /// -c is the QUIC connections, each worker's sharing one UDP socket; --pipeline K the
    /// concurrent request streams on each, 1 unless given (like h2load -m K).
    #[arg(long, conflicts_with = "http2")]
    pub http3: bool,

    /// HTTPS: accept any server certificate (self-signed test servers).
    #[arg(long, conflicts_with = "cacert")]
    pub insecure: bool,

    /// HTTPS: trust the CA certificates in this PEM file instead of the usual web roots.
    #[arg(long, value_name = "FILE")]
    pub cacert: Option<String>,

    /// HTTPS: a full TLS handshake on every connection. By default a worker's connections resume
    /// the TLS sessions of its earlier ones, as browsers do.
    #[arg(long)]
    pub no_tls_resume: bool,

    /// HTTP: one kind of a weighted mix of requests (repeatable): 'NAME=WEIGHT [METHOD]
    /// PATH-or-URL', with the run's -X, -H and --body, e.g. --mix 'read=80 GET /item/{zipf:1000:1}'
    /// --mix 'write=20 PUT /item/{seq}'. Each request's kind is drawn from --seed; each kind's
    /// counts, errors and latency are reported apart, beside the totals. A plan file's
    /// [mix.NAME] tables (weight, method, url, headers, body) become these, with a JSON object
    /// after the '='.
    #[arg(long, value_name = "NAME=WEIGHT [METHOD] PATH")]
    pub mix: Vec<String>,

    /// HTTP: requests to cycle through, one per line: 'METHOD PATH-or-URL' (method optional), as vegeta's targets.
    #[arg(long, value_name = "FILE")]
    pub targets: Option<String>,
}

/// The group's name in [`crate::driver::Protocol::FLAGS`].
pub const HTTP: &str = "http";

impl crate::driver::FlagGroup for HttpArgs {
    fn name(&self) -> &'static str {
        HTTP
    }

    fn given(&self) -> Option<&'static str> {
        [
            ("-X/--method", self.method.is_some()),
            ("-H/--header", !self.headers.is_empty()),
            ("--body", self.body.is_some()),
            ("--accept", self.accept.is_some()),
            ("--no-keepalive", self.no_keepalive),
            ("--targets", self.targets.is_some()),
            ("--http2", self.http2),
            ("--http3", self.http3),
            ("--mix", !self.mix.is_empty()),
        ]
        .into_iter()
        .find_map(|(flag, given)| given.then_some(flag))
    }

    fn fits(&self) -> &'static str {
        "http://"
    }

    fn plan(&self) -> Vec<(&'static str, String)> {
        use crate::driver::plan_value as d;
        vec![
            ("--method", d(&self.method)),
            ("--header", d(&self.headers)),
            ("--body", d(&self.body)),
            ("--accept", d(&self.accept)),
            ("--no-keepalive", d(&self.no_keepalive)),
            ("--http2", d(&self.http2)),
            ("--http3", d(&self.http3)),
            ("--insecure", d(&self.insecure)),
            ("--cacert", d(&self.cacert)),
            ("--no-tls-resume", d(&self.no_tls_resume)),
            ("--mix", d(&self.mix)),
            ("--targets", d(&self.targets)),
        ]
    }

    fn tls(&self, target: &Target) -> Result<Option<TlsOptions>, UsageError> {
        if (self.insecure || self.cacert.is_some() || self.no_tls_resume) && !target.tls() {
            return usage_of(
                &["--insecure", "--cacert", "--no-tls-resume"],
                "--insecure, --cacert and --no-tls-resume apply to https:// targets",
            );
        }
        Ok(Some(TlsOptions {
            insecure: self.insecure,
            cacert: self.cacert.clone(),
            no_resume: self.no_tls_resume,
        }))
    }
}

/// What HTTP cannot do, checked when the plan is made: a bulk mode (a download is a GET).
pub fn check(w: &Workload) -> Result<(), UsageError> {
    if w.mode.bulk() {
        return usage_of(
            &["--mode"],
            "--mode stream and source are for tcp://; an HTTP download is a GET of a large body",
        );
    }
    Ok(())
}

/// HTTP: the file set a URL's `{file}` draws from.
#[derive(Debug, Args, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct FileSetArgs {
    /// HTTP: the file set `{file}` in the URL draws from (a directory written by `wirebench
    /// files make`, or its manifest.tsv), e.g. http://127.0.0.1:8080/{file} --manifest /srv/set.
    #[arg(long, value_name = "DIR", help_heading = "File sets")]
    pub manifest: Option<String>,

    /// How popular each file of --manifest is: zipf:S (Zipf's law over the manifest's ranks,
    /// as SPECweb99 and the Flash study) or uniform; drawn from --seed [default: zipf:1.0]
    #[arg(long, value_name = "zipf:S|uniform", help_heading = "File sets")]
    pub popularity: Option<String>,

    /// The data set's size: only the most popular files of --manifest up to this many bytes
    /// are requested. A list sweeps it, one run per size: --dataset 100M,1G,4G [default: the
    /// whole set]
    #[arg(long, value_name = "BYTES", help_heading = "File sets")]
    pub dataset: Option<String>,
}

impl crate::driver::FlagGroup for FileSetArgs {
    fn name(&self) -> &'static str {
        HTTP
    }

    // Read with HTTP's group; never refused on its own (a file set without `{file}` is).
    fn given(&self) -> Option<&'static str> {
        None
    }

    fn fits(&self) -> &'static str {
        "http://"
    }

    fn plan(&self) -> Vec<(&'static str, String)> {
        use crate::driver::plan_value as d;
        vec![
            ("--manifest", d(&self.manifest)),
            ("--popularity", d(&self.popularity)),
            ("--dataset", d(&self.dataset)),
        ]
    }
}
