//! Redundancy removal: making a feedback vertex set inclusion-minimal.
//!
//! The greedy algorithms (Ding, Kot, Gehrke, VLDB 2018, §4.1, Algorithms 1 and 2) never revisit
//! a removal. A node removed early (because it had the highest degree then) is often left on no
//! cycle by the removals after it: aborting it is wasted. The standard remedy for greedy FVS
//! heuristics (e.g. Levy and Low, "A contraction algorithm for finding small cycle cutsets",
//! J. Algorithms 9, 1988; Lin and Jou, "On computing the minimum feedback vertex set of a
//! directed graph by contraction operations", IEEE TCAD 19(3), 2000) is a final pass that puts
//! back every removed node that closes no cycle with the kept ones.
//!
//! # Invariant
//!
//! Input: `abort` (removal order) is a feedback vertex set of `graph`. The pass visits the
//! aborted nodes in *reverse* removal order (the first removals, ranked highest by the policy,
//! are tried last, so they stay aborted when two candidates exclude each other) and restores
//! `v` when no cycle of `G[kept ∪ {v}]` passes through `v`, i.e. no kept predecessor of `v` is
//! reachable from `v` through kept nodes. Restoring such a `v` keeps the kept graph acyclic
//! (any new cycle would pass through `v`), so the output is still a feedback vertex set, never
//! larger, and *minimal*: after the pass no aborted node can be restored alone (a node rejected
//! earlier had a cycle through kept nodes; restorations only add kept nodes, so the cycle stays).
//!
//! Cost: one depth-first search over the kept graph per aborted node, `O(|F| (|V| + |E|))`.

use crate::graph::DependencyGraph;

/// Buffers of the pass, reused across batches.
#[derive(Debug, Clone, Default)]
pub(crate) struct Minimizer {
    aborted: Vec<bool>,
    /// `seen[w] == round` when `w` was reached in search `round`.
    seen: Vec<u32>,
    round: u32,
    stack: Vec<u32>,
}

impl Minimizer {
    /// Removes from `abort[start..]` every node whose restoration closes no cycle (module docs),
    /// keeping the relative order of the rest. `abort[start..]` must hold distinct nodes.
    pub(crate) fn minimize(&mut self, graph: &DependencyGraph, abort: &mut Vec<u32>, start: usize) {
        let n = graph.node_count();
        self.aborted.clear();
        self.aborted.resize(n, false);
        if self.seen.len() < n {
            self.seen.resize(n, 0);
        }
        for &v in &abort[start..] {
            self.aborted[v as usize] = true;
        }
        for i in (start..abort.len()).rev() {
            let v = abort[i] as usize;
            if !self.on_kept_cycle(graph, v) {
                self.aborted[v] = false;
            }
        }
        // Keep the prefix `abort[..start]` untouched (it may name nodes of other graphs).
        let aborted = &self.aborted;
        let mut position = 0;
        abort.retain(|&v| {
            position += 1;
            position <= start || aborted[v as usize]
        });
    }

    /// Whether `v` lies on a cycle whose other nodes are all kept.
    fn on_kept_cycle(&mut self, graph: &DependencyGraph, v: usize) -> bool {
        self.round = self.round.wrapping_add(1);
        if self.round == 0 {
            self.seen.fill(0);
            self.round = 1;
        }
        let round = self.round;
        self.stack.clear();
        for &w in graph.successors(v) {
            if !self.aborted[w as usize] && self.seen[w as usize] != round {
                self.seen[w as usize] = round;
                self.stack.push(w);
            }
        }
        while let Some(u) = self.stack.pop() {
            for &w in graph.successors(u as usize) {
                if w as usize == v {
                    return true;
                }
                if !self.aborted[w as usize] && self.seen[w as usize] != round {
                    self.seen[w as usize] = round;
                    self.stack.push(w);
                }
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_removal_made_redundant_by_later_ones_is_restored() {
        // 0 is only on the cycle 0 -> 1 -> 2 -> 0; 1 is also on the 2-cycles 1-3 and 1-4.
        // Aborting 0 first and then 1 leaves 0 on no kept cycle.
        let g = DependencyGraph::from_edges(
            5,
            &[(0, 1), (1, 2), (2, 0), (1, 3), (3, 1), (1, 4), (4, 1)],
        )
        .unwrap();
        let mut m = Minimizer::default();
        let mut abort = vec![9, 0, 1];
        m.minimize(&g, &mut abort, 1);
        assert_eq!(abort, vec![9, 1], "the prefix is untouched, 0 is restored");
        // A needed node is never restored: on the 2-cycle 0-1 one of the two stays aborted.
        let g = DependencyGraph::from_edges(2, &[(0, 1), (1, 0)]).unwrap();
        let mut abort = vec![0, 1];
        m.minimize(&g, &mut abort, 0);
        assert_eq!(
            abort,
            vec![0],
            "the later removal 1 is tried first and restored"
        );
    }
}
