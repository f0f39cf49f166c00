//! A fixed TPC-C log (the full mix) executed by one DOCC mode, for counting instructions per
//! transaction with callgrind (stable on a noisy machine, where throughput is not):
//!
//! ```text
//! cargo build --release -p txlab-docc --example instructions_tpcc
//! valgrind --tool=callgrind target/release/examples/instructions_tpcc docc-snapshot 2 1 20000
//! callgrind_annotate --inclusive=yes callgrind.out.PID | grep 'call_once{{vtable.shim}} \['
//! ```
//!
//! Arguments: mode (`docc-basic`, `docc-snapshot`, `docc`), warehouses, workers, transactions.
//! Two logs of that length (different seeds) run one after the other on the loaded engine, each
//! through `execute_log` on its own scoped worker threads; with one worker nothing waits or
//! retries, so the worker threads' inclusive count (the `call_once{{vtable.shim}}` line) divided
//! by twice the transactions is the cost of one: the layout, the execution, validation and
//! commit phases and garbage collection. Prints the second log's wall time per transaction, the
//! engine's version counters and the resident memory at the end. The mimalloc allocator, as in
//! the `txlab` binary.

use std::hint::black_box;
use txlab_core::deterministic::Deterministic;
use txlab_core::{Error, Schema};
use txlab_docc::{Chain, Docc, DoccConfig, InPlace, Layout};
use txlab_workload::{Generator, Tpcc, TpccConfig, TpccTxn, Workload};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn log(tpcc: &Tpcc, seed: u64, n: usize) -> Vec<TpccTxn> {
    let mut gens: Vec<_> = (0..3).map(|t| tpcc.generator(t, seed)).collect();
    (0..n).map(|i| gens[i % 3].next().clone()).collect()
}

/// The execution callgrind counts.
#[inline(never)]
fn measured<L: Layout>(db: &Docc<L>, log: &[TpccTxn], workers: usize) -> usize {
    let r = db.execute_log(log, workers).expect("execute_log");
    r.iter().filter(|x| x.is_ok()).count()
}

fn run<L: Layout>(
    schema: &Schema,
    tpcc: &Tpcc,
    prefetch: bool,
    workers: usize,
    n: usize,
) -> Result<(), Error> {
    let db = Docc::<L>::builder()
        .config(DoccConfig {
            workers,
            prefetch,
            ..DoccConfig::default()
        })
        .build(schema)?;
    tpcc.load(&db)?;
    let warm = log(tpcc, 1, n);
    black_box(measured(&db, &warm, workers));
    let second = log(tpcc, 2, n);
    let start = std::time::Instant::now();
    let ok = black_box(measured(&db, &second, workers));
    let ns = start.elapsed().as_nanos() as f64 / n as f64;
    let gc = db.gc();
    let rss_mib = std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse::<u64>().ok())
        .map_or(0, |pages| (pages * 4096) >> 20);
    println!(
        "{n} transactions measured ({ok} ok), {ns:.0} ns each; versions allocated {} trimmed {}; \
         {rss_mib} MiB resident",
        gc.versions_allocated, gc.versions_trimmed
    );
    Ok(())
}

fn main() -> Result<(), Error> {
    let args: Vec<String> = std::env::args().collect();
    let usage = "usage: instructions_tpcc MODE(docc-basic|docc-snapshot|docc) WAREHOUSES WORKERS TRANSACTIONS";
    let [_, mode, w, workers, n] = &args[..] else {
        eprintln!("{usage}");
        std::process::exit(2);
    };
    let num = |s: &str| -> u64 {
        s.parse().unwrap_or_else(|_| {
            eprintln!("{usage}: not a number: {s}");
            std::process::exit(2)
        })
    };
    let tpcc = Tpcc::new(TpccConfig {
        warehouses: num(w) as u32,
        ..TpccConfig::default()
    })?;
    let schema = tpcc.schema();
    let (workers, n) = (num(workers) as usize, num(n) as usize);
    match mode.as_str() {
        "docc-basic" => run::<InPlace>(&schema, &tpcc, false, workers, n),
        "docc-snapshot" => run::<Chain>(&schema, &tpcc, false, workers, n),
        "docc" => run::<Chain>(&schema, &tpcc, true, workers, n),
        other => {
            eprintln!("{usage}: unknown mode {other}");
            std::process::exit(2);
        }
    }
}
