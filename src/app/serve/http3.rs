//! `wirebench serve http3`: flags into [`H3ServerOptions`], a UDP socket, the certificate
//! (given, or made and written down), the URL line, and the final counters at a signal.

use super::{delay_flag, keep_awake, listen_addr, max_connections_flag, max_rate_flag};
use crate::cli::ServeHttp3Args;
use crate::error::{usage, UsageError};
use crate::plan::duration_flag;
use crate::serve::h3::{run, Certificate, H3ServerOptions};
use std::path::PathBuf;
use std::process::ExitCode;

/// `wirebench serve http3`: prints `https://ADDR` as the first line, the certificate's path in
/// the second, serves until SIGINT or SIGTERM, then prints the final counters.
pub fn main(args: &ServeHttp3Args) -> anyhow::Result<ExitCode> {
    let (cert, written) = certificate(args)?;
    let options = options(args, cert)?;
    let addr = listen_addr(&args.listen, 8443)?;
    let socket = std::net::UdpSocket::bind(addr).map_err(|e| {
        UsageError::new(format!(
            "--listen {addr}: cannot bind UDP ({e}): give a free port, or port 0"
        ))
    })?;
    let addr = socket.local_addr()?;
    let mut description = describe(&options);
    match written {
        Some(path) => description.push_str(&format!(
            ", self-signed certificate {} (clients: --cacert it, or --insecure)",
            path.display()
        )),
        None => description.push_str(", certificate from --cert"),
    }
    let _awake = keep_awake(options.delay);
    super::serve_until_signal("https", addr, &description, |shutdown| {
        run(socket, options, shutdown)
    })
}

/// The certificate of `--cert`/`--key`, or a self-signed one written to a new temporary
/// directory (with the path of its `cert.pem`).
fn certificate(a: &ServeHttp3Args) -> Result<(Certificate, Option<PathBuf>), UsageError> {
    let read = |flag: &str, path: &str| {
        std::fs::read(path)
            .map_err(|e| UsageError::new(format!("{flag} {path}: {e}: give a PEM file")))
    };
    if let (Some(cert), Some(key)) = (&a.cert, &a.key) {
        let c = Certificate::from_pem(&read("--cert", cert)?, &read("--key", key)?)
            .map_err(|e| UsageError::new(format!("--cert {cert} --key {key}: {e}")))?;
        return Ok((c, None));
    }
    let failed = |e: std::io::Error| {
        UsageError::new(format!(
            "cannot write the self-signed certificate ({e}): give --cert and --key"
        ))
    };
    let (c, cert_pem, key_pem) = Certificate::self_signed().map_err(failed)?;
    let dir = std::env::temp_dir().join(format!("wirebench-http3-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(failed)?;
    let path = dir.join("cert.pem");
    std::fs::write(&path, cert_pem).map_err(failed)?;
    {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(dir.join("key.pem"))
            .map_err(failed)?;
        f.write_all(key_pem.as_bytes()).map_err(failed)?;
    }
    Ok((c, Some(path)))
}

/// Validates the flags.
fn options(a: &ServeHttp3Args, cert: Certificate) -> Result<H3ServerOptions, UsageError> {
    let idle_timeout = duration_flag("--idle-timeout", &a.idle_timeout)?;
    if idle_timeout.is_zero() {
        return usage("--idle-timeout 0 would close every connection at once: give e.g. 60s");
    }
    let range = crate::serve::http::HEADER_LIMITS;
    let max_header_bytes = match crate::units::parse_size(&a.max_header_bytes) {
        Ok(n) if range.contains(&n) => n as usize,
        _ => {
            return usage(format!(
                "--max-header-bytes {}: give 256 to 1M (the default is 16k)",
                a.max_header_bytes
            ))
        }
    };
    let dir = match a.dir.as_deref() {
        None => None,
        Some(d) if std::path::Path::new(d).is_dir() => Some(PathBuf::from(d)),
        Some(d) => {
            return usage(format!(
                "--dir '{d}' is not a directory: give the directory to serve files from"
            ))
        }
    };
    Ok(H3ServerOptions {
        dir,
        delay: delay_flag(&a.delay)?,
        max_rate: max_rate_flag(&a.max_rate)?,
        max_connections: max_connections_flag(a.max_connections)?,
        max_header_bytes,
        idle_timeout,
        cert,
    })
}

/// The second line of output: what the server will do.
fn describe(o: &H3ServerOptions) -> String {
    let mut text = "HTTP/3 over QUIC (UDP), /bytes/N /delay/D /status/CODE /echo".to_string();
    if let Some(dir) = &o.dir {
        text += &format!(", files under {}", dir.display());
    }
    if let Some(d) = o.delay {
        text += &format!(", delay {d:?}");
    }
    if let Some(r) = o.max_rate {
        text += &format!(", at most {r}/s");
    }
    if let Some(n) = o.max_connections {
        text += &format!(", at most {n} connections");
    }
    text
}
