//! A fixed number of YCSB or TPC-C transactions on one worker of one engine, for counting
//! instructions per transaction with callgrind (stable on a noisy machine, where throughput is
//! not):
//!
//! ```text
//! cargo build --release -p txlab-occ --example instructions
//! valgrind --tool=callgrind --toggle-collect=instructions::measured \
//!     target/release/examples/instructions silo a 4 0 200000
//! ```
//!
//! Arguments: `PROTOCOL PRESET OPS THETA TRANSACTIONS [TABLE]` for YCSB, `PROTOCOL tpcc
//! TRANSACTIONS` for TPC-C. Protocol: `silo`, `tictoc`, `mvto`, their `-nwr` and `-nwr-single`
//! forms. YCSB: preset `a`, `b`, `c` or `f`, operations per transaction, Zipf theta, and the
//! usertable's index, `dense` (the workload's own, the default) or `ordered` (the skip list with
//! phantom stripes, `txlab_storage::OrderedIndex`); 100,000 records of 8 bytes. TPC-C: the
//! specification's sizes and full mix (1 warehouse), inserts and scans on ordered tables. The same
//! number of transactions runs first as a warm-up; then `measured` runs them again, and the
//! collected instruction count divided by the transactions is the cost of one, retries and user
//! aborts (TPC-C's NewOrder rollbacks) included. Engines run as the harness runs them: epochs
//! every 40 ms, acknowledgement at epoch stability (not waited for), the mimalloc allocator.

use std::hint::black_box;
use txlab_core::{Engine, Schema, TableSpec, TxError, Worker};
use txlab_workload::{Generator, Tpcc, TpccConfig, Workload, Ycsb, YcsbConfig, YcsbPreset};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn one<W: Worker, G: Generator>(worker: &mut W, generator: &mut G) {
    let program = generator.next();
    loop {
        match worker.attempt(program) {
            Ok(done) => {
                black_box(done);
                return;
            }
            Err(TxError::Conflict(_)) => continue,
            Err(TxError::UserAbort(_)) => return,
            Err(e) => panic!("{e}"),
        }
    }
}

/// The transactions callgrind counts (`--toggle-collect=instructions::measured`).
#[inline(never)]
fn measured<W: Worker, G: Generator>(worker: &mut W, generator: &mut G, n: u64) {
    for _ in 0..n {
        one(worker, generator);
    }
}

fn run<E: Engine, L: Workload>(engine: E, workload: &L, n: u64) {
    workload.load(&engine).expect("loading the workload");
    let mut worker = engine.worker().expect("a worker");
    let mut generator = workload.generator(0, 42);
    for _ in 0..n {
        one(&mut worker, &mut generator);
    }
    let start = std::time::Instant::now();
    measured(&mut worker, &mut generator, n);
    let ns = start.elapsed().as_nanos() as f64 / n as f64;
    println!("{} transactions measured, {ns:.0} ns each", n);
}

/// Builds `protocol`'s engine over `schema` and runs `workload` on it.
fn run_protocol<L: Workload>(protocol: &str, schema: &Schema, workload: &L, n: u64) {
    macro_rules! engine {
        ($family:ident, $policy:expr) => {
            run(
                $family::builder()
                    .nwr($policy)
                    .build(schema)
                    .expect("engine"),
                workload,
                n,
            )
        };
    }
    use txlab_mvto::{Mvto, NoNwr, Nwr, NwrSingleWrite};
    use txlab_silo::Silo;
    use txlab_tictoc::TicToc;
    match protocol {
        "silo" => engine!(Silo, NoNwr),
        "silo-nwr" => engine!(Silo, Nwr),
        "silo-nwr-single" => engine!(Silo, NwrSingleWrite),
        "tictoc" => engine!(TicToc, NoNwr),
        "tictoc-nwr" => engine!(TicToc, Nwr),
        "tictoc-nwr-single" => engine!(TicToc, NwrSingleWrite),
        "mvto" => engine!(Mvto, NoNwr),
        "mvto-nwr" => engine!(Mvto, Nwr),
        "mvto-nwr-single" => engine!(Mvto, NwrSingleWrite),
        other => fail(&format!(
            "protocol {other:?}: silo, tictoc, mvto or their -nwr / -nwr-single forms"
        )),
    }
}

const USAGE: &str = "usage: instructions PROTOCOL PRESET(a|b|c|f) OPS THETA TRANSACTIONS \
                     [TABLE(dense|ordered)]\n       instructions PROTOCOL tpcc TRANSACTIONS";

fn fail(why: &str) -> ! {
    eprintln!("{why}\n{USAGE}");
    std::process::exit(2);
}

fn transactions(n: &str) -> u64 {
    n.parse()
        .unwrap_or_else(|_| fail(&format!("TRANSACTIONS {n:?}: a whole number")))
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    match &args[..] {
        [_, protocol, workload, n] if workload == "tpcc" => {
            let tpcc = Tpcc::new(TpccConfig::default()).expect("the default TPC-C configuration");
            run_protocol(protocol, &tpcc.schema(), &tpcc, transactions(n));
        }
        [_, protocol, preset, ops, theta, n, rest @ ..] if rest.len() <= 1 => {
            let preset = match preset.as_str() {
                "a" => YcsbPreset::A,
                "b" => YcsbPreset::B,
                "c" => YcsbPreset::C,
                "f" => YcsbPreset::F,
                other => fail(&format!("preset {other:?}: one of a, b, c, f")),
            };
            let mut config = YcsbConfig::preset(preset);
            config.records = 100_000;
            config.payload_bytes = 8;
            config.ops_per_txn = ops
                .parse()
                .unwrap_or_else(|_| fail(&format!("OPS {ops:?}: a whole number")));
            config.theta = theta
                .parse()
                .unwrap_or_else(|_| fail(&format!("THETA {theta:?}: a number")));
            let workload = Ycsb::new(config).unwrap_or_else(|e| fail(&e.to_string()));
            let schema = match rest.first().map_or("dense", String::as_str) {
                "dense" => workload.schema(),
                "ordered" => {
                    // The same single table (id 0) behind an ordered index.
                    let mut schema = Schema::new();
                    schema
                        .add(TableSpec::ordered("usertable", config.payload_bytes))
                        .expect("a valid table");
                    schema
                }
                other => fail(&format!("TABLE {other:?}: dense or ordered")),
            };
            run_protocol(protocol, &schema, &workload, transactions(n));
        }
        [_, _, workload, _] => fail(&format!(
            "workload {workload:?} with one more argument: only tpcc (YCSB presets take OPS THETA \
             TRANSACTIONS [TABLE])"
        )),
        _ => fail("wrong number of arguments"),
    }
}
