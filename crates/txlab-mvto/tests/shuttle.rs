//! Mvto's commit path under shuttle (see `txlab_testkit::shuttle_check`), plain, with NWR, and with
//! single-write omitters.
//!
//! ```text
//! RUSTFLAGS="--cfg txlab_shuttle -C target-cpu=x86-64-v2" cargo test -p txlab-mvto --test shuttle --target-dir target/shuttle
//! ```
//!
//! Under shuttle the pivot object's 128-bit atomic is `portable_atomic`'s (not instrumented), so
//! shuttle interleaves MVTO+NWR's version-list and status accesses, not its pivot-object CASes.
#![cfg(txlab_shuttle)]

mod common;

use common::MvtoHooks;
use txlab_mvto::{Nwr, NwrSingleWrite};
use txlab_testkit::family::Kit;
use txlab_testkit::shuttle_check;

type Shuttle = Kit<MvtoHooks>;
type ShuttleNwr = Kit<MvtoHooks, Nwr>;
type ShuttleNwrSingle = Kit<MvtoHooks, NwrSingleWrite>;

#[test]
fn mvto_commit_path_is_serializable_under_random_schedules() {
    shuttle_check::run::<Shuttle>(2_000);
}

/// The generic scenario, then same-epoch blind writes: asserts some schedules omit writes.
#[test]
fn mvto_nwr_commit_path_is_serializable_under_random_schedules() {
    shuttle_check::run_nwr::<ShuttleNwr>(2_000);
}

/// The generic scenario, then the single-write scenario (an omitter whose read is overwritten by
/// a transaction that read the omitted item): asserts some schedules omit writes.
#[test]
fn mvto_nwr_single_commit_path_is_serializable_under_random_schedules() {
    shuttle_check::run_nwr_single_write::<ShuttleNwrSingle>(2_000);
}
