//! Silo+NWR with single-write omitters (`SiloNwrSingle`, engine `silo-nwr-single`) in the
//! correctness kit (`txlab_testkit::nwr_single_kit!`): Hermitage schedules, random schedules
//! (reads, blind writes, read-modify-writes, inserts, deletes and scans), threaded stress across
//! epochs, the NWR mutants, the schedules that show which reads this rule marks, and strictness
//! with acknowledgement times.
//!
//! As in `kit_nwr.rs`: manual epochs and `AckMode::EpochStable`; the kit checks histories for
//! serializability. The check-order mutant needs a preemption inside a commit and is caught in
//! `tests/shuttle.rs`.

mod common;

// Which reads leave a mark under this rule and the scan-miss mark; strictness with group-commit
// acknowledgements; the pivot writer's mark (`PIVOT_READ` in the TID word) lasts one epoch.
txlab_testkit::nwr_single_kit!(
    common::SiloHooks,
    single_write_marks,
    single_write_strict_with_acknowledgements,
    single_write_mark_lasts_one_epoch,
);
