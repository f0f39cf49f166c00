//! The worked example of `docs/protocols/batch.md`: twelve transactions, every algorithm's
//! abort set and validation order as the document states them.

use txlab_batch::{Algorithm, DependencyGraph, GraphBuilder, Policy, ReorderScratch, reorder};

/// Edge `i` is key `'a' + i`: read by the edge's source, written by its target.
const EDGES: [(usize, usize); 18] = [
    (0, 1),
    (1, 2),
    (2, 0),
    (2, 3),
    (3, 1),
    (4, 5),
    (5, 4),
    (5, 6),
    (6, 5),
    (6, 7),
    (7, 6),
    (3, 4),
    (8, 4),
    (7, 9),
    (10, 11),
    (11, 10),
    (11, 0),
    (2, 9),
];

fn example() -> DependencyGraph {
    let key = |i: usize| (b'a' + i as u8) as char;
    let mut builder = GraphBuilder::new();
    for t in 0..12 {
        let reads: Vec<char> = (0..EDGES.len())
            .filter(|&i| EDGES[i].0 == t)
            .map(key)
            .collect();
        let writes: Vec<char> = (0..EDGES.len())
            .filter(|&i| EDGES[i].1 == t)
            .map(key)
            .collect();
        builder.push(&reads, &writes).unwrap();
    }
    builder.build().clone()
}

#[test]
fn the_documented_results_hold() {
    let g = example();
    assert_eq!(g, DependencyGraph::from_edges(12, &EDGES).unwrap());
    let restarts = [0, 3, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0];
    let cases: Vec<(Algorithm, Policy<'_>, Vec<usize>, Vec<usize>)> = vec![
        (
            Algorithm::SccGreedy,
            Policy::ProdDegree,
            vec![1, 5, 6, 10],
            vec![2, 7, 8, 11, 3, 9, 0, 4],
        ),
        (
            Algorithm::SccGreedy,
            Policy::MaxDegree,
            vec![1, 5, 6, 10],
            vec![2, 7, 8, 11, 3, 9, 0, 4],
        ),
        (
            Algorithm::SccGreedy,
            Policy::SumDegree,
            vec![1, 5, 6, 10],
            vec![2, 7, 8, 11, 3, 9, 0, 4],
        ),
        (
            Algorithm::SortGreedy { multi: 1 },
            Policy::ProdDegree,
            vec![0, 1, 5, 6, 10],
            vec![2, 7, 8, 11, 3, 9, 4],
        ),
        (
            Algorithm::SortGreedy { multi: 2 },
            Policy::ProdDegree,
            vec![0, 1, 5, 6, 10],
            vec![2, 7, 8, 11, 3, 9, 4],
        ),
        (
            Algorithm::hybrid(3),
            Policy::ProdDegree,
            vec![1, 5, 6, 11],
            vec![2, 7, 8, 10, 0, 3, 9, 4],
        ),
        (
            Algorithm::exact(),
            Policy::ProdDegree,
            vec![2, 5, 7, 11],
            vec![0, 3, 6, 8, 9, 10, 1, 4],
        ),
        (
            Algorithm::SccGreedy,
            Policy::Rct {
                restarts: &restarts,
            },
            vec![2, 4, 6, 10],
            vec![3, 5, 7, 8, 11, 9, 0, 1],
        ),
        (
            Algorithm::SccGreedy,
            Policy::Rdeg {
                restarts: &restarts,
            },
            vec![2, 4, 6, 10],
            vec![3, 5, 7, 8, 11, 9, 0, 1],
        ),
    ];
    let mut scratch = ReorderScratch::new(1);
    for (algorithm, policy, abort, order) in cases {
        let r = reorder(&g, algorithm, policy, &mut scratch).unwrap();
        assert_eq!(
            (&r.abort, &r.order),
            (&abort, &order),
            "{algorithm} / {}",
            policy.name()
        );
    }
}
