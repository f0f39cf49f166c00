//! The thread-aware assignment's cost alone: YCSB (16 operations, 50 % read, 50 %
//! read-modify-write, θ = 0.99) batches of `4 × threads`, declared once, assigned repeatedly.
//!
//! ```text
//! CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 \
//!   cargo run --release -p txlab-batch --example assign_cost [-- THREADS...]
//! ```
//!
//! Thread counts given as arguments replace the default list (1, 2, 4, 8, 16, 28), e.g. `2`
//! alone under `valgrind --tool=callgrind` for the instructions of the 2-thread assignment.

use std::time::Instant;
use txlab_batch::thread_aware::{Assignment, ThreadAssigner};
use txlab_core::{AccessSet, Error, Program};
use txlab_workload::{Generator, Workload, Ycsb, YcsbConfig, YcsbPreset};

fn main() -> Result<(), Error> {
    let mut cfg = YcsbConfig::preset(YcsbPreset::A);
    cfg.records = 100_000;
    cfg.ops_per_txn = 16;
    cfg.read_ratio = 0.5;
    cfg.rmw_ratio = 1.0;
    cfg.payload_bytes = 100;
    cfg.theta = 0.99;
    let ycsb = Ycsb::new(cfg)?;
    let mut generator = ycsb.generator(0, 42);
    println!("| threads | batch | policy | generate + declare µs/batch | assign µs/batch |");
    println!("|---|---|---|---|---|");
    let mut list = Vec::new();
    for arg in std::env::args().skip(1) {
        match arg.parse::<usize>() {
            Ok(t) if (1..=1024).contains(&t) => list.push(t),
            _ => {
                return Err(Error::invalid(
                    "THREADS",
                    arg,
                    "thread counts in 1..=1024".to_string(),
                ));
            }
        }
    }
    if list.is_empty() {
        list = vec![1, 2, 4, 8, 16, 28];
    }
    for threads in list {
        let n = 4 * threads;
        let batches = 20_000 / threads;
        let t0 = Instant::now();
        let sets: Vec<Vec<AccessSet>> = (0..batches)
            .map(|_| {
                (0..n)
                    .map(|_| {
                        let mut s = AccessSet::default();
                        generator.next().declare(&mut s);
                        s
                    })
                    .collect()
            })
            .collect();
        let declare_us = t0.elapsed().as_secs_f64() * 1e6 / batches as f64;
        for policy in [Assignment::RoundRobin, Assignment::ThreadAware] {
            let mut assigner = ThreadAssigner::new();
            let t = Instant::now();
            let mut picked = 0usize;
            for batch in &sets {
                picked += assigner.assign(batch, threads, policy)?[0][0];
            }
            let us = t.elapsed().as_secs_f64() * 1e6 / batches as f64;
            std::hint::black_box(picked);
            println!("| {threads} | {n} | {policy:?} | {declare_us:.2} | {us:.2} |");
        }
    }
    Ok(())
}
