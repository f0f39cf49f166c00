//! The dependency graph a ROCOCO server keeps (§3.2, §3.4), and its wire form.
//!
//! A vertex is a transaction: its status (`STARTED < COMMITTING < DECIDED`), the servers known to
//! run pieces of it, the epoch it was tagged with, its incoming edges (its *parents*, each
//! labelled `i` when both conflicting pieces are immediate and `d` when both are deferrable),
//! once `DECIDED` its strongly connected component in execution order, and on the servers it
//! involves the `finished` flag.
//!
//! Invariants:
//!
//! - **Containers iterate in transaction-id order** (`BTreeMap`, sorted vectors): nothing that
//!   decides an order depends on insertion or hash order.
//! - **Parents are complete from `COMMITTING` on.** A transaction's incoming edges are created
//!   only when its own pieces arrive, so the union of its start replies, which its coordinator
//!   aggregates into the commit request, holds all of them. A vertex sent at `COMMITTING` or
//!   above carries that union; edges from parents the sender already saw `DECIDED` are left out
//!   (a decided vertex is never in the component of an undecided one, and its component travels
//!   with it as `order`).
//! - **Every edge in a message has both ends in it** ([`Graph::export`] sends the closure of
//!   undecided ancestors, pruning decided parents), so a receiver knows the status of every vertex
//!   a message mentions.
//! - **Decisions are final and identical everywhere.** A `DECIDED` vertex carries its component
//!   in execution order; merging a different order for a decided vertex is counted as an internal
//!   error (`scc_mismatch`), which the one-order tests require to stay zero.
//! - A vertex that is absent although an edge names it was collected by GC (§3.4): it is treated
//!   as decided and finished.

mod order;

pub use order::{component_of, execution_order};

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;
use txlab_core::protocol::history::TxnId;

/// A transaction's known progress (§3.2), ordered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Status {
    /// Its start phase reached a server.
    Started,
    /// Its commit phase began: its incoming edges are all known.
    Committing,
    /// Its strongly connected component and that component's execution order are fixed.
    Decided,
}

/// Edge label bit: both conflicting pieces are immediate (the order was fixed at start).
pub const EDGE_I: u8 = 1;
/// Edge label bit: both conflicting pieces are deferrable (the order may still change).
pub const EDGE_D: u8 = 2;

/// A vertex as it travels in start replies, commit requests and status replies.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VertexInfo {
    /// The transaction.
    pub id: TxnId,
    /// Its status as the sender knows it.
    pub status: Status,
    /// The epoch it was tagged with (§3.4).
    pub epoch: u64,
    /// Servers known to run pieces of it, sorted.
    pub servers: Vec<u16>,
    /// Incoming edges `(parent, label bits)`, sorted by parent (module docs for which).
    pub parents: Vec<(TxnId, u8)>,
    /// For a decided vertex, its component in execution order.
    pub order: Option<Vec<TxnId>>,
}

/// A set of vertices, sorted by id: what a message carries (module docs).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Deps {
    /// The vertices, sorted by id, one per id.
    pub vertices: Vec<VertexInfo>,
}

impl Deps {
    /// The vertex `id`, if present.
    pub fn get(&self, id: TxnId) -> Option<&VertexInfo> {
        self.vertices
            .binary_search_by_key(&id, |v| v.id)
            .ok()
            .map(|i| &self.vertices[i])
    }

    /// Merges `other` in (the paper's aggregation: union of vertices and edges, the highest
    /// status of each vertex).
    pub fn merge(&mut self, other: &Deps) {
        for v in &other.vertices {
            match self.vertices.binary_search_by_key(&v.id, |x| x.id) {
                Ok(i) => merge_info(&mut self.vertices[i], v),
                Err(i) => self.vertices.insert(i, v.clone()),
            }
        }
    }

    /// Raises vertex `id` to `status` (no effect below its current status or if absent).
    pub fn raise(&mut self, id: TxnId, status: Status) {
        if let Ok(i) = self.vertices.binary_search_by_key(&id, |v| v.id) {
            let v = &mut self.vertices[i];
            v.status = v.status.max(status);
        }
    }

    /// The number of edges.
    pub fn edges(&self) -> usize {
        self.vertices.iter().map(|v| v.parents.len()).sum()
    }
}

fn merge_sorted<T: Ord + Copy>(into: &mut Vec<T>, from: &[T]) -> bool {
    let mut changed = false;
    for &x in from {
        if let Err(i) = into.binary_search(&x) {
            into.insert(i, x);
            changed = true;
        }
    }
    changed
}

fn merge_parents(into: &mut Vec<(TxnId, u8)>, from: &[(TxnId, u8)]) -> bool {
    let mut changed = false;
    for &(p, label) in from {
        match into.binary_search_by_key(&p, |e| e.0) {
            Ok(i) if into[i].1 & label == label => {}
            Ok(i) => {
                into[i].1 |= label;
                changed = true;
            }
            Err(i) => {
                into.insert(i, (p, label));
                changed = true;
            }
        }
    }
    changed
}

fn merge_info(into: &mut VertexInfo, from: &VertexInfo) {
    into.status = into.status.max(from.status);
    into.epoch = into.epoch.max(from.epoch);
    merge_sorted(&mut into.servers, &from.servers);
    merge_parents(&mut into.parents, &from.parents);
    if into.order.is_none() {
        into.order.clone_from(&from.order);
    }
}

/// A vertex of a server's graph (module docs).
#[derive(Debug, Clone)]
pub struct Vertex {
    /// The status this server knows.
    pub status: Status,
    /// The epoch tag (this server's, for the transactions it involves).
    pub epoch: u64,
    /// Servers known to run pieces of it.
    pub servers: Vec<u16>,
    /// Incoming edges, sorted by parent.
    pub parents: Vec<(TxnId, u8)>,
    /// Once decided: its component in execution order, shared by the component's vertices.
    pub order: Option<Arc<[TxnId]>>,
    /// Whether it involves this server (it has pieces here).
    pub local: bool,
    /// Whether this server has executed its deferred pieces (`finished`, §3.2).
    pub finished: bool,
}

impl Vertex {
    fn new(epoch: u64) -> Self {
        Self {
            status: Status::Started,
            epoch,
            servers: Vec::new(),
            parents: Vec::new(),
            order: None,
            local: false,
            finished: false,
        }
    }

    /// Whether the vertex is decided.
    pub fn decided(&self) -> bool {
        self.status == Status::Decided
    }
}

/// A server's dependency graph (module docs). Changes that can wake a waiting commit (a status
/// rising, a vertex finishing, a vertex appearing) are queued in `touched`.
#[derive(Debug, Default)]
pub struct Graph {
    vertices: BTreeMap<TxnId, Vertex>,
    touched: Vec<TxnId>,
    /// Orders merged for an already decided vertex that differed from its own.
    pub scc_mismatches: u64,
}

impl Graph {
    /// The vertex `id`.
    pub fn get(&self, id: TxnId) -> Option<&Vertex> {
        self.vertices.get(&id)
    }

    /// How many vertices the graph holds.
    pub fn len(&self) -> usize {
        self.vertices.len()
    }

    /// Whether the graph is empty.
    pub fn is_empty(&self) -> bool {
        self.vertices.is_empty()
    }

    /// Every vertex, in id order.
    pub fn iter(&self) -> impl Iterator<Item = (TxnId, &Vertex)> {
        self.vertices.iter().map(|(&id, v)| (id, v))
    }

    /// The vertex `id` of a transaction involving server `me`, created `STARTED` with `epoch`
    /// if new.
    pub fn local(&mut self, id: TxnId, me: u16, epoch: u64) -> &mut Vertex {
        let v = self.vertices.entry(id).or_insert_with(|| {
            self.touched.push(id);
            Vertex::new(epoch)
        });
        v.local = true;
        if let Err(i) = v.servers.binary_search(&me) {
            v.servers.insert(i, me);
        }
        v
    }

    /// Adds the edge `from -> to` with `label` (no self-edges).
    pub fn add_edge(&mut self, from: TxnId, to: TxnId, label: u8) {
        if from == to {
            return;
        }
        if let Some(v) = self.vertices.get_mut(&to) {
            merge_parents(&mut v.parents, &[(from, label)]);
        }
    }

    /// Raises `id` to `status` (below `Decided`; decisions go through [`Graph::decide`]).
    pub fn raise(&mut self, id: TxnId, status: Status) {
        debug_assert!(status < Status::Decided);
        if let Some(v) = self.vertices.get_mut(&id)
            && v.status < status
        {
            v.status = status;
            self.touched.push(id);
        }
    }

    /// Marks `id` finished here.
    pub fn finish(&mut self, id: TxnId) {
        if let Some(v) = self.vertices.get_mut(&id)
            && !v.finished
        {
            v.finished = true;
            self.touched.push(id);
        }
    }

    /// Decides every member of `order` with that execution order. A member already decided
    /// with another order is counted in `scc_mismatches` and keeps its own.
    pub fn decide(&mut self, order: &[TxnId], epoch: u64) {
        let shared: Arc<[TxnId]> = order.into();
        for &m in order {
            let v = self.vertices.entry(m).or_insert_with(|| Vertex::new(epoch));
            match &v.order {
                Some(o) if **o != *order => self.scc_mismatches += 1,
                Some(_) => {}
                None => {
                    v.status = Status::Decided;
                    v.order = Some(Arc::clone(&shared));
                    self.touched.push(m);
                }
            }
        }
    }

    /// Merges one vertex of a message (union of servers and parents, highest status, its order
    /// if decided).
    pub fn merge(&mut self, info: &VertexInfo) {
        let v = self.vertices.entry(info.id).or_insert_with(|| {
            self.touched.push(info.id);
            Vertex::new(info.epoch)
        });
        merge_sorted(&mut v.servers, &info.servers);
        merge_parents(&mut v.parents, &info.parents);
        if info.status > v.status && info.status < Status::Decided {
            v.status = info.status;
            self.touched.push(info.id);
        }
        match &info.order {
            Some(order) => self.decide(order, info.epoch),
            None if info.status == Status::Decided => self.scc_mismatches += 1,
            None => {}
        }
    }

    /// Merges every vertex of `deps`, except those absent here whose epoch tag `collected`
    /// says GC may have dropped: such a transaction has finished everywhere (`server::gc`), so
    /// it stays collected instead of coming back as a vertex nobody will ever decide here.
    pub fn merge_all(&mut self, deps: &Deps, collected: impl Fn(u64) -> bool) {
        for v in &deps.vertices {
            if self.vertices.contains_key(&v.id) || !collected(v.epoch) {
                self.merge(v);
            }
        }
    }

    /// Takes the ids changed since the last call.
    pub fn take_touched(&mut self) -> Vec<TxnId> {
        std::mem::take(&mut self.touched)
    }

    /// Whether `id` is decided here, counting collected vertices as decided.
    pub fn decided_or_collected(&self, id: TxnId) -> bool {
        self.vertices.get(&id).is_none_or(Vertex::decided)
    }

    /// `id` and its undecided ancestors: a breadth-first walk over parents that stops at decided
    /// and collected vertices. Sorted by id.
    pub fn undecided_ancestors(&self, id: TxnId) -> Vec<TxnId> {
        let mut seen = vec![id];
        let mut frontier = vec![id];
        while let Some(x) = frontier.pop() {
            let Some(v) = self.vertices.get(&x) else {
                continue;
            };
            for &(p, _) in &v.parents {
                if self.decided_or_collected(p) {
                    continue;
                }
                if let Err(i) = seen.binary_search(&p) {
                    seen.insert(i, p);
                    frontier.push(p);
                }
            }
        }
        seen
    }

    /// The wire form of `ids` (sorted, present): each with its parents that are not decided here
    /// (module docs), and its order if decided.
    pub fn export(&self, ids: &[TxnId]) -> Deps {
        let vertices = ids
            .iter()
            .filter_map(|&id| {
                let v = self.vertices.get(&id)?;
                Some(VertexInfo {
                    id,
                    status: v.status,
                    epoch: v.epoch,
                    servers: v.servers.clone(),
                    parents: v
                        .parents
                        .iter()
                        .copied()
                        .filter(|&(p, _)| !self.decided_or_collected(p))
                        .collect(),
                    order: v.order.as_ref().map(|o| o.to_vec()),
                })
            })
            .collect();
        Deps { vertices }
    }

    /// Drops every vertex `keep` refuses; returns how many were dropped.
    pub fn retain(&mut self, mut keep: impl FnMut(TxnId, &Vertex) -> bool) -> usize {
        let before = self.vertices.len();
        self.vertices.retain(|&id, v| keep(id, v));
        before - self.vertices.len()
    }
}

#[cfg(test)]
mod tests;
