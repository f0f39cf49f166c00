//! What the thread-aware assignment can save on the Figures 19–21 workload: YCSB (16
//! operations, 50 % read, 50 % read-modify-write, θ = 0.99, 100-byte payload) batches of
//! `4 × threads`, split by the thread-aware policy and in arrival order (round-robin). Per batch,
//! the pairs of conflicting transactions (one writes a key the other reads or writes) that run on
//! different threads: the conflicts the assignment can keep off the engine when a batch's shares
//! run side by side. Counts only, no timing.
//!
//! ```text
//! cargo run --release -p txlab-batch --example cross_conflicts [-- RECORDS [THREADS...]]
//! ```
//!
//! RECORDS defaults to 100000; thread counts to 2, 4, 8, 16.

use std::collections::HashMap;
use txlab_batch::thread_aware::{Assignment, ThreadAssigner};
use txlab_core::{AccessSet, Error, Program};
use txlab_workload::{Generator, Workload, Ycsb, YcsbConfig, YcsbPreset};

/// Batches per thread count.
const BATCHES: usize = 2_000;

/// A transaction's keys, each with whether it writes it.
fn keys(set: &AccessSet) -> HashMap<(u16, u64), bool> {
    let mut m = HashMap::new();
    for &(table, key, access) in &set.accesses {
        *m.entry((table.0, key)).or_default() |= access.writes();
    }
    m
}

fn conflict(a: &HashMap<(u16, u64), bool>, b: &HashMap<(u16, u64), bool>) -> bool {
    b.iter().any(|(k, &w)| a.get(k).is_some_and(|&v| v || w))
}

fn parse<T: std::str::FromStr>(arg: &str, what: &'static str, accepted: &str) -> Result<T, Error> {
    arg.parse()
        .map_err(|_| Error::invalid(what, arg, accepted.to_string()))
}

fn main() -> Result<(), Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let records = match args.first() {
        Some(a) => parse::<u64>(a, "RECORDS", "a number of records")?,
        None => 100_000,
    };
    let mut threads: Vec<usize> = args
        .iter()
        .skip(1)
        .map(|a| parse::<usize>(a, "THREADS", "thread counts in 2..=16"))
        .collect::<Result<_, _>>()?;
    if threads.iter().any(|t| !(2..=16).contains(t)) {
        return Err(Error::invalid(
            "THREADS",
            format!("{threads:?}"),
            "thread counts in 2..=16".to_string(),
        ));
    }
    if threads.is_empty() {
        threads = vec![2, 4, 8, 16];
    }
    let mut cfg = YcsbConfig::preset(YcsbPreset::A);
    cfg.records = records;
    cfg.ops_per_txn = 16;
    cfg.read_ratio = 0.5;
    cfg.rmw_ratio = 1.0;
    cfg.payload_bytes = 100;
    cfg.theta = 0.99;
    let ycsb = Ycsb::new(cfg)?;
    let mut generator = ycsb.generator(0, 42);
    println!(
        "| records | threads | batch | conflicting pairs per batch | on different threads: round-robin | thread-aware | thread-aware / round-robin |"
    );
    println!("|---|---|---|---|---|---|---|");
    let mut assigner = ThreadAssigner::new();
    for t in threads {
        let n = 4 * t;
        let (mut all, mut rr, mut ta) = (0usize, 0usize, 0usize);
        for _ in 0..BATCHES {
            let sets: Vec<AccessSet> = (0..n)
                .map(|_| {
                    let mut s = AccessSet::default();
                    generator.next().declare(&mut s);
                    s
                })
                .collect();
            let maps: Vec<_> = sets.iter().map(keys).collect();
            let mut pairs = vec![false; n * n];
            for i in 0..n {
                for j in i + 1..n {
                    let c = conflict(&maps[i], &maps[j]);
                    pairs[i * n + j] = c;
                    pairs[j * n + i] = c;
                    all += usize::from(c);
                }
            }
            for (policy, total) in [
                (Assignment::RoundRobin, &mut rr),
                (Assignment::ThreadAware, &mut ta),
            ] {
                let shares = assigner.assign(&sets, t, policy)?;
                let mut thread = vec![0; n];
                for (k, share) in shares.iter().enumerate() {
                    for &i in share {
                        thread[i] = k;
                    }
                }
                for i in 0..n {
                    for j in i + 1..n {
                        *total += usize::from(pairs[i * n + j] && thread[i] != thread[j]);
                    }
                }
            }
        }
        let per = |x: usize| x as f64 / BATCHES as f64;
        println!(
            "| {records} | {t} | {n} | {:.2} of {} | {:.2} | {:.2} | {:.3} |",
            per(all),
            n * (n - 1) / 2,
            per(rr),
            per(ta),
            ta as f64 / rr.max(1) as f64
        );
    }
    Ok(())
}
