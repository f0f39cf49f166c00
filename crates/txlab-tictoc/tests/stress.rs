//! Multithreaded TicToc runs whose recorded histories are checked for serializability, and
//! SmallBank with money conservation.
//!
//! Runs are bounded by transaction count, never by time. Histories are checked with
//! `CheckOptions::serializable()`: TicToc orders transactions by computed timestamps, which may
//! differ from real-time order, so strict serializability is not expected (see
//! `tests/semantics.rs`, `tictoc_is_serializable_but_not_strictly_serializable`).

use std::sync::{Arc, Barrier};
use txlab_check::{CheckOptions, MemoryRecorder, check};
use txlab_core::{Engine, Program, RetryPolicy, TxError, TxOps, run};
use txlab_tictoc::{TicToc, TicTocConfig};
use txlab_workload::{
    Generator, SmallBank, SmallBankConfig, Workload, Ycsb, YcsbConfig, YcsbPreset,
};

/// Runs `txns_per_thread` transactions of `workload` on each of `threads` threads, retrying
/// conflicts; a program's own rollback (SmallBank's insufficient funds) counts as finished.
/// Returns how many transactions committed.
fn drive<W: Workload, E: Engine>(
    engine: &E,
    workload: &W,
    threads: usize,
    txns_per_thread: usize,
) -> usize {
    let start = Barrier::new(threads);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let start = &start;
                s.spawn(move || {
                    let mut worker = engine.worker().unwrap();
                    let mut generator = workload.generator(t, 42);
                    // All threads start together so their transactions overlap.
                    start.wait();
                    let mut committed = 0;
                    for _ in 0..txns_per_thread {
                        let program = generator.next();
                        let body = |tx: &mut dyn TxOps| {
                            let out = program.run(tx);
                            // Give up the CPU while the transaction is open, so that other
                            // threads' transactions interleave with it even when the machine
                            // has fewer free cores than threads (scheduling noise, not
                            // synchronization: correctness never depends on it).
                            std::thread::yield_now();
                            out
                        };
                        match run(&mut worker, RetryPolicy::default(), body) {
                            Ok(_) => committed += 1,
                            Err(TxError::UserAbort(_)) => {}
                            Err(e) => panic!("unexpected error: {e}"),
                        }
                    }
                    committed
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).sum()
    })
}

/// A YCSB mix with half reads, and half of the writes read-modify-writes, over `records` keys
/// with Zipf theta 0.99, four operations per transaction.
fn contended_ycsb(records: u64) -> Ycsb {
    let mut cfg = YcsbConfig::preset(YcsbPreset::A);
    cfg.records = records;
    cfg.ops_per_txn = 4;
    cfg.rmw_ratio = 0.5;
    cfg.payload_bytes = 16;
    cfg.theta = 0.99;
    Ycsb::new(cfg).unwrap()
}

fn ycsb_history_is_serializable(records: u64, threads: usize, txns_per_thread: usize) {
    let workload = contended_ycsb(records);
    let rec = Arc::new(MemoryRecorder::new());
    let db = TicToc::builder()
        .recorder(rec.clone())
        .build(&workload.schema())
        .unwrap();
    workload.load(&db).unwrap();
    let committed = drive(&db, &workload, threads, txns_per_thread);
    assert_eq!(
        committed,
        threads * txns_per_thread,
        "YCSB programs never roll back"
    );
    workload.check(&db).unwrap();
    let report = check(&rec.take(), CheckOptions::serializable());
    assert_eq!(report.committed, committed, "{report}");
    // Not asserted: on a busy machine the threads may happen not to overlap.
    eprintln!("ycsb {records} keys, {threads} threads: {report}");
    assert!(report.is_serializable(), "{report}");
}

#[test]
fn ycsb_10_hot_keys_2_threads() {
    ycsb_history_is_serializable(10, 2, 2000);
}

#[test]
fn ycsb_10_hot_keys_4_threads() {
    ycsb_history_is_serializable(10, 4, 1000);
}

#[test]
fn ycsb_1000_keys_2_threads() {
    ycsb_history_is_serializable(1000, 2, 2000);
}

#[test]
fn ycsb_1000_keys_4_threads() {
    ycsb_history_is_serializable(1000, 4, 1000);
}

#[test]
fn smallbank_conserves_money_on_2_threads() {
    let workload = SmallBank::new(SmallBankConfig {
        customers: 50,
        theta: 0.99,
        audit: true,
        ..SmallBankConfig::default()
    })
    .unwrap();
    let rec = Arc::new(MemoryRecorder::new());
    let db = TicToc::builder()
        .recorder(rec.clone())
        .build(&workload.schema())
        .unwrap();
    workload.load(&db).unwrap();
    let committed = drive(&db, &workload, 2, 2000);
    assert!(committed > 0);
    workload.check(&db).unwrap();
    let report = check(&rec.take(), CheckOptions::serializable());
    // `Workload::check` sums the balances in one more (read-only) transaction.
    assert_eq!(report.committed, committed + 1, "{report}");
    assert!(report.is_serializable(), "{report}");
}

/// Heavier version of the YCSB stress, for manual runs:
/// `CARGO_TARGET_DIR=/work/target-tictoc cargo test -p txlab-tictoc --release --test stress -- --ignored`
#[test]
#[ignore = "heavy; run by hand (see doc comment)"]
fn ycsb_heavy_8_threads() {
    ycsb_history_is_serializable(10, 8, 20_000);
    ycsb_history_is_serializable(1000, 8, 20_000);
}

/// One operation of the scan/creation mix below.
#[derive(Clone, Copy)]
enum MixOp {
    Scan(u64, u64),
    Read(u64),
    Upsert(u64),
    Insert(u64),
    Delete(u64),
}

/// Keys of the scan/creation mix: two 64-key buckets (the default stripe shift is 6), so scans
/// and creations meet on few stripes.
const MIX_KEYS: u64 = 128;

/// A deterministic transaction of two to four operations (splitmix64 over `seed`).
fn mix_txn(seed: u64) -> Vec<MixOp> {
    let mut s = seed;
    let mut next = move || {
        s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = s;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    let n = 2 + next() % 3;
    (0..n)
        .map(|_| {
            let key = next() % MIX_KEYS;
            match next() % 5 {
                0 => MixOp::Scan(key, (key + next() % 24).min(MIX_KEYS - 1)),
                1 => MixOp::Read(key),
                2 => MixOp::Upsert(key),
                3 => MixOp::Insert(key),
                _ => MixOp::Delete(key),
            }
        })
        .collect()
}

/// Threads mixing range scans with key creations (inserts, upserts of absent keys) and deletes on
/// one ordered table: the schedules that need the stripes' scan timestamps
/// (`txlab_tictoc::stripe_clock`), under real concurrency. The recorded history must be
/// serializable.
#[test]
fn scans_and_key_creations_on_4_threads_are_serializable() {
    use txlab_core::{Schema, TableId, TableSpec};
    const O: TableId = TableId(0);
    let (threads, txns_per_thread) = (4usize, 800usize);
    let mut schema = Schema::new();
    schema.add(TableSpec::ordered("ordered", 8)).unwrap();
    let rec = Arc::new(MemoryRecorder::new());
    let db = TicToc::builder()
        .config(TicTocConfig::manual())
        .recorder(rec.clone())
        .build(&schema)
        .unwrap();
    for k in (0..MIX_KEYS).step_by(4) {
        db.load(O, k, &k.to_le_bytes()).unwrap();
    }
    let start = Barrier::new(threads);
    let committed: usize = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let (db, start) = (&db, &start);
                s.spawn(move || {
                    let mut worker = db.worker().unwrap();
                    start.wait();
                    let mut committed = 0;
                    for i in 0..txns_per_thread {
                        let ops = mix_txn(((t as u64) << 32) | i as u64);
                        let value = (i as u64).to_le_bytes();
                        let body = |tx: &mut dyn TxOps| {
                            for op in &ops {
                                match *op {
                                    MixOp::Scan(lo, hi) => tx.scan(O, lo, hi, &mut |_, _| true)?,
                                    MixOp::Read(k) => {
                                        tx.read(O, k)?;
                                    }
                                    MixOp::Upsert(k) => tx.write(O, k, &value)?,
                                    MixOp::Insert(k) => {
                                        tx.insert(O, k, &value)?;
                                    }
                                    MixOp::Delete(k) => {
                                        tx.delete(O, k)?;
                                    }
                                }
                                // Scheduling noise only (see `drive`).
                                std::thread::yield_now();
                            }
                            Ok(())
                        };
                        run(&mut worker, RetryPolicy::default(), body).unwrap();
                        committed += 1;
                    }
                    committed
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).sum()
    });
    let report = check(&rec.take(), CheckOptions::serializable());
    assert_eq!(report.committed, committed, "{report}");
    eprintln!("scan/creation mix, {threads} threads: {report}");
    assert!(report.is_serializable(), "{report}");
}
