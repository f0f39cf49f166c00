//! The two computations of the commit phase (§3.2): a transaction's strongly connected
//! component, and the component's execution order.
//!
//! **Component.** A server computes `T`'s component only once every vertex of `A`, the set of
//! `T` and its undecided ancestors, is at least `COMMITTING`, so the incoming edges of all of them
//! are known. A vertex `X` is in `T`'s component iff `X` reaches `T` and `T` reaches `X`. Every
//! vertex reaching `T` is an ancestor, and undecided (a decided ancestor would have decided `T`
//! with it), so it is in `A`; and every vertex on a path from `T` to such an `X` reaches `T`
//! too, so that path lies inside `A`, whose edges are all known. Hence the component is `A`
//! intersected with what `T` reaches by a forward walk inside `A`: two breadth-first walks over
//! known edges, the same answer on every server. (This is the single-vertex case of Tarjan's
//! algorithm; `txlab-check`'s `scc` module computes every component of a history instead.)
//!
//! **Order.** The component is sorted topologically by its `i`-edges (the immediate pieces
//! already ran in that order), ties broken by the smallest transaction id (Kahn's algorithm with
//! a `BTreeSet` of ready vertices). The offline checker guarantees there is no cycle of
//! `i`-edges; if one appears anyway the rest of the component follows in id order and the caller
//! counts it as an internal error.

use super::{EDGE_I, Graph};
use std::collections::{BTreeMap, BTreeSet};
use txlab_core::protocol::history::TxnId;

/// `T`'s component within `ancestors` (`T` and its undecided ancestors, sorted; module docs),
/// sorted by id.
pub fn component_of(graph: &Graph, t: TxnId, ancestors: &[TxnId]) -> Vec<TxnId> {
    let inside = |x: TxnId| ancestors.binary_search(&x).is_ok();
    let mut children: BTreeMap<TxnId, Vec<TxnId>> = BTreeMap::new();
    for &x in ancestors {
        if let Some(v) = graph.get(x) {
            for &(p, _) in &v.parents {
                if inside(p) {
                    children.entry(p).or_default().push(x);
                }
            }
        }
    }
    let mut reached = BTreeSet::from([t]);
    let mut frontier = vec![t];
    while let Some(x) = frontier.pop() {
        for &c in children.get(&x).map_or(&[][..], Vec::as_slice) {
            if reached.insert(c) {
                frontier.push(c);
            }
        }
    }
    reached.into_iter().collect()
}

/// The execution order of `component` (sorted by id): topological by `i`-edges, ties by id
/// (module docs). The flag is true if an `i`-cycle forced the id-order fallback.
pub fn execution_order(graph: &Graph, component: &[TxnId]) -> (Vec<TxnId>, bool) {
    let inside = |x: TxnId| component.binary_search(&x).is_ok();
    let mut indegree: BTreeMap<TxnId, usize> = component.iter().map(|&x| (x, 0)).collect();
    let mut children: BTreeMap<TxnId, Vec<TxnId>> = BTreeMap::new();
    for &x in component {
        if let Some(v) = graph.get(x) {
            for &(p, label) in &v.parents {
                if label & EDGE_I != 0 && inside(p) {
                    children.entry(p).or_default().push(x);
                    *indegree.get_mut(&x).expect("member") += 1;
                }
            }
        }
    }
    let mut ready: BTreeSet<TxnId> = indegree
        .iter()
        .filter(|&(_, &d)| d == 0)
        .map(|(&x, _)| x)
        .collect();
    let mut order = Vec::with_capacity(component.len());
    while let Some(x) = ready.pop_first() {
        order.push(x);
        for &c in children.get(&x).map_or(&[][..], Vec::as_slice) {
            let d = indegree.get_mut(&c).expect("member");
            *d -= 1;
            if *d == 0 {
                ready.insert(c);
            }
        }
    }
    let cycle = order.len() < component.len();
    if cycle {
        let placed: BTreeSet<TxnId> = order.iter().copied().collect();
        order.extend(component.iter().filter(|x| !placed.contains(x)));
    }
    (order, cycle)
}
