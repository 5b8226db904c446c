//! `wirebench serve http`: flags into [`HttpServerOptions`], a listener, the URL line, and the
//! final counters when a signal stops the server.

use super::{accept_until_signal, delay_flag, keep_awake, max_connections_flag, max_rate_flag};
use super::{threads, threads_flag};
use crate::cli::ServeHttpArgs;
use crate::error::{usage, UsageError};
use crate::plan::duration_flag;
use crate::serve::http::{run, HttpServerOptions};
use crate::sys::socket::SocketOptions;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// `wirebench serve http`: prints `http://ADDR` as the first line, serves until SIGINT or
/// SIGTERM, then prints the final counters.
pub fn main(args: &ServeHttpArgs) -> anyhow::Result<ExitCode> {
    let options = options(args)?;
    let limit = args.memory_limit.as_deref().map(memory_limit).transpose()?;
    let (socket, mut description) = (options.socket, describe(&options));
    // Confined before the first file is read, so every page it caches is charged to its group.
    let confined = match limit {
        Some(bytes) => {
            let c = crate::sys::cgroup::confine(bytes).map_err(|e| {
                anyhow::anyhow!("--memory-limit: cannot make a memory cgroup ({e}): this needs root and cgroup v1's memory controller at /sys/fs/cgroup/memory")
            })?;
            let held = c.limit().unwrap_or(bytes);
            description.push_str(&format!(
                ", memory limit {} MiB (page cache included)",
                held >> 20
            ));
            Some(c)
        }
        None => None,
    };
    let listen = (args.listen.as_str(), 8080);
    let _awake = keep_awake(options.delay);
    let code = accept_until_signal(
        "http",
        listen,
        &socket,
        &description,
        |listener, shutdown| run(listener, options, shutdown),
    );
    if let Some(c) = confined {
        c.release();
    }
    code
}

/// Checks `--memory-limit`: a size of at least 1 MiB, and root to make the group.
fn memory_limit(text: &str) -> Result<u64, UsageError> {
    let n = crate::units::parse_size(text)
        .map_err(|e| UsageError::flag("--memory-limit", format!("--memory-limit: {e}")))?;
    if n < 1 << 20 {
        return usage(format!(
            "--memory-limit {text} is below 1 MiB, too little to run a server: give e.g. 64M"
        ));
    }
    if !crate::sys::cgroup::is_root() {
        return usage(
            "--memory-limit makes a memory cgroup, which needs root: run as root, or leave it out",
        );
    }
    Ok(n)
}

/// Validates the flags.
fn options(a: &ServeHttpArgs) -> Result<HttpServerOptions, UsageError> {
    let timeout = |flag: &'static str, text: &str| -> Result<Duration, UsageError> {
        let d = duration_flag(flag, text)?;
        if d.is_zero() {
            return usage(format!(
                "{flag} {text} would time out at once: give a duration such as 10s"
            ));
        }
        Ok(d)
    };
    let request_timeout = timeout("--request-timeout", &a.request_timeout)?;
    let idle_timeout = timeout("--idle-timeout", &a.idle_timeout)?;
    let delay = delay_flag(&a.delay)?;
    let max_delay = duration_flag("--max-delay", &a.max_delay)?;
    let dir = a.dir.as_deref().map(directory).transpose()?;
    let max_connections = max_connections_flag(a.max_connections)?;
    let max_header_bytes = max_header_bytes(&a.max_header_bytes)?;
    let default_threads = HttpServerOptions::default().threads;
    let threads = threads_flag(a.threads.unwrap_or(default_threads))?;
    Ok(HttpServerOptions {
        dir,
        request_timeout,
        idle_timeout,
        delay,
        max_delay,
        max_rate: max_rate_flag(&a.max_rate)?,
        max_connections,
        max_header_bytes,
        socket: SocketOptions::try_from(&a.socket)?,
        threads,
    })
}

/// Checks `--max-header-bytes`: a size within the server's limits.
fn max_header_bytes(text: &str) -> Result<usize, UsageError> {
    let range = crate::serve::http::HEADER_LIMITS;
    match crate::units::parse_size(text) {
        Ok(n) if range.contains(&n) => Ok(n as usize),
        Ok(_) => usage(format!(
            "--max-header-bytes {text} is out of range: give 256 to 1M (the default is 16k)"
        )),
        Err(e) => usage(format!("--max-header-bytes {text}: {e}")),
    }
}

/// Checks `--dir`: an existing directory.
fn directory(text: &str) -> Result<PathBuf, UsageError> {
    match std::fs::metadata(text) {
        Ok(m) if m.is_dir() => Ok(PathBuf::from(text)),
        Ok(_) => usage(format!(
            "--dir '{text}' is not a directory: give the directory to serve files from"
        )),
        Err(e) => usage(format!(
            "--dir '{text}': {e}: give an existing directory to serve files from"
        )),
    }
}

/// The second line of output: what the server will do.
fn describe(o: &HttpServerOptions) -> String {
    let mut text = format!(
        "{}, /bytes/N /delay/D /status/CODE /echo",
        threads(o.threads)
    );
    if let Some(dir) = &o.dir {
        text += &format!(", files under {}", dir.display());
    }
    if let Some(d) = o.delay {
        text += &format!(", delay {d:?}");
    }
    text += &format!(", /delay up to {:?}", o.max_delay);
    if let Some(r) = o.max_rate {
        text += &format!(", at most {r}/s");
    }
    if let Some(n) = o.max_connections {
        text += &format!(", at most {n} connections");
    }
    text += &format!(
        ", request timeout {:?}, idle timeout {:?}, heads up to {} bytes",
        o.request_timeout, o.idle_timeout, o.max_header_bytes
    );
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::serve::{assert_refused, listen_addr, parse_serve};
    use crate::cli::ServeCommand;

    fn parse(args: &[&str]) -> Result<HttpServerOptions, UsageError> {
        let argv = [&["http"], args].concat();
        let ServeCommand::Http(a) = parse_serve(&argv) else {
            unreachable!()
        };
        options(&a)
    }

    #[test]
    fn flags_into_options() {
        let o = parse(&["--request-timeout", "300ms", "-t", "2", "--delay", "5ms"]).unwrap();
        assert_eq!(o.request_timeout, Duration::from_millis(300));
        assert_eq!(o.idle_timeout, Duration::from_secs(60));
        assert_eq!(o.max_header_bytes, 16 * 1024);
        assert_eq!(
            parse(&["--max-header-bytes", "1k"])
                .unwrap()
                .max_header_bytes,
            1024
        );
        assert!(parse(&["--max-header-bytes", "100"]).is_err());
        assert_eq!((o.threads, o.delay), (2, Some(Duration::from_millis(5))));
        assert!(o.socket.nodelay && o.dir.is_none());
        let dir = std::env::temp_dir();
        let o = parse(&["--dir", dir.to_str().unwrap(), "--no-nodelay"]).unwrap();
        assert_eq!(o.dir.as_deref(), Some(dir.as_path()));
        assert!(!o.socket.nodelay);
    }

    #[test]
    fn rejects_bad_flags() {
        assert_refused(
            parse,
            &[
                &["--request-timeout", "x"],
                &["--request-timeout", "0"],
                &["--idle-timeout", "5q"],
                &["--delay", "abc"],
                &["--max-rate", "0/s"],
                &["--dir", "/no/such/dir"],
                &["--dir", "/proc/self/status"],
                &["--threads", "0"],
                &["--max-connections", "0"],
                &["--sndbuf", "x"],
            ],
        );
        assert!(listen_addr("999.1.1.1:1", 8080).is_err());
    }
}
