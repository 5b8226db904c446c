//! The process's own stop: the one [`Stop`] every run of the command line watches, which
//! SIGINT, SIGTERM and SIGHUP request. Process state belongs here, in the command layer: the
//! engine and the studies take the stop their caller gives them.

use crate::engine::stop::Stop;
use std::sync::OnceLock;

/// The command line's handle: every run of this process's command watches it, and Ctrl-C
/// (or SIGTERM) requests it, after which the command reports what it measured.
pub fn process() -> &'static Stop {
    static PROCESS: OnceLock<Stop> = OnceLock::new();
    PROCESS.get_or_init(Stop::new)
}

/// Whether the command's runs were asked to stop ([`process`]'s handle).
pub fn requested() -> bool {
    process().requested()
}

/// The first Ctrl-C (SIGINT) stops the run, which then reports and saves what it measured; a
/// second one ends the process at once. Installed once per process: a program running several
/// commands in-process ([`super::execute`]) gets one watcher, not one per command.
pub fn stop_on_ctrl_c() -> anyhow::Result<()> {
    static INSTALLED: std::sync::Mutex<bool> = std::sync::Mutex::new(false);
    let mut installed = INSTALLED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if !*installed {
        watch_signals()?;
        *installed = true;
    }
    Ok(())
}

/// Starts the thread that turns SIGINT and SIGTERM into a stop ([`stop_on_ctrl_c`]).
fn watch_signals() -> anyhow::Result<()> {
    use tokio::signal::unix::{signal, SignalKind};
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()?;
    // SIGTERM (kill, a CI's timeout) and SIGHUP (the terminal or the ssh session gone) stop
    // as Ctrl-C does: what was measured is kept.
    let (mut int, mut term, mut hup) = {
        let _context = runtime.enter();
        (
            signal(SignalKind::interrupt())?,
            signal(SignalKind::terminate())?,
            signal(SignalKind::hangup())?,
        )
    };
    std::thread::Builder::new()
        .name("ctrl-c".into())
        .spawn(move || {
            runtime.block_on(async {
                let code = tokio::select! {
                    _ = int.recv() => super::keep::EXIT_INTERRUPTED,
                    _ = term.recv() => super::keep::EXIT_TERMINATED,
                    _ = hup.recv() => {
                        detach_terminal();
                        super::keep::EXIT_HANGUP
                    }
                };
                super::keep::interrupted_by(code);
                process().request_by(super::keep::stopped_by());
                tokio::select! {
                    _ = int.recv() => {}
                    _ = term.recv() => {}
                    _ = hup.recv() => {}
                }
            });
            std::process::exit(i32::from(super::keep::interrupted_code()));
        })?;
    Ok(())
}

/// After a hangup, stdout and stderr that were the terminal that hung up write to /dev/null
/// instead, so that the report and the save that follow do not fail on a terminal that is gone
/// (a file or a pipe they were sent to keeps them).
fn detach_terminal() {
    // SAFETY: open, isatty and dup2 on descriptors this process owns; no memory is shared.
    unsafe {
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if null < 0 {
            return;
        }
        for fd in [1, 2] {
            if libc::isatty(fd) == 1 {
                libc::dup2(null, fd);
            }
        }
        libc::close(null);
    }
}
