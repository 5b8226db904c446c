//! HTTP/2 frames for the tests' scripted peers: writing one, and cutting what the client sent
//! into frames.

/// A frame: header and payload.
pub fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let mut f = (payload.len() as u32).to_be_bytes()[1..].to_vec();
    f.extend_from_slice(&[kind, flags]);
    f.extend_from_slice(&stream.to_be_bytes());
    f.extend_from_slice(payload);
    f
}

/// One frame the client sent.
pub struct Frame {
    pub kind: u8,
    pub flags: u8,
    pub stream: u32,
    pub payload: Vec<u8>,
}

/// The bytes a client sent on one connection, read as frames after its 24-byte preface.
pub struct Frames {
    buf: Vec<u8>,
    at: usize,
}

impl Frames {
    pub fn new() -> Frames {
        Frames {
            buf: Vec::new(),
            at: 24,
        }
    }

    /// Takes in bytes read from the connection.
    pub fn feed(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// The next whole frame, once all of it has come.
    pub fn next_frame(&mut self) -> Option<Frame> {
        let (buf, at) = (&self.buf, self.at);
        if buf.len() < at + 9 {
            return None;
        }
        let len = u32::from_be_bytes([0, buf[at], buf[at + 1], buf[at + 2]]) as usize;
        if buf.len() < at + 9 + len {
            return None;
        }
        let f = Frame {
            kind: buf[at + 3],
            flags: buf[at + 4],
            stream: u32::from_be_bytes(buf[at + 5..at + 9].try_into().unwrap()),
            payload: buf[at + 9..at + 9 + len].to_vec(),
        };
        self.at += 9 + len;
        Some(f)
    }
}
