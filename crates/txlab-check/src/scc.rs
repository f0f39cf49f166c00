//! Strongly connected components of a masked subgraph of the [`Dsg`]: Tarjan's algorithm
//! (R. Tarjan, "Depth-first search and linear graph algorithms", SIAM J. Computing 1972), written
//! iteratively with an explicit call stack so a million-node path cannot overflow the thread
//! stack. `O(V + E)` time, `O(V)` extra memory.
//!
//! Written here rather than taken from petgraph: the graph is already in CSR form with per-edge
//! kinds, and the masked traversal is a few lines; petgraph would need the graph copied into its
//! own representation once per mask.
//!
//! Only non-trivial components (two or more nodes) are returned: the graph has no self-loops, so a
//! single node is never on a cycle.

use crate::graph::Dsg;

const UNVISITED: u32 = u32::MAX;
/// `component_of` value of nodes in trivial components.
pub(crate) const TRIVIAL: u32 = u32::MAX;

/// The non-trivial strongly connected components of a subgraph.
#[derive(Debug)]
pub(crate) struct Components {
    /// The component of each node, or [`TRIVIAL`].
    pub component_of: Vec<u32>,
    /// The members of each component.
    pub members: Vec<Vec<u32>>,
}

/// The non-trivial SCCs of the subgraph of `g` made of the edges in `mask`.
pub(crate) fn strongly_connected(g: &Dsg, mask: u8) -> Components {
    let n = g.nodes();
    let mut index = vec![UNVISITED; n];
    let mut low = vec![0u32; n];
    let mut on_stack = vec![false; n];
    let mut stack: Vec<u32> = Vec::new();
    // (node, next out-edge to look at)
    let mut calls: Vec<(u32, usize)> = Vec::new();
    let mut counter = 0u32;
    let mut component_of = vec![TRIVIAL; n];
    let mut members = Vec::new();

    for root in 0..n as u32 {
        if index[root as usize] != UNVISITED {
            continue;
        }
        index[root as usize] = counter;
        low[root as usize] = counter;
        counter += 1;
        stack.push(root);
        on_stack[root as usize] = true;
        calls.push((root, g.out_edges(root).start));
        while let Some(&mut (v, ref mut next)) = calls.last_mut() {
            let end = g.out_edges(v).end;
            if *next < end {
                let e = *next;
                *next += 1;
                if !g.in_mask(e, mask) {
                    continue;
                }
                let w = g.target(e);
                if index[w as usize] == UNVISITED {
                    index[w as usize] = counter;
                    low[w as usize] = counter;
                    counter += 1;
                    stack.push(w);
                    on_stack[w as usize] = true;
                    calls.push((w, g.out_edges(w).start));
                } else if on_stack[w as usize] {
                    low[v as usize] = low[v as usize].min(index[w as usize]);
                }
                continue;
            }
            calls.pop();
            if let Some(&(parent, _)) = calls.last() {
                low[parent as usize] = low[parent as usize].min(low[v as usize]);
            }
            if low[v as usize] == index[v as usize] {
                let mut component = Vec::new();
                while let Some(w) = stack.pop() {
                    on_stack[w as usize] = false;
                    component.push(w);
                    if w == v {
                        break;
                    }
                }
                if component.len() > 1 {
                    let id = members.len() as u32;
                    for &w in &component {
                        component_of[w as usize] = id;
                    }
                    members.push(component);
                }
            }
        }
    }
    Components {
        component_of,
        members,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Key;
    use crate::anomaly::DependencyKind::{Rw, Ww};
    use crate::graph::{GraphBuilder, MASK_DATA, MASK_WW};

    #[test]
    fn finds_cycles_only_in_the_masked_subgraph() {
        // 0 -ww-> 1 -ww-> 2 -rw-> 0, and 3 <-ww-> 4, and 5 alone.
        let mut b = GraphBuilder::default();
        let k = Key::from(0);
        b.add(0, 1, Ww, k);
        b.add(1, 2, Ww, k);
        b.add(2, 0, Rw, k);
        b.add(3, 4, Ww, k);
        b.add(4, 3, Ww, k);
        let g = b.build(6);

        let all = strongly_connected(&g, MASK_DATA);
        let mut sets: Vec<Vec<u32>> = all.members.clone();
        sets.iter_mut().for_each(|s| s.sort_unstable());
        sets.sort();
        assert_eq!(sets, vec![vec![0, 1, 2], vec![3, 4]]);
        assert_eq!(all.component_of[5], TRIVIAL);

        let ww = strongly_connected(&g, MASK_WW);
        assert_eq!(ww.members.len(), 1);
        assert_eq!(ww.component_of[0], TRIVIAL);
        assert_ne!(ww.component_of[3], TRIVIAL);
    }

    #[test]
    fn a_long_path_does_not_overflow_the_stack() {
        let n = 300_000u32;
        let mut b = GraphBuilder::default();
        for i in 0..n - 1 {
            b.add(i, i + 1, Ww, Key::from(0));
        }
        b.add(n - 1, 0, Ww, Key::from(0));
        let c = strongly_connected(&b.build(n as usize), MASK_WW);
        assert_eq!(c.members.len(), 1);
        assert_eq!(c.members[0].len(), n as usize);
    }
}
