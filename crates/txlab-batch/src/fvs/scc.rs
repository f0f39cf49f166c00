//! Strongly connected components of one region of the residual graph (iterative Tarjan).
//!
//! Tarjan's algorithm (R. Tarjan, "Depth-first search and linear graph algorithms", SIAM J.
//! Comput. 1(2), 1972) in `O(|V| + |E|)` of the region. It is hand-written rather than taken
//! from petgraph because the greedy algorithms run it again after every removal on a shrinking
//! *view* (alive nodes of one earlier component) of one fixed graph: petgraph would need the view
//! materialised as a new graph each time (an allocation and a copy per call), while this version
//! reads the CSR arrays directly and keeps all its buffers across calls. The explicit call stack
//! also avoids recursion depth limits on long paths.
//!
//! A *region* is the set of alive nodes whose component id (`comp[v]`) equals the region's id.
//! Every node the run visits receives a fresh component id; only components with at least two
//! nodes are reported (a single node has no self-loop, so it is on no cycle).

use crate::graph::DependencyGraph;
use crate::residual::Residual;

const UNVISITED: u32 = u32::MAX;

/// Tarjan's buffers, reused across runs.
#[derive(Debug, Clone, Default)]
pub(crate) struct Tarjan {
    index: Vec<u32>,
    low: Vec<u32>,
    on_stack: Vec<bool>,
    stack: Vec<u32>,
    /// DFS call stack: `(node, next successor position)`.
    calls: Vec<(u32, u32)>,
    /// Nodes of the reported components, one after the other.
    scc_nodes: Vec<u32>,
    /// `scc_nodes[scc_ends[i - 1]..scc_ends[i]]` is component `i`.
    scc_ends: Vec<u32>,
}

impl Tarjan {
    /// Number of components (of two or more nodes) found by the last run.
    pub(crate) fn count(&self) -> usize {
        self.scc_ends.len()
    }

    /// Component `i` of the last run.
    pub(crate) fn component(&self, i: usize) -> &[u32] {
        let start = if i == 0 {
            0
        } else {
            self.scc_ends[i - 1] as usize
        };
        &self.scc_nodes[start..self.scc_ends[i] as usize]
    }

    /// Finds the components of region `region` (`roots` must list all its nodes), giving each a
    /// fresh id from `next_comp`.
    pub(crate) fn run(
        &mut self,
        graph: &DependencyGraph,
        residual: &Residual,
        comp: &mut [u32],
        region: u32,
        roots: &[u32],
        next_comp: &mut u32,
    ) {
        let n = graph.node_count();
        if self.index.len() < n {
            self.index.resize(n, UNVISITED);
            self.low.resize(n, 0);
            self.on_stack.resize(n, false);
        }
        for &v in roots {
            self.index[v as usize] = UNVISITED;
        }
        self.scc_nodes.clear();
        self.scc_ends.clear();
        self.stack.clear();
        self.calls.clear();
        let member = |comp: &[u32], w: usize| residual.is_alive(w) && comp[w] == region;
        let mut counter = 0u32;
        for &root in roots {
            let root = root as usize;
            if !member(comp, root) || self.index[root] != UNVISITED {
                continue;
            }
            self.visit(root, &mut counter);
            while let Some(&mut (v, ref mut pos)) = self.calls.last_mut() {
                let v = v as usize;
                let succ = graph.successors(v);
                if (*pos as usize) < succ.len() {
                    let w = succ[*pos as usize] as usize;
                    *pos += 1;
                    if !member(comp, w) {
                        continue;
                    }
                    if self.index[w] == UNVISITED {
                        self.visit(w, &mut counter);
                    } else if self.on_stack[w] {
                        self.low[v] = self.low[v].min(self.index[w]);
                    }
                    continue;
                }
                self.calls.pop();
                if self.low[v] == self.index[v] {
                    let id = *next_comp;
                    *next_comp += 1;
                    let start = self.scc_nodes.len();
                    loop {
                        let w = self.stack.pop().expect("v is on the Tarjan stack") as usize;
                        self.on_stack[w] = false;
                        comp[w] = id;
                        self.scc_nodes.push(w as u32);
                        if w == v {
                            break;
                        }
                    }
                    if self.scc_nodes.len() - start >= 2 {
                        self.scc_ends.push(self.scc_nodes.len() as u32);
                    } else {
                        self.scc_nodes.truncate(start);
                    }
                }
                if let Some(&(u, _)) = self.calls.last() {
                    let u = u as usize;
                    self.low[u] = self.low[u].min(self.low[v]);
                }
            }
        }
    }

    fn visit(&mut self, v: usize, counter: &mut u32) {
        self.index[v] = *counter;
        self.low[v] = *counter;
        *counter += 1;
        self.stack.push(v as u32);
        self.on_stack[v] = true;
        self.calls.push((v as u32, 0));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn components(g: &DependencyGraph) -> Vec<Vec<u32>> {
        let mut r = Residual::new();
        r.reset(g);
        let mut comp = vec![0; g.node_count()];
        let roots: Vec<u32> = (0..g.node_count() as u32).collect();
        let mut t = Tarjan::default();
        let mut next = 1;
        t.run(g, &r, &mut comp, 0, &roots, &mut next);
        let mut out: Vec<Vec<u32>> = (0..t.count())
            .map(|i| {
                let mut c = t.component(i).to_vec();
                c.sort_unstable();
                c
            })
            .collect();
        out.sort();
        out
    }

    #[test]
    fn finds_the_nontrivial_components() {
        // Cycle 0-1-2, cycle 3-4, 5 alone, bridges 2 -> 3 and 4 -> 5.
        let g = DependencyGraph::from_edges(
            6,
            &[(0, 1), (1, 2), (2, 0), (2, 3), (3, 4), (4, 3), (4, 5)],
        )
        .unwrap();
        assert_eq!(components(&g), vec![vec![0, 1, 2], vec![3, 4]]);
        // Closing 5 -> 0 merges everything.
        let g = DependencyGraph::from_edges(
            6,
            &[
                (0, 1),
                (1, 2),
                (2, 0),
                (2, 3),
                (3, 4),
                (4, 3),
                (4, 5),
                (5, 0),
            ],
        )
        .unwrap();
        assert_eq!(components(&g), vec![vec![0, 1, 2, 3, 4, 5]]);
        let dag = DependencyGraph::from_edges(3, &[(0, 1), (1, 2), (0, 2)]).unwrap();
        assert!(components(&dag).is_empty());
    }
}
