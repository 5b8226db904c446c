//! What wirebench asks of the operating system, shared by client and servers: a precise timer
//! ([`timerfd`]), the process's resource use and limits ([`usage`]) and the options set on
//! sockets ([`socket`]).

pub mod socket;
pub mod timerfd;
pub mod usage;
