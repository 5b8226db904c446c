//! What one TCP connection ([`TcpConn`]) does: opened by the driver with the plan's socket
//! options, then requests queued and written (their replies are parsed in [`super::reply`]),
//! or, in the bulk modes, bytes streamed one way or both.

use super::reply::server_error;
use super::request::big_part;
use super::{TcpConn, TcpDriver, IO_CHUNK};
use crate::driver::stream::{connect_stream, Stream};
use crate::driver::{Done, Driver, Expiry, ReadOutcome, Sent, Session};
use crate::record::{ErrorKind, OpError};
use std::collections::VecDeque;
use std::time::{Duration, Instant};

impl Driver for TcpDriver {
    type Session = TcpConn;

    /// Connects within `timeout`; returns the connection and how long the handshake took.
    async fn connect(&self, timeout: Duration) -> Result<(TcpConn, Option<Duration>), OpError> {
        let (stream, took) = connect_stream(self.addr, self.socket, timeout, self.blocking).await?;
        let conn = TcpConn {
            stream,
            shape: self.clone_shape(),
            out: self.preamble.clone().unwrap_or_default(),
            out_pos: 0,
            payload_out: 0,
            inbuf: vec![0; self.read_len].into_boxed_slice(),
            in_flight: VecDeque::new(),
            reply_pos: 0,
            delim_matched: 0,
            completed: Vec::new(),
            bulk: self.bulk.clone(),
            bulk_pos: 0,
            big: VecDeque::new(),
            big_off: 0,
            head: [0; 8],
            early: None,
            reported: self.reported,
        };
        Ok((conn, Some(took)))
    }
}

impl Session for TcpConn {
    /// Requests sent whose replies have not fully arrived.
    fn in_flight(&self) -> usize {
        self.in_flight.len()
    }

    /// When the oldest request in flight was actually sent.
    fn oldest(&self) -> Option<Instant> {
        self.in_flight.front().map(|&(_, s)| s.at)
    }

    /// Queues request `seq`, counted as sent at `sent`; [`Session::flush`] writes it.
    fn queue(&mut self, seq: u64, sent: Sent) {
        let len = self.shape.request.len();
        if len > IO_CHUNK {
            if self.big.is_empty() {
                self.head = seq.to_le_bytes();
            }
            self.big.push_back(seq);
            self.payload_out += len;
            self.in_flight.push_back((seq, sent));
            return;
        }
        if self.out_pos == self.out.len() {
            self.out.clear();
            self.out_pos = 0;
        }
        self.shape.request.write(seq, &mut self.out);
        self.payload_out += self.shape.request.len();
        self.in_flight.push_back((seq, sent));
    }

    /// Writes everything queued; returns the payload bytes written. While the socket takes
    /// no more it reads instead: a server that answers as it reads (an echo) would otherwise
    /// stop reading once its replies fill the buffers, and both sides would wait for ever.
    async fn flush(&mut self) -> Result<usize, OpError> {
        if self.early.is_none() {
            self.completed.clear();
        }
        loop {
            let data: &[u8] = if self.out_pos < self.out.len() {
                &self.out[self.out_pos..]
            } else if !self.big.is_empty() {
                big_part(&self.shape.request, &self.head, self.big_off)
            } else {
                break;
            };
            match self.stream.try_write_now(data) {
                Ok(0) => {
                    return Err(OpError::new(
                        ErrorKind::Reset,
                        "write request: connection closed",
                    ))
                }
                Ok(n) => self.advance(n),
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => self.wait_duplex().await?,
                Err(e) => return Err(OpError::io("write request", &e)),
            }
        }
        Ok(std::mem::take(&mut self.payload_out))
    }

    fn take_early(&mut self) -> Option<ReadOutcome> {
        self.early.take()
    }

    /// Reads once and parses what came; completed replies' send times go to [`Session::completed`].
    async fn read(&mut self) -> Result<ReadOutcome, OpError> {
        if let Some(early) = self.early.take() {
            return Ok(early);
        }
        self.completed.clear();
        let n = self
            .stream
            .read(&mut self.inbuf)
            .await
            .map_err(|e| OpError::io("read reply", &e))?;
        if n == 0 {
            return Err(self.closed_early());
        }
        let replies = self.parse(n)?;
        Ok(ReadOutcome {
            bytes: n,
            replies,
            ..ReadOutcome::default()
        })
    }

    /// Send times of the replies completed by the last [`Session::read`].
    fn completed(&self) -> &[Done] {
        &self.completed
    }

    /// A byte stream's replies come in order: once the oldest request has timed out, the
    /// replies still on their way can no longer be told apart, so the connection is dropped.
    fn expire(&mut self, now: Instant, timeout: Duration) -> Expiry {
        match self.oldest() {
            Some(at) if now >= at + timeout => Expiry::Reset,
            _ => Expiry::None,
        }
    }

    /// Sends the preamble, if any, before bulk transfer begins; a reporting stream waits for
    /// the sink's acknowledgement, so no byte counts as sent to a server that refused it.
    async fn start_bulk(&mut self) -> Result<(), OpError> {
        self.flush().await?;
        if !self.reported {
            return Ok(());
        }
        let line = self.read_line("read the acknowledgement").await?;
        if line == crate::wire::framing::OK_LINE {
            return Ok(());
        }
        Err(server_error(&line).unwrap_or_else(|| {
            OpError::fatal(
                ErrorKind::Mismatch,
                format!(
                    "the server answered \"{}\" to the wirebench stream preamble: it is not a wirebench sink (wirebench serve tcp --mode sink); for other servers use --raw",
                    line.escape_ascii()
                ),
            )
        }))
    }

    /// The send MSS and TCP header of this connection, from `TCP_INFO`.
    fn segment(&self) -> Option<crate::record::Segment> {
        self.stream.segment()
    }

    /// A reporting stream's end: half-close, then read the sink's count of the bytes it read.
    async fn finish_bulk(&mut self, limit: Duration) -> Option<u64> {
        if !self.reported {
            return None;
        }
        self.stream.shutdown_write().ok()?;
        let line = tokio::time::timeout(limit, self.read_line("read the count"))
            .await
            .ok()?
            .ok()?;
        crate::wire::framing::parse_received(&line)
    }

    /// Writes bulk payload (stream mode) from a buffer of whole messages, up to
    /// `BULK_WRITE` bytes a call; returns the payload bytes written by this call.
    async fn send_bulk(&mut self) -> Result<usize, OpError> {
        if self.bulk.is_empty() {
            return Err(OpError::new(
                ErrorKind::Other,
                "no bulk buffer outside stream mode",
            ));
        }
        let n = match self.stream.write(&self.bulk[self.bulk_pos..]).await {
            Ok(n) if n > 0 => n,
            Ok(_) => return Err(OpError::new(ErrorKind::Reset, "write: connection closed")),
            Err(e) => return Err(self.refusal().unwrap_or_else(|| OpError::io("write", &e))),
        };
        self.bulk_pos = (self.bulk_pos + n) % self.bulk.len();
        Ok(n)
    }

    /// Reads bulk payload (source mode); returns the bytes read.
    async fn recv_bulk(&mut self) -> Result<usize, OpError> {
        let n = self
            .stream
            .read(&mut self.inbuf)
            .await
            .map_err(|e| OpError::io("read", &e))?;
        if n == 0 {
            return Err(OpError::new(
                ErrorKind::ShortReply,
                "the server closed the connection",
            ));
        }
        match server_error(&self.inbuf[..n]) {
            Some(e) => Err(e),
            None => Ok(n),
        }
    }
}

impl TcpConn {
    /// `n` more queued bytes went out.
    fn advance(&mut self, n: usize) {
        if self.out_pos < self.out.len() {
            self.out_pos += n;
            return;
        }
        self.big_off += n;
        if self.big_off == self.shape.request.len() {
            self.big.pop_front();
            self.big_off = 0;
            if let Some(&seq) = self.big.front() {
                self.head = seq.to_le_bytes();
            }
        }
    }

    /// Waits until the socket takes more or has input; reads and parses the input, keeping
    /// what it brought for [`Session::take_early`].
    async fn wait_duplex(&mut self) -> Result<(), OpError> {
        let (readable, _) = self
            .stream
            .wait_duplex()
            .await
            .map_err(|e| OpError::io("write request", &e))?;
        if !readable {
            return Ok(());
        }
        let n = match self.stream.try_read_now(&mut self.inbuf) {
            Ok(0) => return Err(self.closed_early()),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return Ok(()),
            Err(e) => return Err(OpError::io("read reply", &e)),
        };
        let replies = self.parse(n)?;
        let early = self.early.get_or_insert_with(ReadOutcome::default);
        early.bytes += n;
        early.replies += replies;
        Ok(())
    }

    /// After a failed upload: the reference server's reason, if it sent one before closing
    /// (a stream sent to an echo server), read without waiting.
    fn refusal(&mut self) -> Option<OpError> {
        let n = match &self.stream {
            Stream::Async(s) => s.try_read(&mut self.inbuf).ok()?,
            Stream::Blocking(s) => {
                s.set_nonblocking(true).ok()?;
                let n = std::io::Read::read(&mut &*s, &mut self.inbuf).ok();
                let _ = s.set_nonblocking(false);
                n?
            }
            Stream::Tls(_) => return None, // tcp:// never speaks TLS
        };
        server_error(&self.inbuf[..n])
    }

    /// Reads one short line from the server (the framing's answers), newline included.
    async fn read_line(&mut self, doing: &str) -> Result<Vec<u8>, OpError> {
        let mut line = Vec::new();
        while !line.ends_with(b"\n") && line.len() < crate::wire::framing::MAX_PREAMBLE {
            match self.stream.read(&mut self.inbuf).await {
                Ok(0) if line.is_empty() => {
                    return Err(OpError::new(
                        ErrorKind::ShortReply,
                        format!("{doing}: the server closed the connection"),
                    ))
                }
                Ok(0) => break,
                Ok(n) => line.extend_from_slice(&self.inbuf[..n]),
                Err(e) => return Err(OpError::io(doing, &e)),
            }
        }
        Ok(line)
    }
}
