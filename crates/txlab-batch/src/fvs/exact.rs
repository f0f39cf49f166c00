//! Exact minimum feedback vertex set of a small component, by branch and bound.
//!
//! Directed FVS is NP-hard (Karp 1972) and APX-hard, so the exact search is only for small
//! strongly connected components (at most [`MAX_EXACT_NODES`] = 64 nodes, held as `u64`
//! bitmasks) and for checking the greedy algorithms. It minimises the *number* of aborted
//! transactions; it ignores the policy.
//!
//! # Search
//!
//! A search state is `(alive, kept, chosen)`: the nodes still in the graph, the nodes this branch
//! has decided never to remove, and the nodes removed so far. Each step
//!
//! 1. trims `alive` (a node with no alive predecessor or successor is on no cycle, see
//!    [`crate::trim`]); if nothing is left, `chosen` is a feedback vertex set;
//! 2. bounds: a set of node-disjoint cycles, packed greedily from shortest cycles, needs one
//!    removal each, so `|chosen| + cycles` is a lower bound; the branch is cut when it cannot beat
//!    the best set found so far;
//! 3. branches on a shortest cycle `C` with the fewest kept nodes: every FVS contains a node of
//!    `C`, so for its unkept nodes `c1, c2, ...` the branches are "remove `c1`", "keep `c1`,
//!    remove `c2`", ... which are disjoint and together cover every solution. A cycle whose
//!    nodes are all kept has no solution.
//!
//! The search stops after `budget` states and reports failure, so a dense component cannot stall
//! a caller.

use crate::graph::DependencyGraph;

/// Largest component the exact search accepts.
pub const MAX_EXACT_NODES: usize = 64;

const NONE: u32 = u32::MAX;

/// The exact solver's buffers, reused across calls.
#[derive(Debug, Clone, Default)]
pub(crate) struct ExactSolver {
    /// Global node → local bit, `NONE` outside the current component.
    local: Vec<u32>,
    out: Vec<u64>,
    inn: Vec<u64>,
    layers: Vec<u64>,
    best: u64,
    best_size: u32,
    steps: u64,
    budget: u64,
}

#[inline]
fn bits(mut mask: u64) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        if mask == 0 {
            return None;
        }
        let i = mask.trailing_zeros() as usize;
        mask &= mask - 1;
        Some(i)
    })
}

impl ExactSolver {
    /// A minimum FVS of the subgraph induced by `nodes` (at most 64) among the nodes for which
    /// `member` holds, as global node ids appended to `out`. Returns `false` (appending nothing)
    /// when the search needed more than `budget` states.
    pub(crate) fn solve(
        &mut self,
        graph: &DependencyGraph,
        member: impl Fn(usize) -> bool,
        nodes: &[u32],
        budget: u64,
        out: &mut Vec<u32>,
    ) -> bool {
        let k = nodes.len();
        debug_assert!(k <= MAX_EXACT_NODES);
        if self.local.len() < graph.node_count() {
            self.local.resize(graph.node_count(), NONE);
        }
        for (i, &v) in nodes.iter().enumerate() {
            self.local[v as usize] = i as u32;
        }
        self.out.clear();
        self.out.resize(k, 0);
        self.inn.clear();
        self.inn.resize(k, 0);
        for (i, &v) in nodes.iter().enumerate() {
            for &w in graph.successors(v as usize) {
                let j = self.local[w as usize];
                if j != NONE && member(w as usize) {
                    self.out[i] |= 1 << j;
                    self.inn[j as usize] |= 1 << i;
                }
            }
        }
        for &v in nodes {
            self.local[v as usize] = NONE;
        }
        let all = if k == 64 { u64::MAX } else { (1u64 << k) - 1 };
        // Removing every node is always a feedback vertex set; the search improves on it.
        self.best = all;
        self.best_size = k as u32;
        self.steps = 0;
        self.budget = budget;
        if !self.search(all, 0, 0) {
            return false;
        }
        out.extend(bits(self.best).map(|i| nodes[i]));
        true
    }

    /// Removes nodes of `alive` without an alive predecessor or successor, to a fixpoint.
    fn trim(&self, mut alive: u64) -> u64 {
        loop {
            let mut next = alive;
            for v in bits(alive) {
                if self.out[v] & alive == 0 || self.inn[v] & alive == 0 {
                    next &= !(1 << v);
                }
            }
            if next == alive {
                return alive;
            }
            alive = next;
        }
    }

    /// A shortest cycle through `start` within `alive` as a mask, or 0 if there is none.
    fn shortest_cycle_through(&mut self, start: usize, alive: u64) -> u64 {
        self.layers.clear();
        self.layers.push(1 << start);
        let mut seen = 1u64 << start;
        loop {
            let frontier = *self.layers.last().expect("layer 0 exists");
            let mut next = 0u64;
            for u in bits(frontier) {
                next |= self.out[u] & alive;
            }
            if next & (1 << start) != 0 {
                break;
            }
            next &= !seen;
            if next == 0 {
                return 0;
            }
            seen |= next;
            self.layers.push(next);
        }
        // Walk back from `start` through the layers: layer i holds nodes at distance i.
        let mut cycle = 1u64 << start;
        let mut current = start;
        for i in (1..self.layers.len()).rev() {
            let candidates = self.layers[i] & self.inn[current];
            let u = candidates.trailing_zeros() as usize;
            cycle |= 1 << u;
            current = u;
        }
        cycle
    }

    /// The cycle to branch on: among shortest cycles through each node, the one with the fewest
    /// unkept nodes (0 if `alive` is acyclic).
    fn branching_cycle(&mut self, alive: u64, kept: u64) -> u64 {
        let mut best = 0u64;
        let mut best_key = (u32::MAX, u32::MAX);
        for s in bits(alive) {
            let c = self.shortest_cycle_through(s, alive);
            if c == 0 {
                continue;
            }
            let key = ((c & !kept).count_ones(), c.count_ones());
            if key < best_key {
                best_key = key;
                best = c;
                if key.0 <= 1 {
                    break;
                }
            }
        }
        best
    }

    /// How many node-disjoint cycles a greedy packing finds in `alive`.
    fn disjoint_cycles(&mut self, mut alive: u64) -> u32 {
        let mut count = 0;
        loop {
            alive = self.trim(alive);
            let Some(s) = bits(alive).next() else {
                return count;
            };
            // After trimming every node lies on a path that closes into a cycle, but not
            // necessarily through `s` itself; try nodes until one lies on a cycle.
            let mut cycle = 0;
            for s in std::iter::once(s).chain(bits(alive)) {
                cycle = self.shortest_cycle_through(s, alive);
                if cycle != 0 {
                    break;
                }
            }
            if cycle == 0 {
                return count;
            }
            count += 1;
            alive &= !cycle;
        }
    }

    /// Returns `false` when the budget ran out.
    fn search(&mut self, alive: u64, kept: u64, chosen: u64) -> bool {
        self.steps += 1;
        if self.steps > self.budget {
            return false;
        }
        let alive = self.trim(alive);
        let size = chosen.count_ones();
        if alive == 0 {
            if size < self.best_size {
                self.best = chosen;
                self.best_size = size;
            }
            return true;
        }
        if size + self.disjoint_cycles(alive) >= self.best_size {
            return true;
        }
        let cycle = self.branching_cycle(alive, kept);
        let mut kept = kept;
        for c in bits(cycle & !kept) {
            if !self.search(alive & !(1 << c), kept, chosen | (1 << c)) {
                return false;
            }
            kept |= 1 << c;
        }
        true
    }
}
