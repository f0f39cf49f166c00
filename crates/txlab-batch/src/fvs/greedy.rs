//! The SCC-based greedy algorithm (Ding, Kot, Gehrke, VLDB 2018, §4.1, Algorithm 1), its hybrid
//! with the exact search, and the exact search over all components.
//!
//! ```text
//! GreedySccGraph(G, P):  trim G; for each SCC S of G: V ∪= GreedyComponent(S, P)
//! GreedyComponent(S, P): if |S| = 1 return ∅; v ← top node of S under P;
//!                        return {v} ∪ GreedySccGraph(S − v, P)
//! ```
//!
//! Implemented without recursion: a stack of regions (the alive nodes of a component found
//! earlier) replaces the recursive calls. Popping a region runs Tarjan on it; every component of
//! two or more nodes loses its top-ranked node (ranked with degrees counted *inside* the
//! component, as `SelectVertexByPolicy(S, P)` sees `S` as a graph), the graph is trimmed, and
//! the rest of the component is pushed back as a new region. Each round costs
//! `O(|V| + |E|)` and removes at least one node, so the whole run is `O(|V| (|V| + |E|))`.
//!
//! The *hybrid* variant (§4.1 "Hybrid Algorithm") solves every component of at most `m` nodes
//! exactly instead, falling back to the greedy step when the exact search runs out of budget.
//! The *exact* variant solves every component exactly and fails when one is too large or too
//! hard. Components are independent (no cycle spans two of them), so solving each one optimally
//! gives a minimum FVS of the graph.

use super::FvsScratch;
use super::exact::MAX_EXACT_NODES;
use super::policy::{Policy, rank};
use crate::graph::DependencyGraph;
use crate::trim::trim;
use rand::RngExt;
use txlab_core::Error;

/// When to use the exact search on a component.
#[derive(Debug, Clone, Copy)]
pub(crate) enum ExactUse {
    /// Never (Algorithm 1).
    Never,
    /// On components of at most `max_nodes` nodes; greedy when larger or over `budget`.
    UpTo { max_nodes: usize, budget: u64 },
    /// On every component; an error when one is larger than 64 nodes or over `budget`.
    Always { budget: u64 },
}

/// Appends a feedback vertex set of `graph` to `abort` (module docs).
pub(crate) fn scc_greedy(
    graph: &DependencyGraph,
    policy: &Policy<'_>,
    exact_use: ExactUse,
    s: &mut FvsScratch,
    abort: &mut Vec<u32>,
) -> Result<(), Error> {
    let FvsScratch {
        residual,
        tarjan,
        comp,
        frames,
        frame_nodes,
        work,
        exact,
        rng,
        ..
    } = s;
    let n = graph.node_count();
    residual.reset(graph);
    trim(graph, residual);
    comp.clear();
    comp.resize(n, 0);
    let mut next_comp = 1u32;
    frames.clear();
    frame_nodes.clear();
    frame_nodes.extend(residual.alive_nodes().map(|v| v as u32));
    frames.push((0, frame_nodes.len() as u32, 0));
    while let Some((start, end, region)) = frames.pop() {
        work.clear();
        work.extend(
            frame_nodes[start as usize..end as usize]
                .iter()
                .copied()
                .filter(|&v| residual.is_alive(v as usize)),
        );
        frame_nodes.truncate(start as usize);
        if work.len() < 2 {
            continue;
        }
        tarjan.run(graph, residual, comp, region, work, &mut next_comp);
        for i in 0..tarjan.count() {
            let component = tarjan.component(i);
            let c = comp[component[0] as usize];
            let exact_budget = match exact_use {
                ExactUse::Never => None,
                ExactUse::UpTo { max_nodes, budget } => {
                    (component.len() <= max_nodes).then_some(budget)
                }
                ExactUse::Always { budget } => {
                    if component.len() > MAX_EXACT_NODES {
                        return Err(Error::invalid(
                            "component size",
                            component.len(),
                            format!(
                                "the exact search handles strongly connected components of at \
                                 most {MAX_EXACT_NODES} transactions; use the hybrid algorithm"
                            ),
                        ));
                    }
                    Some(budget)
                }
            };
            if let Some(budget) = exact_budget {
                let before = abort.len();
                let member = |w: usize| residual.is_alive(w) && comp[w] == c;
                if exact.solve(graph, member, component, budget, abort) {
                    for &v in &abort[before..] {
                        residual.remove(graph, v as usize);
                    }
                    trim(graph, residual);
                    continue;
                }
                if let ExactUse::Always { budget } = exact_use {
                    return Err(Error::invalid(
                        "exact search budget",
                        budget,
                        format!(
                            "enough search states for a component of {} transactions; raise \
                             it or use the hybrid algorithm",
                            component.len()
                        ),
                    ));
                }
            }
            // Greedy step: remove the component's top-ranked node.
            let member = |w: u32| residual.is_alive(w as usize) && comp[w as usize] == c;
            let victim = if let Policy::Random = policy {
                component[rng.random_range(0..component.len())]
            } else {
                let mut best: Option<((f64, f64), u32)> = None;
                for &v in component {
                    let din = graph
                        .predecessors(v as usize)
                        .iter()
                        .filter(|&&u| member(u))
                        .count();
                    let dout = graph
                        .successors(v as usize)
                        .iter()
                        .filter(|&&w| member(w))
                        .count();
                    let candidate = (policy.score(v as usize, din as u32, dout as u32, rng), v);
                    if best.is_none_or(|b| rank(&candidate, &b).is_gt()) {
                        best = Some(candidate);
                    }
                }
                best.expect("a component has at least two nodes").1
            };
            abort.push(victim);
            residual.remove(graph, victim as usize);
            trim(graph, residual);
            let start = frame_nodes.len() as u32;
            frame_nodes.extend(
                component
                    .iter()
                    .copied()
                    .filter(|&v| residual.is_alive(v as usize)),
            );
            frames.push((start, frame_nodes.len() as u32, c));
        }
    }
    Ok(())
}
