//! Reordering end to end: the returned order passes backward validation, every algorithm
//! returns a feedback vertex set and a topological order, greedy is never better than the exact
//! minimum, and hand-made graphs give the expected sets.

use proptest::prelude::*;
use std::collections::HashSet;
use txlab_batch::fvs::DEFAULT_EXACT_BUDGET;
use txlab_batch::{
    Algorithm, DependencyGraph, GraphBuilder, Policy, Refinement, ReorderScratch, Reordering,
    abort_set, reorder, reorder_refined,
};

/// Every algorithm with the degree policies, as the paper evaluates them.
fn all_algorithms() -> Vec<(Algorithm, Policy<'static>)> {
    vec![
        (Algorithm::SccGreedy, Policy::Random),
        (Algorithm::SccGreedy, Policy::MaxDegree),
        (Algorithm::SccGreedy, Policy::SumDegree),
        (Algorithm::SccGreedy, Policy::ProdDegree),
        (Algorithm::RandomBest { runs: 3 }, Policy::Random),
        (Algorithm::SortGreedy { multi: 1 }, Policy::ProdDegree),
        (Algorithm::SortGreedy { multi: 2 }, Policy::ProdDegree),
        (Algorithm::SortGreedy { multi: 3 }, Policy::MaxDegree),
        (Algorithm::SortGreedy { multi: 2 }, Policy::Random),
        (Algorithm::hybrid(5), Policy::ProdDegree),
        (Algorithm::hybrid(64), Policy::ProdDegree),
        (Algorithm::exact(), Policy::ProdDegree),
    ]
}

/// Checks a reordering of `graph`: abort and order partition the nodes, abort is sorted, and
/// every edge between kept nodes goes forward in the order (so the kept graph is acyclic).
fn check_reordering(graph: &DependencyGraph, r: &Reordering) -> Result<(), String> {
    let n = graph.node_count();
    if !r.abort.windows(2).all(|w| w[0] < w[1]) {
        return Err(format!("abort set not sorted/unique: {:?}", r.abort));
    }
    let mut position = vec![usize::MAX; n];
    for (i, &v) in r.order.iter().enumerate() {
        if position[v] != usize::MAX {
            return Err(format!("{v} ordered twice"));
        }
        position[v] = i;
    }
    for &v in &r.abort {
        if position[v] != usize::MAX {
            return Err(format!("{v} both aborted and ordered"));
        }
    }
    if r.abort.len() + r.order.len() != n {
        return Err(format!(
            "{} aborted + {} ordered != {n}",
            r.abort.len(),
            r.order.len()
        ));
    }
    for (u, v) in graph.edges() {
        if position[u] != usize::MAX && position[v] != usize::MAX && position[u] > position[v] {
            return Err(format!("edge {u} -> {v} goes backwards in {:?}", r.order));
        }
    }
    Ok(())
}

/// Backward validation of the batch in `order` (the paper's §2 rule restricted to one batch):
/// a transaction fails if a key it read was written by a transaction validated before it.
/// Returns the transactions that fail.
fn failing_transactions(sets: &[(Vec<u64>, Vec<u64>)], order: &[usize]) -> Vec<usize> {
    let mut written = HashSet::new();
    let mut failed = Vec::new();
    for &t in order {
        let (reads, writes) = &sets[t];
        if reads.iter().any(|k| written.contains(k)) {
            failed.push(t);
            continue;
        }
        written.extend(writes.iter().copied());
    }
    failed
}

/// Size of a minimum FVS by trying all subsets (small graphs only).
fn brute_force_minimum(graph: &DependencyGraph) -> usize {
    let n = graph.node_count();
    (0..1u32 << n)
        .filter(|&mask| is_acyclic_without(graph, mask))
        .map(|mask| mask.count_ones() as usize)
        .min()
        .expect("removing every node leaves an acyclic graph")
}

fn is_acyclic_without(graph: &DependencyGraph, removed: u32) -> bool {
    let n = graph.node_count();
    let kept = |v: usize| removed & (1 << v) == 0;
    let mut pending: Vec<usize> = (0..n)
        .map(|v| {
            graph
                .predecessors(v)
                .iter()
                .filter(|&&u| kept(u as usize))
                .count()
        })
        .collect();
    let mut queue: Vec<usize> = (0..n).filter(|&v| kept(v) && pending[v] == 0).collect();
    let mut seen = 0;
    while let Some(v) = queue.pop() {
        seen += 1;
        for &w in graph.successors(v) {
            let w = w as usize;
            if kept(w) {
                pending[w] -= 1;
                if pending[w] == 0 {
                    queue.push(w);
                }
            }
        }
    }
    seen == (0..n).filter(|&v| kept(v)).count()
}

fn aborts(graph: &DependencyGraph, algorithm: Algorithm, policy: Policy<'_>) -> Vec<usize> {
    let mut scratch = ReorderScratch::new(7);
    let r = reorder(graph, algorithm, policy, &mut scratch).unwrap();
    check_reordering(graph, r).unwrap();
    r.abort.clone()
}

#[test]
fn a_three_cycle_loses_exactly_one_transaction() {
    let g = DependencyGraph::from_edges(3, &[(0, 1), (1, 2), (2, 0)]).unwrap();
    for (a, p) in all_algorithms() {
        assert_eq!(aborts(&g, a, p).len(), 1, "{a} / {}", p.name());
    }
    // Deterministic policies break the tie towards the lowest node id.
    assert_eq!(
        aborts(&g, Algorithm::SccGreedy, Policy::ProdDegree),
        vec![0]
    );
}

#[test]
fn two_cycles_sharing_a_node_lose_only_the_shared_node() {
    // 0 -> 1 -> 2 -> 0 and 2 -> 3 -> 4 -> 2 share node 2 (in 2, out 2).
    let g =
        DependencyGraph::from_edges(5, &[(0, 1), (1, 2), (2, 0), (2, 3), (3, 4), (4, 2)]).unwrap();
    for (a, p) in all_algorithms() {
        if matches!(p, Policy::Random) {
            let n = aborts(&g, a, p).len();
            assert!((1..=2).contains(&n), "{a} / random aborted {n}");
        } else {
            assert_eq!(aborts(&g, a, p), vec![2], "{a} / {}", p.name());
        }
    }
}

#[test]
fn a_dag_needs_no_aborts_and_keeps_arrival_order_among_sources() {
    let g = DependencyGraph::from_edges(6, &[(0, 3), (1, 3), (3, 4), (2, 5), (4, 5)]).unwrap();
    for (a, p) in all_algorithms() {
        let mut scratch = ReorderScratch::new(1);
        let r = reorder(&g, a, p, &mut scratch).unwrap();
        assert!(r.abort.is_empty(), "{a}");
        assert_eq!(r.order, vec![0, 1, 2, 3, 4, 5], "{a}");
    }
    let empty = DependencyGraph::new();
    let mut scratch = ReorderScratch::new(1);
    let r = reorder(
        &empty,
        Algorithm::SccGreedy,
        Policy::ProdDegree,
        &mut scratch,
    )
    .unwrap();
    assert!(r.abort.is_empty() && r.order.is_empty());
}

/// A graph where ranking by `max(in, out)` (or `in + out`) removes a node that breaks only some
/// cycles, while `in × out` removes the node on every cycle.
///
/// Node 0 has out-degree 4 and in-degree 1 (max 4, sum 5, prod 4); node 1 has in-degree 3 and
/// out-degree 2 (max 3, sum 5, prod 6). Every cycle (0 ⇄ 1, 1 → 2 → 3 → 1, 0 → 4 → 1 → 0, ...)
/// passes through node 1, but removing node 0 leaves the cycle 1 → 2 → 3 → 1.
#[test]
fn prod_degree_beats_max_degree() {
    let edges = [
        (0, 1),
        (0, 2),
        (0, 3),
        (0, 4),
        (1, 0),
        (1, 2),
        (2, 3),
        (3, 1),
        (4, 1),
    ];
    let g = DependencyGraph::from_edges(5, &edges).unwrap();
    assert_eq!(brute_force_minimum(&g), 1);
    assert_eq!(aborts(&g, Algorithm::exact(), Policy::ProdDegree), vec![1]);
    assert_eq!(
        aborts(&g, Algorithm::SccGreedy, Policy::ProdDegree),
        vec![1]
    );
    assert_eq!(
        aborts(&g, Algorithm::SortGreedy { multi: 1 }, Policy::ProdDegree),
        vec![1]
    );
    let max = aborts(&g, Algorithm::SccGreedy, Policy::MaxDegree);
    assert_eq!(max.len(), 2, "max-degree chose {max:?}");
    assert!(max.contains(&0), "max-degree chose {max:?}");
    // Sum-degree ties nodes 0 and 1 at 5 and takes the lower id, 0.
    assert_eq!(aborts(&g, Algorithm::SccGreedy, Policy::SumDegree).len(), 2);
}

#[test]
fn weighted_policies_protect_restarted_and_valuable_transactions() {
    let g = DependencyGraph::from_edges(3, &[(0, 1), (1, 2), (2, 0)]).unwrap();
    // Node 0 has restarted often: rct and rdeg take another one.
    let restarts = [5, 0, 1];
    assert_eq!(
        aborts(
            &g,
            Algorithm::SccGreedy,
            Policy::Rct {
                restarts: &restarts
            }
        ),
        vec![1]
    );
    assert_eq!(
        aborts(
            &g,
            Algorithm::SortGreedy { multi: 1 },
            Policy::Rdeg {
                restarts: &restarts
            }
        ),
        vec![1]
    );
    let keep = [3.0, 9.0, 1.0];
    assert_eq!(
        aborts(&g, Algorithm::SccGreedy, Policy::Priority { keep: &keep }),
        vec![2]
    );
    // rdeg still prefers a node on every cycle when restarts are equal: the shared node of two
    // cycles has prod 4 against 1.
    let g =
        DependencyGraph::from_edges(5, &[(0, 1), (1, 2), (2, 0), (2, 3), (3, 4), (4, 2)]).unwrap();
    let restarts = [0, 0, 1, 0, 0];
    // 4 / 2^1 = 2 > 1: node 2 still goes.
    assert_eq!(
        aborts(
            &g,
            Algorithm::SccGreedy,
            Policy::Rdeg {
                restarts: &restarts
            }
        ),
        vec![2]
    );
    // With rct node 2 is protected, so two others must go.
    assert_eq!(
        aborts(
            &g,
            Algorithm::SccGreedy,
            Policy::Rct {
                restarts: &restarts
            }
        )
        .len(),
        2
    );
}

#[test]
fn bad_parameters_are_errors_naming_the_value() {
    let g = DependencyGraph::from_edges(3, &[(0, 1), (1, 2), (2, 0)]).unwrap();
    let mut s = ReorderScratch::new(1);
    let cases: Vec<(Algorithm, Policy<'_>, &str)> = vec![
        (
            Algorithm::SortGreedy { multi: 0 },
            Policy::ProdDegree,
            "multi = 0",
        ),
        (
            Algorithm::RandomBest { runs: 0 },
            Policy::Random,
            "runs = 0",
        ),
        (
            Algorithm::Hybrid {
                max_exact: 65,
                budget: 10,
            },
            Policy::ProdDegree,
            "max_exact = 65",
        ),
        (
            Algorithm::Exact { budget: 0 },
            Policy::ProdDegree,
            "budget = 0",
        ),
        (
            Algorithm::SccGreedy,
            Policy::Rct { restarts: &[1] },
            "length = 1",
        ),
    ];
    for (a, p, needle) in cases {
        let e = reorder(&g, a, p, &mut s).unwrap_err().to_string();
        assert!(e.contains(needle), "{e}");
    }
    // A complete graph of 70 nodes is one component too large for the exact search.
    let edges: Vec<_> = (0..70)
        .flat_map(|u| (0..70).filter(move |&v| v != u).map(move |v| (u, v)))
        .collect();
    let big = DependencyGraph::from_edges(70, &edges).unwrap();
    let e = reorder(&big, Algorithm::exact(), Policy::ProdDegree, &mut s)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("component size = 70") && e.contains("at most 64"),
        "{e}"
    );
    // ... and a budget of one state is too small for a complete graph of 10 nodes.
    let edges: Vec<_> = (0..10)
        .flat_map(|u| (0..10).filter(move |&v| v != u).map(move |v| (u, v)))
        .collect();
    let k10 = DependencyGraph::from_edges(10, &edges).unwrap();
    let e = reorder(
        &k10,
        Algorithm::Exact { budget: 1 },
        Policy::ProdDegree,
        &mut s,
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("budget = 1"), "{e}");
    // The hybrid falls back to greedy instead; a complete graph needs n - 1 aborts.
    let r = reorder(
        &k10,
        Algorithm::Hybrid {
            max_exact: 10,
            budget: 1,
        },
        Policy::ProdDegree,
        &mut s,
    )
    .unwrap();
    assert_eq!(r.abort.len(), 9);
    let r = reorder(&k10, Algorithm::hybrid(10), Policy::ProdDegree, &mut s).unwrap();
    assert_eq!(r.abort.len(), 9);
}

/// Random batches over a small key space: every kept transaction passes backward validation in
/// the returned order, while validating the same batch in arrival order without aborts fails
/// some transaction in most batches (so the check has teeth).
#[test]
fn kept_transactions_pass_backward_validation_in_the_returned_order() {
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    let mut next = move |bound: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % bound
    };
    let mut builder = GraphBuilder::new();
    let mut scratch = ReorderScratch::new(3);
    let mut arrival_order_failed = 0;
    for batch in 0..200 {
        let size = 2 + next(30) as usize;
        let keys = 5 + next(60);
        let sets: Vec<(Vec<u64>, Vec<u64>)> = (0..size)
            .map(|_| {
                let reads: Vec<u64> = (0..1 + next(5)).map(|_| next(keys)).collect();
                let mut writes: Vec<u64> = (0..next(4)).map(|_| next(keys)).collect();
                writes.push(reads[0]); // one read-modify-write, like the micro benchmark
                (reads, writes)
            })
            .collect();
        builder.reset();
        for (r, w) in &sets {
            builder.push(r, w).unwrap();
        }
        let graph = builder.build().clone();
        let arrival: Vec<usize> = (0..size).collect();
        if !failing_transactions(&sets, &arrival).is_empty() {
            arrival_order_failed += 1;
        }
        for (a, p) in all_algorithms() {
            let a = match a {
                // Dense random batches can have components beyond the exact search's reach.
                Algorithm::Exact { .. } => Algorithm::hybrid(16),
                other => other,
            };
            let r = reorder(&graph, a, p, &mut scratch).unwrap();
            check_reordering(&graph, r).unwrap();
            let failed = failing_transactions(&sets, &r.order);
            assert!(
                failed.is_empty(),
                "batch {batch}, {a} / {}: {failed:?} fail",
                p.name()
            );
        }
    }
    assert!(
        arrival_order_failed > 100,
        "only {arrival_order_failed} of 200 batches had conflicts"
    );
}

/// Whether `graph` without the nodes in `removed` still has a cycle (Kahn's algorithm).
fn has_cycle_without(graph: &DependencyGraph, removed: &[usize]) -> bool {
    let n = graph.node_count();
    let alive: Vec<bool> = (0..n).map(|v| !removed.contains(&v)).collect();
    let mut indegree: Vec<usize> = (0..n)
        .map(|v| {
            graph
                .predecessors(v)
                .iter()
                .filter(|&&u| alive[u as usize])
                .count()
        })
        .collect();
    let mut queue: Vec<usize> = (0..n).filter(|&v| alive[v] && indegree[v] == 0).collect();
    let mut seen = 0;
    while let Some(v) = queue.pop() {
        seen += 1;
        for &w in graph.successors(v) {
            let w = w as usize;
            if alive[w] {
                indegree[w] -= 1;
                if indegree[w] == 0 {
                    queue.push(w);
                }
            }
        }
    }
    seen < alive.iter().filter(|&&a| a).count()
}

fn arbitrary_graph(max_nodes: usize) -> impl Strategy<Value = DependencyGraph> {
    (1..=max_nodes).prop_flat_map(|n| {
        proptest::collection::vec((0..n, 0..n), 0..=n * 3).prop_map(move |pairs| {
            let edges: Vec<_> = pairs.into_iter().filter(|(u, v)| u != v).collect();
            DependencyGraph::from_edges(n, &edges).unwrap()
        })
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn every_algorithm_returns_an_fvs_and_greedy_never_beats_the_exact_minimum(
        graph in arbitrary_graph(10),
        seed in any::<u64>(),
    ) {
        let minimum = brute_force_minimum(&graph);
        let mut scratch = ReorderScratch::new(seed);
        for (a, p) in all_algorithms() {
            let r = reorder(&graph, a, p, &mut scratch).unwrap();
            prop_assert!(check_reordering(&graph, r).is_ok(), "{a}: {:?}", check_reordering(&graph, r));
            match a {
                Algorithm::Exact { .. } | Algorithm::Hybrid { max_exact: 64, .. } => {
                    prop_assert_eq!(r.abort.len(), minimum, "{} is not minimum", a)
                }
                _ => prop_assert!(r.abort.len() >= minimum, "{} beat the minimum", a),
            }
        }
        let restarts: Vec<u32> = (0..graph.node_count() as u32).map(|v| v % 3).collect();
        let keep: Vec<f64> = (0..graph.node_count()).map(|v| (v * 7 % 5) as f64).collect();
        for p in [Policy::Rct { restarts: &restarts }, Policy::Rdeg { restarts: &restarts }, Policy::Priority { keep: &keep }] {
            for a in [Algorithm::SccGreedy, Algorithm::SortGreedy { multi: 2 }, Algorithm::hybrid(4)] {
                let r = reorder(&graph, a, p, &mut scratch).unwrap();
                prop_assert!(check_reordering(&graph, r).is_ok());
                prop_assert!(r.abort.len() >= minimum);
            }
        }
    }

    /// `abort_set` (the FVS alone, what the running-time bench measures) is exactly the abort
    /// set `reorder_refined` returns, for every algorithm and refinement (same seed, so the random
    /// policy draws the same numbers).
    #[test]
    fn abort_set_is_the_reordering_abort_set(graph in arbitrary_graph(12), seed in any::<u64>()) {
        for (a, p) in all_algorithms() {
            for refinement in [Refinement::None, Refinement::Minimal] {
                let mut alone = ReorderScratch::new(seed);
                let mut set: Vec<usize> = abort_set(&graph, a, p, refinement, &mut alone)
                    .unwrap()
                    .iter()
                    .map(|&v| v as usize)
                    .collect();
                set.sort_unstable();
                let mut full = ReorderScratch::new(seed);
                let r = reorder_refined(&graph, a, p, refinement, &mut full).unwrap();
                prop_assert_eq!(&set, &r.abort, "{} {:?}", a, refinement);
            }
        }
    }

    /// The sort-based greedy ranks the degree policies by integer keys and the others by float
    /// scores; `Priority` with equal values ranks by prod-degree then node id, exactly as
    /// `ProdDegree`, so the two paths must choose the same transactions.
    #[test]
    fn sort_greedy_integer_and_float_rankings_agree(graph in arbitrary_graph(16), multi in 1usize..4) {
        let zeros = vec![0.0; graph.node_count()];
        let a = Algorithm::SortGreedy { multi };
        let mut scratch = ReorderScratch::new(1);
        let by_key = reorder(&graph, a, Policy::ProdDegree, &mut scratch).unwrap().abort.clone();
        let by_float = reorder(&graph, a, Policy::Priority { keep: &zeros }, &mut scratch).unwrap().abort.clone();
        prop_assert_eq!(by_key, by_float);
    }

    /// `Refinement::Minimal` returns a feedback vertex set no larger than the algorithm's own,
    /// contained in it, and minimal: putting back any one aborted transaction leaves a cycle.
    #[test]
    fn the_minimal_refinement_shrinks_to_a_minimal_fvs(
        graph in arbitrary_graph(12),
        seed in any::<u64>(),
    ) {
        let minimum = brute_force_minimum(&graph);
        let mut plain_scratch = ReorderScratch::new(seed);
        let mut refined_scratch = ReorderScratch::new(seed);
        for (a, p) in all_algorithms() {
            let plain = reorder(&graph, a, p, &mut plain_scratch).unwrap().abort.clone();
            let r = reorder_refined(&graph, a, p, Refinement::Minimal, &mut refined_scratch).unwrap();
            prop_assert!(check_reordering(&graph, r).is_ok(), "{a}: {:?}", check_reordering(&graph, r));
            prop_assert!(r.abort.len() >= minimum, "{} beat the minimum", a);
            prop_assert!(r.abort.iter().all(|v| plain.contains(v)), "{a}: {:?} not within {plain:?}", r.abort);
            for &v in &r.abort {
                let kept: Vec<usize> = r.abort.iter().copied().filter(|&u| u != v).collect();
                prop_assert!(has_cycle_without(&graph, &kept), "{a}: {v} could be kept too, abort {:?}", r.abort);
            }
        }
    }

    #[test]
    fn the_exact_search_is_minimum_on_larger_sparse_graphs(graph in arbitrary_graph(24)) {
        let mut scratch = ReorderScratch::new(0);
        let exact = reorder(&graph, Algorithm::Exact { budget: DEFAULT_EXACT_BUDGET }, Policy::ProdDegree, &mut scratch)
            .unwrap()
            .abort
            .len();
        let greedy = reorder(&graph, Algorithm::SccGreedy, Policy::ProdDegree, &mut scratch).unwrap().abort.len();
        prop_assert!(exact <= greedy);
    }
}
