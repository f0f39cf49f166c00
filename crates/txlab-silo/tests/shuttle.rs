//! Silo's and Silo+NWR's commit paths under shuttle (see `txlab_testkit::shuttle_check`), and the
//! skipped-write-lock mutant, which only a precise interleaving of two commits exposes.
//!
//! ```text
//! RUSTFLAGS="--cfg txlab_shuttle -C target-cpu=x86-64-v2" cargo test -p txlab-silo --test shuttle --target-dir target/shuttle
//! ```
//! (`RUSTFLAGS` replaces `.cargo/config.toml`'s flags, hence the repeated target CPU.)
//!
//! Under shuttle the pivot object's 128-bit atomic is `portable_atomic`'s (not instrumented), so
//! shuttle interleaves Silo+NWR's TID-word, lock and epoch accesses, not its pivot-object CASes.
#![cfg(txlab_shuttle)]

mod common;

use common::SiloHooks;
use txlab_silo::{Mutation, Nwr, NwrSingleWrite};
use txlab_testkit::family::{Kit, NoNwr, ValidateReadsBeforePivot};
use txlab_testkit::shuttle_check;

type SiloShuttle = Kit<SiloHooks>;
type SiloNwrShuttle = Kit<SiloHooks, Nwr>;
type SiloNwrSingleShuttle = Kit<SiloHooks, NwrSingleWrite>;

txlab_testkit::family_mutant!(SiloHooks, SkipWriteLock, Mutation::SkipWriteLock);

#[test]
fn silo_commit_path_is_serializable_under_random_schedules() {
    shuttle_check::run::<SiloShuttle>(2_000);
}

#[test]
fn shuttle_finds_the_race_when_write_locks_are_skipped() {
    assert!(shuttle_check::finds_violation::<
        Kit<SiloHooks, NoNwr, SkipWriteLock>,
    >(20, 500));
}

/// The generic scenario, then same-epoch blind writes: asserts some schedules omit writes.
#[test]
fn silo_nwr_commit_path_is_serializable_under_random_schedules() {
    shuttle_check::run_nwr::<SiloNwrShuttle>(2_000);
}

/// The NWR floor can fail: plain Silo never omits a write.
#[test]
#[should_panic(expected = "barely exercised")]
fn run_nwr_fails_on_a_protocol_that_never_omits() {
    shuttle_check::run_nwr::<SiloShuttle>(50);
}

/// The generic scenario, then the single-write scenario (an omitter whose read is overwritten by
/// a reader of the item it writes): serializable, and some schedules omit.
#[test]
fn silo_nwr_single_commit_path_is_serializable_under_random_schedules() {
    shuttle_check::run_nwr_single_write::<SiloNwrSingleShuttle>(2_000);
}

/// The check order matters: validating the omitter's reads before observing the pivot lets the
/// single-write scenario close `O -rw(z)-> Y -rw(y)-> O`, and shuttle finds it.
#[test]
fn shuttle_finds_the_cycle_when_reads_are_validated_before_the_pivot_is_seen() {
    assert!(shuttle_check::finds_nwr_single_write_violation::<
        Kit<SiloHooks, NwrSingleWrite, ValidateReadsBeforePivot>,
    >(20, 500));
}
