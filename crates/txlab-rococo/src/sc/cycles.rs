//! The exact unreorderable-cycle test and its shortest witness.
//!
//! An SC-cycle (a simple cycle with at least one S- and one C-edge) is unreorderable when all its
//! C-edges are I–I (§3.1). Such a cycle exists iff some block of the graph `G'` = S-edges plus
//! I–I C-edges contains both an S-edge and a C-edge:
//!
//! - a simple cycle lies inside one block, so an unreorderable cycle puts an S-edge and a C-edge
//!   into the block that holds it;
//! - a block with two or more edges is 2-connected, and in a 2-connected graph any two edges lie
//!   on a common simple cycle (Menger's theorem, two vertex-disjoint paths between the edges'
//!   ends); such a cycle through the block's S-edge and C-edge is an SC-cycle of `G'`, all of
//!   whose C-edges are I–I.
//!
//! The witness is a **shortest** such cycle of the block, found exactly: a shortest cycle with
//! both kinds of edges has a vertex `w` where an S-edge `w–a` meets a C-edge `w–b` (walking
//! round a cycle that has both kinds, the kind changes somewhere), and the rest of it is a path
//! from `a` to `b` avoiding `w`, at least as long as a shortest one. Conversely, `w–a`, a shortest
//! `a`–`b` path in the block without `w` (simple, by breadth-first search), and `b–w` form a
//! simple cycle with both kinds. So the minimum of `2 + dist(a, b)` over all such `(w, a, b)` is
//! the length of a shortest one, and the first minimum in vertex order is returned (ties broken
//! deterministically). `O(V · deg · (V + E))` per block; the blocks are small.
//!
//! Plain transaction chopping (every C-edge counts, no I/D) uses the same routine on all edges.

use super::graph::{EdgeKind, ScGraph};
use std::collections::VecDeque;

/// A simple cycle: `edges[i]` joins `vertices[i]` and `vertices[(i + 1) % n]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Cycle {
    pub vertices: Vec<u32>,
    pub edges: Vec<u32>,
}

/// Whether a block contains both an S-edge and a C-edge.
pub(crate) fn mixed(g: &ScGraph, block: &[u32]) -> bool {
    let kind = |e: &u32| g.edges[*e as usize].kind;
    block.iter().any(|e| kind(e) == EdgeKind::Sibling)
        && block.iter().any(|e| kind(e) == EdgeKind::Conflict)
}

/// A shortest simple cycle of `block` (edge indices) with an S-edge and a C-edge (module docs).
pub(crate) fn shortest_sc_cycle(g: &ScGraph, block: &[u32]) -> Option<Cycle> {
    let mut in_block = vec![false; g.edges.len()];
    for &e in block {
        in_block[e as usize] = true;
    }
    let vertices = g.vertices_of(block);
    let mut bfs = Bfs::new(g.vertices.len());
    let mut best: Option<Cycle> = None;
    for &w in &vertices {
        let ends = |kind| -> Vec<(u32, u32)> {
            g.adj[w as usize]
                .iter()
                .copied()
                .filter(|&(_, e)| in_block[e as usize] && g.edges[e as usize].kind == kind)
                .collect()
        };
        let (s_ends, c_ends) = (ends(EdgeKind::Sibling), ends(EdgeKind::Conflict));
        if c_ends.is_empty() {
            continue;
        }
        for &(a, ea) in &s_ends {
            let limit = best.as_ref().map_or(usize::MAX, |c| c.vertices.len() - 2);
            bfs.run(g, &in_block, a, w, limit);
            for &(b, eb) in &c_ends {
                let Some(path) = bfs.path_to(g, b) else {
                    continue;
                };
                if best
                    .as_ref()
                    .is_some_and(|c| path.len() + 2 >= c.edges.len())
                {
                    continue;
                }
                let mut cycle = Cycle {
                    vertices: vec![w, a],
                    edges: vec![ea],
                };
                for &e in &path {
                    let last = *cycle.vertices.last().unwrap_or(&a);
                    cycle.vertices.push(g.other(e, last));
                    cycle.edges.push(e);
                }
                cycle.edges.push(eb);
                best = Some(cycle);
            }
            if best.as_ref().is_some_and(|c| c.edges.len() == 3) {
                return best;
            }
        }
    }
    best
}

/// Reusable breadth-first search state.
struct Bfs {
    seen: Vec<u32>,
    round: u32,
    via: Vec<u32>,
    depth: Vec<usize>,
    queue: VecDeque<u32>,
}

impl Bfs {
    fn new(n: usize) -> Self {
        Self {
            seen: vec![0; n],
            round: 0,
            via: vec![u32::MAX; n],
            depth: vec![0; n],
            queue: VecDeque::new(),
        }
    }

    /// Distances from `from` over block edges, never entering `avoid`, up to `limit` hops.
    fn run(&mut self, g: &ScGraph, in_block: &[bool], from: u32, avoid: u32, limit: usize) {
        self.round += 1;
        self.queue.clear();
        self.seen[from as usize] = self.round;
        self.via[from as usize] = u32::MAX;
        self.depth[from as usize] = 0;
        self.queue.push_back(from);
        while let Some(v) = self.queue.pop_front() {
            if self.depth[v as usize] >= limit {
                continue;
            }
            for &(w, e) in &g.adj[v as usize] {
                if w == avoid || !in_block[e as usize] || self.seen[w as usize] == self.round {
                    continue;
                }
                self.seen[w as usize] = self.round;
                self.via[w as usize] = e;
                self.depth[w as usize] = self.depth[v as usize] + 1;
                self.queue.push_back(w);
            }
        }
    }

    /// The edges of the path found to `to`, from the start of the search.
    fn path_to(&self, g: &ScGraph, to: u32) -> Option<Vec<u32>> {
        if self.seen[to as usize] != self.round {
            return None;
        }
        let mut path = Vec::new();
        let mut v = to;
        while self.via[v as usize] != u32::MAX {
            let e = self.via[v as usize];
            path.push(e);
            v = g.other(e, v);
        }
        path.reverse();
        Some(path)
    }
}
