//! The paper's Figures 5 and 6 on txlab's micro benchmark: average FVS size and running time per
//! algorithm against the Zipf skew, batch size 40.
//!
//! Run with
//! `CARGO_TARGET_DIR=/work/target-batch cargo test -p txlab-batch --release --test fvs_table -- --ignored --nocapture`.

use std::time::Instant;
use txlab_batch::{Algorithm, GraphBuilder, Policy, Refinement, ReorderScratch, reorder_refined};
use txlab_core::{AccessSet, Program};
use txlab_workload::{Generator, Micro, MicroConfig, Workload};

const BATCHES: usize = 200;
const BATCH_SIZE: usize = 40;

/// `BATCHES` batches of micro-benchmark transactions (100K keys, 5 reads, 5 writes, one RMW).
fn micro_batches(theta: f64) -> Vec<Vec<(Vec<u64>, Vec<u64>)>> {
    let micro = Micro::new(MicroConfig {
        theta,
        ..MicroConfig::default()
    })
    .unwrap();
    let mut generator = micro.generator(0, 42);
    let mut access = AccessSet::default();
    (0..BATCHES)
        .map(|_| {
            (0..BATCH_SIZE)
                .map(|_| {
                    access.clear();
                    generator.next().declare(&mut access);
                    let reads = access
                        .accesses
                        .iter()
                        .filter(|a| a.2.reads())
                        .map(|a| a.1)
                        .collect();
                    let writes = access
                        .accesses
                        .iter()
                        .filter(|a| a.2.writes())
                        .map(|a| a.1)
                        .collect();
                    (reads, writes)
                })
                .collect()
        })
        .collect()
}

#[test]
#[ignore = "prints the FVS-size table of the report; run explicitly (module docs)"]
fn fvs_size_and_time_per_algorithm_against_skew() {
    use Refinement::{Minimal, None as Plain};
    let algorithms: Vec<(&str, Algorithm, Policy<'static>, Refinement)> = vec![
        ("greedy_max", Algorithm::SccGreedy, Policy::MaxDegree, Plain),
        ("greedy_sum", Algorithm::SccGreedy, Policy::SumDegree, Plain),
        (
            "greedy_prod",
            Algorithm::SccGreedy,
            Policy::ProdDegree,
            Plain,
        ),
        ("random", Algorithm::SccGreedy, Policy::Random, Plain),
        (
            "random_3",
            Algorithm::RandomBest { runs: 3 },
            Policy::Random,
            Plain,
        ),
        (
            "greedy_sort",
            Algorithm::SortGreedy { multi: 2 },
            Policy::ProdDegree,
            Plain,
        ),
        (
            "hybrid_10",
            Algorithm::hybrid(10),
            Policy::ProdDegree,
            Plain,
        ),
        (
            "hybrid_15",
            Algorithm::hybrid(15),
            Policy::ProdDegree,
            Plain,
        ),
        (
            "hybrid_20",
            Algorithm::hybrid(20),
            Policy::ProdDegree,
            Plain,
        ),
        ("search", Algorithm::exact(), Policy::ProdDegree, Plain),
        // txlab's refinement (fvs::Refinement::Minimal) after the greedy algorithms.
        (
            "greedy_max+min",
            Algorithm::SccGreedy,
            Policy::MaxDegree,
            Minimal,
        ),
        (
            "greedy_sum+min",
            Algorithm::SccGreedy,
            Policy::SumDegree,
            Minimal,
        ),
        (
            "greedy_prod+min",
            Algorithm::SccGreedy,
            Policy::ProdDegree,
            Minimal,
        ),
        (
            "greedy_sort+min",
            Algorithm::SortGreedy { multi: 2 },
            Policy::ProdDegree,
            Minimal,
        ),
    ];
    let thetas = [0.5, 0.6, 0.7, 0.8, 0.9, 0.99];
    let mut builder = GraphBuilder::new();
    let mut scratch = ReorderScratch::new(1);
    let mut times = vec![vec![f64::NAN; thetas.len()]; algorithms.len()];
    print!("| algorithm |");
    for t in thetas {
        print!(" θ={t} |");
    }
    println!();
    println!("|---|{}", "---|".repeat(thetas.len()));
    let batches: Vec<_> = thetas.iter().map(|&t| micro_batches(t)).collect();
    let mut edges = vec![0.0; thetas.len()];
    let mut sizes = vec![vec![String::new(); thetas.len()]; algorithms.len()];
    for (ti, theta_batches) in batches.iter().enumerate() {
        let mut total_edges = 0;
        for (ai, (_, algorithm, policy, refinement)) in algorithms.iter().enumerate() {
            let mut total = 0usize;
            let mut failed = 0usize;
            let mut elapsed = 0.0;
            for batch in theta_batches {
                builder.reset();
                for (r, w) in batch {
                    builder.push(r, w).unwrap();
                }
                let graph = builder.build();
                if ai == 0 {
                    total_edges += graph.edge_count();
                }
                let start = Instant::now();
                match reorder_refined(graph, *algorithm, *policy, *refinement, &mut scratch) {
                    Ok(r) => total += r.abort.len(),
                    Err(_) => failed += 1,
                }
                elapsed += start.elapsed().as_secs_f64();
            }
            sizes[ai][ti] = if failed == 0 {
                format!("{:.2}", total as f64 / BATCHES as f64)
            } else {
                format!("n/a ({failed} over budget)")
            };
            times[ai][ti] = elapsed / BATCHES as f64 * 1e6;
        }
        edges[ti] = total_edges as f64 / BATCHES as f64;
    }
    print!("| edges per batch |");
    for e in &edges {
        print!(" {e:.1} |");
    }
    println!();
    for (ai, (name, ..)) in algorithms.iter().enumerate() {
        print!("| {name} |");
        for s in &sizes[ai] {
            print!(" {s} |");
        }
        println!();
    }
    println!();
    println!("Average running time per batch (µs, graph build excluded):");
    println!();
    print!("| algorithm |");
    for t in thetas {
        print!(" θ={t} |");
    }
    println!();
    println!("|---|{}", "---|".repeat(thetas.len()));
    for (ai, (name, ..)) in algorithms.iter().enumerate() {
        print!("| {name} |");
        for t in &times[ai] {
            print!(" {t:.1} |");
        }
        println!();
    }
    // Sanity: skew makes graphs denser, and the greedy algorithms abort something at 0.99.
    assert!(edges[thetas.len() - 1] > edges[0]);
}
