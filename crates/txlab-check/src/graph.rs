//! The direct serialization graph (DSG) in compressed sparse row form.
//!
//! Nodes are the committed transactions, numbered `0..n`. Edges carry a [`DependencyKind`] and,
//! for data dependencies, the key they are on. Construction collects raw edges, sorts them by
//! `(from, to, kind)` and keeps one edge per triple (parallel edges of the same kind on different
//! keys add nothing to reachability; the key of the first is kept for printing). There are no
//! self-loops: the builder drops them, since a transaction's dependency on itself is not a
//! serialization constraint.
//!
//! Graph algorithms take an *edge mask* (`kind_bit`) to work on a subgraph, e.g. only `ww` edges
//! for G0, without building a second graph.

use crate::Key;
use crate::anomaly::DependencyKind;
use txlab_core::TableId;

/// The bit of a kind in an edge mask.
pub(crate) const fn kind_bit(kind: DependencyKind) -> u8 {
    match kind {
        DependencyKind::Ww => 1,
        DependencyKind::Wr => 2,
        DependencyKind::Rw => 4,
        DependencyKind::RealTime => 8,
    }
}

/// `ww` only.
pub(crate) const MASK_WW: u8 = kind_bit(DependencyKind::Ww);
/// `ww` and `wr`: the dependency edges.
pub(crate) const MASK_DEPENDENCY: u8 = MASK_WW | kind_bit(DependencyKind::Wr);
/// `ww`, `wr` and `rw`: every data edge.
pub(crate) const MASK_DATA: u8 = MASK_DEPENDENCY | kind_bit(DependencyKind::Rw);
/// Every edge including real-time ones.
pub(crate) const MASK_ALL: u8 = MASK_DATA | kind_bit(DependencyKind::RealTime);

/// An edge before the graph is built.
#[derive(Debug, Clone, Copy)]
struct RawEdge {
    from: u32,
    to: u32,
    kind: DependencyKind,
    key: Key,
}

/// Collects edges; [`GraphBuilder::build`] turns them into a [`Dsg`].
#[derive(Debug, Default)]
pub(crate) struct GraphBuilder {
    edges: Vec<RawEdge>,
}

impl GraphBuilder {
    /// A builder with room for `edges` edges, so that collecting that many allocates once.
    pub fn with_capacity(edges: usize) -> Self {
        Self {
            edges: Vec::with_capacity(edges),
        }
    }

    /// Adds `from -> to` (self-loops are dropped). `key` is ignored for real-time edges.
    pub fn add(&mut self, from: u32, to: u32, kind: DependencyKind, key: Key) {
        if from != to {
            self.edges.push(RawEdge {
                from,
                to,
                kind,
                key,
            });
        }
    }

    /// The graph over nodes `0..nodes`.
    pub fn build(mut self, nodes: usize) -> Dsg {
        self.edges.sort_unstable_by_key(|e| (e.from, e.to, e.kind));
        self.edges.dedup_by_key(|e| (e.from, e.to, e.kind));
        let mut offsets = vec![0usize; nodes + 1];
        for e in &self.edges {
            offsets[e.from as usize + 1] += 1;
        }
        for i in 0..nodes {
            offsets[i + 1] += offsets[i];
        }
        let mut counts = [0usize; 4];
        for e in &self.edges {
            counts[kind_index(e.kind)] += 1;
        }
        Dsg {
            offsets,
            sources: self.edges.iter().map(|e| e.from).collect(),
            targets: self.edges.iter().map(|e| e.to).collect(),
            kinds: self.edges.iter().map(|e| e.kind).collect(),
            keys: self.edges.iter().map(|e| e.key).collect(),
            counts,
        }
    }
}

fn kind_index(kind: DependencyKind) -> usize {
    kind_bit(kind).trailing_zeros() as usize
}

/// A placeholder key for real-time edges.
pub(crate) const NO_KEY: Key = Key::new(TableId(0), 0);

/// The direct serialization graph (see the module docs).
#[derive(Debug)]
pub(crate) struct Dsg {
    /// Out-edges of node `v` are `offsets[v]..offsets[v + 1]`.
    offsets: Vec<usize>,
    sources: Vec<u32>,
    targets: Vec<u32>,
    kinds: Vec<DependencyKind>,
    keys: Vec<Key>,
    counts: [usize; 4],
}

impl Dsg {
    /// Number of nodes.
    pub fn nodes(&self) -> usize {
        self.offsets.len() - 1
    }

    /// The edge indices leaving `v`.
    pub fn out_edges(&self, v: u32) -> std::ops::Range<usize> {
        self.offsets[v as usize]..self.offsets[v as usize + 1]
    }

    /// The source of edge `e`.
    pub fn source(&self, e: usize) -> u32 {
        self.sources[e]
    }

    /// The target of edge `e`.
    pub fn target(&self, e: usize) -> u32 {
        self.targets[e]
    }

    /// The kind of edge `e`.
    pub fn kind(&self, e: usize) -> DependencyKind {
        self.kinds[e]
    }

    /// Whether edge `e` is in `mask`.
    pub fn in_mask(&self, e: usize, mask: u8) -> bool {
        kind_bit(self.kinds[e]) & mask != 0
    }

    /// The key of edge `e` (`None` for real-time edges).
    pub fn key(&self, e: usize) -> Option<Key> {
        (self.kinds[e] != DependencyKind::RealTime).then_some(self.keys[e])
    }

    /// Number of distinct edges of a kind.
    pub fn count(&self, kind: DependencyKind) -> usize {
        self.counts[kind_index(kind)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parallel_edges_and_self_loops_are_dropped_and_rows_are_right() {
        let mut b = GraphBuilder::default();
        b.add(0, 1, DependencyKind::Ww, Key::from(1));
        b.add(0, 1, DependencyKind::Ww, Key::from(2));
        b.add(0, 1, DependencyKind::Rw, Key::from(2));
        b.add(2, 2, DependencyKind::Wr, Key::from(3));
        b.add(2, 0, DependencyKind::RealTime, NO_KEY);
        let g = b.build(3);
        assert_eq!(g.nodes(), 3);
        assert_eq!(g.out_edges(0).len(), 2);
        assert_eq!(g.out_edges(1).len(), 0);
        let e = g.out_edges(2).start;
        assert_eq!(
            (g.source(e), g.target(e), g.kind(e), g.key(e)),
            (2, 0, DependencyKind::RealTime, None)
        );
        assert_eq!(g.count(DependencyKind::Ww), 1);
        assert_eq!(g.count(DependencyKind::Wr), 0);
        assert!(g.in_mask(e, MASK_ALL) && !g.in_mask(e, MASK_DATA));
    }
}
