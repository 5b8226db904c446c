//! The floor: an HTTP/1.1 keep-alive client that does nothing but the system calls, to show how
//! much of a load generator's CPU per request is its own work and how much is the kernel's.
//!
//! One thread, one epoll set, N connections, each with one GET in flight: on a readable event it
//! reads (recv into one buffer) and, once a whole reply is in, sends the next request. No
//! parsing beyond the first reply, no clock read per request, no statistics: every reply must
//! have the length of the first one (a static file from nginx: `Date` keeps its length), which
//! it checks on the bytes it reads. What it costs per request is what the kernel costs any
//! client that makes these two system calls (send, recv) and waits in epoll; bench/where_cpu.sh
//! runs it beside wirebench, wrk and ab.
//!
//! Usage: floor HOST:PORT PATH CONNECTIONS SECONDS
//! Prints: `floor: N requests in S s` (N complete replies; exit 1 on any short or odd reply).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [addr, path, conns, secs] = args.as_slice() else {
        eprintln!("usage: floor HOST:PORT PATH CONNECTIONS SECONDS");
        std::process::exit(2);
    };
    let (Ok(conns), Ok(secs)) = (conns.parse::<usize>(), secs.parse::<f64>()) else {
        eprintln!("floor: CONNECTIONS must be a whole number and SECONDS a number");
        std::process::exit(2);
    };
    let request = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\n\r\n").into_bytes();
    let reply_len = match first_reply_len(addr, &request) {
        Ok(n) => n,
        Err(e) => fail(&format!("the first request to {addr}{path}: {e}")),
    };
    let socks: Vec<TcpStream> = (0..conns)
        .map(|_| {
            let s = TcpStream::connect(addr.as_str()).unwrap_or_else(|e| fail(&e.to_string()));
            s.set_nodelay(true).unwrap_or_else(|e| fail(&e.to_string()));
            s.set_nonblocking(true)
                .unwrap_or_else(|e| fail(&e.to_string()));
            s
        })
        .collect();
    // SAFETY (every libc call below): plain system calls on descriptors this program owns, with
    // buffers that outlive the call.
    let ep = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
    if ep < 0 {
        fail("epoll_create1 failed");
    }
    for (i, s) in socks.iter().enumerate() {
        let mut ev = libc::epoll_event {
            events: (libc::EPOLLIN | libc::EPOLLET) as u32,
            u64: i as u64,
        };
        if unsafe { libc::epoll_ctl(ep, libc::EPOLL_CTL_ADD, s.as_raw_fd(), &mut ev) } < 0 {
            fail("epoll_ctl failed");
        }
        send(s.as_raw_fd(), &request);
    }
    let mut got = vec![0usize; conns];
    let mut buf = vec![0u8; 4096];
    let mut events = vec![libc::epoll_event { events: 0, u64: 0 }; 256];
    let (began, until) = (Instant::now(), Duration::from_secs_f64(secs));
    let mut done = 0u64;
    while began.elapsed() < until {
        let n = unsafe { libc::epoll_wait(ep, events.as_mut_ptr(), events.len() as i32, 100) };
        for ev in &events[..n.max(0) as usize] {
            let i = ev.u64 as usize;
            let fd = socks[i].as_raw_fd();
            loop {
                let r = unsafe { libc::recv(fd, buf.as_mut_ptr().cast(), buf.len(), 0) };
                if r <= 0 {
                    let err = std::io::Error::last_os_error();
                    if r < 0 && err.kind() == std::io::ErrorKind::WouldBlock {
                        break;
                    }
                    fail(&format!("connection {i}: closed or failed ({err})"));
                }
                got[i] += r as usize;
                if got[i] > reply_len {
                    fail(&format!(
                        "connection {i}: a reply longer than the first one"
                    ));
                }
                if got[i] == reply_len {
                    got[i] = 0;
                    done += 1;
                    send(fd, &request);
                    break; // edge-triggered, but a reply read whole leaves nothing behind
                }
            }
        }
    }
    println!(
        "floor: {done} requests in {:.3} s",
        began.elapsed().as_secs_f64()
    );
}

/// The length of the whole first reply (head and a Content-Length body), read blocking.
fn first_reply_len(addr: &str, request: &[u8]) -> Result<usize, String> {
    let mut s = TcpStream::connect(addr).map_err(|e| e.to_string())?;
    s.set_read_timeout(Some(Duration::from_secs(5)))
        .map_err(|e| e.to_string())?;
    s.write_all(request).map_err(|e| e.to_string())?;
    let mut reply = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let n = s.read(&mut buf).map_err(|e| e.to_string())?;
        if n == 0 {
            return Err("the server closed the connection".into());
        }
        reply.extend_from_slice(&buf[..n]);
        let Some(end) = reply.windows(4).position(|w| w == b"\r\n\r\n") else {
            continue;
        };
        let head = String::from_utf8_lossy(&reply[..end]).to_ascii_lowercase();
        if !head.starts_with("http/1.1 200") {
            return Err(format!(
                "not a 200 reply: {}",
                head.lines().next().unwrap_or("")
            ));
        }
        let body: usize = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length:"))
            .and_then(|v| v.trim().parse().ok())
            .ok_or("no Content-Length")?;
        if reply.len() >= end + 4 + body {
            return Ok(end + 4 + body);
        }
    }
}

fn send(fd: i32, request: &[u8]) {
    let r = unsafe {
        libc::send(
            fd,
            request.as_ptr().cast(),
            request.len(),
            libc::MSG_NOSIGNAL,
        )
    };
    if r != request.len() as isize {
        fail("a request did not go out whole");
    }
}

fn fail(why: &str) -> ! {
    eprintln!("floor: {why}");
    std::process::exit(1);
}
