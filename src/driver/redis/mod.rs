//! Redis: every request is one command (`--redis-cmd`, default `PING`) in RESP, and its reply
//! one RESP value; an error reply (`-ERR …`) is a failed request, the connection goes on.
//! Replies come in order, so requests pipeline (`--pipeline`). The protocol is this module and
//! its line in the registry: the plan, the engine and the reports do not name it.

pub mod flags;
pub mod resp;

use super::stream::{connect_stream, Stream};
use super::target::{Family, ProtocolName, Scheme};
use super::workload::{Reply, Request, Spec, Workload};
use super::{Done, Driver, Expiry, Failure, Given, Job, Placement, Protocol, ReadOutcome, Sent};
use crate::error::{usage_of, UsageError};
use crate::record::{ErrorKind, OpError};
use crate::sys::socket::SocketOptions;
use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The largest reply buffered whole (a `GET` of a big value); past it the connection fails.
const MOST_BUFFERED: usize = 64 << 20;

/// A Redis run's own part of the workload: the command every request sends.
#[derive(Debug)]
pub struct RedisSpec {
    /// The command in RESP.
    pub command: Vec<u8>,
}

impl Spec for RedisSpec {}

/// The Redis protocol, prepared: the command every session sends.
#[derive(Debug)]
pub struct Redis {
    command: Arc<[u8]>,
}

impl Protocol for Redis {
    const SCHEMES: &'static [Scheme] = &[Scheme {
        name: "redis",
        protocol: ProtocolName::Redis,
        family: Family::Stream,
        default_port: Some(6379),
        tls: false,
        path: false,
    }];
    const FLAGS: &'static [&'static str] = &[flags::REDIS];
    type Driver = RedisDriver;

    fn check(w: &Workload) -> Result<(), UsageError> {
        if w.mode.bulk() {
            return usage_of(
                &["--mode"],
                format!(
                    "--mode {} moves bytes; over redis:// use --mode rr or crr",
                    w.mode.name()
                ),
            );
        }
        Ok(())
    }

    fn build(given: &Given, workload: &mut Workload) -> Result<(), UsageError> {
        let args = given.group::<flags::RedisArgs>()?;
        let words: Vec<&str> = args
            .redis_cmd
            .as_deref()
            .unwrap_or("PING")
            .split_whitespace()
            .collect();
        if words.is_empty() {
            return usage_of(
                &["--redis-cmd"],
                "--redis-cmd is empty: give a command, e.g. --redis-cmd 'GET key'",
            );
        }
        let command = resp::command(&words);
        // The report's request size is the command's; a reply's size is the server's.
        workload.request = Request::Payload(command.clone());
        workload.reply = Reply::Size(0);
        workload.spec = Some(Arc::new(RedisSpec { command }));
        Ok(())
    }

    fn prepare(job: &Job) -> Result<Redis, super::Error> {
        let spec = job.workload.spec_of::<RedisSpec>().ok_or_else(|| {
            super::Error::NoWorkload(format!("{}: the plan has no Redis command", job.target.url))
        })?;
        Ok(Redis {
            command: spec.command.as_slice().into(),
        })
    }

    fn driver(&self, job: &Job, at: Placement) -> RedisDriver {
        RedisDriver {
            addr: job.target.addr,
            socket: job.socket,
            command: self.command.clone(),
            blocking: at.blocking,
        }
    }
}

/// Opens Redis connections to one target.
#[derive(Debug)]
pub struct RedisDriver {
    addr: SocketAddr,
    socket: SocketOptions,
    command: Arc<[u8]>,
    blocking: bool,
}

impl Driver for RedisDriver {
    type Session = RedisSession;

    async fn connect(
        &self,
        timeout: Duration,
    ) -> Result<(RedisSession, Option<Duration>), OpError> {
        let (stream, took) = connect_stream(self.addr, self.socket, timeout, self.blocking).await?;
        let session = RedisSession {
            stream,
            command: self.command.clone(),
            out: Vec::new(),
            out_pos: 0,
            in_flight: VecDeque::new(),
            inbuf: vec![0; 4096],
            filled: 0,
            completed: Vec::new(),
        };
        Ok((session, Some(took)))
    }
}

/// One Redis connection: commands queued and in flight, and the replies read so far.
#[derive(Debug)]
pub struct RedisSession {
    stream: Stream,
    command: Arc<[u8]>,
    /// Queued commands, written from `out_pos` on (kept across a cancelled flush).
    out: Vec<u8>,
    out_pos: usize,
    in_flight: VecDeque<Sent>,
    /// Input not yet parsed: `inbuf[..filled]`.
    inbuf: Vec<u8>,
    filled: usize,
    completed: Vec<Done>,
}

/// An error reply: the request failed, the connection goes on.
const ERROR_REPLY: Failure = Failure {
    kind: ErrorKind::Status,
    what: "the server answered with an error reply (-ERR)",
    code: None,
};

impl RedisSession {
    /// Takes every whole reply out of the input, in order of the requests in flight.
    fn parse(&mut self) -> Result<(), OpError> {
        let mut at = 0;
        while at < self.filled {
            let value = resp::value(&self.inbuf[at..self.filled])
                .map_err(|e| OpError::fatal(ErrorKind::Mismatch, e.to_string()))?;
            let Some(value) = value else { break };
            let Some(sent) = self.in_flight.pop_front() else {
                return Err(OpError::new(
                    ErrorKind::Mismatch,
                    "a reply came with no command in flight",
                ));
            };
            let mut done = Done::ok(sent);
            if value.error {
                done.failure = Some(ERROR_REPLY);
            }
            self.completed.push(done);
            at += value.len;
        }
        self.inbuf.copy_within(at..self.filled, 0);
        self.filled -= at;
        Ok(())
    }
}

impl super::Session for RedisSession {
    fn in_flight(&self) -> usize {
        self.in_flight.len()
    }

    fn oldest(&self) -> Option<Instant> {
        self.in_flight.front().map(|s| s.at)
    }

    fn queue(&mut self, _seq: u64, sent: Sent) {
        self.out.extend_from_slice(&self.command);
        self.in_flight.push_back(sent);
    }

    async fn flush(&mut self) -> Result<usize, OpError> {
        let n = self.stream.write_from(&self.out, &mut self.out_pos).await?;
        self.out.clear();
        self.out_pos = 0;
        Ok(n)
    }

    async fn read(&mut self) -> Result<ReadOutcome, OpError> {
        self.completed.clear();
        if self.filled == self.inbuf.len() {
            if self.inbuf.len() >= MOST_BUFFERED {
                return Err(OpError::new(
                    ErrorKind::Mismatch,
                    "a reply over 64 MiB: not measured",
                ));
            }
            self.inbuf.resize(self.inbuf.len() * 2, 0);
        }
        let n = self
            .stream
            .read(&mut self.inbuf[self.filled..])
            .await
            .map_err(|e| OpError::io("read reply", &e))?;
        if n == 0 {
            return Err(OpError::new(
                ErrorKind::ShortReply,
                "the server closed the connection",
            ));
        }
        self.filled += n;
        self.parse()?;
        Ok(ReadOutcome {
            bytes: n,
            replies: self.completed.len(),
            ..ReadOutcome::default()
        })
    }

    fn completed(&self) -> &[Done] {
        &self.completed
    }

    /// Replies come in order: past the oldest's time limit the connection is dropped.
    fn expire(&mut self, now: Instant, timeout: Duration) -> Expiry {
        match self.oldest() {
            Some(at) if now >= at + timeout => Expiry::Reset,
            _ => Expiry::None,
        }
    }

    fn segment(&self) -> Option<crate::record::Segment> {
        self.stream.segment()
    }
}
