//! Single-thread commit path per protocol, for the nine interactive protocols (silo, tictoc,
//! mvto, silo-nwr, silo-nwr-single, tictoc-nwr, tictoc-nwr-single, mvto-nwr, mvto-nwr-single): one YCSB
//! transaction (10 operations on 100k records, uniform keys), read-only (YCSB-C) and read-write
//! (YCSB-A), from `begin` to the return of `commit`, retries included (there are none on one
//! thread). Reported as transactions per second.
//!
//! Silo, TicToc and MVTO acknowledge at commit (`AckMode::AtCommit`). The six NWR variants run
//! under group commit (`AckMode::EpochStable`), the only mode in which the rule may omit a write;
//! the bench still stops the clock when `commit` returns and does not wait for the epoch to
//! become stable, so all nine measure the same commit path.
//!
//! Run: `cargo bench --bench commit_path` (add `-- silo` to filter). The harness's own cost is
//! measured through the runner instead: `txlab run --protocol noop --workload noop`.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use txlab::core::protocol::epoch::EpochConfig;
use txlab::core::{AckMode, Engine, Program, Transaction, TxError, Worker};
use txlab::mvto::{Mvto, MvtoConfig};
use txlab::silo::{Silo, SiloConfig};
use txlab::tictoc::{TicToc, TicTocConfig};
use txlab::workload::{Generator, Workload, Ycsb, YcsbConfig, YcsbPreset};
use txlab_nwr::{Nwr, NwrSingleWrite};

// The allocator policy: mimalloc in bench and binary targets only, never in libraries.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn bench_engine<E: Engine>(
    c: &mut Criterion,
    protocol: &str,
    engine: &E,
    workload: &Ycsb,
    label: &str,
) {
    workload.load(engine).expect("loading YCSB");
    let mut worker = engine.worker().expect("a worker");
    let mut generator = workload.generator(0, 42);
    let mut group = c.benchmark_group(format!("commit_path/{protocol}"));
    group.throughput(Throughput::Elements(1));
    group.bench_function(label, |b| {
        b.iter(|| {
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
                    Ok(info) => break black_box(info),
                    Err(TxError::Conflict(_)) => continue,
                    Err(e) => panic!("{e}"),
                }
            }
        })
    });
    group.finish();
}

fn commit_path(c: &mut Criterion) {
    for (preset, label) in [
        (YcsbPreset::C, "ycsb-c read-only"),
        (YcsbPreset::A, "ycsb-a read-write"),
    ] {
        let workload = Ycsb::new(YcsbConfig::preset(preset)).expect("a valid YCSB preset");
        let schema = workload.schema();
        let silo_cfg = SiloConfig::default()
            .with_epoch(EpochConfig::default())
            .with_ack(AckMode::AtCommit);
        let silo = Silo::builder()
            .config(silo_cfg)
            .build(&schema)
            .expect("a Silo engine");
        bench_engine(c, "silo", &silo, &workload, label);
        let tictoc_cfg = TicTocConfig::default().with_ack(AckMode::AtCommit);
        let tictoc = TicToc::builder()
            .config(tictoc_cfg)
            .build(&schema)
            .expect("a TicToc engine");
        bench_engine(c, "tictoc", &tictoc, &workload, label);
        let mvto_cfg = MvtoConfig::default().with_ack(AckMode::AtCommit);
        let mvto = Mvto::builder()
            .config(mvto_cfg)
            .build(&schema)
            .expect("an MVTO engine");
        bench_engine(c, "mvto", &mvto, &workload, label);
        // NWR omits writes only under group commit (EpochStable, module docs); the clock still
        // stops when `commit` returns.
        let nwr_cfg = SiloConfig::default().with_ack(AckMode::EpochStable);
        let silo_nwr = Silo::builder()
            .nwr(Nwr)
            .config(nwr_cfg)
            .build(&schema)
            .expect("a Silo+NWR engine");
        bench_engine(c, "silo-nwr", &silo_nwr, &workload, label);
        let silo_nwr_single = Silo::builder()
            .nwr(NwrSingleWrite)
            .config(nwr_cfg)
            .build(&schema)
            .expect("a single-write Silo+NWR engine");
        bench_engine(c, "silo-nwr-single", &silo_nwr_single, &workload, label);
        let nwr_cfg = TicTocConfig::default().with_ack(AckMode::EpochStable);
        let tictoc_nwr = TicToc::builder()
            .nwr(Nwr)
            .config(nwr_cfg)
            .build(&schema)
            .expect("a TicToc+NWR engine");
        bench_engine(c, "tictoc-nwr", &tictoc_nwr, &workload, label);
        let tictoc_nwr_single = TicToc::builder()
            .nwr(NwrSingleWrite)
            .config(nwr_cfg)
            .build(&schema)
            .expect("a single-write TicToc+NWR engine");
        bench_engine(c, "tictoc-nwr-single", &tictoc_nwr_single, &workload, label);
        let nwr_cfg = MvtoConfig::default().with_ack(AckMode::EpochStable);
        let mvto_nwr = Mvto::builder()
            .nwr(Nwr)
            .config(nwr_cfg)
            .build(&schema)
            .expect("an MVTO+NWR engine");
        bench_engine(c, "mvto-nwr", &mvto_nwr, &workload, label);
        let mvto_nwr_single = Mvto::builder()
            .nwr(NwrSingleWrite)
            .config(nwr_cfg)
            .build(&schema)
            .expect("a single-write MVTO+NWR engine");
        bench_engine(c, "mvto-nwr-single", &mvto_nwr_single, &workload, label);
    }
}

criterion_group!(benches, commit_path);
criterion_main!(benches);
