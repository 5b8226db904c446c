//! HTTP/2 on a framing layer of wirebench's own. Where the time of a request went with the
//! hyperium h2 crate it replaced (bench/results/h2_profile.txt): decoding every response head
//! into an `http::HeaderMap` (Huffman, a `Bytes` and a hash insert per field, the map dropped)
//! and encoding the same request head each time. Here a request shape's header block is
//! encoded once (HPACK literals without indexing, [`hpack::put_field`]); a response head is
//! decoded only as far as the dynamic table needs (values it does not keep are skipped, not
//! Huffman-decoded; values it keeps and has seen before come from a memo) and `:status` is the
//! one field looked at; the frames of every stream queued go out in one write.
//!
//! The behaviour is the h2 crate's: SETTINGS awaited at connect, streams beyond the server's
//! limit wait their turn, RST_STREAM fails its request alone, GOAWAY NO_ERROR hands the streams
//! above its last one back to the engine, any other GOAWAY or a broken protocol fails the
//! connection's requests, a request past `--timeout` is cancelled (RST_STREAM CANCEL) unless
//! the connection was silent all along. Bodies both ways are payload; frames are wire bytes.

mod conn;
mod frame;
pub(super) mod fuzz;
mod hpack;
use crate::wire::huffman;
mod session;

pub(crate) use frame::reason_name;
pub(super) use hpack::put_field;
pub use session::FramedSession;
pub(super) use session::Requests;
