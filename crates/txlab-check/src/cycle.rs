//! Short cycles inside one strongly connected component, by breadth-first search.
//!
//! A search asks for a cycle whose *first* edge is in `start_mask` and whose remaining edges are in
//! `rest_mask` (e.g. first edge `rw`, rest `ww`/`wr`: a G-single candidate, the construction Elle
//! uses). For a start edge `u -> v`, a BFS from `v` restricted to the component and to `rest_mask`
//! finds the shortest way back to `u`; the cycle is that edge plus the path. Every cycle lies in
//! one SCC, so restricting the BFS to the component loses nothing.
//!
//! Minimality: the result is the shortest cycle among those through the first
//! [`MAX_START_EDGES`] qualifying start edges of the component (in node order), and each BFS is cut
//! off once it cannot beat the best cycle found so far. For the small components real anomalies
//! form this is the shortest qualifying cycle; bounding the number of start edges keeps a
//! pathological component of `m` edges at `O(MAX_START_EDGES · m)` instead of the `O(V · E)` of an
//! exact girth computation. In components of more than [`LARGE_COMPONENT`] transactions the
//! search stops at the first cycle found (still shortest through its start edge).

use crate::graph::Dsg;
use crate::scc::Components;
use std::collections::VecDeque;

/// How many start edges a search tries per component.
pub(crate) const MAX_START_EDGES: usize = 64;
/// Components with more members than this stop at the first cycle found: each BFS may cover the
/// whole component, and a history that broken needs fixing, not its girth.
pub(crate) const LARGE_COMPONENT: usize = 4096;

/// Reusable BFS state over the nodes of one graph.
#[derive(Debug)]
pub(crate) struct CycleFinder<'g> {
    graph: &'g Dsg,
    /// `seen[v] == round` marks `v` visited in the current BFS.
    seen: Vec<u32>,
    round: u32,
    /// The edge through which a visited node was first reached.
    via: Vec<usize>,
    depth: Vec<u32>,
    queue: VecDeque<u32>,
}

impl<'g> CycleFinder<'g> {
    /// A finder for `graph`.
    pub fn new(graph: &'g Dsg) -> Self {
        let n = graph.nodes();
        Self {
            graph,
            seen: vec![0; n],
            round: 0,
            via: vec![0; n],
            depth: vec![0; n],
            queue: VecDeque::new(),
        }
    }

    /// The shortest cycle found (as edge indices in cycle order) in component `component` of
    /// `components`, starting with an edge in `start_mask` and continuing with edges in
    /// `rest_mask`; `None` if there is none among the start edges tried.
    pub fn shortest(
        &mut self,
        components: &Components,
        component: usize,
        start_mask: u8,
        rest_mask: u8,
    ) -> Option<Vec<usize>> {
        let g = self.graph;
        let id = component as u32;
        let mut best: Option<Vec<usize>> = None;
        let mut tried = 0;
        let large = components.members[component].len() > LARGE_COMPONENT;
        'starts: for &u in &components.members[component] {
            for e in g.out_edges(u) {
                if !g.in_mask(e, start_mask) || components.component_of[g.target(e) as usize] != id
                {
                    continue;
                }
                tried += 1;
                // A cycle through e has at least 2 edges; stop once one of length 2 is known.
                let limit = best.as_ref().map_or(u32::MAX, |b| b.len() as u32 - 1);
                if let Some(path) = self.bfs(components, id, g.target(e), u, rest_mask, limit) {
                    let mut cycle = Vec::with_capacity(path.len() + 1);
                    cycle.push(e);
                    cycle.extend(path);
                    best = Some(cycle);
                }
                if tried >= MAX_START_EDGES || best.as_ref().is_some_and(|b| large || b.len() == 2)
                {
                    break 'starts;
                }
            }
        }
        best
    }

    /// A shortest path `from ⇝ to` inside component `id` over `mask` edges, of fewer than `limit`
    /// edges, as edge indices.
    fn bfs(
        &mut self,
        components: &Components,
        id: u32,
        from: u32,
        to: u32,
        mask: u8,
        limit: u32,
    ) -> Option<Vec<usize>> {
        let g = self.graph;
        self.round = self.round.wrapping_add(1);
        if self.round == 0 {
            self.seen.iter_mut().for_each(|s| *s = 0);
            self.round = 1;
        }
        self.queue.clear();
        self.seen[from as usize] = self.round;
        self.depth[from as usize] = 0;
        self.queue.push_back(from);
        while let Some(x) = self.queue.pop_front() {
            if x == to {
                let mut path = Vec::new();
                let mut at = to;
                while at != from {
                    let e = self.via[at as usize];
                    path.push(e);
                    at = g.source(e);
                }
                path.reverse();
                return Some(path);
            }
            let d = self.depth[x as usize] + 1;
            if d >= limit {
                continue;
            }
            for e in g.out_edges(x) {
                let y = g.target(e);
                if !g.in_mask(e, mask)
                    || components.component_of[y as usize] != id
                    || self.seen[y as usize] == self.round
                {
                    continue;
                }
                self.seen[y as usize] = self.round;
                self.via[y as usize] = e;
                self.depth[y as usize] = d;
                self.queue.push_back(y);
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Key;
    use crate::anomaly::DependencyKind::{Rw, Wr, Ww};
    use crate::graph::{GraphBuilder, MASK_DATA, MASK_DEPENDENCY, kind_bit};
    use crate::scc::strongly_connected;

    #[test]
    fn finds_the_shortest_cycle_through_the_required_edge_kind() {
        // Long dependency cycle 0->1->2->3->0 and a short one 0 -rw-> 2 -ww-> 3 -ww-> 0.
        let mut b = GraphBuilder::default();
        let k = Key::from(1);
        b.add(0, 1, Ww, k);
        b.add(1, 2, Wr, k);
        b.add(2, 3, Ww, k);
        b.add(3, 0, Ww, k);
        b.add(0, 2, Rw, k);
        let g = b.build(4);
        let comps = strongly_connected(&g, MASK_DATA);
        assert_eq!(comps.members.len(), 1);
        let mut f = CycleFinder::new(&g);
        let rw = f
            .shortest(&comps, 0, kind_bit(Rw), MASK_DEPENDENCY)
            .unwrap();
        let nodes: Vec<u32> = rw.iter().map(|&e| g.source(e)).collect();
        assert_eq!(nodes, vec![0, 2, 3]);
        assert_eq!(g.kind(rw[0]), Rw);
        let any = f
            .shortest(&comps, 0, kind_bit(Wr), MASK_DEPENDENCY)
            .unwrap();
        assert_eq!(any.len(), 4);
        // No cycle made of ww edges only.
        assert!(f.shortest(&comps, 0, kind_bit(Ww), kind_bit(Ww)).is_none());
    }
}
