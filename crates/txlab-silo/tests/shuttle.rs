//! Silo's commit path under shuttle's randomized scheduler.
//!
//! Built only with `--cfg txlab_shuttle` (RUSTFLAGS replaces `.cargo/config.toml`'s flags, so
//! repeat `-C target-cpu=x86-64-v2`), which swaps every atomic and lock of the workspace
//! (through `txlab_core::sync`) for shuttle's, so the scheduler can preempt a thread between any
//! two atomic operations: inside the seqlock read, between locking and validating, between
//! validating and installing. Each iteration runs a few conflicting transactions on three shuttle
//! threads and checks the recorded history.
//!
//! ```text
//! RUSTFLAGS="--cfg txlab_shuttle -C target-cpu=x86-64-v2" cargo test -p txlab-silo --test shuttle --target-dir target/shuttle
//! ```
#![cfg(txlab_shuttle)]

use std::sync::Arc;
use txlab_check::{CheckOptions, MemoryRecorder, check};
use txlab_core::{Engine, Schema, TableId, TableSpec, Transaction, TxOps, Worker};
use txlab_silo::{Mutation, Silo, SiloConfig};

const T: TableId = TableId(0);

fn num(b: &[u8]) -> u64 {
    u64::from_le_bytes(b.try_into().unwrap())
}

/// Three threads: two "write skew" transactions (read x and y, write one of them) and one
/// transfer-like read-modify-write of both. Returns whether the history was serializable.
fn scenario(config: SiloConfig) -> bool {
    let mut schema = Schema::new();
    schema.add(TableSpec::dense("kv", 8, 3)).unwrap();
    let recorder = Arc::new(MemoryRecorder::new());
    let db = Arc::new(Silo::with_recorder(&schema, config, Arc::clone(&recorder)).unwrap());
    for k in 0..3 {
        db.load(T, k, &10u64.to_le_bytes()).unwrap();
    }
    let handles: Vec<_> = (0..3u64)
        .map(|t| {
            let db = Arc::clone(&db);
            shuttle::thread::spawn(move || {
                let mut w = db.worker().unwrap();
                for _ in 0..2 {
                    let mut tx = w.begin();
                    // A conflict aborts the attempt (dropping the transaction); only
                    // serializability is asserted, so no error may panic here.
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
        h.join().unwrap();
    }
    drop(db);
    check(&recorder.take(), CheckOptions::strict()).is_serializable()
}

#[test]
fn silo_commit_path_is_serializable_under_random_schedules() {
    shuttle::check_random(|| assert!(scenario(SiloConfig::manual())), 2_000);
}

#[test]
fn shuttle_finds_the_race_when_write_locks_are_skipped() {
    // The same search on the broken build must find a non-serializable interleaving.
    let mut found = false;
    for seed in 0..20u64 {
        let result = std::panic::catch_unwind(|| {
            shuttle::check_random_with_seed(
                || {
                    assert!(scenario(
                        SiloConfig::manual().with_mutation(Mutation::SkipWriteLock)
                    ))
                },
                seed,
                500,
            )
        });
        if result.is_err() {
            found = true;
            break;
        }
    }
    assert!(
        found,
        "shuttle did not find the missing-lock race in 20 x 500 schedules"
    );
}
