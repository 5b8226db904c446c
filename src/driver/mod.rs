//! WHAT one operation is: one file per protocol. The engine drives connections; a driver opens
//! them, writes requests and recognises replies.

pub mod tcp;
