//! What wirebench asks of the operating system, shared by client and servers: the binary's
//! allocator ([`alloc`]: small over-aligned blocks without posix_memalign), a precise timer
//! ([`timerfd`]), reading the files a user names within a bound ([`file`]), the process's
//! resource use and limits ([`usage`]), the options set on sockets ([`socket`]), and what links and TCP segments look like ([`link`]); the kernel's TCP counters
//! ([`netstat`]) and `TCP_INFO` of this process's connections ([`tcpinfo`]), with the CPU pressure
//! ([`pressure`]), a diagnosis's evidence; where threads run ([`pin`]: CPU affinity, as the demo
//! pins its client and server); keeping CPUs ready for a timer ([`awake`]: PM QoS, SCHED_FIFO);
//! writing the files a user names whole, never over a device or through a planted link ([`write`]).

pub mod alloc;
pub mod awake;
pub mod cgroup;
pub mod file;
pub mod host;
pub mod link;
pub mod netstat;
pub mod pin;
pub mod pressure;
pub mod socket;
pub mod tcpinfo;
pub mod timerfd;
pub mod usage;
pub mod write;
