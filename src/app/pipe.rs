//! A closed stdout or stderr (`wirebench run … | head`) ends the process quietly, as it ends
//! every Unix tool: by SIGPIPE, without a panic or an "error: Broken pipe" line. Rust ignores
//! SIGPIPE (the drivers write to sockets a server may close), so the edge does it by hand:
//! an error or a `println!` panic caused by a closed terminal stream, and only that, ends here.

use std::io;

/// Routes panics of `print!`/`eprint!` on a closed stream (any thread) to a quiet end.
pub(crate) fn install() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let text = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        if text.starts_with("failed printing to std") && closed() {
            die();
        }
        previous(info)
    }));
}

/// Whether `e` comes from writing to a closed stdout or stderr (not from a socket: a server
/// closing a connection is a result to report, so the terminal stream itself is checked).
pub(crate) fn is_closed_output(e: &anyhow::Error) -> bool {
    let broken = e.chain().any(|c| {
        c.downcast_ref::<io::Error>()
            .is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe)
    }) || format!("{e:#}").contains("Broken pipe");
    broken && closed()
}

/// Whether stdout or stderr has lost its reader: poll reports POLLERR for the write end of a
/// pipe nobody reads (and POLLHUP for a closed socket).
fn closed() -> bool {
    [1, 2].into_iter().any(|fd| {
        let mut p = libc::pollfd {
            fd,
            events: libc::POLLOUT,
            revents: 0,
        };
        // SAFETY: one valid pollfd, a zero timeout.
        let n = unsafe { libc::poll(&mut p, 1, 0) };
        n == 1 && p.revents & (libc::POLLERR | libc::POLLHUP) != 0
    })
}

/// Ends the process by SIGPIPE, as a writer to a closed pipe ends in C (the shell sees 141).
pub(crate) fn die() -> ! {
    // SAFETY: restoring the default action and raising a signal are async-signal-safe calls.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        libc::raise(libc::SIGPIPE);
    }
    std::process::exit(141)
}
