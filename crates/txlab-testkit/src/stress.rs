//! Threaded stress: real threads on contended workloads, histories checked, invariants checked.
//! Bounded by transaction count (never by time), so a slow machine only runs longer.

use crate::{Protocol, check_options};
use std::sync::{Arc, Barrier};
use txlab_check::{MemoryRecorder, check};
use txlab_core::retry::{Backoff, RetryPolicy};
use txlab_core::{Engine, Program, Transaction, TxError, Worker};
use txlab_workload::{
    Generator, SmallBank, SmallBankConfig, Workload, Ycsb, YcsbConfig, YcsbPreset,
};

/// Runs `txns_per_thread` transactions of `workload` on each of `threads` threads (retrying
/// conflicts), then checks the workload's invariants and the history.
pub fn drive<P: Protocol, W: Workload>(
    workload: &W,
    threads: usize,
    txns_per_thread: usize,
) -> Result<(), String> {
    let recorder = Arc::new(MemoryRecorder::new());
    let engine = P::build(&workload.schema(), Arc::clone(&recorder)).map_err(|e| e.to_string())?;
    workload.load(&engine).map_err(|e| e.to_string())?;
    let barrier = Barrier::new(threads);
    let errors: Vec<String> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let (engine, barrier) = (&engine, &barrier);
                s.spawn(move || -> Result<(), String> {
                    let mut worker = engine.worker().map_err(|e| e.to_string())?;
                    let mut generator = workload.generator(t, 42);
                    let mut backoff = Backoff::new(RetryPolicy::default(), t as u64);
                    barrier.wait();
                    for _ in 0..txns_per_thread {
                        let program = generator.next();
                        backoff.reset();
                        loop {
                            let mut tx = worker.begin();
                            let result = program.run(&mut tx).and_then(|()| tx.commit().map(drop));
                            match result {
                                Ok(()) | Err(TxError::UserAbort(_)) => break,
                                Err(e) if e.is_retryable() => backoff.wait(),
                                Err(e) => return Err(format!("thread {t}: {e}")),
                            }
                        }
                    }
                    Ok(())
                })
            })
            .collect();
        handles
            .into_iter()
            .filter_map(|h| h.join().expect("worker panicked").err())
            .collect()
    });
    if let Some(e) = errors.first() {
        return Err(e.clone());
    }
    workload
        .check(&engine)
        .map_err(|e| format!("invariant: {e}"))?;
    drop(engine);
    let report = check(&recorder.take(), check_options::<P>());
    if !report.is_serializable() {
        return Err(format!(
            "history of {} on {threads} threads:\n{report}",
            workload.name()
        ));
    }
    Ok(())
}

/// YCSB-like transactions (4 operations, half reads, half writes of which half read-modify-write)
/// over `records` keys with skew `theta`.
pub fn ycsb_workload(records: u64, theta: f64) -> Ycsb {
    let mut cfg = YcsbConfig::preset(YcsbPreset::A);
    cfg.records = records;
    cfg.ops_per_txn = 4.min(records as usize);
    cfg.rmw_ratio = 0.5;
    cfg.payload_bytes = 16;
    cfg.theta = theta;
    Ycsb::new(cfg).expect("valid YCSB configuration")
}

/// Read-mostly YCSB (preset B: 95 % reads, the writes blind) over `records` keys with skew
/// `theta`, 4 operations: mostly read-only transactions, some of them pre-epoch readers that
/// merge nothing under NWR (`txlab_nwr::is_pre_epoch_reader`), racing blind writers that NWR may
/// omit.
pub fn ycsb_read_mostly_workload(records: u64, theta: f64) -> Ycsb {
    let mut cfg = YcsbConfig::preset(YcsbPreset::B);
    cfg.records = records;
    cfg.ops_per_txn = 4.min(records as usize);
    cfg.payload_bytes = 16;
    cfg.theta = theta;
    Ycsb::new(cfg).expect("valid YCSB configuration")
}

/// SmallBank over 100 customers (contended) with the audit ledger on.
pub fn smallbank_workload() -> SmallBank {
    SmallBank::new(SmallBankConfig {
        customers: 100,
        theta: 0.9,
        audit: true,
        ..SmallBankConfig::default()
    })
    .expect("valid SmallBank configuration")
}

/// Contended YCSB on each thread count in `threads`; panics on a violation.
pub fn ycsb<P: Protocol>(threads: &[usize], records: u64, theta: f64, txns_per_thread: usize) {
    let w = ycsb_workload(records, theta);
    let what = format!("YCSB over {records} keys, theta {theta}");
    drive_each::<P, _>(&w, threads, txns_per_thread, &what);
}

/// Drives `workload` on each thread count in `threads`; panics naming `what` on a violation.
fn drive_each<P: Protocol, W: Workload>(
    workload: &W,
    threads: &[usize],
    txns_per_thread: usize,
    what: &str,
) {
    for &t in threads {
        if let Err(e) = drive::<P, _>(workload, t, txns_per_thread) {
            panic!("{}: {what}, {t} threads: {e}", P::NAME);
        }
    }
}

/// Read-mostly YCSB ([`ycsb_read_mostly_workload`]) on each thread count in `threads`; panics
/// on a violation.
pub fn ycsb_read_mostly<P: Protocol>(
    threads: &[usize],
    records: u64,
    theta: f64,
    txns_per_thread: usize,
) {
    let w = ycsb_read_mostly_workload(records, theta);
    let what = format!("read-mostly YCSB over {records} keys, theta {theta}");
    drive_each::<P, _>(&w, threads, txns_per_thread, &what);
}

/// SmallBank on each thread count in `threads`; panics on a violation or lost money.
pub fn smallbank<P: Protocol>(threads: &[usize], txns_per_thread: usize) {
    drive_each::<P, _>(&smallbank_workload(), threads, txns_per_thread, "SmallBank");
}
