//! Biconnected components (blocks) of a subgraph of the SC-graph: J. Hopcroft, R. Tarjan,
//! "Algorithm 447: efficient algorithms for graph manipulation", CACM 1973, written iteratively
//! with an explicit stack of frames and an edge stack.
//!
//! Every edge of the subgraph belongs to exactly one block; a block is returned as its edge
//! indices in the order the search popped them. A block of two or more edges is 2-connected, so
//! any two of its edges lie on a common simple cycle, and every simple cycle of the graph lies
//! inside one block; this is what makes the unreorderable-cycle test exact (see
//! [`super::cycles`]). `O(V + E)`.
//!
//! Written here rather than taken from a graph crate: the graph is a few hundred edges held in
//! our own adjacency lists with an edge filter per analysis, and the routine is forty lines; the
//! property test checks it against brute-force cycle enumeration.

use super::graph::ScGraph;

const UNSEEN: u32 = u32::MAX;

/// The blocks of the subgraph made of the edges `keep` accepts.
pub(crate) fn blocks(g: &ScGraph, keep: impl Fn(u32) -> bool) -> Vec<Vec<u32>> {
    let n = g.vertices.len();
    let mut disc = vec![UNSEEN; n];
    let mut low = vec![0u32; n];
    let mut time = 0u32;
    let mut edge_stack: Vec<u32> = Vec::new();
    // (vertex, edge it was reached by, next adjacency position)
    let mut frames: Vec<(u32, u32, usize)> = Vec::new();
    let mut out = Vec::new();
    for root in 0..n as u32 {
        if disc[root as usize] != UNSEEN {
            continue;
        }
        disc[root as usize] = time;
        low[root as usize] = time;
        time += 1;
        frames.push((root, u32::MAX, 0));
        while let Some(&mut (v, via, ref mut next)) = frames.last_mut() {
            if let Some(&(w, e)) = g.adj[v as usize].get(*next) {
                *next += 1;
                if e == via || !keep(e) {
                    continue;
                }
                if disc[w as usize] == UNSEEN {
                    disc[w as usize] = time;
                    low[w as usize] = time;
                    time += 1;
                    edge_stack.push(e);
                    frames.push((w, e, 0));
                } else if disc[w as usize] < disc[v as usize] {
                    edge_stack.push(e);
                    low[v as usize] = low[v as usize].min(disc[w as usize]);
                }
                continue;
            }
            frames.pop();
            let Some(&(u, _, _)) = frames.last() else {
                continue;
            };
            low[u as usize] = low[u as usize].min(low[v as usize]);
            if low[v as usize] >= disc[u as usize] {
                let mut block = Vec::new();
                while let Some(e) = edge_stack.pop() {
                    block.push(e);
                    if e == via {
                        break;
                    }
                }
                out.push(block);
            }
        }
    }
    out
}
