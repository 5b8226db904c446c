//! `wirebench serve http`: flags into [`HttpServerOptions`], a listener, the URL line, and the
//! final counters when a signal stops the server.

use super::{run, HttpServerOptions};
use crate::cli::ServeHttpArgs;
use crate::error::{usage, UsageError};
use crate::plan::{duration_flag, SocketOptions};
use crate::serve::Shutdown;
use socket2::{Domain, Protocol, Socket, Type};
use std::io::{self, Write};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// Pending connections the kernel queues before the server accepts them.
const BACKLOG: i32 = 1024;

/// `wirebench serve http`: prints `http://ADDR` as the first line, serves until SIGINT or
/// SIGTERM, then prints the final counters.
pub fn main(args: &ServeHttpArgs) -> anyhow::Result<ExitCode> {
    let options = options(args)?;
    // Ten thousand clients need more descriptors than the usual soft limit of 1,024.
    crate::engine::usage::raise_fd_limit();
    let listener = bind(listen_addr(&args.listen)?, &options.socket)?;
    let addr = listener.local_addr()?;
    let shutdown = Shutdown::new();
    // Before the address goes out: whoever reads it may signal at once.
    on_signal(shutdown.clone())?;
    let mut out = io::stdout().lock();
    writeln!(out, "http://{addr}")?;
    out.flush()?;
    writeln!(
        out,
        "serving http: {}; stop with Ctrl-C",
        describe(&options)
    )?;
    out.flush()?;
    drop(out);
    let stats = run(listener, options, shutdown)?;
    writeln!(io::stdout(), "stopped: {stats}")?;
    Ok(ExitCode::SUCCESS)
}

/// Validates the flags.
fn options(a: &ServeHttpArgs) -> Result<HttpServerOptions, UsageError> {
    let timeout = |flag: &str, text: &str| -> Result<Duration, UsageError> {
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
    let delay = a
        .delay
        .as_deref()
        .map(|t| duration_flag("--delay", t))
        .transpose()?
        .filter(|d| !d.is_zero());
    let dir = a.dir.as_deref().map(directory).transpose()?;
    if a.max_connections == Some(0) {
        return usage("--max-connections 0 would refuse every client: give at least 1");
    }
    let defaults = HttpServerOptions::default();
    let threads = match a.threads {
        Some(0) => return usage("--threads 0: give at least one thread"),
        Some(n) => n,
        None => defaults.threads,
    };
    Ok(HttpServerOptions {
        dir,
        request_timeout,
        idle_timeout,
        delay,
        max_connections: a.max_connections,
        socket: SocketOptions::try_from(&a.socket)?,
        threads,
        ..defaults
    })
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

/// Parses `--listen`: an IP address and port. Host names other than `localhost` are not
/// resolved, so a typo never turns into a DNS query.
fn listen_addr(text: &str) -> Result<SocketAddr, UsageError> {
    let text = text.trim();
    let parsed = match text.strip_prefix("localhost:") {
        Some(port) => format!("127.0.0.1:{port}").parse(),
        None => text.parse(),
    };
    parsed.map_err(|_| {
        UsageError(format!(
            "--listen '{text}' is not an address: give IP:PORT, e.g. 127.0.0.1:8080 (port 0 picks a free port)"
        ))
    })
}

/// Binds and listens with socket2, so SO_RCVBUF is set before `listen` (accepted sockets
/// inherit it, and the window scale is fixed by the handshake).
fn bind(addr: SocketAddr, options: &SocketOptions) -> anyhow::Result<std::net::TcpListener> {
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    // A restarted server can bind its port again while old connections sit in TIME_WAIT.
    socket.set_reuse_address(true)?;
    if let Some(n) = options.rcvbuf {
        socket.set_recv_buffer_size(n)?;
    }
    socket
        .bind(&addr.into())
        .and_then(|()| socket.listen(BACKLOG))
        .map_err(|e| bind_error(addr, &e))?;
    Ok(socket.into())
}

/// A usage error for a failed bind, naming the address and the likely fix.
fn bind_error(addr: SocketAddr, e: &io::Error) -> UsageError {
    let fix = match e.kind() {
        io::ErrorKind::AddrInUse => "the port is taken: pick another, or port 0 for a free one",
        io::ErrorKind::PermissionDenied => {
            "ports below 1024 need privileges: pick a port above 1024, or port 0 for a free one"
        }
        io::ErrorKind::AddrNotAvailable => {
            "that address is not on this machine: use 127.0.0.1 or an address of a local interface"
        }
        _ => "check the address, or use 127.0.0.1:0",
    };
    UsageError(format!("cannot listen on {addr} ({e}): {fix}"))
}

/// The second line of output: what the server will do.
fn describe(o: &HttpServerOptions) -> String {
    let threads = if o.threads == 1 { "thread" } else { "threads" };
    let mut text = format!(
        "{} {threads}, /bytes/N /delay/D /status/CODE /echo",
        o.threads
    );
    if let Some(dir) = &o.dir {
        text += &format!(", files under {}", dir.display());
    }
    if let Some(d) = o.delay {
        text += &format!(", delay {d:?}");
    }
    if let Some(n) = o.max_connections {
        text += &format!(", at most {n} connections");
    }
    text += &format!(
        ", request timeout {:?}, idle timeout {:?}",
        o.request_timeout, o.idle_timeout
    );
    text
}

/// Triggers `shutdown` on SIGINT or SIGTERM. The handlers are registered before this returns:
/// the address line invites a signal at once, and one arriving before registration would kill
/// the process without the final counters.
fn on_signal(shutdown: Shutdown) -> io::Result<()> {
    use tokio::signal::unix::{signal, SignalKind};
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let (mut int, mut term) = {
        let _context = runtime.enter();
        (
            signal(SignalKind::interrupt())?,
            signal(SignalKind::terminate())?,
        )
    };
    std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            runtime.block_on(async {
                tokio::select! {
                    _ = int.recv() => {},
                    _ = term.recv() => {},
                    _ = shutdown.wait() => {},
                }
            });
            shutdown.trigger();
        })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Cli, Command, ServeCommand};
    use clap::Parser;

    fn parse(args: &[&str]) -> Result<HttpServerOptions, UsageError> {
        let mut argv = vec!["wirebench", "serve", "http"];
        argv.extend_from_slice(args);
        let Command::Serve(ServeCommand::Http(a)) = Cli::try_parse_from(argv).unwrap().command
        else {
            unreachable!()
        };
        options(&a)
    }

    #[test]
    fn flags_into_options() {
        let o = parse(&["--request-timeout", "300ms", "-t", "2", "--delay", "5ms"]).unwrap();
        assert_eq!(o.request_timeout, Duration::from_millis(300));
        assert_eq!(o.idle_timeout, Duration::from_secs(60));
        assert_eq!((o.threads, o.delay), (2, Some(Duration::from_millis(5))));
        assert!(o.socket.nodelay && o.dir.is_none());
        let dir = std::env::temp_dir();
        let o = parse(&["--dir", dir.to_str().unwrap(), "--no-nodelay"]).unwrap();
        assert_eq!(o.dir.as_deref(), Some(dir.as_path()));
        assert!(!o.socket.nodelay);
    }

    #[test]
    fn rejects_bad_flags() {
        for args in [
            &["--request-timeout", "x"][..],
            &["--request-timeout", "0"],
            &["--idle-timeout", "5q"],
            &["--delay", "abc"],
            &["--dir", "/no/such/dir"],
            &["--dir", "/proc/self/status"],
            &["--threads", "0"],
            &["--max-connections", "0"],
            &["--sndbuf", "x"],
        ] {
            let err = parse(args).expect_err(&format!("{args:?}"));
            assert!(!err.0.contains('\n'), "one line: {}", err.0);
        }
        assert!(listen_addr("999.1.1.1:1").is_err());
    }
}
