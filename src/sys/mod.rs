//! What wirebench asks of the operating system, shared by client and servers: a precise timer
//! ([`timerfd`]), the process's resource use and limits ([`usage`]), the options set on
//! sockets ([`socket`]), and what links and TCP segments look like ([`link`]).

pub mod host;
pub mod link;
pub mod socket;
pub mod timerfd;
pub mod usage;
