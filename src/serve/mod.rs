//! Reference servers to measure against. Each takes a bound listener, its options and a
//! [`Shutdown`], so tests bind `127.0.0.1:0` and call the same `run` the CLI does.

mod counters;
mod delay;
pub mod grpc;
pub mod h3;
pub mod http;
pub(crate) mod listen;
mod rate;
pub mod redis;
pub mod tcp;
mod threads;
pub mod udp;

pub use threads::Handle;

use std::sync::Arc;
use tokio::sync::watch;

/// What a reference server does with a connection (UDP: with a datagram).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Reply to each request: the same bytes, or a configured number of bytes.
    Echo,
    /// Read, count and discard.
    Sink,
    /// Push messages as fast as the client takes them (TCP only).
    Source,
}

/// The servers that need only a listener ([`Simple`]), each registered once: its subcommand's
/// name is its variant's (`Redis` is `wirebench serve redis`), its help text its flags' `about`.
/// `cli::ServeCommand` flattens the enum this makes and the commands run it through [`Serve`],
/// so a new one is its module and one line here.
macro_rules! servers {
    ($($name:ident($args:ty)),* $(,)?) => {
        // A doc comment here would become `wirebench serve`'s help text (clap reads it from the
        // flattened enum), so this says what it is in a plain comment: `wirebench serve NAME`
        // for each simple server.
        #[allow(missing_docs)]
        #[derive(Debug, clap::Subcommand)]
        pub enum SimpleCommand {
            $(
                #[allow(missing_docs)]
                $name($args),
            )*
        }

        impl SimpleCommand {
            /// Runs the server named with `serve`.
            #[allow(unused_variables)] // `serve`, when no server is registered
            pub fn run<S: Serve>(&self, serve: S) -> S::Output {
                // `*self`, so that no server (before the first) is an empty match too.
                match *self {
                    $(SimpleCommand::$name(ref args) => serve.serve(args),)*
                }
            }
        }
    };
}

servers! {
    Redis(redis::ServeRedisArgs),
    Grpc(grpc::ServeGrpcArgs),
}

/// What is done with a simple server's flags (the command binds, prints and runs it): generic
/// over the server, so each is called as its own type.
pub trait Serve {
    /// What serving returns.
    type Output;
    /// Serves with `server`'s flags.
    fn serve<S: Simple>(self, server: &S) -> Self::Output;
}

/// A reference server that needs only a bound TCP listener and a [`Shutdown`] (`serve redis`):
/// `wirebench serve` binds its `--listen`, prints the address line, runs it until a signal and
/// prints what it returns, so it is its module and its line in `servers!`.
pub trait Simple {
    /// The URL scheme of its address line (`redis`).
    const SCHEME: &'static str;
    /// Its usual port, for the example in an error.
    const PORT: u16;
    /// What it serves, for the second line.
    const DESCRIPTION: &'static str;
    /// What it prints when it stops.
    type Stats: std::fmt::Display;
    /// `--listen` as given.
    fn listen(&self) -> &str;
    /// Serves `listener` until `shutdown`.
    fn run(
        &self,
        listener: std::net::TcpListener,
        shutdown: Shutdown,
    ) -> std::io::Result<Self::Stats>;
}

/// Tells a running server (all its threads) to stop; cloneable, usable from any thread.
#[derive(Clone, Debug)]
pub struct Shutdown {
    tx: Arc<watch::Sender<bool>>,
}

impl Default for Shutdown {
    fn default() -> Self {
        Shutdown::new()
    }
}

impl Shutdown {
    /// A shutdown that has not been triggered.
    pub fn new() -> Shutdown {
        Shutdown {
            tx: Arc::new(watch::channel(false).0),
        }
    }

    /// Asks every server holding this shutdown to stop.
    pub fn trigger(&self) {
        self.tx.send_replace(true);
    }

    /// True once triggered.
    pub fn is_triggered(&self) -> bool {
        *self.tx.borrow()
    }

    /// Resolves once triggered (at once if it already was).
    pub async fn wait(&self) {
        let mut rx = self.tx.subscribe();
        // An error means the sender is gone, which cannot happen while `self` holds it.
        let _ = rx.wait_for(|stop| *stop).await;
    }
}

/// Triggers `shutdown` on SIGINT or SIGTERM, on a small runtime of its own. The handlers are
/// registered before this returns: a command's address line invites a signal at once, and one
/// arriving before registration would kill the process without the final counters.
pub fn trigger_on_signal(shutdown: Shutdown) -> std::io::Result<()> {
    use tokio::signal::unix::{signal, SignalKind};
    let runtime = threads::runtime()?;
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
