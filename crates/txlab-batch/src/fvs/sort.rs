//! The sort-based greedy algorithm (Ding, Kot, Gehrke, VLDB 2018, §4.1, Algorithm 2).
//!
//! ```text
//! GreedySortGraph(G, P, k):
//!   trim G
//!   while G ≠ ∅:
//!     if |G| ≤ k: k ← 1
//!     Q ← the k top-ranked nodes of G under P (quickselect)
//!     remove Q from G into V;  trim G
//! ```
//!
//! No SCC decomposition: every round ranks all alive nodes by their live degrees in the whole
//! residual graph, picks the top `k` (the *multi factor*) with quickselect
//! ([`slice::select_nth_unstable_by`], expected `O(|V|)`), removes them, trims, and repeats.
//!
//! One refinement over the paper's pseudocode, which removes all `k` selected nodes before
//! trimming: here the graph is trimmed after each removal, and a selected node that is no longer
//! alive (the earlier removals of the round left it on no cycle) is not aborted. On a 3-cycle
//! with `k = 2` the paper's version aborts two transactions, this one aborts one. Trimming is
//! incremental, so the cost bound is unchanged. Removals and trims cost `O(|V| + |E|)` in total and there are at most `|V| / k`
//! rounds of `O(|V|)` ranking, so the run is `O(|V|² / k + |V| + |E|)`. Larger `k` trades
//! accuracy for speed; the paper's default is `k = 2` with prod-degree.

use super::FvsScratch;
use super::policy::{Policy, rank};
use crate::graph::DependencyGraph;
use crate::trim::trim;

/// Appends a feedback vertex set of `graph` to `abort` (module docs). `multi >= 1`.
pub(crate) fn sort_greedy(
    graph: &DependencyGraph,
    policy: &Policy<'_>,
    multi: usize,
    s: &mut FvsScratch,
    abort: &mut Vec<u32>,
) {
    let FvsScratch {
        residual,
        scored,
        rng,
        ..
    } = s;
    residual.reset(graph);
    trim(graph, residual);
    loop {
        scored.clear();
        for v in residual.alive_nodes() {
            let score = policy.score(v, residual.in_degree(v), residual.out_degree(v), rng);
            scored.push((score, v as u32));
        }
        if scored.is_empty() {
            return;
        }
        let k = if scored.len() <= multi { 1 } else { multi };
        if k < scored.len() {
            scored.select_nth_unstable_by(k - 1, |a, b| rank(b, a));
        }
        for &(_, v) in &scored[..k] {
            // Trimming after each removal drops a selected node that the removals before it
            // in this round left on no cycle: aborting it would be wasted.
            if residual.is_alive(v as usize) {
                abort.push(v);
                residual.remove(graph, v as usize);
                trim(graph, residual);
            }
        }
    }
}
