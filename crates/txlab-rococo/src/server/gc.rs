//! Epoch-based garbage collection of the dependency graph (§3.4).
//!
//! Every server keeps an epoch `e` and tags each transaction that starts there with
//! `max(its coordinator's tag, e)`; coordinators tag new transactions with the highest epoch
//! they heard. On its GC timer a server gossips `(e, low)` to every node, `low` being the
//! oldest tag of its transactions that have not finished (`u64::MAX` if none); coordinators
//! answer with their own `(epoch, low)`, their `low` covering every transaction they have not
//! seen committed. A server advances `e` to `e + 1` when its own `low` and the last report of
//! every other node have `low >= e` (everything tagged before `e` has committed everywhere)
//! and `epoch >= e` (no node lags behind). It then drops graph entries tagged `e - 2` or
//! earlier: finished and decided ones of its own transactions, and any vertex it learnt from
//! others.
//!
//! Why two epochs: while a transaction `X` tagged `t` has not committed, its coordinator's
//! `low <= t`, so no server passes epoch `t + 1` and none drops `X` (`t <= e - 2` needs
//! `e >= t + 2`). After `X` committed, a server may still be asked about `X` by one that saw it
//! undecided in a transaction started just before; that transaction holds epochs back to at
//! most one past `X`'s. A status request for a collected transaction is answered `Collected`;
//! if the asker still waits on it, that is counted as an internal error (`gc_status_errors`;
//! tests require zero, and the mutant that drops entries without the delay makes them appear),
//! while a late duplicate of a request already answered is ignored.
//!
//! Collected stays collected: a transaction tagged at or below the floor has finished on every
//! server, so when a message names one that is absent here (the graph of a late commit request
//! or status reply, a delayed or duplicated start or commit request), its vertex is not merged
//! back (`Graph::merge_all`) and the request is ignored. Merged back, it would be a vertex
//! nobody decides here again, and a commit waiting for it to be COMMITTING would find no
//! server to ask; a start request run again would execute its pieces twice.

use super::{Program, Server};
use crate::config::{Mutant, Recording};
use crate::msg::Msg;
use crate::workload::PiecedWorkload;
use std::collections::{BTreeMap, BTreeSet};
use txlab_core::protocol::history::TxnId;
use txlab_net::{Ctx, NodeId};

/// A server's epoch state (module docs).
#[derive(Debug)]
pub(crate) struct Epochs {
    /// The current epoch.
    pub(crate) current: u64,
    /// The last `(epoch, low)` every other node reported.
    reports: BTreeMap<NodeId, (u64, u64)>,
    /// Entries tagged at or below this may have been dropped.
    floor: u64,
}

impl Default for Epochs {
    fn default() -> Self {
        Self {
            current: 1,
            reports: BTreeMap::new(),
            floor: 0,
        }
    }
}

impl Epochs {
    /// Whether a vertex tagged `epoch` may have been collected.
    pub(crate) fn collected(&self, epoch: u64) -> bool {
        epoch <= self.floor
    }
}

impl<W: PiecedWorkload, R: Recording> Server<W, R> {
    /// A node's `(epoch, low)` report.
    pub(super) fn gossip(&mut self, from: NodeId, epoch: u64, low: u64) {
        self.epochs.reports.insert(from, (epoch, low));
    }

    /// The GC timer: gossip, advance, collect (module docs).
    pub(super) fn gc_tick(&mut self, ctx: &mut Ctx<'_, Msg<Program<W>>>) {
        let low = self
            .txns
            .iter()
            .filter(|(_, t)| !t.finished)
            .filter_map(|(&id, _)| self.graph.get(id).map(|v| v.epoch))
            .min()
            .unwrap_or(u64::MAX);
        let e = self.epochs.current;
        let me = ctx.me();
        let others: Vec<NodeId> = ctx.nodes().iter().copied().filter(|&n| n != me).collect();
        for &n in &others {
            self.send(ctx, n, Msg::Gossip { epoch: e, low });
        }
        let all_caught_up = others.iter().all(|n| {
            self.epochs
                .reports
                .get(n)
                .is_some_and(|&(epoch, l)| epoch >= e && l >= e)
        });
        if low >= e && all_caught_up {
            self.epochs.current += 1;
            self.counters.epochs += 1;
        }
        let delay = if self.shared.params.mutant(Mutant::GcWithoutDelay) {
            0
        } else {
            2
        };
        self.epochs.floor = self.epochs.current.saturating_sub(delay);
        self.collect(ctx);
    }

    /// Drops what is tagged at or below the floor (module docs) and wakes what waited on it.
    fn collect(&mut self, ctx: &mut Ctx<'_, Msg<Program<W>>>) {
        let floor = self.epochs.floor;
        let mut dropped = Vec::new();
        self.counters.gc_vertices += self.graph.retain(|id, v| {
            let old = v.epoch <= floor && (!v.local || (v.finished && v.decided()));
            if old {
                dropped.push(id);
            }
            !old
        }) as u64;
        let mut ready = BTreeSet::new();
        for id in &dropped {
            self.txns.remove(id);
            self.rococo_forget(*id, &mut ready);
        }
        if !ready.is_empty() {
            self.wake(ctx, ready);
        }
    }

    fn rococo_forget(&mut self, id: TxnId, ready: &mut BTreeSet<TxnId>) {
        ready.extend(self.rococo.forget(id));
    }
}
