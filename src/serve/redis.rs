//! `wirebench serve redis`: a small Redis server to measure a `redis://` run against. It
//! answers `PING`, `GET` and `SET` in RESP (anything else with an error reply) from one map
//! shared by every connection, a thread per connection, and counts the commands it answered.

use super::Shutdown;
use clap::Args;
use std::collections::HashMap;
use std::fmt;
use std::io::{self, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How often a waiting read (and the accept's waker) looks at the shutdown.
const POLL: Duration = Duration::from_millis(50);

/// The flags of `wirebench serve redis` (its `about` is the subcommand's help text).
#[derive(Debug, Args, Clone)]
#[command(about = "A Redis server answering PING, GET and SET")]
pub struct ServeRedisArgs {
    /// Address to listen on (port 0 picks a free port).
    #[arg(
        short = 'l',
        long,
        default_value = "127.0.0.1:6379",
        value_name = "ADDR"
    )]
    pub listen: String,
}

impl super::Simple for ServeRedisArgs {
    const SCHEME: &'static str = "redis";
    const PORT: u16 = 6379;
    const DESCRIPTION: &'static str = "PING, GET and SET";
    type Stats = Stats;

    fn listen(&self) -> &str {
        &self.listen
    }

    fn run(&self, listener: TcpListener, shutdown: Shutdown) -> io::Result<Stats> {
        run(listener, shutdown)
    }
}

/// What the server did, printed when it stops.
#[derive(Debug, Default)]
pub struct Stats {
    /// Connections accepted.
    pub connections: u64,
    /// Commands answered (error replies included).
    pub commands: u64,
}

impl fmt::Display for Stats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} connections, {} commands answered",
            self.connections, self.commands
        )
    }
}

type Store = Arc<Mutex<HashMap<Vec<u8>, Vec<u8>>>>;

/// Serves `listener` until `shutdown`, then returns its counters.
pub fn run(listener: TcpListener, shutdown: Shutdown) -> io::Result<Stats> {
    listener.set_nonblocking(false)?;
    // accept blocks (a connection per request must not wait for a poll), so the shutdown
    // wakes it with a connection of its own.
    let addr = listener.local_addr()?;
    let waker = {
        let shutdown = shutdown.clone();
        std::thread::spawn(move || {
            while !shutdown.is_triggered() {
                std::thread::sleep(POLL);
            }
            let _ = TcpStream::connect(addr);
        })
    };
    let store: Store = Arc::default();
    let commands = Arc::new(AtomicU64::new(0));
    let mut threads: Vec<std::thread::JoinHandle<()>> = Vec::new();
    let mut connections = 0;
    loop {
        let stream = match listener.accept() {
            _ if shutdown.is_triggered() => break,
            Ok((stream, _)) => stream,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        connections += 1;
        // Finished connections' threads are let go (a connection per request adds up).
        threads.retain(|t| !t.is_finished());
        let (store, commands, shutdown) = (store.clone(), commands.clone(), shutdown.clone());
        threads.push(std::thread::spawn(move || {
            // A client that breaks its connection ends only its own thread.
            let _ = serve(stream, &store, &commands, &shutdown);
        }));
    }
    let _ = waker.join();
    for t in threads {
        let _ = t.join();
    }
    Ok(Stats {
        connections,
        commands: commands.load(Ordering::Relaxed),
    })
}

/// Answers one connection's commands until it closes or the server stops.
fn serve(
    mut stream: TcpStream,
    store: &Store,
    commands: &AtomicU64,
    shutdown: &Shutdown,
) -> io::Result<()> {
    stream.set_nonblocking(false)?;
    stream.set_nodelay(true)?;
    stream.set_read_timeout(Some(POLL))?;
    let mut buf = vec![0; 16 * 1024];
    let mut filled = 0;
    let mut out = Vec::new();
    while !shutdown.is_triggered() {
        if filled == buf.len() {
            buf.resize(buf.len() * 2, 0);
        }
        let n = match stream.read(&mut buf[filled..]) {
            Ok(0) => return Ok(()),
            Ok(n) => n,
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                continue
            }
            Err(e) => return Err(e),
        };
        filled += n;
        let mut at = 0;
        while let Some((words, used)) = command(&buf[at..filled]).map_err(invalid)? {
            answer(&words, store, &mut out);
            commands.fetch_add(1, Ordering::Relaxed);
            at += used;
        }
        buf.copy_within(at..filled, 0);
        filled -= at;
        // Pipelined commands read together are answered with one write.
        stream.write_all(&out)?;
        out.clear();
    }
    Ok(())
}

fn invalid(e: &'static str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, e)
}

/// A command's words and its length in bytes.
type Command<'a> = (Vec<&'a [u8]>, usize);

/// The command at the start of `buf` (an array of bulk strings) and its length; None while
/// it is incomplete.
fn command(buf: &[u8]) -> Result<Option<Command<'_>>, &'static str> {
    let Some((count, mut at)) = header(buf, b'*')? else {
        return Ok(None);
    };
    let mut words = Vec::with_capacity(count);
    for _ in 0..count {
        let Some((len, start)) = header(&buf[at..], b'$')? else {
            return Ok(None);
        };
        let end = at + start + len;
        if buf.len() < end + 2 {
            return Ok(None);
        }
        words.push(&buf[at + start..end]);
        at = end + 2;
    }
    Ok(Some((words, at)))
}

/// A `KIND N\r\n` line at the start of `buf`: N and the line's length.
fn header(buf: &[u8], kind: u8) -> Result<Option<(usize, usize)>, &'static str> {
    let Some(end) = buf.windows(2).position(|w| w == b"\r\n") else {
        return Ok(None);
    };
    if buf.first() != Some(&kind) {
        return Err("not a RESP command (an array of bulk strings)");
    }
    let n = std::str::from_utf8(&buf[1..end])
        .ok()
        .and_then(|t| t.parse().ok())
        .ok_or("a RESP length that is not a number")?;
    Ok(Some((n, end + 2)))
}

/// Appends the reply to `words` to `out`.
fn answer(words: &[&[u8]], store: &Store, out: &mut Vec<u8>) {
    let name = words.first().map(|w| w.to_ascii_uppercase());
    let mut map = store.lock().unwrap_or_else(|e| e.into_inner());
    match (name.as_deref(), words) {
        (Some(b"PING"), [_]) => out.extend_from_slice(b"+PONG\r\n"),
        (Some(b"GET"), [_, key]) => match map.get(*key) {
            Some(v) => {
                out.extend_from_slice(format!("${}\r\n", v.len()).as_bytes());
                out.extend_from_slice(v);
                out.extend_from_slice(b"\r\n");
            }
            None => out.extend_from_slice(b"$-1\r\n"),
        },
        (Some(b"SET"), [_, key, value]) => {
            map.insert(key.to_vec(), value.to_vec());
            out.extend_from_slice(b"+OK\r\n");
        }
        _ => out.extend_from_slice(b"-ERR unknown command or wrong number of arguments\r\n"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_ping_get_set() {
        let store = Store::default();
        let mut out = Vec::new();
        let (words, used) = command(b"*1\r\n$4\r\nPING\r\n*2").unwrap().unwrap();
        assert_eq!(used, 14);
        answer(&words, &store, &mut out);
        answer(&[b"GET", b"k"], &store, &mut out);
        answer(&[b"SET", b"k", b"v"], &store, &mut out);
        answer(&[b"get", b"k"], &store, &mut out);
        answer(&[b"FLUSHALL"], &store, &mut out);
        assert_eq!(
            out,
            b"+PONG\r\n$-1\r\n+OK\r\n$1\r\nv\r\n-ERR unknown command or wrong number of arguments\r\n"
        );
        assert_eq!(command(b"*2\r\n$3\r\nGET\r\n$1\r\n").unwrap(), None);
        assert!(command(b"PING\r\n").is_err());
    }
}
