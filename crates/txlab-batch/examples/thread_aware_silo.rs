//! Thread-aware batching over Silo against plain round-robin batching (Ding, Kot, Gehrke, VLDB
//! 2018, §5.6, Figures 19–21): YCSB with 16 operations per transaction, 50 % reads and 50 %
//! read-modify-writes, 100-byte payloads, 100K keys (10M in the paper), batches of 4
//! transactions per thread, 1 and 2 worker threads.
//!
//! ```text
//! CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 \
//!   cargo run --release -p txlab-batch --example thread_aware_silo -- [seconds per point] [repeats]
//! ```
//!
//! "plain Silo" is Silo without any batching: every worker thread generates its own
//! transactions (generator per thread) and runs them with `txlab_core::run`; its latency is from
//! the transaction's first attempt to its commit (there is no batch to wait for).
//!
//! "assign µs/batch" is the time per batch spent generating, declaring and assigning (by the
//! worker that formed it), the same code path for both assignments except the assignment itself.
//! Medians of `repeats` (default 3) interleaved runs per point.

mod common;

use common::median;
use txlab_batch::pipeline::RunLimit;
use txlab_batch::thread_aware::{Assignment, ThreadAware, ThreadAwareConfig, ThreadAwareStats};

const ASSIGNMENTS: [Assignment; 2] = [Assignment::RoundRobin, Assignment::ThreadAware];
use hdrhistogram::Histogram;
use std::time::{Duration, Instant};
use txlab_core::{Engine, Error, Program, RetryPolicy, TxError, run};
use txlab_silo::Silo;
use txlab_workload::{Generator, Workload, Ycsb, YcsbConfig, YcsbPreset};

/// One plain-Silo worker's commits, conflicts and latency histogram (µs).
type WorkerTotals = (u64, u64, Histogram<u64>);

/// What a plain Silo run measured: commits/s, conflicts per commit, latency (µs).
struct Plain {
    throughput: f64,
    conflicts_per_commit: f64,
    latency_us: Histogram<u64>,
}

/// Silo without batching: `threads` workers, each with its own generator, until `duration`.
fn plain_silo(ycsb: &Ycsb, threads: usize, duration: Duration, seed: u64) -> Result<Plain, Error> {
    let silo = Silo::builder().build(&ycsb.schema())?;
    ycsb.load(&silo)?;
    let started = Instant::now();
    let deadline = started + duration;
    let results: Vec<Result<WorkerTotals, Error>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let silo = &silo;
                scope.spawn(move || -> Result<WorkerTotals, Error> {
                    let mut worker = silo.worker()?;
                    let mut generator = ycsb.generator(t, seed);
                    let mut latency = Histogram::new_with_bounds(1, 60_000_000, 3)
                        .map_err(|e| Error::Internal(format!("histogram: {e}")))?;
                    let (mut commits, mut conflicts) = (0u64, 0u64);
                    while Instant::now() < deadline {
                        let program = generator.next();
                        let begin = Instant::now();
                        match run(&mut worker, RetryPolicy::default(), |tx| program.run(tx)) {
                            Ok(c) => {
                                commits += 1;
                                conflicts += u64::from(c.attempts - 1);
                                let us = begin.elapsed().as_micros() as u64;
                                latency.saturating_record(us.max(1));
                            }
                            Err(TxError::UserAbort(_)) => {}
                            Err(TxError::Error(e)) => return Err(e),
                            Err(e) => return Err(Error::Internal(format!("{e}"))),
                        }
                    }
                    Ok((commits, conflicts, latency))
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(Error::Internal("a worker panicked".into())))
            })
            .collect()
    });
    let elapsed = started.elapsed().as_secs_f64();
    let mut latency_us = Histogram::new_with_bounds(1, 60_000_000, 3)
        .map_err(|e| Error::Internal(format!("histogram: {e}")))?;
    let (mut commits, mut conflicts) = (0u64, 0u64);
    for r in results {
        let (c, k, h) = r?;
        commits += c;
        conflicts += k;
        latency_us
            .add(&h)
            .map_err(|e| Error::Internal(format!("histogram: {e}")))?;
    }
    Ok(Plain {
        throughput: commits as f64 / elapsed.max(1e-9),
        conflicts_per_commit: conflicts as f64 / commits.max(1) as f64,
        latency_us,
    })
}

fn main() -> Result<(), Error> {
    let duration = common::seconds_arg(1, 1.5)?;
    let repeats = common::repeats_arg(2, 3)?;
    common::print_load("before");
    println!(
        "| YCSB theta | threads | assignment | commits/s | conflicts/commit | p95 µs | p99 µs | assign µs/batch |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for theta in [0.8, 0.99] {
        let mut cfg = YcsbConfig::preset(YcsbPreset::A);
        cfg.records = 100_000;
        cfg.ops_per_txn = 16;
        cfg.read_ratio = 0.5;
        cfg.rmw_ratio = 1.0;
        cfg.payload_bytes = 100;
        cfg.theta = theta;
        let ycsb = Ycsb::new(cfg)?;
        for threads in [1, 2] {
            let mut runs: Vec<Vec<ThreadAwareStats>> = vec![Vec::new(); 2];
            let mut plain: Vec<Plain> = Vec::new();
            for repeat in 0..repeats {
                plain.push(plain_silo(&ycsb, threads, duration, 42 + repeat as u64)?);
                for (a, assignment) in ASSIGNMENTS.into_iter().enumerate() {
                    let silo = Silo::builder().build(&ycsb.schema())?;
                    ycsb.load(&silo)?;
                    let ta = ThreadAware::new(
                        silo,
                        ThreadAwareConfig::new(threads).with_assignment(assignment),
                    )?;
                    runs[a].push(ta.run(
                        &ycsb,
                        RunLimit::Duration(duration),
                        42 + repeat as u64,
                    )?);
                }
            }
            let med = |f: &dyn Fn(&Plain) -> f64| median(&plain.iter().map(f).collect::<Vec<_>>());
            println!(
                "| {theta} | {threads} | plain Silo (no batching) | {:.0} | {:.3} | {:.0} | {:.0} | - |",
                med(&|p| p.throughput),
                med(&|p| p.conflicts_per_commit),
                med(&|p| p.latency_us.value_at_percentile(95.0) as f64),
                med(&|p| p.latency_us.value_at_percentile(99.0) as f64),
            );
            for (a, assignment) in ASSIGNMENTS.into_iter().enumerate() {
                let med = |f: &dyn Fn(&ThreadAwareStats) -> f64| {
                    median(&runs[a].iter().map(f).collect::<Vec<_>>())
                };
                println!(
                    "| {theta} | {threads} | {assignment:?} | {:.0} | {:.3} | {:.0} | {:.0} | {:.2} |",
                    med(&|s| s.throughput()),
                    med(&|s| s.conflicts as f64 / s.committed.max(1) as f64),
                    med(&|s| s.latency_us.value_at_percentile(95.0) as f64),
                    med(&|s| s.latency_us.value_at_percentile(99.0) as f64),
                    med(&|s| s.assign_time.as_secs_f64() * 1e6 / s.batches.max(1) as f64),
                );
            }
        }
    }
    common::print_load("after");
    Ok(())
}
