//! A closed stdout or stderr (`wirebench run … | head`) ends the process quietly, as it ends
//! every Unix tool: by SIGPIPE, without a panic or an "error: Broken pipe" line. Rust ignores
//! SIGPIPE (the drivers write to sockets a server may close), so the edge does it by hand:
//! an error or a `println!` panic caused by a closed terminal stream, and only that, ends here.

use std::io::{self, Write};

/// The process's stdout for a command: a write that fails (the reader gone, the terminal gone,
/// the disk full) is remembered and the rest of the output dropped, so that the command still
/// reaches its save; the command line ends by the error afterwards (SIGPIPE for a reader gone).
pub(crate) struct Kept<'a> {
    inner: &'a mut dyn Write,
    lost: Option<io::Error>,
}

impl<'a> Kept<'a> {
    /// `inner`, kept.
    pub(crate) fn new(inner: &'a mut dyn Write) -> Kept<'a> {
        Kept { inner, lost: None }
    }

    /// The writer itself, for a caller that handles its errors.
    pub(crate) fn inner(&mut self) -> &mut dyn Write {
        &mut *self.inner
    }

    /// The first write error, if any.
    pub(crate) fn lost(self) -> Option<io::Error> {
        self.lost
    }
}

impl Write for Kept<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.lost.is_none() {
            match self.inner.write(buf) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => return Err(e),
                Err(e) => self.lost = Some(e),
                ok => return ok,
            }
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if self.lost.is_none() {
            if let Err(e) = self.inner.flush() {
                self.lost = Some(e);
            }
        }
        Ok(())
    }
}

/// Whether `e`, from writing to stdout, means its reader went away.
pub(crate) fn closed_by(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::BrokenPipe || closed()
}

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
