//! `wirebench serve tcp`: flags into [`TcpServerOptions`], a listener, the address line, and the
//! final counters when a signal stops the server.

use super::mode_and_threads;
use super::{accept_until_signal, delay_flag, keep_awake, max_connections_flag, max_rate_flag};
use super::{size_flag, threads_flag};
use crate::cli::{ServeTcpArgs, ServerMode};
use crate::error::{usage, UsageError};
use crate::plan::duration_flag;
use crate::serve::tcp::{run, PlainFraming, Stall, TcpServerOptions, DEFAULT_SOURCE_SIZE};
use crate::serve::Mode;
use crate::sys::socket::SocketOptions;
use crate::units::{escape, unescape};
use std::process::ExitCode;

/// The longest `--delimiter` accepted; a delimited request may be at most 1 MiB anyway.
const MAX_DELIMITER: usize = 1024;

/// `wirebench serve tcp`: prints `tcp://ADDR` as the first line, serves until SIGINT or SIGTERM,
/// then prints the final counters.
pub fn main(args: &ServeTcpArgs) -> anyhow::Result<ExitCode> {
    let options = options(args)?;
    let (socket, mut description) = (options.socket, describe(&options));
    let _awake = keep_awake(options.delay);
    if args.realtime {
        // Before the server's threads start: they inherit the calling thread's policy.
        crate::sys::awake::realtime().map_err(|e| {
            UsageError::new(format!(
                "--realtime: cannot run under SCHED_FIFO ({e}): run as root, or leave --realtime out"
            ))
        })?;
        description += ", SCHED_FIFO (--realtime)";
    }
    let listen = (args.listen.as_str(), 7000);
    accept_until_signal(
        "tcp",
        listen,
        &socket,
        &description,
        |listener, shutdown| run(listener, options, shutdown),
    )
}

/// Validates the flags.
fn options(a: &ServeTcpArgs) -> Result<TcpServerOptions, UsageError> {
    let reply_size = size_flag("--reply-size", &a.reply_size)?;
    let source_size = size_flag("--size", &a.size)?;
    if reply_size.is_some() && a.mode != ServerMode::Echo {
        return usage("--reply-size applies to --mode echo: leave it out, or use --mode echo");
    }
    if source_size.is_some() && a.mode != ServerMode::Source {
        return usage("--size sets the pushed message size of --mode source: leave it out, or use --mode source");
    }
    let plain = match (size_flag("--request-size", &a.request_size)?, &a.delimiter) {
        (Some(n), _) => PlainFraming::Fixed(n),
        (None, Some(d)) => PlainFraming::Delimiter(delimiter(d)?),
        (None, None) => PlainFraming::Stream,
    };
    if let PlainFraming::Delimiter(d) = &plain {
        let shortest = reply_size.or(source_size).unwrap_or(usize::MAX);
        if shortest < d.len() {
            return usage(format!(
                "a {shortest}-byte message cannot end with the {}-byte --delimiter: give a size of at least {}",
                d.len(),
                d.len()
            ));
        }
    }
    let delay = delay_flag(&a.delay)?;
    let max_connections = max_connections_flag(a.max_connections)?;
    let threads = threads_flag(
        a.threads
            .unwrap_or_else(|| TcpServerOptions::default().threads),
    )?;
    Ok(TcpServerOptions {
        mode: a.mode.into(),
        reply_size,
        source_size: source_size.unwrap_or(DEFAULT_SOURCE_SIZE),
        plain,
        delay,
        max_rate: max_rate_flag(&a.max_rate)?,
        stall: stall(a)?,
        reply_writes: reply_writes(a)?,
        delay_every: delay_every(a.delay_every)?,
        socket: SocketOptions::try_from(&a.socket)?,
        max_connections,
        idle_timeout: idle_timeout(&a.idle_timeout)?,
        threads,
        blocking: a.blocking,
    })
}

/// Parses `--idle-timeout`: a duration, 0 for none.
fn idle_timeout(text: &str) -> Result<Option<std::time::Duration>, UsageError> {
    let d = duration_flag("--idle-timeout", text)?;
    Ok((!d.is_zero()).then_some(d))
}

/// Parses the hidden test options `--stall-every` and `--stall-for`.
fn stall(a: &ServeTcpArgs) -> Result<Option<Stall>, UsageError> {
    let (Some(every), Some(length)) = (&a.stall_every, &a.stall_for) else {
        if a.stall_every.is_some() || a.stall_for.is_some() {
            return usage("--stall-every and --stall-for go together, e.g. --stall-every 1s --stall-for 500ms");
        }
        return Ok(None);
    };
    let every = duration_flag("--stall-every", every)?;
    let length = duration_flag("--stall-for", length)?;
    if every.is_zero() || length >= every {
        return usage("--stall-for must be shorter than --stall-every, e.g. --stall-every 1s --stall-for 500ms");
    }
    Ok(Some(Stall { every, length }))
}

/// Checks `--reply-writes`: at least one write, and only an echo has replies.
fn reply_writes(a: &ServeTcpArgs) -> Result<usize, UsageError> {
    if a.reply_writes == 0 {
        return usage("--reply-writes 0: a reply takes at least one write, e.g. --reply-writes 2");
    }
    if a.reply_writes > 1 && a.mode != ServerMode::Echo {
        return usage("--reply-writes applies to --mode echo: leave it out, or use --mode echo");
    }
    Ok(a.reply_writes)
}

/// Checks `--delay-every`: every 1st request or rarer.
fn delay_every(n: Option<u64>) -> Result<Option<u64>, UsageError> {
    if n == Some(0) {
        return usage("--delay-every 0: give N of at least 1, e.g. --delay-every 100 --delay 50ms");
    }
    Ok(n)
}

/// Parses `--delimiter`.
fn delimiter(text: &str) -> Result<Vec<u8>, UsageError> {
    let d = unescape(text).map_err(|e| UsageError::new(format!("--delimiter: {e}")))?;
    if d.is_empty() {
        return usage("--delimiter is empty: give the bytes that end a request, e.g. '\\n'");
    }
    if d.len() > MAX_DELIMITER {
        return usage(format!(
            "--delimiter is {} bytes long: the limit is {MAX_DELIMITER}",
            d.len()
        ));
    }
    Ok(d)
}

/// The second line of output: what the server will do.
fn describe(o: &TcpServerOptions) -> String {
    let mut text = match o.blocking && o.mode != Mode::Source {
        // Echo and sink connections get a thread each; the -t threads only accept them.
        true => format!(
            "{}, a thread per connection (--blocking)",
            mode_and_threads(o.mode, o.threads)
                .split(',')
                .next()
                .unwrap_or("")
        ),
        false => mode_and_threads(o.mode, o.threads),
    };
    if let Some(n) = o.reply_size {
        text += &format!(
            ", replies of {n} bytes to plain clients (a wirebench client asks its own: run --expect-size)"
        );
    }
    if o.mode == Mode::Source {
        text += &format!(", plain clients get {}-byte messages", o.source_size);
    }
    match &o.plain {
        PlainFraming::Stream => {}
        PlainFraming::Fixed(n) => text += &format!(", plain requests of {n} bytes"),
        PlainFraming::Delimiter(d) => {
            text += &format!(", plain requests end with '{}'", escape(d));
        }
    }
    if let Some(d) = o.delay {
        text += &format!(", delay {d:?}");
    }
    if let Some(n) = o.delay_every {
        text += &format!(" on every {n}th request");
    }
    if o.reply_writes > 1 {
        text += &format!(", each reply in {} writes", o.reply_writes);
    }
    if !o.socket.nodelay {
        text += ", Nagle on (no TCP_NODELAY)";
    }
    if let Some(r) = o.max_rate {
        text += &format!(", at most {r}/s");
    }
    if let Some(n) = o.max_connections {
        text += &format!(", at most {n} connections");
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::serve::{assert_refused, listen_addr, parse_serve};
    use crate::cli::ServeCommand;

    fn parse(args: &[&str]) -> Result<TcpServerOptions, UsageError> {
        let argv = [&["tcp"], args].concat();
        let ServeCommand::Tcp(a) = parse_serve(&argv) else {
            unreachable!()
        };
        options(&a)
    }

    #[test]
    fn flags_into_options() {
        let o = parse(&["--delimiter", "\\r\\n", "--reply-size", "8", "-t", "2"]).unwrap();
        assert_eq!(o.plain, PlainFraming::Delimiter(b"\r\n".to_vec()));
        assert_eq!((o.reply_size, o.threads), (Some(8), 2));
        assert!(o.socket.nodelay);
        let o = parse(&["--mode", "source", "--size", "4k", "--delay", "5ms"]).unwrap();
        assert_eq!(o.source_size, 4096);
        assert_eq!(o.delay, Some(std::time::Duration::from_millis(5)));
        assert_eq!(
            parse(&["--max-rate", "2000/s"]).unwrap().max_rate,
            Some(2000.0)
        );
        let minutes = |n: u64| Some(std::time::Duration::from_secs(60 * n));
        assert_eq!(parse(&[]).unwrap().idle_timeout, minutes(5));
        assert_eq!(parse(&["--idle-timeout", "0"]).unwrap().idle_timeout, None);
        assert_eq!(
            parse(&["--idle-timeout", "2m"]).unwrap().idle_timeout,
            minutes(2)
        );
    }

    #[test]
    fn rejects_bad_flags() {
        assert_refused(
            parse,
            &[
                &["--reply-size", "0"],
                &["--delay", "abc"],
                &["--mode", "sink", "--reply-size", "8"],
                &["--size", "8"],
                &["--delimiter", ""],
                &["--delimiter", "\\r\\n", "--reply-size", "1"],
                &["--threads", "0"],
                &["--max-connections", "0"],
                &["--sndbuf", "x"],
                &["--max-rate", "0"],
                &["--max-rate", "fast"],
                &["--reply-writes", "0"],
                &["--mode", "sink", "--reply-writes", "2"],
                &["--delay-every", "0", "--delay", "1ms"],
            ],
        );
        assert!(listen_addr("999.1.1.1:1", 7000).is_err());
        assert_eq!(
            listen_addr("localhost:7", 7000).unwrap(),
            "127.0.0.1:7".parse().unwrap()
        );
    }
}
