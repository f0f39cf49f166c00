//! Multi-threaded YCSB-A (theta 0.99, 100k records) on 1 thread and on every physical core, one
//! pinned worker per core, started together by a barrier. Criterion's `iter_custom` times the
//! interval from the barrier until every worker has committed its share of the iterations, so the
//! elements/s reported is the aggregate committed-transaction throughput.
//!
//! Run: `cargo bench --bench ycsb_scaling`.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use std::sync::Barrier;
use std::time::{Duration, Instant};
use txlab::core::{AckMode, Engine, Program, Transaction, TxError, Worker};
use txlab::harness::topology::{Placement, pin_current_thread, plan_for_this_machine};
use txlab::silo::{Silo, SiloConfig};
use txlab::workload::{Generator, Workload, Ycsb, YcsbConfig, YcsbPreset};

// The allocator policy: mimalloc in bench and binary targets only, never in libraries.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Runs `count` transactions on `worker` (created before the timed interval).
fn run_shard<W: Worker>(worker: &mut W, generator: &mut <Ycsb as Workload>::Generator, count: u64) {
    for _ in 0..count {
        let program = generator.next();
        loop {
            let mut tx = worker.begin();
            let r = match program.run(&mut tx) {
                Ok(()) => tx.commit(),
                Err(e) => {
                    tx.abort();
                    Err(e)
                }
            };
            match r {
                Ok(_) => break,
                Err(TxError::Conflict(_)) => std::hint::spin_loop(),
                Err(e) => panic!("{e}"),
            }
        }
    }
}

fn scaling(c: &mut Criterion) {
    let mut cfg = YcsbConfig::preset(YcsbPreset::A);
    cfg.theta = 0.99;
    let workload = Ycsb::new(cfg).expect("a valid YCSB config");
    let engine = Silo::builder()
        .config(SiloConfig::default().with_ack(AckMode::AtCommit))
        .build(&workload.schema())
        .expect("a Silo engine");
    workload.load(&engine).expect("loading YCSB");
    let cores = plan_for_this_machine(Placement::PhysicalCores, 1)
        .available
        .max(1);
    let mut threads = vec![1, cores];
    threads.dedup();
    let mut group = c.benchmark_group("ycsb_scaling/silo/ycsb-a-0.99");
    for n in threads {
        group.throughput(Throughput::Elements(1));
        group.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, &n| {
            b.iter_custom(|iters| {
                let plan = plan_for_this_machine(Placement::PhysicalCores, n);
                let barrier = Barrier::new(n + 1);
                let per_thread = iters.div_ceil(n as u64);
                std::thread::scope(|s| {
                    for (i, cpu) in plan.cpus.iter().enumerate() {
                        let (engine, workload, barrier) = (&engine, &workload, &barrier);
                        let cpu = *cpu;
                        s.spawn(move || {
                            if let Some(cpu) = cpu {
                                pin_current_thread(cpu);
                            }
                            let mut worker = engine.worker().expect("a worker");
                            let mut generator = workload.generator(i, 7);
                            barrier.wait();
                            run_shard(&mut worker, &mut generator, per_thread);
                        });
                    }
                    barrier.wait();
                    let start = Instant::now();
                    // The scope joins every worker before returning, so `start.elapsed()` taken
                    // after it covers all of them; scale to exactly `iters` transactions.
                    start
                })
                .elapsed()
                .mul_f64(iters as f64 / (per_thread * n as u64) as f64)
                .max(Duration::from_nanos(1))
            })
        });
    }
    group.finish();
}

criterion_group!(benches, scaling);
criterion_main!(benches);
