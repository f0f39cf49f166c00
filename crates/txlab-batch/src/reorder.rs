//! The reordering entry point: which transactions of a batch to abort, and in which order to
//! validate the rest.
//!
//! [`reorder`] runs a feedback vertex set [`Algorithm`] under a [`Policy`] on the batch's
//! [`DependencyGraph`] and returns a [`Reordering`]: the abort set (the FVS) and a topological
//! order of the remaining graph, computed with Kahn's algorithm from the nodes without incoming
//! edges, first-in first-out (a batch without conflicts keeps its arrival order). By the
//! argument in [`crate::graph`], every transaction outside the abort set then passes backward
//! validation when the batch is validated in that order.
//!
//! Postconditions (checked, an [`Error::Internal`] otherwise): `abort` is sorted and
//! duplicate-free, `order` lists every other transaction exactly once, and every edge between
//! two listed transactions goes forward in `order`.
//!
//! All buffers live in [`ReorderScratch`]; reusing one scratch across batches of similar size
//! allocates nothing after the first batches.

use crate::fvs::{Algorithm, FvsScratch, Policy, Refinement, feedback_vertex_set};
use crate::graph::DependencyGraph;
use txlab_core::Error;

/// The result of reordering one batch.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reordering {
    /// Transactions to abort (the feedback vertex set), ascending.
    pub abort: Vec<usize>,
    /// The other transactions in validation (serialization) order.
    pub order: Vec<usize>,
}

/// Buffers of [`reorder`], reused across batches. Holds the random generator of
/// [`Policy::Random`], so results are reproducible from the seed and the sequence of calls.
#[derive(Debug, Clone)]
pub struct ReorderScratch {
    fvs: FvsScratch,
    abort_nodes: Vec<u32>,
    aborted: Vec<bool>,
    pending: Vec<u32>,
    result: Reordering,
}

impl ReorderScratch {
    /// Empty buffers; `seed` seeds the random policy's generator.
    pub fn new(seed: u64) -> Self {
        Self {
            fvs: FvsScratch::new(seed),
            abort_nodes: Vec::new(),
            aborted: Vec::new(),
            pending: Vec::new(),
            result: Reordering::default(),
        }
    }

    /// The result of the last successful [`reorder`].
    pub fn result(&self) -> &Reordering {
        &self.result
    }
}

impl Default for ReorderScratch {
    fn default() -> Self {
        Self::new(0)
    }
}

/// Chooses the transactions of `graph` to abort with `algorithm` under `policy` and orders the
/// rest for validation (module docs).
///
/// Errors: invalid algorithm parameters or policy data (length not the node count, a
/// non-finite priority), and for [`Algorithm::Exact`] a component too large or too hard.
///
/// ```
/// use txlab_batch::{Algorithm, GraphBuilder, Policy, ReorderScratch, reorder};
/// let mut builder = GraphBuilder::<u64>::new();
/// builder.push(&[1], &[2]).unwrap(); // t0 reads 1, writes 2
/// builder.push(&[2], &[3]).unwrap(); // t1 reads 2, writes 3
/// builder.push(&[3], &[1]).unwrap(); // t2 reads 3, writes 1: a 3-cycle
/// let mut scratch = ReorderScratch::new(1);
/// let r = reorder(builder.build(), Algorithm::SccGreedy, Policy::ProdDegree, &mut scratch).unwrap();
/// assert_eq!(r.abort.len(), 1);
/// assert_eq!(r.order.len(), 2);
/// ```
pub fn reorder<'s>(
    graph: &DependencyGraph,
    algorithm: Algorithm,
    policy: Policy<'_>,
    scratch: &'s mut ReorderScratch,
) -> Result<&'s Reordering, Error> {
    reorder_refined(graph, algorithm, policy, Refinement::None, scratch)
}

/// The feedback vertex set alone, without the serialization order: the nodes `algorithm` and
/// `policy` (then `refinement`) choose to abort, in the order the algorithm chose them. This is
/// the part the paper's running-time comparison (Figure 6) measures; [`reorder_refined`] adds
/// Kahn's algorithm over the kept transactions (`O(|V| + |E|)`, the same for every algorithm).
/// Errors as [`reorder_refined`], except that a result left cyclic is not detected here.
pub fn abort_set<'s>(
    graph: &DependencyGraph,
    algorithm: Algorithm,
    policy: Policy<'_>,
    refinement: Refinement,
    scratch: &'s mut ReorderScratch,
) -> Result<&'s [u32], Error> {
    algorithm.validate()?;
    policy.validate(graph.node_count())?;
    scratch.abort_nodes.clear();
    feedback_vertex_set(
        graph,
        algorithm,
        &policy,
        refinement,
        &mut scratch.fvs,
        &mut scratch.abort_nodes,
    )?;
    Ok(&scratch.abort_nodes)
}

/// [`reorder`] with a [`Refinement`] of the algorithm's abort set before the order is computed
/// (e.g. [`Refinement::Minimal`]: no aborted transaction could be kept alone).
pub fn reorder_refined<'s>(
    graph: &DependencyGraph,
    algorithm: Algorithm,
    policy: Policy<'_>,
    refinement: Refinement,
    scratch: &'s mut ReorderScratch,
) -> Result<&'s Reordering, Error> {
    abort_set(graph, algorithm, policy, refinement, scratch)?;
    let ReorderScratch {
        abort_nodes,
        aborted,
        pending,
        result,
        ..
    } = scratch;
    let n = graph.node_count();
    aborted.clear();
    aborted.resize(n, false);
    result.abort.clear();
    for &v in abort_nodes.iter() {
        if aborted[v as usize] {
            return Err(Error::Internal(format!(
                "{algorithm} chose transaction {v} twice"
            )));
        }
        aborted[v as usize] = true;
    }
    result.abort.extend((0..n).filter(|&v| aborted[v]));
    // Kahn's algorithm; `order` doubles as the FIFO queue.
    pending.clear();
    pending.extend((0..n).map(|v| {
        graph
            .predecessors(v)
            .iter()
            .filter(|&&u| !aborted[u as usize])
            .count() as u32
    }));
    let order = &mut result.order;
    order.clear();
    order.extend((0..n).filter(|&v| !aborted[v] && pending[v] == 0));
    let mut head = 0;
    while head < order.len() {
        let v = order[head];
        head += 1;
        for &w in graph.successors(v) {
            let w = w as usize;
            if !aborted[w] {
                pending[w] -= 1;
                if pending[w] == 0 {
                    order.push(w);
                }
            }
        }
    }
    if order.len() + result.abort.len() != n {
        return Err(Error::Internal(format!(
            "{algorithm} with policy {} left a cycle: {} of {} kept transactions ordered",
            policy.name(),
            order.len(),
            n - result.abort.len()
        )));
    }
    Ok(result)
}
