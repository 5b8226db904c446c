//! `wirebench serve tcp|udp|http`: flags into the options of a reference server (see
//! [`crate::serve`]), a bound socket, the address line, and the final counters when a signal
//! stops the server. One file per server; what they share (`--listen`, the run from the
//! address line to the final counters) is here.

pub(super) mod http;
pub(super) mod http3;
pub(super) mod tcp;
pub(super) mod udp;

use crate::cli::ServerMode;
use crate::error::{usage, UsageError};
use crate::plan::duration_flag;
use crate::serve::listen::{bind, ListenError};
use crate::serve::{trigger_on_signal, Mode, Shutdown};
use crate::sys::awake::CpuAwake;
use crate::sys::socket::SocketOptions;
use crate::units::parse_message_size;
use std::fmt::Display;
use std::io::{self, Write};
use std::net::{SocketAddr, TcpListener};
use std::process::ExitCode;
use std::time::Duration;

impl From<ServerMode> for Mode {
    fn from(mode: ServerMode) -> Mode {
        match mode {
            ServerMode::Echo => Mode::Echo,
            ServerMode::Sink => Mode::Sink,
            ServerMode::Source => Mode::Source,
        }
    }
}

/// Binds `--listen` for a server that accepts TCP connections (`tcp`, `http`), then
/// [`serve_until_signal`].
fn accept_until_signal<S: Display>(
    scheme: &str,
    (listen, example_port): (&str, u16),
    socket: &SocketOptions,
    description: &str,
    run: impl FnOnce(TcpListener, Shutdown) -> io::Result<S>,
) -> anyhow::Result<ExitCode> {
    // Ten thousand clients need more descriptors than the usual soft limit of 1,024.
    crate::sys::usage::raise_fd_limit();
    let listener = bind(listen_addr(listen, example_port)?, socket).map_err(|e| match e {
        ListenError::Usage(u) => anyhow::Error::from(u),
        ListenError::Io(e) => e.into(),
    })?;
    let addr = listener.local_addr()?;
    serve_until_signal(scheme, addr, description, |shutdown| {
        run(listener, shutdown)
    })
}

/// Runs `wirebench serve NAME` for the servers that need only their listener
/// ([`crate::serve::SimpleCommand`]).
pub(super) struct Simple;

impl crate::serve::Serve for Simple {
    type Output = anyhow::Result<ExitCode>;

    fn serve<S: crate::serve::Simple>(self, server: &S) -> anyhow::Result<ExitCode> {
        simple(server)
    }
}

/// `wirebench serve NAME` for a server that needs only its listener ([`crate::serve::Simple`]).
fn simple<S: crate::serve::Simple>(a: &S) -> anyhow::Result<ExitCode> {
    let socket = SocketOptions {
        nodelay: true,
        ..SocketOptions::default()
    };
    accept_until_signal(
        S::SCHEME,
        (a.listen(), S::PORT),
        &socket,
        S::DESCRIPTION,
        |listener, shutdown| a.run(listener, shutdown),
    )
}

/// Prints `SCHEME://ADDR` as the first line and `serving SCHEME: DESCRIPTION; stop with Ctrl-C`
/// as the second, runs the server until SIGINT or SIGTERM, then prints the final counters.
fn serve_until_signal<S: Display>(
    scheme: &str,
    addr: SocketAddr,
    description: &str,
    run: impl FnOnce(Shutdown) -> io::Result<S>,
) -> anyhow::Result<ExitCode> {
    let shutdown = Shutdown::new();
    // Before the address goes out: whoever reads it may signal at once.
    trigger_on_signal(shutdown.clone())?;
    let mut out = io::stdout().lock();
    writeln!(out, "{scheme}://{addr}")?;
    out.flush()?;
    writeln!(out, "serving {scheme}: {description}; stop with Ctrl-C")?;
    out.flush()?;
    drop(out);
    let stats = run(shutdown)?;
    writeln!(io::stdout(), "stopped: {stats}")?;
    Ok(ExitCode::SUCCESS)
}

/// The start of a TCP or UDP server's second line: `mode echo, 2 threads`.
fn mode_and_threads(mode: Mode, n: usize) -> String {
    let mode = match mode {
        Mode::Echo => "echo",
        Mode::Sink => "sink",
        Mode::Source => "source",
    };
    format!("mode {mode}, {}", threads(n))
}

/// A thread count as the second line gives it: `1 thread`, `2 threads`.
fn threads(n: usize) -> String {
    format!("{n} {}", if n == 1 { "thread" } else { "threads" })
}

/// Parses `--listen`: an IP address and port. Host names other than `localhost` are not
/// resolved, so a typo never turns into a DNS query. The error suggests `example_port`.
fn listen_addr(text: &str, example_port: u16) -> Result<SocketAddr, UsageError> {
    let text = text.trim();
    let parsed = match text.strip_prefix("localhost:") {
        Some(port) => format!("127.0.0.1:{port}").parse(),
        None => text.parse(),
    };
    parsed.map_err(|_| {
        UsageError::new(format!(
            "--listen '{text}' is not an address: give IP:PORT, e.g. 127.0.0.1:{example_port} (port 0 picks a free port)"
        ))
    })
}

/// Parses an optional size flag, e.g. `--reply-size 1k`.
fn size_flag(flag: &'static str, text: &Option<String>) -> Result<Option<usize>, UsageError> {
    text.as_deref()
        .map(|t| parse_message_size(flag, t).map_err(|e| UsageError::flag(flag, e)))
        .transpose()
}

/// Parses `--delay`; zero means none.
fn delay_flag(text: &Option<String>) -> Result<Option<Duration>, UsageError> {
    let delay = text.as_deref().map(|t| duration_flag("--delay", t));
    Ok(delay.transpose()?.filter(|d| !d.is_zero()))
}

/// With `--delay`, holds every CPU out of idle sleep while the result lives, so the timer
/// that ends a wait wakes its thread on time (see [`CpuAwake`]); `None` without a delay, and
/// when the hold is not permitted (not root): the delay is then as exact as the CPU's wake-ups.
fn keep_awake(delay: Option<Duration>) -> Option<CpuAwake> {
    delay.and_then(|_| CpuAwake::hold().ok())
}

/// Parses `--max-rate`: requests per second, `2000` or `2000/s`, above zero.
fn max_rate_flag(text: &Option<String>) -> Result<Option<f64>, UsageError> {
    let Some(t) = text.as_deref() else {
        return Ok(None);
    };
    match t.trim().trim_end_matches("/s").parse::<f64>() {
        Ok(r) if r > 0.0 && r.is_finite() => Ok(Some(r)),
        _ => usage(format!(
            "--max-rate '{t}' is not a rate: give requests per second above zero, e.g. --max-rate 2000"
        )),
    }
}

/// Checks `--max-connections`: at least 1.
fn max_connections_flag(n: Option<usize>) -> Result<Option<usize>, UsageError> {
    if n == Some(0) {
        return usage("--max-connections 0 would refuse every client: give at least 1");
    }
    Ok(n)
}

/// Checks `--threads`: at least 1.
fn threads_flag(n: usize) -> Result<usize, UsageError> {
    if n == 0 {
        return usage("--threads 0: give at least one thread");
    }
    Ok(n)
}

/// Parses `wirebench serve ARGS`, for the commands' tests.
#[cfg(test)]
fn parse_serve(args: &[&str]) -> crate::cli::ServeCommand {
    use crate::cli::{Cli, Command};
    use clap::Parser;
    let argv = ["wirebench", "serve"].iter().chain(args);
    let Command::Serve(command) = Cli::try_parse_from(argv).unwrap().command else {
        unreachable!()
    };
    command
}

/// Asserts that `parse` refuses each of `cases` with a one-line message, for the commands' tests.
#[cfg(test)]
fn assert_refused<T: std::fmt::Debug>(
    parse: impl Fn(&[&str]) -> Result<T, UsageError>,
    cases: &[&[&str]],
) {
    for args in cases {
        let err = parse(args).expect_err(&format!("{args:?}"));
        assert!(!err.0.contains('\n'), "one line: {}", err.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_line_starts_with_mode_and_threads() {
        assert_eq!(mode_and_threads(Mode::Sink, 1), "mode sink, 1 thread");
        assert_eq!(mode_and_threads(Mode::Source, 2), "mode source, 2 threads");
    }

    #[test]
    fn listen_addr_takes_ip_port_and_localhost() {
        assert!(listen_addr("999.1.1.1:1", 7000).is_err());
        assert!(listen_addr("nohost:1", 7000).is_err());
        assert_eq!(
            listen_addr(" localhost:7 ", 7000).unwrap(),
            "127.0.0.1:7".parse().unwrap()
        );
        let err = listen_addr("x", 8080).unwrap_err().0;
        assert_eq!(
            err,
            "--listen 'x' is not an address: give IP:PORT, e.g. 127.0.0.1:8080 (port 0 picks a free port)"
        );
    }
}
