//! [`Residual`]: the part of a [`DependencyGraph`] still under consideration while an algorithm
//! runs, with live in- and out-degrees.
//!
//! The FVS algorithms never copy the graph: they remove nodes from a residual view (into the
//! feedback vertex set, or because trimming proved them acyclic) and read the live degrees the
//! policies rank by. Invariants: `in_degree(v)` and `out_degree(v)` count only edges between
//! *alive* nodes; a node is removed at most once; after [`Residual::trim`] every alive node has
//! an alive predecessor and an alive successor ([`crate::trim`]).
//!
//! # Two representations
//!
//! The answers do not depend on the representation; [`Residual::reset`] picks one by size.
//!
//! - **Bit sets**, for graphs of at most [`BITSET_MAX_NODES`] = 64 nodes (the paper's batches
//!   hold 40 transactions). Node `v` is bit `v` of one `u64`: `alive` holds the alive nodes,
//!   `succ[v]` and `pred[v]` the neighbours of `v` in the full graph, copied on reset from the
//!   adjacency matrix the [`DependencyGraph`] keeps for such graphs (`O(|V|)`). A live degree is one `AND` and one `popcount`; a removal clears
//!   one bit and marks the node's neighbours for re-checking (`pending`); trimming checks the
//!   marked nodes, removes every one with no alive predecessor or successor at once, marks
//!   *their* neighbours, and repeats until nothing changes. Removing a whole round at once gives
//!   the same result as removing one node at a time: the trimmed graph is the largest subgraph
//!   in which every node has an in- and an out-neighbour, whatever the order.
//! - **Degree lists**, for larger graphs: a record per node with its live degrees and liveness,
//!   updated by walking the removed node's successors and predecessors, and a queue of the nodes
//!   whose degree reached zero. All removals of one run cost `O(|V| + |E|)` in total (each edge
//!   is looked at from each end at most once, and not at all from a side whose live degree is
//!   already zero).
//!
//! Why two: at 40 transactions and θ = 0.9 the greedy algorithms spend most of their time
//! resetting and trimming (docs/results/batch.md, "Running time"), work that both the SCC-based
//! and the sort-based greedy share. The bit sets do it without per-edge branches. Beyond 64
//! nodes a degree query would cost a `popcount` per word of the row, so the lists are kept.

use crate::graph::DependencyGraph;

/// The largest graph kept as bit sets (module docs): one `u64` per row.
pub const BITSET_MAX_NODES: usize = 64;

/// One node of the degree-list representation: its live degrees and whether it is alive. Kept
/// together (one bounds check and one cache line per neighbour visited by a removal, the hottest
/// loop of every FVS algorithm on large graphs).
#[derive(Debug, Clone, Copy, Default)]
struct NodeState {
    in_degree: u32,
    out_degree: u32,
    alive: bool,
}

/// The alive subgraph of a [`DependencyGraph`] (module docs). Reused across runs by
/// [`Residual::reset`].
#[derive(Debug, Clone)]
pub struct Residual {
    /// Whether the current graph is kept as bit sets.
    bits: bool,
    /// Largest graph kept as bit sets; [`BITSET_MAX_NODES`] except in tests that force the
    /// degree lists on small graphs.
    bitset_max_nodes: usize,
    node_count: usize,
    alive_count: usize,
    // Bit sets.
    alive: u64,
    /// Alive or dead nodes that may have lost their last alive predecessor or successor.
    pending: u64,
    succ: Vec<u64>,
    pred: Vec<u64>,
    // Degree lists.
    nodes: Vec<NodeState>,
    /// Nodes that may have lost their last in- or out-edge (may hold dead or repeated nodes).
    trim_queue: Vec<u32>,
}

impl Default for Residual {
    fn default() -> Self {
        Self {
            bits: false,
            bitset_max_nodes: BITSET_MAX_NODES,
            node_count: 0,
            alive_count: 0,
            alive: 0,
            pending: 0,
            succ: Vec::new(),
            pred: Vec::new(),
            nodes: Vec::new(),
            trim_queue: Vec::new(),
        }
    }
}

/// Iterates the set bits of `mask`, lowest first.
#[inline]
fn bits_of(mut mask: u64) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        (mask != 0).then(|| {
            let v = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            v
        })
    })
}

impl Residual {
    /// An empty residual; call [`Residual::reset`] before use.
    pub fn new() -> Self {
        Self::default()
    }

    /// Keeps graphs of up to `max` nodes as bit sets (at most [`BITSET_MAX_NODES`]); `0` forces
    /// the degree lists. For tests comparing the two representations.
    #[cfg(test)]
    pub(crate) fn set_bitset_max_nodes(&mut self, max: usize) {
        self.bitset_max_nodes = max.min(BITSET_MAX_NODES);
    }

    /// Makes every node of `graph` alive with its full degrees and marks every node for the next
    /// [`Residual::trim`].
    pub fn reset(&mut self, graph: &DependencyGraph) {
        let n = graph.node_count();
        self.node_count = n;
        self.alive_count = n;
        self.bits = n <= self.bitset_max_nodes;
        if self.bits {
            self.reset_bits(graph);
        } else {
            self.reset_lists(graph);
        }
    }

    fn reset_bits(&mut self, graph: &DependencyGraph) {
        let n = self.node_count;
        let (succ, pred) = graph
            .bit_rows()
            .expect("a graph of at most 64 nodes keeps its bit rows");
        self.alive = if n == 64 { u64::MAX } else { (1u64 << n) - 1 };
        self.pending = self.alive;
        self.succ.clear();
        self.succ.extend_from_slice(succ);
        self.pred.clear();
        self.pred.extend_from_slice(pred);
    }

    fn reset_lists(&mut self, graph: &DependencyGraph) {
        self.nodes.clear();
        self.trim_queue.clear();
        self.nodes
            .extend(graph.degrees().map(|(in_degree, out_degree)| NodeState {
                in_degree,
                out_degree,
                alive: true,
            }));
        self.trim_queue.extend(
            self.nodes
                .iter()
                .enumerate()
                .filter(|(_, s)| s.in_degree == 0 || s.out_degree == 0)
                .map(|(v, _)| v as u32),
        );
    }

    /// Number of nodes of the graph (alive or not).
    pub fn node_count(&self) -> usize {
        self.node_count
    }

    /// Number of alive nodes.
    pub fn alive_count(&self) -> usize {
        self.alive_count
    }

    /// Whether `node` is still alive.
    #[inline]
    pub fn is_alive(&self, node: usize) -> bool {
        if self.bits {
            assert!(node < self.node_count, "node {node} out of range");
            self.alive & (1u64 << node) != 0
        } else {
            self.nodes[node].alive
        }
    }

    /// Alive predecessors of an alive `node`.
    #[inline]
    pub fn in_degree(&self, node: usize) -> u32 {
        if self.bits {
            (self.pred[node] & self.alive).count_ones()
        } else {
            self.nodes[node].in_degree
        }
    }

    /// Alive successors of an alive `node`.
    #[inline]
    pub fn out_degree(&self, node: usize) -> u32 {
        if self.bits {
            (self.succ[node] & self.alive).count_ones()
        } else {
            self.nodes[node].out_degree
        }
    }

    /// The alive nodes, ascending.
    pub fn alive_nodes(&self) -> impl Iterator<Item = usize> + '_ {
        let (mask, lists) = if self.bits {
            (self.alive, &[][..])
        } else {
            (0, &self.nodes[..])
        };
        bits_of(mask).chain(
            lists
                .iter()
                .enumerate()
                .filter(|(_, s)| s.alive)
                .map(|(v, _)| v),
        )
    }

    /// Removes `node` (a no-op if it is already dead). Its neighbours may now be on no cycle:
    /// the next [`Residual::trim`] checks them.
    #[inline]
    pub fn remove(&mut self, graph: &DependencyGraph, node: usize) {
        if self.bits {
            // Indexing first: it bounds-checks `node` before it becomes a shift amount.
            let neighbours = self.succ[node] | self.pred[node];
            let bit = 1u64 << node;
            if self.alive & bit == 0 {
                return;
            }
            self.alive &= !bit;
            self.alive_count -= 1;
            self.pending |= neighbours;
            return;
        }
        let NodeState {
            in_degree,
            out_degree,
            alive,
        } = self.nodes[node];
        if !alive {
            return;
        }
        self.nodes[node].alive = false;
        self.alive_count -= 1;
        // A side whose live degree is zero has no alive neighbour left to update: skip its scan.
        // Trimmed nodes, most removals, have one such side.
        if out_degree > 0 {
            self.remove_from_successors(graph, node);
        }
        if in_degree > 0 {
            self.remove_from_predecessors(graph, node);
        }
    }

    /// Removes alive nodes with no alive predecessor or no alive successor until none is left
    /// ([`crate::trim`]). Returns how many nodes were removed.
    pub fn trim(&mut self, graph: &DependencyGraph) -> usize {
        if self.bits {
            return self.trim_bits();
        }
        let mut trimmed = 0;
        while let Some(v) = self.trim_queue.pop() {
            let v = v as usize;
            let s = self.nodes[v];
            if s.alive && (s.in_degree == 0 || s.out_degree == 0) {
                self.remove(graph, v);
                trimmed += 1;
            }
        }
        trimmed
    }

    fn trim_bits(&mut self) -> usize {
        let mut trimmed = 0;
        loop {
            let candidates = self.pending & self.alive;
            self.pending = 0;
            let alive = self.alive;
            let mut dead = 0u64;
            // Branch-free: whether a candidate dies is data the predictor cannot learn.
            for v in bits_of(candidates) {
                let cut = (self.succ[v] & alive == 0) | (self.pred[v] & alive == 0);
                dead |= u64::from(cut) << v;
            }
            if dead == 0 {
                return trimmed;
            }
            self.alive &= !dead;
            let count = dead.count_ones() as usize;
            self.alive_count -= count;
            trimmed += count;
            for v in bits_of(dead) {
                self.pending |= self.succ[v] | self.pred[v];
            }
        }
    }

    #[inline]
    fn remove_from_successors(&mut self, graph: &DependencyGraph, node: usize) {
        for &w in graph.successors(node) {
            let s = &mut self.nodes[w as usize];
            if s.alive {
                s.in_degree -= 1;
                if s.in_degree == 0 {
                    self.trim_queue.push(w);
                }
            }
        }
    }

    #[inline]
    fn remove_from_predecessors(&mut self, graph: &DependencyGraph, node: usize) {
        for &u in graph.predecessors(node) {
            let s = &mut self.nodes[u as usize];
            if s.alive {
                s.out_degree -= 1;
                if s.out_degree == 0 {
                    self.trim_queue.push(u);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::small_graphs;
    use proptest::prelude::*;

    /// Alive set and live degrees, the whole observable state.
    fn state(r: &Residual) -> Vec<(usize, u32, u32)> {
        r.alive_nodes()
            .map(|v| (v, r.in_degree(v), r.out_degree(v)))
            .collect()
    }

    #[test]
    fn a_graph_of_64_nodes_uses_every_bit() {
        // One cycle through all 64 nodes; without node 63 the rest is a path and trims away.
        let edges: Vec<_> = (0..64).map(|v| (v, (v + 1) % 64)).collect();
        let g = DependencyGraph::from_edges(64, &edges).unwrap();
        let mut r = Residual::new();
        r.reset(&g);
        assert!(r.bits);
        assert_eq!(r.trim(&g), 0);
        assert_eq!(r.alive_count(), 64);
        assert!(r.is_alive(63));
        assert_eq!((r.in_degree(63), r.out_degree(63)), (1, 1));
        r.remove(&g, 63);
        assert_eq!(r.trim(&g), 63);
        assert_eq!(r.alive_count(), 0);
        assert_eq!(r.alive_nodes().count(), 0);
    }

    #[test]
    fn a_graph_of_65_nodes_uses_the_degree_lists() {
        let g = DependencyGraph::from_edges(65, &[(0, 64), (64, 0)]).unwrap();
        let mut r = Residual::new();
        r.reset(&g);
        assert!(!r.bits);
        assert_eq!(r.trim(&g), 63);
        assert_eq!(state(&r), vec![(0, 1, 1), (64, 1, 1)]);
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

        /// The bit sets and the degree lists agree after the reset, after every removal and
        /// after every trim, and they trim the same number of nodes.
        #[test]
        fn both_representations_agree(
            g in small_graphs(),
            removals in proptest::collection::vec(0usize..64, 0..16),
        ) {
            let n = g.node_count();
            let mut bits = Residual::new();
            let mut lists = Residual::new();
            lists.set_bitset_max_nodes(0);
            bits.reset(&g);
            lists.reset(&g);
            prop_assert!(bits.bits && !lists.bits);
            prop_assert_eq!(state(&bits), state(&lists));
            prop_assert_eq!(bits.trim(&g), lists.trim(&g));
            prop_assert_eq!(state(&bits), state(&lists));
            for v in removals {
                let v = v % n;
                prop_assert_eq!(bits.is_alive(v), lists.is_alive(v));
                bits.remove(&g, v);
                lists.remove(&g, v);
                prop_assert_eq!(bits.alive_count(), lists.alive_count());
                prop_assert_eq!(bits.trim(&g), lists.trim(&g));
                prop_assert_eq!(state(&bits), state(&lists));
                // Trimmed: every alive node has an alive predecessor and successor.
                prop_assert!(state(&bits).iter().all(|&(_, i, o)| i > 0 && o > 0));
            }
        }
    }
}
