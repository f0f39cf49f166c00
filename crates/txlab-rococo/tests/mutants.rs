//! The deliberately broken variants (`mutation` feature) are caught by the distributed kit on
//! the step driver, with a shrunk schedule that the correct protocol passes. A catch counts
//! only for the failure the mutant is about (a history that is not strictly serializable or
//! breaks the one order; for GC's mutant also the servers' internal errors or a run that
//! cannot finish); a run failing otherwise is not a catch, and the search goes on.
//!
//! `LastReaderOnly` is caught on random profiles (`txlab_testkit::distributed::profiles`), not on
//! TPC-C or YCSB: an edge from an earlier reader to a writer matters only when that read was
//! immediate (it saw the old value at start); a deferred read runs at execution, after whatever
//! the graph let run before it. Neither workload has an immediate piece that reads a group
//! another piece writes; random profiles do.

use proptest::prelude::*;
use proptest::test_runner::{TestCaseError, TestError};
use std::time::Duration;
use txlab_core::pieces::PieceProfiles;
use txlab_net::step::Schedule;
use txlab_net::step::strategy::{Faults, choices};
use txlab_rococo::config::Mutant;
use txlab_rococo::{Params, PiecedWorkload};
use txlab_testkit::distributed::kit::{Case, hot_ycsb, params, run_step, runner, small_tpcc};

/// Reordering and delays only: every mutant is caught without message loss.
const FAULTS: Faults = Faults {
    drop: false,
    duplicate: false,
    delay: true,
    crash: false,
};

fn mutant_params(seed: u64, mutant: Option<Mutant>) -> Params {
    Params {
        mutant,
        // Collect often, so GC runs while transactions are in flight.
        gc_epoch: Some(Duration::from_millis(1)),
        ..params(seed)
    }
}

/// YCSB on 3 hot keys over 2 servers, 6 slots of 3 transactions.
fn ycsb(
    mutant: Option<Mutant>,
    protocol: txlab_rococo::Protocol,
    seed: u64,
) -> Case<txlab_workload::Ycsb> {
    Case {
        workload: hot_ycsb(3),
        protocol,
        servers: 2,
        clients: vec![vec![0, 1, 2], vec![3, 4, 5]],
        quota: 3,
        params: mutant_params(seed, mutant),
    }
}

/// [`ycsb`] with read-only rounds holding their keys from the first round.
fn ycsb_held(
    mutant: Option<Mutant>,
    protocol: txlab_rococo::Protocol,
    seed: u64,
) -> Case<txlab_workload::Ycsb> {
    let mut case = ycsb(mutant, protocol, seed);
    case.params.ro_hold_after = Some(0);
    case
}

/// Scaled TPC-C, 2 servers x 2 districts, 15 items (every pair of NewOrders shares stock).
fn tpcc(
    mutant: Option<Mutant>,
    protocol: txlab_rococo::Protocol,
    seed: u64,
) -> Case<txlab_workload::Tpcc> {
    Case {
        workload: small_tpcc(2, 15),
        protocol,
        servers: 2,
        clients: vec![vec![0, 1, 2], vec![3, 4, 5]],
        quota: 2,
        params: mutant_params(seed, mutant),
    }
}

/// The kit's errors for a history that is not strictly serializable or breaks the one order.
const VIOLATION: &[&str] = &["not strictly serializable", "one order violated"];

/// GC's mutant: the internal errors the servers count (`gc_status_errors`), a run that cannot
/// finish (the step driver's "no progress"), or a violation.
const GC_REASONS: &[&str] = &[
    "internal errors: ",
    "no progress: ",
    "not strictly serializable",
    "one order violated",
];

/// Whether run error `e` is one of `expected` (parts of the kit's and the driver's messages).
fn is_expected(e: &str, expected: &[&str]) -> bool {
    expected.iter().any(|x| e.contains(x))
}

/// Searches schedules for one that `mutant` fails with one of the `expected` errors; returns
/// the shrunk one with its seed and the error.
fn catch<W: PiecedWorkload>(
    mutant: Mutant,
    make: fn(Option<Mutant>, txlab_rococo::Protocol, u64) -> Case<W>,
    expected: &[&str],
) -> (u64, Schedule, String) {
    let (mut runner, proptest_seed) = runner(400, 2000);
    let r = runner.run(
        &(any::<u64>(), choices(120, FAULTS)),
        |(seed, s)| match run_step(&make(Some(mutant), mutant.protocol(), seed), s) {
            Err(e) if is_expected(&e, expected) => Err(TestCaseError::fail(e)),
            _ => Ok(()),
        },
    );
    match r {
        Err(TestError::Fail(why, (seed, schedule))) => (seed, schedule, why.to_string()),
        other => panic!("{mutant:?} was not caught (TXLAB_SEED={proptest_seed}): {other:?}"),
    }
}

fn caught<W: PiecedWorkload>(
    mutant: Mutant,
    make: fn(Option<Mutant>, txlab_rococo::Protocol, u64) -> Case<W>,
    expected: &[&str],
) {
    let (seed, schedule, why) = catch(mutant, make, expected);
    println!("{mutant:?} caught (seed {seed}): {why}");
    // The shrunk schedule replays: the mutant fails it again, for the same kind of reason, and
    // the correct protocol passes it.
    let replayed: Schedule = schedule.to_string().parse().unwrap();
    match run_step(&make(Some(mutant), mutant.protocol(), seed), replayed) {
        Err(e) if is_expected(&e, expected) => {}
        other => panic!("{mutant:?}: the shrunk schedule replays as {other:?}, not {expected:?}"),
    }
    let correct = make(None, mutant.protocol(), seed);
    if let Err(e) = run_step(&correct, schedule) {
        panic!(
            "the correct {} fails the schedule that caught {mutant:?}: {e}",
            mutant.protocol().name()
        );
    }
}

#[test]
fn sorting_a_component_by_id_is_caught() {
    caught(Mutant::SortById, tpcc, VIOLATION);
}

#[test]
fn deciding_without_the_committing_wait_is_caught() {
    caught(Mutant::NoCommittingWait, ycsb, VIOLATION);
}

#[test]
fn a_single_round_read_only_protocol_is_caught() {
    caught(Mutant::SingleRoundReadOnly, ycsb, VIOLATION);
}

/// Holds keep new writers of a read's keys back, not the writers the read found: a held read
/// that does not wait for those can see one server's half of a transaction in both rounds.
#[test]
fn a_held_read_that_skips_the_wait_for_writers_is_caught() {
    caught(Mutant::HeldReadNoWait, ycsb_held, VIOLATION);
}

/// A hold keeps new writers back only where the read has arrived, and writers a held read
/// waits for are let through its other holds (`RoExempt`): one held round can still see a
/// transaction at one server and miss it at another, which only the second round exposes.
#[test]
fn a_held_round_that_commits_alone_is_caught() {
    caught(Mutant::HeldRoundAlone, ycsb_held, VIOLATION);
}

#[test]
fn gc_without_the_two_epoch_delay_is_caught() {
    caught(Mutant::GcWithoutDelay, ycsb, GC_REASONS);
}

#[test]
fn two_pl_releasing_before_2pc_is_caught() {
    caught(Mutant::TwoPlEarlyRelease, ycsb, VIOLATION);
}

#[test]
fn occ_without_read_validation_is_caught() {
    caught(Mutant::OccNoValidation, ycsb, VIOLATION);
}

/// Random profiles do have immediate reads of groups other pieces write: there the mutant's
/// missing edge (from an earlier reader to the writer) lets the servers order a writer's
/// deferred piece before the reader's on another server.
#[test]
fn one_hop_edges_from_the_last_reader_only_are_caught_on_random_profiles() {
    use txlab_rococo::sc::{ScOptions, analyze};
    use txlab_testkit::distributed::profiles::{ProfileSpec, RandomPieces, profile_spec};
    let make = |spec: &ProfileSpec, mutant, seed| Case {
        workload: RandomPieces::new(spec.clone()).unwrap(),
        protocol: txlab_rococo::Protocol::Rococo,
        servers: 2,
        clients: vec![vec![0, 1, 2], vec![3, 4, 5]],
        quota: 3,
        params: mutant_params(seed, mutant),
    };
    let mutant = Some(Mutant::LastReaderOnly);
    let (mut runner, proptest_seed) = runner(2000, 2000);
    let r = runner.run(
        &(profile_spec(0.5), any::<u64>(), choices(120, FAULTS)),
        |(spec, seed, s)| {
            let w = RandomPieces::new(spec.clone()).unwrap();
            let safe = analyze(&spec.profiles(), &w.table_layouts(), ScOptions::default())
                .is_ok_and(|r| r.is_safe());
            if !safe {
                return Ok(());
            }
            match run_step(&make(&spec, mutant, seed), s) {
                Err(e) if is_expected(&e, VIOLATION) => Err(TestCaseError::fail(e)),
                _ => Ok(()),
            }
        },
    );
    let Err(TestError::Fail(why, (spec, seed, schedule))) = r else {
        panic!("LastReaderOnly was not caught (TXLAB_SEED={proptest_seed}): {r:?}");
    };
    println!("LastReaderOnly caught (seed {seed}, {spec:?}): {why}");
    if let Err(e) = run_step(&make(&spec, None, seed), schedule) {
        panic!("the correct rococo fails the schedule that caught LastReaderOnly: {e}");
    }
}
