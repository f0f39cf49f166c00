//! [`Residual`]: the part of a [`DependencyGraph`] still under consideration while an algorithm
//! runs, with live in- and out-degrees.
//!
//! The FVS algorithms never copy the graph: they remove nodes from a residual view (into the
//! feedback vertex set, or because trimming proved them acyclic) and read the live degrees the
//! policies rank by. Invariants: `in_degree(v)` and `out_degree(v)` count only edges between
//! *alive* nodes; a node is removed at most once, so all removals of one run cost
//! `O(|V| + |E|)` in total (each edge is looked at from each end at most once, and not at all from a side whose live degree is already zero). Every node whose
//! degree drops to zero is queued for [`crate::trim::trim`].

use crate::graph::DependencyGraph;

/// One node of the residual graph: its live degrees and whether it is alive. Kept together
/// (one bounds check and one cache line per neighbour visited by [`Residual::remove`], the
/// hottest loop of every FVS algorithm).
#[derive(Debug, Clone, Copy, Default)]
struct NodeState {
    in_degree: u32,
    out_degree: u32,
    alive: bool,
}

/// The alive subgraph of a [`DependencyGraph`] (module docs). Reused across runs by
/// [`Residual::reset`].
#[derive(Debug, Clone, Default)]
pub struct Residual {
    nodes: Vec<NodeState>,
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
        self.alive_count = n;
    }

    /// Number of nodes of the graph (alive or not).
    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    /// Number of alive nodes.
    pub fn alive_count(&self) -> usize {
        self.alive_count
    }

    /// Whether `node` is still alive.
    #[inline]
    pub fn is_alive(&self, node: usize) -> bool {
        self.nodes[node].alive
    }

    /// Alive predecessors of an alive `node`.
    #[inline]
    pub fn in_degree(&self, node: usize) -> u32 {
        self.nodes[node].in_degree
    }

    /// Alive successors of an alive `node`.
    #[inline]
    pub fn out_degree(&self, node: usize) -> u32 {
        self.nodes[node].out_degree
    }

    /// The alive nodes, ascending.
    pub fn alive_nodes(&self) -> impl Iterator<Item = usize> + '_ {
        self.nodes
            .iter()
            .enumerate()
            .filter(|(_, s)| s.alive)
            .map(|(v, _)| v)
    }

    /// Removes `node` (a no-op if it is already dead), updating its neighbours' degrees and
    /// queueing those that lost their last in- or out-edge.
    #[inline]
    pub fn remove(&mut self, graph: &DependencyGraph, node: usize) {
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
