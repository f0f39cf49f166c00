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
///
/// Each round walks a compact list of the alive nodes (rebuilt as it is scanned, so removed
/// nodes cost nothing in later rounds) rather than every node of the batch. The degree policies
/// (max, sum, prod, [`Policy::integer_key`]) rank by one `u64` per node, so quickselect compares
/// integers; the others rank by their float scores with [`rank`]. Both give the same order.
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
        keys,
        live,
        rng,
        ..
    } = s;
    residual.reset(graph);
    trim(graph, residual);
    live.clear();
    live.extend(residual.alive_nodes().map(|v| v as u32));
    let integer = policy.integer_key(0, 0, 0).is_some();
    loop {
        live.retain(|&v| residual.is_alive(v as usize));
        if live.is_empty() {
            return;
        }
        let k = if live.len() <= multi { 1 } else { multi };
        if integer {
            keys.clear();
            keys.extend(live.iter().map(|&v| {
                let (din, dout) = (
                    residual.in_degree(v as usize),
                    residual.out_degree(v as usize),
                );
                policy.integer_key(v, din, dout).unwrap_or_default()
            }));
            if k < keys.len() {
                keys.select_nth_unstable_by(k - 1, |a, b| b.cmp(a));
            }
            for &key in &keys[..k] {
                remove_if_alive(graph, residual, !(key as u32), abort);
            }
        } else {
            scored.clear();
            for &v in live.iter() {
                let (din, dout) = (
                    residual.in_degree(v as usize),
                    residual.out_degree(v as usize),
                );
                scored.push((policy.score(v as usize, din, dout, rng), v));
            }
            if k < scored.len() {
                scored.select_nth_unstable_by(k - 1, |a, b| rank(b, a));
            }
            for &(_, v) in &scored[..k] {
                remove_if_alive(graph, residual, v, abort);
            }
        }
    }
}

/// Aborts `v` and trims, unless the removals before it in this round left it on no cycle
/// (trimming after each removal drops such a node: aborting it would be wasted).
#[inline]
fn remove_if_alive(
    graph: &DependencyGraph,
    residual: &mut crate::residual::Residual,
    v: u32,
    abort: &mut Vec<u32>,
) {
    if residual.is_alive(v as usize) {
        abort.push(v);
        residual.remove(graph, v as usize);
        trim(graph, residual);
    }
}
