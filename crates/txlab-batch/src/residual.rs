//! [`Residual`]: the part of a [`DependencyGraph`] still under consideration while an algorithm
//! runs, with live in- and out-degrees.
//!
//! The FVS algorithms never copy the graph: they remove nodes from a residual view (into the
//! feedback vertex set, or because trimming proved them acyclic) and read the live degrees the
//! policies rank by. Invariants: `in_degree(v)` and `out_degree(v)` count only edges between
//! *alive* nodes; a node is removed at most once, so all removals of one run cost
//! `O(|V| + |E|)` in total (each edge is looked at from both ends once). Every node whose
//! degree drops to zero is queued for [`crate::trim::trim`].

use crate::graph::DependencyGraph;

/// The alive subgraph of a [`DependencyGraph`] (module docs). Reused across runs by
/// [`Residual::reset`].
#[derive(Debug, Clone, Default)]
pub struct Residual {
    alive: Vec<bool>,
    in_degree: Vec<u32>,
    out_degree: Vec<u32>,
    alive_count: usize,
    /// Nodes that may have lost their last in- or out-edge (may hold dead or repeated nodes).
    pub(crate) trim_queue: Vec<u32>,
}

impl Residual {
    /// An empty residual; call [`Residual::reset`] before use.
    pub fn new() -> Self {
        Self::default()
    }

    /// Makes every node of `graph` alive with its full degrees, queueing the nodes that can be
    /// trimmed at once.
    pub fn reset(&mut self, graph: &DependencyGraph) {
        let n = graph.node_count();
        self.alive.clear();
        self.alive.resize(n, true);
        self.in_degree.clear();
        self.out_degree.clear();
        self.trim_queue.clear();
        for v in 0..n {
            let (din, dout) = (graph.in_degree(v) as u32, graph.out_degree(v) as u32);
            self.in_degree.push(din);
            self.out_degree.push(dout);
            if din == 0 || dout == 0 {
                self.trim_queue.push(v as u32);
            }
        }
        self.alive_count = n;
    }

    /// Number of nodes of the graph this residual was reset with.
    pub fn node_count(&self) -> usize {
        self.alive.len()
    }

    /// Number of alive nodes.
    pub fn alive_count(&self) -> usize {
        self.alive_count
    }

    /// Whether `node` is still alive.
    #[inline]
    pub fn is_alive(&self, node: usize) -> bool {
        self.alive[node]
    }

    /// Alive predecessors of an alive `node`.
    #[inline]
    pub fn in_degree(&self, node: usize) -> u32 {
        self.in_degree[node]
    }

    /// Alive successors of an alive `node`.
    #[inline]
    pub fn out_degree(&self, node: usize) -> u32 {
        self.out_degree[node]
    }

    /// The alive nodes, ascending.
    pub fn alive_nodes(&self) -> impl Iterator<Item = usize> + '_ {
        self.alive
            .iter()
            .enumerate()
            .filter(|(_, a)| **a)
            .map(|(v, _)| v)
    }

    /// Removes `node` (a no-op if it is already dead), updating its neighbours' degrees and
    /// queueing those that lost their last in- or out-edge.
    pub fn remove(&mut self, graph: &DependencyGraph, node: usize) {
        if !self.alive[node] {
            return;
        }
        self.alive[node] = false;
        self.alive_count -= 1;
        for &w in graph.successors(node) {
            let w = w as usize;
            if self.alive[w] {
                self.in_degree[w] -= 1;
                if self.in_degree[w] == 0 {
                    self.trim_queue.push(w as u32);
                }
            }
        }
        for &u in graph.predecessors(node) {
            let u = u as usize;
            if self.alive[u] {
                self.out_degree[u] -= 1;
                if self.out_degree[u] == 0 {
                    self.trim_queue.push(u as u32);
                }
            }
        }
    }
}
