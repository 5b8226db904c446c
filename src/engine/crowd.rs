//! A worker's futures — its connections, its ticker, its watch for a stop — run on its one
//! thread inside a single future that polls only those that were woken.
//!
//! A `LocalSet` with a task per connection did the same through more layers at every wake-up:
//! the task's state word (notified, running, idle: three atomic updates), the local queue, the
//! set's own future and the worker's future that joined the tasks and watched for a stop, all
//! polled again for each reply. That was ~17% of the worker's user time in an HTTP/1.1
//! keep-alive run (`perf record -e cpu-clock:u`, 50 connections against nginx). Here a wake-up
//! puts the future's index on a queue and wakes the runtime; the crowd polls that one future.
//!
//! The futures share the runtime's cooperative budget of one poll of the crowd (tokio gives
//! each poll 128 units; a socket operation that is ready spends one). Once it is spent, the
//! rest of the woken futures wait for the crowd's next poll, after the runtime's driver has had
//! its turn, so a future whose socket is always ready cannot starve the others, the timers or
//! the stop.

use std::collections::VecDeque;
use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll, Wake, Waker};

/// What a future's end does to the crowd.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Role {
    /// The crowd ends once every member has ended (a connection).
    Member,
    /// Ends with the crowd, whether it has ended or not (the worker's ticker).
    Helper,
    /// Its end ends the crowd at once, dropping the rest (a stop, the run's overall limit).
    Ender,
}

/// One future of the crowd.
struct Entry<'a> {
    /// None once it has ended.
    work: Option<Pin<Box<dyn Future<Output = ()> + 'a>>>,
    role: Role,
    flag: Arc<Flag>,
    waker: Waker,
}

/// A future's waker: puts its index on the queue, once until it is polled.
struct Flag {
    index: usize,
    /// On the queue, not yet polled.
    queued: AtomicBool,
    woken: Arc<Woken>,
}

/// The indices woken since the crowd last looked, and the waker of the task polling the crowd.
/// A mutex, not thread-local state: a waker may be sent to and woken from another thread
/// (a gate opened by another worker, a stop).
#[derive(Default)]
struct Woken(Mutex<Queue>);

#[derive(Default)]
struct Queue {
    indices: Vec<usize>,
    crowd: Option<Waker>,
}

impl Wake for Flag {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        if self.queued.swap(true, Ordering::AcqRel) {
            return; // on the queue already
        }
        let mut q = self.woken.0.lock().unwrap_or_else(PoisonError::into_inner);
        q.indices.push(self.index);
        // The crowd was woken by the first index on the queue, and has not looked since.
        if q.indices.len() == 1 {
            if let Some(crowd) = &q.crowd {
                crowd.wake_by_ref();
            }
        }
    }
}

/// Futures polled as they are woken; itself a future that ends as its roles say.
pub(super) struct Crowd<'a> {
    entries: Vec<Entry<'a>>,
    /// Members not yet ended.
    members: usize,
    woken: Arc<Woken>,
    /// Woken indices taken off the queue, not yet polled (the budget ran out first).
    due: VecDeque<usize>,
}

impl<'a> Crowd<'a> {
    pub(super) fn new() -> Crowd<'a> {
        Crowd {
            entries: Vec::new(),
            members: 0,
            woken: Arc::default(),
            due: VecDeque::new(),
        }
    }

    /// Adds a future, to be polled first at the crowd's next poll.
    pub(super) fn add(&mut self, role: Role, work: impl Future<Output = ()> + 'a) {
        let index = self.entries.len();
        let flag = Arc::new(Flag {
            index,
            queued: AtomicBool::new(true),
            woken: self.woken.clone(),
        });
        self.entries.push(Entry {
            work: Some(Box::pin(work)),
            role,
            waker: Waker::from(flag.clone()),
            flag,
        });
        self.members += (role == Role::Member) as usize;
        self.due.push_back(index);
    }

    /// Polls entry `i` if it has not ended; true if its end ends the crowd.
    fn poll_entry(&mut self, i: usize) -> bool {
        let entry = &mut self.entries[i];
        entry.flag.queued.store(false, Ordering::Release);
        let Some(work) = entry.work.as_mut() else {
            return false;
        };
        let mut cx = Context::from_waker(&entry.waker);
        // A panic ends that future alone, as it ended a spawned task (the hook has printed it).
        let ended = catch_unwind(AssertUnwindSafe(|| work.as_mut().poll(&mut cx)))
            .map_or(true, |p| p.is_ready());
        if !ended {
            return false;
        }
        entry.work = None;
        match entry.role {
            Role::Ender => true,
            Role::Helper => false,
            Role::Member => {
                self.members -= 1;
                self.members == 0
            }
        }
    }
}

impl Future for Crowd<'_> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.get_mut();
        if this.members == 0 {
            return Poll::Ready(());
        }
        {
            let mut q = this.woken.0.lock().unwrap_or_else(PoisonError::into_inner);
            if !q.crowd.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                q.crowd = Some(cx.waker().clone());
            }
            this.due.extend(q.indices.drain(..));
        }
        while let Some(&i) = this.due.front() {
            if !tokio::task::coop::has_budget_remaining() {
                // The rest after the driver's turn: the runtime polls a woken crowd again.
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            this.due.pop_front();
            if this.poll_entry(i) {
                return Poll::Ready(());
            }
        }
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use super::{Crowd, Role};
    use crate::engine::block_on;
    use std::cell::Cell;
    use std::rc::Rc;
    use std::time::{Duration, Instant};

    /// Members end the crowd when the last ends; a helper does not hold it, nor does it end it.
    #[test]
    fn the_crowd_ends_with_its_last_member() {
        let ends = Rc::new(Cell::new(0));
        block_on(async {
            let mut crowd = Crowd::new();
            for ms in [30, 10, 20] {
                let ends = ends.clone();
                crowd.add(Role::Member, async move {
                    tokio::time::sleep(Duration::from_millis(ms)).await;
                    ends.set(ends.get() + 1);
                });
            }
            crowd.add(Role::Helper, async {
                tokio::time::sleep(Duration::from_millis(5)).await;
            });
            crowd.add(Role::Helper, std::future::pending());
            crowd.await;
        });
        assert_eq!(ends.get(), 3);
    }

    /// An ender's end drops the members still running.
    #[test]
    fn an_ender_ends_the_crowd() {
        let began = Instant::now();
        let finished = Rc::new(Cell::new(false));
        block_on(async {
            let mut crowd = Crowd::new();
            let f = finished.clone();
            crowd.add(Role::Member, async move {
                tokio::time::sleep(Duration::from_secs(30)).await;
                f.set(true);
            });
            crowd.add(Role::Ender, async {
                tokio::time::sleep(Duration::from_millis(20)).await;
            });
            crowd.await;
        });
        assert!(!finished.get());
        assert!(began.elapsed() < Duration::from_secs(10));
    }

    /// Only the woken are polled: a future never woken is polled once (when added) while
    /// another wakes a hundred times.
    #[test]
    fn only_the_woken_are_polled() {
        let polls = Rc::new(Cell::new(0u32));
        block_on(async {
            let mut crowd = Crowd::new();
            let p = polls.clone();
            crowd.add(
                Role::Helper,
                std::future::poll_fn(move |_| {
                    p.set(p.get() + 1);
                    std::task::Poll::<()>::Pending
                }),
            );
            crowd.add(Role::Member, async {
                for _ in 0..100 {
                    tokio::task::yield_now().await;
                }
            });
            crowd.await;
        });
        assert_eq!(polls.get(), 1);
    }

    /// A future woken from another thread is polled: a gate opened by another worker.
    #[test]
    fn a_wake_from_another_thread_is_heard() {
        let (tx, rx) = tokio::sync::oneshot::channel::<u32>();
        let got = Rc::new(Cell::new(0));
        let sender = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            let _ = tx.send(7);
        });
        block_on(async {
            let mut crowd = Crowd::new();
            let g = got.clone();
            crowd.add(Role::Member, async move {
                g.set(rx.await.unwrap_or(0));
            });
            crowd.await;
        });
        sender.join().unwrap();
        assert_eq!(got.get(), 7);
    }

    /// A member whose work is always ready cannot starve another: the budget makes it give way,
    /// and the other's timer still ends the crowd on time.
    #[test]
    fn an_always_ready_member_gives_way() {
        let began = Instant::now();
        let spins = Rc::new(Cell::new(0u64));
        block_on(async {
            let mut crowd = Crowd::new();
            let s = spins.clone();
            crowd.add(Role::Member, async move {
                loop {
                    // Spends one unit of budget per turn, as a ready socket read does.
                    tokio::task::coop::consume_budget().await;
                    s.set(s.get() + 1);
                }
            });
            crowd.add(Role::Ender, async {
                tokio::time::sleep(Duration::from_millis(50)).await;
            });
            crowd.await;
        });
        let took = began.elapsed();
        assert!(took >= Duration::from_millis(49) && took < Duration::from_secs(10));
        assert!(
            spins.get() > 100,
            "the busy member barely ran: {}",
            spins.get()
        );
    }

    /// A panicking member ends alone; the crowd goes on with the rest.
    #[test]
    fn a_panic_ends_its_future_alone() {
        let done = Rc::new(Cell::new(false));
        block_on(async {
            let mut crowd = Crowd::new();
            crowd.add(Role::Member, async { panic!("a bug in one connection") });
            let d = done.clone();
            crowd.add(Role::Member, async move {
                tokio::time::sleep(Duration::from_millis(10)).await;
                d.set(true);
            });
            crowd.await;
        });
        assert!(done.get());
    }

    /// A crowd without members ends at once.
    #[test]
    fn an_empty_crowd_ends_at_once() {
        block_on(async {
            let mut crowd = Crowd::new();
            crowd.add(Role::Helper, std::future::pending());
            crowd.await;
        });
    }
}
