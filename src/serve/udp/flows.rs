//! A server thread's flow table: the [`FlowCounters`] of each (peer address, flow id) it
//! serves, bounded in size, with idle flows evicted when it is full.

use super::stats::Tally;
use super::FLOW_IDLE;
use crate::wire::datagram::FlowReport;
use crate::wire::flow::FlowCounters;
use std::collections::HashMap;
use std::net::SocketAddr;

/// How often a full flow table is searched for idle flows, at most.
const SWEEP_EVERY_NS: u64 = 1_000_000_000;

/// A flow's counters and when it last received.
struct Flow {
    counters: FlowCounters,
    last_ns: u64,
}

/// This thread's flows, at most `cap` of them.
pub(super) struct FlowTable {
    map: HashMap<(SocketAddr, u64), Flow>,
    cap: usize,
    /// A full table is searched for idle flows no earlier than this.
    next_sweep_ns: u64,
}

impl FlowTable {
    pub(super) fn new(cap: usize) -> FlowTable {
        FlowTable {
            map: HashMap::new(),
            cap,
            next_sweep_ns: 0,
        }
    }

    /// The counters of a flow, created if there is room; `None` when the table is full.
    pub(super) fn get(
        &mut self,
        peer: SocketAddr,
        flow: u64,
        now_ns: u64,
        tally: &Tally,
    ) -> Option<&mut FlowCounters> {
        let key = (peer, flow);
        if self.map.len() >= self.cap && !self.map.contains_key(&key) {
            self.sweep(now_ns);
            if self.map.len() >= self.cap {
                return None;
            }
        }
        let mut created = false;
        let entry = self.map.entry(key).or_insert_with(|| {
            created = true;
            Flow {
                counters: FlowCounters::new(),
                last_ns: now_ns,
            }
        });
        if created {
            tally.flow();
        }
        entry.last_ns = now_ns;
        Some(&mut entry.counters)
    }

    /// Evicts flows idle for [`FLOW_IDLE`], at most once per [`SWEEP_EVERY_NS`].
    fn sweep(&mut self, now_ns: u64) {
        if now_ns < self.next_sweep_ns {
            return;
        }
        self.next_sweep_ns = now_ns + SWEEP_EVERY_NS;
        let idle = FLOW_IDLE.as_nanos() as u64;
        self.map
            .retain(|_, f| now_ns.saturating_sub(f.last_ns) < idle);
    }

    /// A flow's report; zeros for a flow this thread does not know.
    pub(super) fn report(&self, peer: SocketAddr, flow: u64) -> FlowReport {
        self.map
            .get(&(peer, flow))
            .map(|f| f.counters.report())
            .unwrap_or_default()
    }
}
