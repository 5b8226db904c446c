//! What each frame the server sends does to a connection's state: a response's head, DATA
//! and trailers, RST_STREAM, SETTINGS, PING, GOAWAY and WINDOW_UPDATE (RFC 9113 §6).

use super::{broke, find, finish, reset, Broke, Conn, End, CONNECTION_WINDOW, MAX_ACKS_QUEUED};
use super::{MAX_HEADER_BLOCK, STREAM_WINDOW};
use crate::driver::h2::framing::frame::{self, reason_name, Head};
use crate::driver::h2::framing::hpack::BadBlock;
use crate::driver::Failure;
use crate::record::ErrorKind;
use std::time::Instant;

impl Conn {
    /// Handles one frame; an error ends the connection.
    pub(super) fn frame(
        &mut self,
        h: &Head,
        p: &[u8],
        now: Instant,
        bytes: &mut usize,
    ) -> Result<(), Broke> {
        if self.pending.is_some() && h.kind != frame::CONTINUATION {
            return Err(Broke::Code(frame::PROTOCOL_ERROR));
        }
        match h.kind {
            frame::DATA => Ok(self.data(h, p, bytes)?),
            frame::HEADERS => {
                let range = frame::content(h, p).ok_or(frame::PROTOCOL_ERROR)?;
                self.block.clear();
                self.block.extend_from_slice(&p[range]);
                self.pending = Some((h.stream, h.flags));
                if h.flags & frame::END_HEADERS != 0 {
                    self.head(now)?;
                }
                Ok(())
            }
            frame::CONTINUATION => match self.pending {
                Some((id, _)) if id == h.stream => {
                    if self.block.len() + p.len() > MAX_HEADER_BLOCK {
                        return Err(Broke::Flood(
                            "HTTP/2: the server sent a header block over 1 MiB (CONTINUATION frames); the client ended the connection",
                        ));
                    }
                    self.block.extend_from_slice(p);
                    if h.flags & frame::END_HEADERS != 0 {
                        self.head(now)?;
                    }
                    Ok(())
                }
                _ => Err(Broke::Code(frame::PROTOCOL_ERROR)),
            },
            frame::RST_STREAM => {
                let code = u32::from_be_bytes(p.try_into().map_err(|_| 0x6u32)?);
                if let Some(r) = self.req(h.stream) {
                    r.fail(reset(code));
                    self.ended += 1;
                }
                Ok(())
            }
            frame::SETTINGS => self.settings(h, p),
            frame::PING if h.flags & frame::ACK == 0 => {
                if p.len() != 8 || h.stream != 0 {
                    return Err(Broke::Code(0x6)); // FRAME_SIZE_ERROR (§6.7)
                }
                self.acked()?;
                frame::head(&mut self.out, p.len(), frame::PING, frame::ACK, 0);
                self.out.extend_from_slice(p);
                Ok(())
            }
            frame::GOAWAY => Ok(self.goaway(p)?),
            frame::WINDOW_UPDATE => {
                let inc = u32::from_be_bytes(p.try_into().map_err(|_| 0x6u32)?) & 0x7fff_ffff;
                match h.stream {
                    0 => self.window += i64::from(inc),
                    id => {
                        if let Some(r) = self.req(id) {
                            r.window += i64::from(inc);
                        }
                    }
                }
                self.send_bodies();
                Ok(())
            }
            // Push was switched off in the client's SETTINGS (§8.4).
            frame::PUSH_PROMISE => Err(Broke::Code(frame::PROTOCOL_ERROR)),
            _ => Ok(()), // PRIORITY, PING acks, unknown kinds (§4.1: ignored)
        }
    }

    /// Response DATA: counted, its window given back once half of it is used.
    fn data(&mut self, h: &Head, p: &[u8], bytes: &mut usize) -> Result<(), u32> {
        let range = frame::content(h, p).ok_or(frame::PROTOCOL_ERROR)?;
        self.unacked += h.len as u32;
        if self.unacked >= CONNECTION_WINDOW / 2 {
            frame::word(&mut self.out, frame::WINDOW_UPDATE, 0, self.unacked);
            self.unacked = 0;
        }
        let end = h.flags & frame::END_STREAM != 0;
        let Some(r) = find(&mut self.reqs, self.open, &mut self.last, h.stream) else {
            return Ok(()); // a stream the client cancelled
        };
        *bytes += range.len();
        r.unacked += h.len as u32;
        if end {
            finish(r);
            self.ended += 1;
        } else if r.unacked >= STREAM_WINDOW / 2 {
            frame::word(&mut self.out, frame::WINDOW_UPDATE, h.stream, r.unacked);
            r.unacked = 0;
        }
        Ok(())
    }

    /// A whole header block came: decoded (always: the table must stay in step), then the
    /// response head, or trailers, of its stream.
    fn head(&mut self, now: Instant) -> Result<(), u32> {
        let Some((id, flags)) = self.pending.take() else {
            return Ok(());
        };
        let status = self.decoder.block(&self.block).map_err(|BadBlock| 0x9u32)?; // COMPRESSION_ERROR
        let Some(r) = find(&mut self.reqs, self.open, &mut self.last, id) else {
            return Ok(());
        };
        if r.first_byte.is_none() {
            match status {
                Some(100..=199) => return Ok(()), // informational: the final head follows
                Some(s) => (r.first_byte, r.status) = (Some(now), s),
                None => {
                    r.fail(broke(frame::PROTOCOL_ERROR));
                    self.ended += 1;
                    frame::word(&mut self.out, frame::RST_STREAM, id, frame::PROTOCOL_ERROR);
                    return Ok(());
                }
            }
        }
        if flags & frame::END_STREAM != 0 {
            finish(r);
            self.ended += 1;
        }
        Ok(())
    }

    /// One more answer to a PING or SETTINGS is about to wait in `out`; too many unwritten
    /// ones end the connection.
    fn acked(&mut self) -> Result<(), Broke> {
        self.acks += 1;
        if self.acks > MAX_ACKS_QUEUED {
            return Err(Broke::Flood(
                "HTTP/2: the server sent PING or SETTINGS frames faster than it read their answers (a flood); the client ended the connection",
            ));
        }
        Ok(())
    }

    fn settings(&mut self, h: &Head, p: &[u8]) -> Result<(), Broke> {
        if h.flags & frame::ACK != 0 {
            return Ok(());
        }
        if p.len() % 6 != 0 {
            return Err(Broke::Code(0x6));
        }
        self.acked()?;
        for s in p.chunks_exact(6) {
            let v = u32::from_be_bytes([s[2], s[3], s[4], s[5]]);
            match u16::from_be_bytes([s[0], s[1]]) {
                frame::SETTINGS_MAX_CONCURRENT_STREAMS => self.max_streams = v as usize,
                frame::SETTINGS_INITIAL_WINDOW_SIZE => {
                    let delta = i64::from(v) - self.initial_window;
                    self.initial_window = i64::from(v);
                    for r in self.reqs.range_mut(..self.open) {
                        r.window += delta;
                    }
                }
                frame::SETTINGS_MAX_FRAME_SIZE => {
                    self.max_frame = (v as usize).clamp(frame::DEFAULT_MAX_FRAME, 1 << 24)
                }
                _ => {}
            }
        }
        frame::head(&mut self.out, 0, frame::SETTINGS, frame::ACK, 0);
        self.settings = true;
        self.send_bodies();
        Ok(())
    }

    /// GOAWAY: with NO_ERROR the streams up to its last one go on and those above it go out
    /// again elsewhere; with an error the connection is over.
    fn goaway(&mut self, p: &[u8]) -> Result<(), u32> {
        if p.len() < 8 {
            return Err(0x6);
        }
        let last = u32::from_be_bytes([p[0], p[1], p[2], p[3]]) & 0x7fff_ffff;
        let code = u32::from_be_bytes([p[4], p[5], p[6], p[7]]);
        self.gone = true;
        if code != 0 {
            self.connection_failed(Failure {
                kind: ErrorKind::Reset,
                what: "HTTP/2: the server closed the connection with GOAWAY",
                code: Some(reason_name(code)),
            });
            return Ok(());
        }
        self.graceful = true;
        for r in &mut self.reqs {
            if r.end.is_none() && (r.id == 0 || r.id > last) {
                r.end = Some(End::Again);
                r.body = None;
                self.ended += 1;
            }
        }
        Ok(())
    }
}
