//! DOCC's waiting, validation and commit paths under shuttle's randomized scheduler, which can
//! preempt a worker between any two atomic operations: a fixed log of conflicting one-shot
//! programs (scans, inserts, deletes, read-modify-writes, a read-only claim) executed at 3
//! workers must give the serial execution's results and final state in every schedule, for the
//! three modes; and the mutant that skips the waiting phase must be caught.
//!
//! ```text
//! RUSTFLAGS="--cfg txlab_shuttle -C target-cpu=x86-64-v2" cargo test -p txlab-docc --test shuttle --target-dir target/shuttle
//! ```
#![cfg(txlab_shuttle)]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use txlab_check::digest::StateDigest;
use txlab_check::serial::SerialEngine;
use txlab_core::TxResult;
use txlab_core::deterministic::Deterministic;
use txlab_docc::{Chain, Docc, DoccConfig, InPlace, Layout, Mutation};
use txlab_testkit::deterministic::{OneShot, Present, ReadOnlyGuard, Setup, one_shot_schema};
use txlab_testkit::replay::Op;

fn log() -> Vec<OneShot> {
    let p = |ops: Vec<Op>| OneShot {
        ops,
        claims_read_only: false,
    };
    vec![
        p(vec![Op::Update(0, 5), Op::Read(1)]),
        p(vec![Op::Read(0), Op::Write(1, 100)]),
        OneShot {
            ops: vec![Op::Scan(0, 5), Op::Read(2)],
            claims_read_only: true,
        },
        p(vec![Op::Insert(4, 40), Op::Delete(2)]),
        p(vec![Op::Scan(0, 5), Op::Update(1, 1)]),
        p(vec![Op::Read(4), Op::Update(0, 7), Op::Insert(2, 20)]),
        OneShot {
            ops: vec![Op::Read(0), Op::Read(4)],
            claims_read_only: true,
        },
        p(vec![Op::Delete(4), Op::Scan(0, 3)]),
    ]
}

type Expected = (Vec<TxResult<Vec<Option<u64>>>>, StateDigest);

fn expected() -> Expected {
    let serial = SerialEngine::new(one_shot_schema());
    Present(3).load(&serial).unwrap();
    let guarded: Vec<_> = log().into_iter().map(ReadOnlyGuard).collect();
    let r = serial.execute_log(&guarded, 1).unwrap();
    (r, StateDigest::of_serial(&serial))
}

/// One schedule: returns whether results and state matched the serial execution.
fn matches<L: Layout>(config: DoccConfig, expected: &Expected) -> bool {
    let db = Docc::<L>::builder()
        .config(config)
        .build(&one_shot_schema())
        .unwrap();
    Present(3).load(&db).unwrap();
    let r = db.execute_log(&log(), 3).unwrap();
    let same_results = r.iter().zip(&expected.0).all(|(a, b)| match (a, b) {
        (Err(txlab_core::TxError::Error(txlab_core::Error::Misuse(_))), Err(_)) => true,
        (a, b) => a == b,
    });
    same_results && StateDigest::of(&db).unwrap() == expected.1
}

fn every_schedule_matches<L: Layout>(prefetch: bool) {
    let expected = Arc::new(expected());
    shuttle::check_random(
        move || {
            let config = DoccConfig {
                prefetch,
                ..DoccConfig::default()
            };
            assert!(
                matches::<L>(config, &expected),
                "a schedule diverged from the serial execution"
            );
        },
        300,
    );
}

#[test]
fn basic_matches_the_serial_execution_in_every_schedule() {
    every_schedule_matches::<InPlace>(false);
}

#[test]
fn snapshot_matches_the_serial_execution_in_every_schedule() {
    every_schedule_matches::<Chain>(false);
}

#[test]
fn docc_matches_the_serial_execution_in_every_schedule() {
    every_schedule_matches::<Chain>(true);
}

#[test]
fn skipping_the_wait_is_caught_in_some_schedule() {
    let expected = Arc::new(expected());
    let caught = Arc::new(AtomicBool::new(false));
    let seen = Arc::clone(&caught);
    shuttle::check_random(
        move || {
            let config = DoccConfig {
                prefetch: false,
                mutation: Some(Mutation::SkipWait),
                ..DoccConfig::default()
            };
            if !matches::<InPlace>(config, &expected) {
                seen.store(true, Ordering::Relaxed);
            }
        },
        300,
    );
    assert!(
        caught.load(Ordering::Relaxed),
        "no schedule exposed the skipped wait"
    );
}
