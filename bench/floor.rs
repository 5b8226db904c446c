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
//! With `--work` it also does the least a load generator must do per request, in the same loop:
//! each reply's head parsed (httparse) for its status and Content-Length, which alone say where
//! the reply ends; the clock read when the request goes out and when its reply is in; the
//! latency recorded in an HdrHistogram (1 ns to 60 s, 3 digits, as wirebench's); statuses
//! counted by class. What wirebench costs above that is the price of its structure (the async
//! runtime, the layers of its per-connection state machines, its time series), not of the
//! figures it reports.
//!
//! With `--tokio` it does that work on tokio instead of its own epoll loop, as plainly as tokio
//! allows: a current-thread runtime, a task per connection, each a loop of `write_all` and
//! `read` on a `tokio::net::TcpStream`, the latency into one shared histogram. What wirebench
//! costs above that is its own layering, not the async runtime under it.
//!
//! `--touch N` and `--spin N` (with `--tokio`) add work of a known kind to each request, to price
//! each kind in CPU per request beside the plain `--tokio` (`per_cpu.sh --http1` with
//! HTTP1_TOOLS="floor-tokio floor-pad" and FLOOR_PAD set to these options): `--touch N` writes
//! one word in each of N cache lines of the connection's own memory (what a client whose
//! per-connection state is spread over N more lines pays), `--spin N` runs N turns of an empty
//! loop the compiler cannot remove (about 3 instructions each; callgrind gives the count), and
//! `--tick MS` keeps a timer of MS milliseconds going beside the connections (a runtime with a
//! timer waits in epoll with a timeout, which the kernel arms and cancels at each wait), and
//! `--tickfd MS` the same timer on a timerfd in the epoll set instead (no timeout).
//!
//! Usage: floor HOST:PORT PATH CONNECTIONS SECONDS [--work | --tokio [--touch N] [--spin N] [--tick MS] [--tickfd MS]]
//! Prints: `floor: N requests in S s` (N complete replies; exit 1 on any short or odd reply);
//! with `--work` or `--tokio`, before it, `floor: p50 L ns, 2xx N` from what it recorded.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: floor HOST:PORT PATH CONNECTIONS SECONDS [--work | --tokio [--touch N] [--spin N] [--tick MS] [--tickfd MS]]";
    let (args, options) = args.split_at(args.len().min(4));
    let (mut mode, mut pad) = (Mode::Bare, Pad::default());
    let mut options = options.iter();
    while let Some(option) = options.next() {
        let mut count = || match options.next().map(|n| n.parse::<usize>()) {
            Some(Ok(n)) => n,
            _ => {
                eprintln!("floor: {option} takes a whole number; {usage}");
                std::process::exit(2);
            }
        };
        match option.as_str() {
            "--work" => mode = Mode::Work,
            "--tokio" => mode = Mode::Tokio,
            "--touch" => pad.touch = count(),
            "--spin" => pad.spin = count(),
            "--tick" => pad.tick = count(),
            "--tickfd" => pad.tickfd = count(),
            _ => {
                eprintln!("floor: unknown option {option}; {usage}");
                std::process::exit(2);
            }
        }
    }
    if mode != Mode::Tokio && pad != Pad::default() {
        eprintln!("floor: --touch, --spin, --tick and --tickfd go with --tokio; {usage}");
        std::process::exit(2);
    }
    let [addr, path, conns, secs] = args else {
        eprintln!("{usage}");
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
    let until = Duration::from_secs_f64(secs);
    if mode == Mode::Tokio {
        for s in &socks {
            send(s.as_raw_fd(), &request);
        }
        let began = Instant::now();
        let done = on_tokio(socks, &request, began, until, pad);
        return report(done, began);
    }
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
    let began = Instant::now();
    let done = match mode {
        Mode::Work => with_work(ep, &socks, &request, began, until),
        _ => bare(ep, &socks, &request, reply_len, began, until),
    };
    report(done, began)
}

/// What the floor does besides its system calls.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Nothing.
    Bare,
    /// A load generator's least work per request, in the epoll loop.
    Work,
    /// The same work on tokio, a task per connection.
    Tokio,
}

fn report(done: u64, began: Instant) {
    println!(
        "floor: {done} requests in {:.3} s",
        began.elapsed().as_secs_f64()
    );
}

/// The bare loop: recv until a reply's known length is in, then send the next request.
fn bare(
    ep: i32,
    socks: &[TcpStream],
    request: &[u8],
    reply_len: usize,
    began: Instant,
    until: Duration,
) -> u64 {
    let mut got = vec![0usize; socks.len()];
    let mut buf = vec![0u8; 4096];
    let mut done = 0u64;
    each_ready(ep, socks, began, until, |i, fd| loop {
        // SAFETY: `buf` is valid for writes of its length.
        let r = unsafe { libc::recv(fd, buf.as_mut_ptr().cast(), buf.len(), 0) };
        let Some(r) = received(r, i) else { break };
        got[i] += r;
        if got[i] > reply_len {
            fail(&format!(
                "connection {i}: a reply longer than the first one"
            ));
        }
        if got[i] == reply_len {
            got[i] = 0;
            done += 1;
            send(fd, request);
            break; // edge-triggered, but a reply read whole leaves nothing behind
        }
    });
    done
}

/// Waits in epoll until `until` has passed since `began`, calling `ready` with the index and
/// descriptor of each connection that became readable.
fn each_ready(
    ep: i32,
    socks: &[TcpStream],
    began: Instant,
    until: Duration,
    mut ready: impl FnMut(usize, i32),
) {
    let mut events = vec![libc::epoll_event { events: 0, u64: 0 }; 256];
    while began.elapsed() < until {
        // SAFETY: `events` is valid for writes of its length.
        let n = unsafe { libc::epoll_wait(ep, events.as_mut_ptr(), events.len() as i32, 100) };
        for ev in &events[..n.max(0) as usize] {
            let i = ev.u64 as usize;
            ready(i, socks[i].as_raw_fd());
        }
    }
}

/// A connection of the `--work` loop: its reply so far and when its request went out.
struct Conn {
    buf: Vec<u8>,
    len: usize,
    sent: Instant,
}

/// The loop with a load generator's least work per request (see the top of the file).
fn with_work(ep: i32, socks: &[TcpStream], request: &[u8], began: Instant, until: Duration) -> u64 {
    let mut conns: Vec<Conn> = socks
        .iter()
        .map(|_| Conn {
            buf: vec![0u8; 4096],
            len: 0,
            sent: began,
        })
        .collect();
    let mut latency = hdrhistogram::Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 3)
        .unwrap_or_else(|e| fail(&e.to_string()));
    let mut classes = [0u64; 6];
    let mut done = 0u64;
    each_ready(ep, socks, began, until, |i, fd| {
        let c = &mut conns[i];
        loop {
            let room = &mut c.buf[c.len..];
            if room.is_empty() {
                fail(&format!("connection {i}: a reply longer than 4 KiB"));
            }
            // SAFETY: `room` is valid for writes of its length.
            let r = unsafe { libc::recv(fd, room.as_mut_ptr().cast(), room.len(), 0) };
            let Some(r) = received(r, i) else { break };
            c.len += r;
            let Some(code) = reply_status(&c.buf[..c.len], i) else {
                continue;
            };
            let now = Instant::now();
            let nanos = now.saturating_duration_since(c.sent).as_nanos() as u64;
            latency.saturating_record(nanos.max(1));
            classes[usize::from(code / 100).min(5)] += 1;
            c.len = 0;
            done += 1;
            c.sent = Instant::now();
            send(fd, request);
            break;
        }
    });
    println!(
        "floor: p50 {} ns, 2xx {}",
        latency.value_at_quantile(0.5),
        classes[2]
    );
    done
}

/// The status of the reply in `buf` once it is whole (its head parsed with httparse, its end
/// found from Content-Length); None while it is not. Fails on anything else.
fn reply_status(buf: &[u8], i: usize) -> Option<u16> {
    let mut headers = [httparse::EMPTY_HEADER; 16];
    let mut reply = httparse::Response::new(&mut headers);
    let head = match reply.parse(buf) {
        Ok(httparse::Status::Complete(head)) => head,
        Ok(httparse::Status::Partial) => return None,
        Err(e) => fail(&format!(
            "connection {i}: a reply that does not parse ({e})"
        )),
    };
    let body: usize = reply
        .headers
        .iter()
        .find(|h| h.name.eq_ignore_ascii_case("content-length"))
        .and_then(|h| std::str::from_utf8(h.value).ok()?.trim().parse().ok())
        .unwrap_or_else(|| fail(&format!("connection {i}: no Content-Length")));
    match buf.len().cmp(&(head + body)) {
        std::cmp::Ordering::Less => None,
        std::cmp::Ordering::Equal => Some(reply.code.unwrap_or(0)),
        std::cmp::Ordering::Greater => fail(&format!("connection {i}: bytes after the reply")),
    }
}

/// `--tokio`: the work of `--work` on a current-thread runtime, a task per connection (whose
/// first request is out already).
/// Work of a known kind added to each request of `--tokio` (see the file's head).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Pad {
    /// Cache lines of the connection's own memory written per request.
    touch: usize,
    /// Turns of an empty loop per request.
    spin: usize,
    /// A timer's period in ms, beside the connections (0: none).
    tick: usize,
    /// The same on a timerfd (0: none).
    tickfd: usize,
}

impl Pad {
    /// Does this pad's work once, on `lines` (the connection's own memory, 8 words a line).
    #[inline(never)]
    fn once(&self, lines: &mut [u64]) {
        for line in lines.chunks_mut(8) {
            line[0] = std::hint::black_box(line[0]).wrapping_add(1);
        }
        for turn in 0..self.spin {
            std::hint::black_box(turn);
        }
    }
}

fn on_tokio(
    socks: Vec<TcpStream>,
    request: &[u8],
    began: Instant,
    until: Duration,
    pad: Pad,
) -> u64 {
    use std::cell::{Cell, RefCell};
    use std::rc::Rc;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| fail(&e.to_string()));
    let latency = hdrhistogram::Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 3)
        .unwrap_or_else(|e| fail(&e.to_string()));
    let latency = Rc::new(RefCell::new(latency));
    let (done, ok) = (Rc::new(Cell::new(0u64)), Rc::new(Cell::new(0u64)));
    let request: Rc<[u8]> = request.into();
    let local = tokio::task::LocalSet::new();
    local.block_on(&rt, async {
        let mut tasks = Vec::new();
        if pad.tick > 0 {
            let period = Duration::from_millis(pad.tick as u64);
            tokio::task::spawn_local(async move {
                loop {
                    tokio::time::sleep(period).await;
                }
            });
        }
        if pad.tickfd > 0 {
            let period = Duration::from_millis(pad.tickfd as u64);
            let timer =
                wirebench::sys::timerfd::Timer::new().unwrap_or_else(|e| fail(&e.to_string()));
            // SAFETY: the AsyncFd owns the Timer, whose descriptor stays the same open file for
            // the AsyncFd's whole life.
            let timer = unsafe {
                tokio::io::unix::AsyncFd::register_with_interest(
                    timer,
                    tokio::io::Interest::READABLE,
                )
            }
            .unwrap_or_else(|e| fail(&e.into_parts().1.to_string()));
            tokio::task::spawn_local(async move {
                loop {
                    if timer.get_ref().arm(Instant::now() + period).is_err() {
                        return;
                    }
                    let Ok(mut ready) = timer.readable().await else {
                        return;
                    };
                    let _ = ready.try_io(|t| t.get_ref().clear());
                }
            });
        }
        for (i, s) in socks.into_iter().enumerate() {
            let (latency, done, ok) = (latency.clone(), done.clone(), ok.clone());
            let request = request.clone();
            tasks.push(tokio::task::spawn_local(async move {
                let mut s =
                    tokio::net::TcpStream::from_std(s).unwrap_or_else(|e| fail(&e.to_string()));
                let mut buf = vec![0u8; 4096];
                let mut lines = vec![0u64; 8 * pad.touch];
                let mut sent = began;
                loop {
                    let mut len = 0;
                    let code = loop {
                        if len == buf.len() {
                            fail(&format!("connection {i}: a reply longer than 4 KiB"));
                        }
                        let n = s.read(&mut buf[len..]).await;
                        match n {
                            Ok(0) | Err(_) => fail(&format!("connection {i}: closed or failed")),
                            Ok(n) => len += n,
                        }
                        if let Some(code) = reply_status(&buf[..len], i) {
                            break code;
                        }
                    };
                    let now = Instant::now();
                    let nanos = now.saturating_duration_since(sent).as_nanos() as u64;
                    latency.borrow_mut().saturating_record(nanos.max(1));
                    ok.set(ok.get() + u64::from(code / 100 == 2));
                    done.set(done.get() + 1);
                    pad.once(&mut lines);
                    if now.saturating_duration_since(began) >= until {
                        return;
                    }
                    sent = Instant::now();
                    if s.write_all(&request).await.is_err() {
                        fail(&format!("connection {i}: a request did not go out"));
                    }
                }
            }));
        }
        for t in tasks {
            let _ = t.await;
        }
    });
    println!(
        "floor: p50 {} ns, 2xx {}",
        latency.borrow().value_at_quantile(0.5),
        ok.get()
    );
    done.get()
}

/// A recv's result: the byte count, None once the socket is empty; any other end fails.
fn received(r: isize, i: usize) -> Option<usize> {
    if r > 0 {
        return Some(r as usize);
    }
    let err = std::io::Error::last_os_error();
    if r < 0 && err.kind() == std::io::ErrorKind::WouldBlock {
        return None;
    }
    fail(&format!("connection {i}: closed or failed ({err})"))
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
