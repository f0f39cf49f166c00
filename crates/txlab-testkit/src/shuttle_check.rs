//! The commit path under shuttle's randomized scheduler (build with `--cfg txlab_shuttle`).
//!
//! With that cfg every atomic, lock and spin-wait of the workspace comes from shuttle (through
//! `txlab_core::sync`), so the scheduler may preempt a thread between any two atomic operations:
//! inside a seqlock read, between locking and validating, between validating and installing.
//! Each iteration runs conflicting transactions on three shuttle threads against a fresh engine
//! with manual epochs and checks the recorded history.
//!
//! ```text
//! RUSTFLAGS="--cfg txlab_shuttle -C target-cpu=x86-64-v2" \
//!   cargo test -p txlab-silo -p txlab-tictoc -p txlab-mvto --test shuttle --target-dir target/shuttle
//! ```

use crate::{Protocol, check_options};
use std::sync::Arc;
use txlab_check::{MemoryRecorder, check};
use txlab_core::{Engine, Schema, TableId, TableSpec, Transaction, TxOps, Worker};

const T: TableId = TableId(0);

fn num(b: &[u8]) -> u64 {
    u64::from_le_bytes(b.try_into().expect("8-byte values"))
}

/// Two write-skew transactions (read x and y, write one of them) and a read-modify-write of z
/// from x, twice each, on three threads. Returns whether the history passed the checker.
pub fn scenario<P: Protocol>() -> bool
where
    P::Engine: 'static,
{
    let mut schema = Schema::new();
    schema
        .add(TableSpec::dense("kv", 8, 3))
        .expect("valid table");
    let recorder = Arc::new(MemoryRecorder::new());
    let engine = Arc::new(P::build(&schema, Arc::clone(&recorder)).expect("engine"));
    for k in 0..3 {
        engine.load(T, k, &10u64.to_le_bytes()).expect("load");
    }
    let handles: Vec<_> = (0..3u64)
        .map(|t| {
            let engine = Arc::clone(&engine);
            shuttle::thread::spawn(move || {
                let mut w = engine.worker().expect("worker");
                for _ in 0..2 {
                    let mut tx = w.begin();
                    // A conflict aborts the attempt (the transaction is dropped); only the
                    // history is judged, so no error may panic here.
                    let body = (|| {
                        let x = tx.read(T, 0)?.map(num).unwrap_or(0);
                        let y = tx.read(T, 1)?.map(num).unwrap_or(0);
                        match t {
                            0 => tx.write(T, 0, &(x + 1).to_le_bytes()),
                            1 => tx.write(T, 1, &(y + 1).to_le_bytes()),
                            _ => tx
                                .update(T, 2, &mut |v| {
                                    v.copy_from_slice(&(num(v) + x).to_le_bytes())
                                })
                                .map(drop),
                        }
                    })();
                    if body.is_ok() {
                        let _ = tx.commit();
                    }
                }
            })
        })
        .collect();
    for h in handles {
        h.join().expect("thread");
    }
    drop(engine);
    check(&recorder.take(), check_options::<P>()).is_serializable()
}

/// Runs [`scenario`] on `iterations` random schedules; panics on a violation.
pub fn run<P: Protocol>(iterations: usize)
where
    P::Engine: 'static,
{
    shuttle::check_random(
        || assert!(scenario::<P>(), "{}: history not serializable", P::NAME),
        iterations,
    );
}

/// Whether some random schedule (seeds `0..seeds`, `iterations` each) breaks `P`: the mutation
/// proof for checks that only a precise interleaving exposes.
pub fn finds_violation<P: Protocol>(seeds: u64, iterations: usize) -> bool
where
    P::Engine: 'static,
{
    (0..seeds).any(|seed| {
        std::panic::catch_unwind(|| {
            shuttle::check_random_with_seed(|| assert!(scenario::<P>()), seed, iterations)
        })
        .is_err()
    })
}
