//! Random schedules: proptest generates transactions and an interleaving, [`replay`] runs them
//! from one thread, and the recorded history must pass the checker. Failures shrink to a minimal
//! schedule, printed in the panic message.
//!
//! - 2 to 8 transactions over 1 to 6 keys, 1 to 4 operations each (read, blind write,
//!   read-modify-write, insert, delete, range scan), then a commit (or, sometimes, a rollback).
//! - The interleaving is a list of choices; choice `c` advances the `c mod live`-th unfinished
//!   transaction, so shrinking the list shrinks towards a serial schedule.
//! - Every written value is unique, so the checker's version matching is unambiguous.
//!
//! Cases: 2,000 by default; `TXLAB_PROPTEST_CASES=N` for more. Seed: fixed (CI is reproducible);
//! `TXLAB_SEED=N` explores another part of the space, and a failure prints the seed to replay.

use crate::Protocol;
use crate::replay::{Op, Schedule, Step, replay};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestError, TestRng, TestRunner};

/// One random operation over keys `0..keys` (reads, blind writes, read-modify-writes, inserts,
/// deletes, scans).
pub fn op(keys: u64) -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0..keys).prop_map(Op::Read),
        2 => (0..keys).prop_map(|k| Op::Write(k, 0)),
        2 => (0..keys).prop_map(|k| Op::Update(k, 1)),
        1 => (0..keys).prop_map(|k| Op::Insert(k, 0)),
        1 => (0..keys).prop_map(Op::Delete),
        1 => (0..keys, 0..keys).prop_map(|(a, b)| Op::Scan(a.min(b), a.max(b))),
    ]
}

/// The strategy: `(keys, transactions, interleaving choices, initially present keys, rollbacks)`.
pub fn schedules() -> impl Strategy<Value = Schedule> {
    (1u64..=6, 2usize..=8)
        .prop_flat_map(|(keys, n)| {
            (
                Just(keys),
                prop::collection::vec(prop::collection::vec(op(keys), 1..=4), n),
                prop::collection::vec(any::<u8>(), 0..48),
                0..=keys,
                prop::collection::vec(prop::bool::weighted(0.1), n),
            )
        })
        .prop_map(|(_keys, txns, choices, present, rollback)| {
            build(txns, &choices, present, &rollback)
        })
}

fn build(mut txns: Vec<Vec<Op>>, choices: &[u8], present: u64, rollback: &[bool]) -> Schedule {
    for (t, ops) in txns.iter_mut().enumerate() {
        for (i, op) in ops.iter_mut().enumerate() {
            let unique = 1_000 + 100 * t as u64 + i as u64;
            match op {
                Op::Write(_, v) | Op::Insert(_, v) => *v = unique,
                _ => {}
            }
        }
        ops.push(if rollback[t] { Op::Abort } else { Op::Commit });
    }
    let n = txns.len();
    let mut cursor = vec![0usize; n];
    let mut steps = Vec::new();
    let mut c = 0;
    loop {
        let live: Vec<usize> = (0..n).filter(|&t| cursor[t] < txns[t].len()).collect();
        if live.is_empty() {
            break;
        }
        let pick = choices.get(c).map_or(0, |&x| x as usize % live.len());
        c += 1;
        let t = live[pick];
        steps.push(Step::new(t, txns[t][cursor[t]]));
        cursor[t] += 1;
    }
    Schedule {
        txns: n,
        initial: (0..present).map(|k| (k, 10 * k + 10)).collect(),
        steps,
        begin_all_first: false,
    }
}

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.parse().ok())
}

fn runner() -> (TestRunner, u64) {
    let cases = env_u64("TXLAB_PROPTEST_CASES").unwrap_or(2_000) as u32;
    let seed = env_u64("TXLAB_SEED").unwrap_or(0x74_786c_6162);
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    let config = Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    };
    (
        TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &bytes)),
        seed,
    )
}

/// Searches random schedules for a violation; returns the minimal failing schedule, described.
pub fn find_violation<P: Protocol>() -> Option<String> {
    let (mut runner, seed) = runner();
    let result = runner.run(&schedules(), |s| {
        let r = replay::<P>(&s).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert!(
            r.violations.is_empty(),
            "forbidden reads: {:?}",
            r.violations
        );
        prop_assert!(
            r.report.is_serializable(),
            "states {:?}\n{}",
            r.states,
            r.report
        );
        Ok(())
    });
    match result {
        Ok(()) => None,
        Err(TestError::Fail(reason, schedule)) => Some(format!(
            "seed {seed}: {reason}\nminimal schedule: {schedule:#?}"
        )),
        Err(TestError::Abort(reason)) => Some(format!("seed {seed}: aborted: {reason}")),
    }
}

/// Runs the random-schedule check for `P`, panicking with the minimal failing schedule.
pub fn run<P: Protocol>() {
    if let Some(failure) = find_violation::<P>() {
        panic!(
            "{}: a random schedule broke serializability: {failure}",
            P::NAME
        );
    }
}
