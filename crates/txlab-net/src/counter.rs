//! A replicated counter: the example protocol of this crate (`examples/counter.rs` runs it on
//! every driver; `txlab cluster --local 3 --protocol net-counter` across processes), and the
//! toy whose broken variant proves the `step` driver catches bugs.
//!
//! Each node issues `increments` increments of its own (increment `s` of node `o` adds
//! [`amount`]`(o, s)`), sends each to every peer with its sequence number, and retransmits every
//! unacknowledged one on a timer. A receiver applies each `(origin, seq)` exactly once, in any
//! order (increments commute), persists what it applied in [`Durable`](crate::Durable) before
//! acknowledging, and acknowledges duplicates again. A node has converged when its total is the
//! sum of every node's increments and every peer acknowledged all of its own.
//!
//! [`Variant::AssumesFifo`] is the deliberately broken receiver: it takes a sequence number
//! above the next expected one as proof that the ones between were delivered (true on a FIFO,
//! lossless link, false under the crate's delivery contract), so a reordering loses increments.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::ctx::Ctx;
use crate::node::{Node, NodeId, TimerId};

/// The counter's messages.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum CounterMsg {
    /// Increment `seq` of the sender, adding `amount`.
    Inc {
        /// Sequence number (per origin, from 0).
        seq: u32,
        /// The amount.
        amount: u64,
    },
    /// The sender has applied (and persisted) increment `seq` of the receiver.
    Ack {
        /// The acknowledged sequence number.
        seq: u32,
    },
    /// The sender has converged.
    Done,
}

/// Correct, or broken on purpose.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// Applies every `(origin, seq)` once, in any order.
    Correct,
    /// Assumes per-link FIFO delivery (see the module docs): the mutant the tests must catch.
    AssumesFifo,
}

/// Counter settings (the same on every node).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CounterConfig {
    /// Increments each node issues.
    pub increments: u32,
    /// Retransmission period.
    pub retransmit: Duration,
    /// Correct or the FIFO-assuming mutant.
    pub variant: Variant,
}

impl Default for CounterConfig {
    fn default() -> Self {
        Self {
            increments: 3,
            retransmit: Duration::from_millis(20),
            variant: Variant::Correct,
        }
    }
}

/// The amount of increment `seq` of node `origin`.
pub fn amount(origin: NodeId, seq: u32) -> u64 {
    1 + u64::from(origin.0) * 10 + u64::from(seq % 7)
}

/// The converged total of a cluster of `nodes` with `config`.
pub fn expected_total(nodes: &[NodeId], config: &CounterConfig) -> u64 {
    nodes
        .iter()
        .flat_map(|&o| (0..config.increments).map(move |s| amount(o, s)))
        .sum()
}

/// What a receiver has applied of one origin: every seq below `next`, plus `ahead`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Applied {
    /// Every sequence number below this is applied.
    pub next: u32,
    /// Applied sequence numbers at or above `next`.
    pub ahead: BTreeSet<u32>,
}

impl Applied {
    fn contains(&self, seq: u32) -> bool {
        seq < self.next || self.ahead.contains(&seq)
    }

    fn insert(&mut self, seq: u32) {
        self.ahead.insert(seq);
        while self.ahead.remove(&self.next) {
            self.next += 1;
        }
    }
}

const RETRANSMIT: TimerId = TimerId(0);

/// One replica.
#[derive(Debug)]
pub struct Counter {
    config: CounterConfig,
    /// The sum of every increment applied (own ones included).
    pub total: u64,
    /// Per origin, what was applied.
    pub applied: BTreeMap<NodeId, Applied>,
    /// Per peer, own increments it has not acknowledged.
    pub unacked: BTreeMap<NodeId, BTreeSet<u32>>,
    /// Peers that announced convergence (or went down after it).
    pub done_peers: BTreeSet<NodeId>,
    expected: u64,
    peers: Vec<NodeId>,
}

impl Counter {
    /// A replica; state comes from `on_start` (fresh, or recovered from its durable store).
    pub fn new(config: CounterConfig) -> Self {
        Self {
            config,
            total: 0,
            applied: BTreeMap::new(),
            unacked: BTreeMap::new(),
            done_peers: BTreeSet::new(),
            expected: 0,
            peers: Vec::new(),
        }
    }

    /// The total is complete and every peer has every own increment.
    pub fn converged(&self) -> bool {
        self.expected > 0
            && self.total == self.expected
            && self.unacked.values().all(|u| u.is_empty())
    }

    /// Converged, and every peer converged too (a process may exit).
    pub fn finished(&self) -> bool {
        self.converged() && self.peers.iter().all(|p| self.done_peers.contains(p))
    }

    /// The replica's invariant: its total is the sum of the increments it records as applied,
    /// and never more than the cluster issued.
    pub fn check(&self, me: NodeId) -> Result<(), String> {
        let recorded: u64 = self
            .applied
            .iter()
            .map(|(&o, a)| {
                let below: u64 = (0..a.next).map(|s| amount(o, s)).sum();
                below + a.ahead.iter().map(|&s| amount(o, s)).sum::<u64>()
            })
            .sum();
        if recorded != self.total {
            return Err(format!(
                "{me}: total {} but the increments recorded as applied sum to {recorded} ({:?})",
                self.total, self.applied
            ));
        }
        if self.expected > 0 && self.total > self.expected {
            return Err(format!(
                "{me}: total {} above {}",
                self.total, self.expected
            ));
        }
        Ok(())
    }

    fn persist(&self, ctx: &Ctx<'_, CounterMsg>, origin: NodeId) {
        let d = ctx.durable();
        let key = format!("applied/{}", origin.0);
        // The store is in memory; a write cannot fail for these small values.
        d.put_value(key.as_bytes(), &self.applied[&origin])
            .expect("encode applied set");
        d.put_value(b"total", &self.total).expect("encode total");
    }

    fn broadcast_unacked(&self, ctx: &mut Ctx<'_, CounterMsg>) {
        let me = ctx.me();
        for (&p, seqs) in &self.unacked {
            for &seq in seqs {
                let _ = ctx.send(
                    p,
                    CounterMsg::Inc {
                        seq,
                        amount: amount(me, seq),
                    },
                );
            }
        }
    }

    fn announce_if_converged(&self, ctx: &mut Ctx<'_, CounterMsg>) {
        if self.converged() {
            for &p in &self.peers {
                let _ = ctx.send(p, CounterMsg::Done);
            }
        }
    }

    fn receive(&mut self, from: NodeId, seq: u32, amount: u64, ctx: &mut Ctx<'_, CounterMsg>) {
        let a = self.applied.entry(from).or_default();
        let fresh = match self.config.variant {
            Variant::Correct => !a.contains(seq),
            Variant::AssumesFifo => seq >= a.next,
        };
        if fresh {
            match self.config.variant {
                Variant::Correct => a.insert(seq),
                Variant::AssumesFifo => a.next = seq + 1,
            }
            self.total += amount;
            self.persist(ctx, from);
        }
        let _ = ctx.send(from, CounterMsg::Ack { seq });
        if fresh {
            self.announce_if_converged(ctx);
        }
    }
}

impl Node for Counter {
    type Msg = CounterMsg;

    fn on_start(&mut self, ctx: &mut Ctx<'_, CounterMsg>) {
        let me = ctx.me();
        self.peers = ctx.nodes().iter().copied().filter(|&p| p != me).collect();
        self.expected = expected_total(ctx.nodes(), &self.config);
        let d = ctx.durable().clone();
        // Own increments: the log says how many were issued; issue the rest now.
        let issued: u32 = d.get_value(b"issued").ok().flatten().unwrap_or(0);
        for seq in issued..self.config.increments {
            let key = format!("inc/{seq}");
            d.put_value(key.as_bytes(), &amount(me, seq))
                .expect("log increment");
        }
        d.put_value(b"issued", &self.config.increments)
            .expect("log issued count");
        if issued == 0 {
            self.total = 0;
        } else {
            self.total = d.get_value(b"total").ok().flatten().unwrap_or(0);
        }
        for &o in ctx.nodes() {
            let key = format!("applied/{}", o.0);
            let a: Applied = d
                .get_value(key.as_bytes())
                .ok()
                .flatten()
                .unwrap_or_default();
            self.applied.insert(o, a);
        }
        // Apply own increments not yet applied (all of them on a fresh start).
        for seq in 0..self.config.increments {
            let a = self.applied.get_mut(&me).expect("inserted above");
            if !a.contains(seq) {
                a.insert(seq);
                self.total += amount(me, seq);
            }
        }
        self.persist(ctx, me);
        // Acknowledgements are not persisted: after a restart every peer gets everything again.
        let all: BTreeSet<u32> = (0..self.config.increments).collect();
        self.unacked = self.peers.iter().map(|&p| (p, all.clone())).collect();
        self.broadcast_unacked(ctx);
        ctx.set_timer(self.config.retransmit, RETRANSMIT);
    }

    fn on_message(&mut self, from: NodeId, msg: CounterMsg, ctx: &mut Ctx<'_, CounterMsg>) {
        match msg {
            CounterMsg::Inc { seq, amount } => self.receive(from, seq, amount, ctx),
            CounterMsg::Ack { seq } => {
                if let Some(u) = self.unacked.get_mut(&from)
                    && u.remove(&seq)
                {
                    self.announce_if_converged(ctx);
                }
            }
            CounterMsg::Done => {
                self.done_peers.insert(from);
            }
        }
    }

    fn on_timer(&mut self, _: TimerId, ctx: &mut Ctx<'_, CounterMsg>) {
        self.broadcast_unacked(ctx);
        self.announce_if_converged(ctx);
        ctx.set_timer(self.config.retransmit, RETRANSMIT);
    }

    fn on_peer(&mut self, peer: NodeId, up: bool, _: &mut Ctx<'_, CounterMsg>) {
        // A peer that leaves after this node converged needs nothing more from it.
        if !up && self.converged() {
            self.done_peers.insert(peer);
        }
    }
}

/// The counter as a [`ClusterProtocol`](crate::cluster::cli::ClusterProtocol) named
/// `net-counter`: `--increments K` (default 100) per node; a node's result is
/// `{"node", "total", "expected", "converged", "counters"}`.
#[cfg(feature = "tcp")]
#[derive(Clone, Copy, Debug, Default)]
pub struct NetCounter;

#[cfg(feature = "tcp")]
impl crate::cluster::cli::ClusterProtocol for NetCounter {
    fn name(&self) -> &'static str {
        "net-counter"
    }

    fn workload(&self, run: &crate::cluster::cli::Flags) -> Result<toml::Table, String> {
        let mut w = toml::Table::new();
        w.insert(
            "increments".into(),
            run.number::<u32>("increments", 100)?.into(),
        );
        Ok(w)
    }

    fn run_node(
        &self,
        cluster: &crate::cluster::ClusterFile,
        id: NodeId,
        git_revision: &str,
        timeout: Duration,
    ) -> Result<serde_json::Value, String> {
        let increments = cluster
            .workload
            .get("increments")
            .and_then(toml::Value::as_integer)
            .unwrap_or(100);
        let config = CounterConfig {
            increments: u32::try_from(increments)
                .map_err(|_| format!("increments {increments}: accepted: 0..=4294967295"))?,
            ..CounterConfig::default()
        };
        let ids: Vec<NodeId> = cluster.nodes.iter().map(|n| n.id).collect();
        let (counter, metrics) = crate::cluster::run_node(
            cluster,
            id,
            git_revision,
            Counter::new(config),
            Counter::finished,
            timeout,
        )
        .map_err(|e| e.to_string())?;
        let want = expected_total(&ids, &config);
        let counters: serde_json::Map<String, serde_json::Value> = metrics
            .counters()
            .into_iter()
            .filter(|(k, _)| !k.starts_with("net.link.") && !k.starts_with("net.node."))
            .map(|(k, v)| (k, v.into()))
            .collect();
        Ok(serde_json::json!({
            "node": id.0, "total": counter.total, "expected": want,
            "converged": counter.total == want, "counters": counters,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn applied_sets_track_out_of_order_sequence_numbers() {
        let mut a = Applied::default();
        a.insert(2);
        a.insert(0);
        assert!(a.contains(0) && !a.contains(1) && a.contains(2));
        a.insert(1);
        assert_eq!((a.next, a.ahead.len()), (3, 0));
    }
}
