//! `wirebench serve udp`: flags into [`UdpServerOptions`], a socket, the address line, and the
//! final counters when a signal stops the server.

use super::serve_until_signal;
use super::{delay_flag, keep_awake, listen_addr, max_rate_flag, mode_and_threads};
use super::{size_flag, threads_flag};
use crate::cli::{ServeUdpArgs, ServerMode, UdpServerMode};
use crate::error::{usage, UsageError};
use crate::serve::listen::bind_error;
use crate::serve::udp::{bind, run, Faults, UdpServerOptions};
use crate::sys::socket::SocketOptions;
use crate::wire::datagram::MAX_DATAGRAM;
use std::process::ExitCode;

/// `wirebench serve udp`: prints `udp://ADDR` as the first line, serves until SIGINT or SIGTERM,
/// then prints the final counters.
pub fn main(args: &ServeUdpArgs) -> anyhow::Result<ExitCode> {
    let options = options(args)?;
    let addr = listen_addr(&args.listen, 7000)?;
    let socket = bind(addr, &options).map_err(|e| {
        let otherwise = "check the address and buffer sizes, or use 127.0.0.1:0";
        bind_error(&format!("bind udp {addr}"), &e, otherwise)
    })?;
    let addr = socket.local_addr()?;
    let _awake = keep_awake(options.delay);
    serve_until_signal("udp", addr, &describe(&options), |shutdown| {
        run(socket, options, shutdown)
    })
}

/// Validates the flags.
fn options(a: &ServeUdpArgs) -> Result<UdpServerOptions, UsageError> {
    if a.mode == UdpServerMode::Source {
        return usage(
            "--mode source is not offered for UDP (a datagram server has no one to push to): use --mode echo or --mode sink, or serve tcp --mode source",
        );
    }
    let reply_size = size_flag("--reply-size", &a.reply_size)?;
    if let Some(n) = reply_size {
        if n > MAX_DATAGRAM {
            return usage(format!(
                "--reply-size {n} is over {MAX_DATAGRAM} bytes, the largest UDP datagram: give a smaller size"
            ));
        }
        if a.mode != UdpServerMode::Echo {
            return usage("--reply-size applies to --mode echo: leave it out, or use --mode echo");
        }
    }
    let delay = delay_flag(&a.delay)?;
    if delay.is_some() && a.mode != UdpServerMode::Echo {
        return usage(
            "--delay delays replies, and --mode sink sends none: leave it out, or use --mode echo",
        );
    }
    let max_rate = max_rate_flag(&a.max_rate)?;
    if max_rate.is_some() && a.mode != UdpServerMode::Echo {
        return usage(
            "--max-rate paces replies, and --mode sink sends none: leave it out, or use --mode echo",
        );
    }
    let threads = threads_flag(a.threads)?;
    let every = |flag: &str, v: Option<u64>| -> Result<Option<u64>, UsageError> {
        match v {
            Some(0) => usage(format!("{flag} 0: give an interval of at least 1")),
            v => Ok(v),
        }
    };
    Ok(UdpServerOptions {
        mode: ServerMode::from(a.mode).into(),
        reply_size,
        delay,
        max_rate,
        socket: SocketOptions {
            nodelay: false,
            sndbuf: size_flag("--sndbuf", &a.sndbuf)?,
            rcvbuf: size_flag("--rcvbuf", &a.rcvbuf)?,
        },
        threads,
        blocking: a.blocking,
        faults: Faults {
            drop_every: every("--drop-every", a.drop_every)?,
            duplicate_every: every("--duplicate-every", a.duplicate_every)?,
            reorder_every: every("--reorder-every", a.reorder_every)?,
        },
        ..UdpServerOptions::default()
    })
}

/// The second line of output: what the server will do.
fn describe(o: &UdpServerOptions) -> String {
    let mut text = mode_and_threads(o.mode, o.threads);
    if o.blocking {
        text += ", blocking calls";
    }
    if let Some(n) = o.reply_size {
        text += &format!(", replies of {n} bytes");
    }
    if let Some(d) = o.delay {
        text += &format!(", delay {d:?}");
    }
    if let Some(r) = o.max_rate {
        text += &format!(", at most {r}/s");
    }
    let f = &o.faults;
    for (what, every) in [
        ("drop", f.drop_every),
        ("duplicate", f.duplicate_every),
        ("reorder", f.reorder_every),
    ] {
        if let Some(n) = every {
            text += &format!(", test fault: {what} every {n}th datagram");
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::serve::{assert_refused, parse_serve};
    use crate::cli::ServeCommand;
    use crate::serve::Mode;

    fn parse(args: &[&str]) -> Result<UdpServerOptions, UsageError> {
        let argv = [&["udp"], args].concat();
        let ServeCommand::Udp(a) = parse_serve(&argv) else {
            unreachable!()
        };
        options(&a)
    }

    #[test]
    fn flags_into_options() {
        let o = parse(&[]).unwrap();
        assert_eq!((o.mode, o.threads, o.reply_size), (Mode::Echo, 1, None));
        let o = parse(&[
            "--reply-size",
            "1k",
            "--delay",
            "5ms",
            "-t",
            "2",
            "--rcvbuf",
            "4M",
            "--drop-every",
            "10",
        ])
        .unwrap();
        assert_eq!((o.reply_size, o.threads), (Some(1024), 2));
        assert_eq!(o.delay, Some(std::time::Duration::from_millis(5)));
        assert_eq!((o.socket.rcvbuf, o.socket.sndbuf), (Some(4 << 20), None));
        assert_eq!(o.faults.drop_every, Some(10));
        assert!(!o.blocking);
        assert_eq!(parse(&["--mode", "sink"]).unwrap().mode, Mode::Sink);
        let o = parse(&["--blocking", "--delay", "1ms"]).unwrap();
        assert!(o.blocking);
        assert!(
            describe(&o).contains(", blocking calls"),
            "{}",
            describe(&o)
        );
    }

    #[test]
    fn rejects_bad_flags() {
        assert_refused(
            parse,
            &[
                &["--mode", "source"],
                &["--reply-size", "70000"],
                &["--reply-size", "0"],
                &["--delay", "x"],
                &["--mode", "sink", "--reply-size", "8"],
                &["--mode", "sink", "--delay", "1ms"],
                &["--mode", "sink", "--max-rate", "100"],
                &["--threads", "0"],
                &["--sndbuf", "x"],
                &["--reorder-every", "0"],
            ],
        );
        assert!(listen_addr("nohost:1", 7000).is_err());
        assert_eq!(
            listen_addr("localhost:7", 7000).unwrap(),
            "127.0.0.1:7".parse().unwrap()
        );
    }
}
