//! Trimming: removing the nodes that cannot lie on a cycle.
//!
//! A node with no incoming or no outgoing edge among the alive nodes is on no cycle, so it never
//! needs to enter a feedback vertex set (Ding, Kot, Gehrke, VLDB 2018, §4: "both before and during
//! the execution of our FVS algorithms, we trim the graph"). Removing it can strip a neighbour of
//! its last in- or out-edge, so trimming runs to a fixpoint. Every algorithm trims once after
//! [`Residual::reset`] and again after each removal into the feedback vertex set.
//!
//! Invariant after [`trim`]: every alive node has at least one alive predecessor and one alive
//! successor, so the alive subgraph is either empty or contains a cycle (walk backwards from any
//! node; with finitely many nodes the walk must repeat one). Cost: a node is re-checked only
//! when a neighbour was removed, so all trims of one run cost `O(|V| + |E|)` together with the
//! removals ([`Residual`] gives the per-representation details).

use crate::graph::DependencyGraph;
use crate::residual::Residual;

/// Removes alive nodes with no alive predecessor or no alive successor until none is left
/// (module docs). Returns how many nodes were trimmed. The work is [`Residual::trim`], in the
/// representation the residual keeps.
pub fn trim(graph: &DependencyGraph, residual: &mut Residual) -> usize {
    residual.trim(graph)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trimming_removes_chains_and_keeps_cycles() {
        // 0 -> 1 -> 2 -> 1 (cycle 1-2), 2 -> 3 -> 4 (tail), 5 -> 0 (head).
        let g = DependencyGraph::from_edges(6, &[(0, 1), (1, 2), (2, 1), (2, 3), (3, 4), (5, 0)])
            .unwrap();
        let mut r = Residual::new();
        r.reset(&g);
        assert_eq!(trim(&g, &mut r), 4);
        assert_eq!(r.alive_nodes().collect::<Vec<_>>(), vec![1, 2]);
        assert_eq!((r.in_degree(1), r.out_degree(1)), (1, 1));
        // Removing 1 leaves 2 without edges; trimming removes it.
        r.remove(&g, 1);
        assert_eq!(trim(&g, &mut r), 1);
        assert_eq!(r.alive_count(), 0);
    }

    #[test]
    fn a_dag_trims_to_nothing() {
        let g = DependencyGraph::from_edges(5, &[(0, 1), (0, 2), (1, 3), (2, 3), (3, 4)]).unwrap();
        let mut r = Residual::new();
        r.reset(&g);
        assert_eq!(trim(&g, &mut r), 5);
        assert_eq!(r.alive_count(), 0);
    }
}
