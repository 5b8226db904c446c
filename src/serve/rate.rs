//! `--max-rate R`: a server-wide capacity of R requests/s, so a test server's true peak is known.
//!
//! The server behaves as one FIFO queue in front of a single worker whose service time is
//! exactly 1/R (a D/D/1 or M/D/1 queue): a request arriving at `now` is served at
//! `max(now, previous slot + 1/R)`. Below R requests pass at once; above it they wait in arrival
//! order and latency grows without bound, as on a saturated server. One atomic clock is shared by
//! every thread and connection, so the capacity holds across all of them.

use super::delay::Pause;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// A server-wide request clock: the next free service slot, in ns since `start`.
#[derive(Debug)]
pub(crate) struct Capacity {
    start: Instant,
    /// 1/R in ns (at least 1).
    interval_ns: u64,
    /// The earliest moment the next request may be served, in ns since `start`.
    next: AtomicU64,
}

impl Capacity {
    /// A capacity of `per_sec` requests per second (`per_sec` > 0).
    pub(crate) fn new(per_sec: f64) -> Capacity {
        let interval_ns = (1e9 / per_sec).round().max(1.0) as u64;
        Capacity {
            start: Instant::now(),
            interval_ns,
            next: AtomicU64::new(0),
        }
    }

    /// Reserves the next slot for a request that arrived at `now`: the moment it may be served.
    /// FIFO by arrival at this call; never earlier than `now`.
    pub(crate) fn claim(&self, now: Instant) -> Instant {
        let now_ns = now.saturating_duration_since(self.start).as_nanos() as u64;
        let mut cur = self.next.load(Ordering::Relaxed);
        loop {
            let slot = cur.max(now_ns);
            match self.next.compare_exchange_weak(
                cur,
                slot + self.interval_ns,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return self.start + Duration::from_nanos(slot),
                Err(seen) => cur = seen,
            }
        }
    }
}

/// When a request is answered: after its slot under the capacity (if any), plus the fixed
/// service time (if any).
#[derive(Clone, Debug, Default)]
pub(crate) struct Service {
    /// `--delay`: a fixed service time after the slot.
    pub(crate) delay: Option<Duration>,
    /// `--max-rate`: the shared clock.
    pub(crate) capacity: Option<std::sync::Arc<Capacity>>,
}

impl Service {
    /// The service of a server with this delay and capacity (requests/s).
    pub(crate) fn new(delay: Option<Duration>, max_rate: Option<f64>) -> Service {
        Service {
            delay,
            capacity: max_rate.map(|r| std::sync::Arc::new(Capacity::new(r))),
        }
    }

    /// True when requests are answered as soon as they arrive.
    pub(crate) fn is_instant(&self) -> bool {
        self.delay.is_none() && self.capacity.is_none()
    }

    /// Waits until `at` (from [`Service::due`]). A `--delay` is a service time and is waited to
    /// the µs with the connection's [`Pause`]; a slot under `--max-rate` alone is waited with
    /// tokio's timer (up to a 1 ms tick late), which spins no CPU: the capacity holds anyway,
    /// since slots are given out at arrival, and a spinning server on a shared machine slowed
    /// the load generator beside it (p99 7 ms instead of 0.4 ms at half the capacity).
    pub(crate) async fn wait_until(&self, pause: &mut Pause, at: Instant) {
        if self.delay.is_some() {
            pause.until(at).await;
        } else if at > Instant::now() {
            tokio::time::sleep_until(at.into()).await;
        }
    }

    /// The moment a request that arrived at `now` is answered.
    pub(crate) fn due(&self, now: Instant) -> Instant {
        let slot = self.capacity.as_ref().map_or(now, |c| c.claim(now));
        slot + self.delay.unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_below_the_capacity_pass_at_once() {
        let c = Capacity::new(1000.0);
        let t0 = c.start;
        for i in 0..5u64 {
            let now = t0 + Duration::from_millis(2 * i);
            assert_eq!(c.claim(now), now);
        }
    }

    #[test]
    fn a_burst_queues_one_interval_apart_in_arrival_order() {
        let c = Capacity::new(1000.0);
        let now = c.start + Duration::from_millis(10);
        let slots: Vec<_> = (0..4).map(|_| c.claim(now) - now).collect();
        let ms = Duration::from_millis;
        assert_eq!(slots, [ms(0), ms(1), ms(2), ms(3)]);
        // A later arrival joins the end of the queue, then the queue drains.
        assert_eq!(c.claim(now + ms(1)), now + ms(4));
        assert_eq!(c.claim(now + ms(50)), now + ms(50));
    }

    #[test]
    fn service_adds_the_delay_after_the_slot() {
        let s = Service::new(Some(Duration::from_millis(5)), Some(100.0));
        let now = Instant::now() + Duration::from_millis(1);
        assert_eq!(s.due(now), now + Duration::from_millis(5));
        assert_eq!(s.due(now), now + Duration::from_millis(15));
        assert!(Service::new(None, None).is_instant());
    }

    #[test]
    fn the_capacity_holds_across_threads() {
        let c = std::sync::Arc::new(Capacity::new(1e6));
        let now = c.start;
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let c = c.clone();
                std::thread::spawn(move || (0..1000).map(|_| c.claim(now)).collect::<Vec<_>>())
            })
            .collect();
        let mut all: Vec<_> = handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect();
        all.sort();
        all.dedup();
        assert_eq!(all.len(), 4000, "every slot is given once");
        assert_eq!(*all.last().unwrap() - now, Duration::from_micros(3999));
    }
}
