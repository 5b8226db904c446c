//! What wirebench asks of the operating system, shared by client and servers: a precise timer
//! ([`timerfd`]) and the process's resource use and limits ([`usage`]).

pub mod timerfd;
pub mod usage;
