//! A fixed number of YCSB transactions on one worker of one engine, for counting instructions per
//! transaction with callgrind (stable on a noisy machine, where throughput is not):
//!
//! ```text
//! cargo build --release -p txlab-occ --example instructions
//! valgrind --tool=callgrind --toggle-collect=instructions::measured \
//!     target/release/examples/instructions silo a 4 0 200000
//! ```
//!
//! Arguments: protocol (`silo`, `tictoc`, `mvto`, their `-nwr` and `-nwr-single` forms), YCSB
//! preset (`a`, `b`, `c`), operations per transaction, Zipf theta, transactions. The same number of
//! transactions runs first as a warm-up; then `measured` runs them again, and the collected
//! instruction count divided by the transactions is the cost of one, retries included. Engines run
//! as the harness runs them: 100,000 records of 8 bytes, epochs every 40 ms, acknowledgement at
//! epoch stability (not waited for), the mimalloc allocator.

use std::hint::black_box;
use txlab_core::{Engine, TxError, Worker};
use txlab_workload::{Generator, Workload, Ycsb, YcsbConfig, YcsbGenerator, YcsbPreset};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn one<W: Worker>(worker: &mut W, generator: &mut YcsbGenerator) {
    let program = generator.next();
    loop {
        match worker.attempt(program) {
            Ok(done) => {
                black_box(done);
                return;
            }
            Err(TxError::Conflict(_)) => continue,
            Err(e) => panic!("{e}"),
        }
    }
}

/// The transactions callgrind counts (`--toggle-collect=instructions::measured`).
#[inline(never)]
fn measured<W: Worker>(worker: &mut W, generator: &mut YcsbGenerator, n: u64) {
    for _ in 0..n {
        one(worker, generator);
    }
}

fn run<E: Engine>(engine: E, workload: &Ycsb, n: u64) {
    workload.load(&engine).expect("loading YCSB");
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

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let usage = "usage: instructions PROTOCOL PRESET(a|b|c) OPS THETA TRANSACTIONS";
    let [_, protocol, preset, ops, theta, n] = &args[..] else {
        eprintln!("{usage}");
        std::process::exit(2);
    };
    let preset = match preset.as_str() {
        "a" => YcsbPreset::A,
        "b" => YcsbPreset::B,
        "c" => YcsbPreset::C,
        other => {
            eprintln!("preset {other:?}: one of a, b, c\n{usage}");
            std::process::exit(2);
        }
    };
    let mut config = YcsbConfig::preset(preset);
    config.records = 100_000;
    config.payload_bytes = 8;
    config.ops_per_txn = ops.parse().expect("OPS is a number");
    config.theta = theta.parse().expect("THETA is a number");
    let n: u64 = n.parse().expect("TRANSACTIONS is a number");
    let workload = Ycsb::new(config).expect("a valid YCSB configuration");
    let schema = workload.schema();
    macro_rules! engine {
        ($family:ident, $policy:expr) => {
            run(
                $family::builder()
                    .nwr($policy)
                    .build(&schema)
                    .expect("engine"),
                &workload,
                n,
            )
        };
    }
    use txlab_mvto::{Mvto, NoNwr, Nwr, NwrSingleWrite};
    use txlab_silo::Silo;
    use txlab_tictoc::TicToc;
    match protocol.as_str() {
        "silo" => engine!(Silo, NoNwr),
        "silo-nwr" => engine!(Silo, Nwr),
        "silo-nwr-single" => engine!(Silo, NwrSingleWrite),
        "tictoc" => engine!(TicToc, NoNwr),
        "tictoc-nwr" => engine!(TicToc, Nwr),
        "tictoc-nwr-single" => engine!(TicToc, NwrSingleWrite),
        "mvto" => engine!(Mvto, NoNwr),
        "mvto-nwr" => engine!(Mvto, Nwr),
        "mvto-nwr-single" => engine!(Mvto, NwrSingleWrite),
        other => {
            eprintln!(
                "protocol {other:?}: silo, tictoc, mvto or their -nwr / -nwr-single forms\n{usage}"
            );
            std::process::exit(2);
        }
    }
}
