//! Silo in the correctness kit: Hermitage schedules with Silo's expected aborts, random
//! schedules, threaded stress, and the mutants the kit must catch.

mod common;

use common::SiloHooks;
use txlab_silo::Mutation;
use txlab_testkit::family::{Kit, NoNwr};

type SiloKit = Kit<SiloHooks>;

txlab_testkit::protocol_kit!(SiloKit);

/// The commit rule's read term (`txlab_testkit::tid_rule`).
#[test]
fn written_versions_follow_reads() {
    txlab_testkit::tid_rule::written_versions_follow_reads::<SiloKit>(
        txlab_testkit::tid_rule::Order::Above,
    );
}

txlab_testkit::family_mutant!(
    SiloHooks,
    NoNwr,
    SiloSkipReadValidation,
    kit_catches_skipped_read_validation,
    Mutation::SkipReadValidation
);
txlab_testkit::family_mutant!(
    SiloHooks,
    NoNwr,
    SiloSkipPhantomValidation,
    kit_catches_skipped_phantom_validation,
    Mutation::SkipPhantomValidation
);
// Skipping write locks only shows when two commits interleave between validation and install;
// real threads on two cores hit that window by chance, so that mutant is caught deterministically
// by the shuttle test instead (`tests/shuttle.rs`).

/// The partitioned phantom of the kit (`txlab_testkit::phantom::insert_into_scanned_partition`)
/// is stopped only by phantom validation: without it both transactions commit.
#[test]
#[should_panic(expected = "both committed")]
fn partition_phantom_needs_phantom_validation() {
    txlab_testkit::phantom::insert_into_scanned_partition::<
        Kit<SiloHooks, NoNwr, SiloSkipPhantomValidation>,
    >();
}

/// `Silo::builder()` builds `silo`, `silo-nwr` and `silo-nwr-single` by name and refuses
/// bad input with a clear error (`txlab_testkit::builder`).
#[test]
fn builder_builds_named_variants_and_refuses_bad_input() {
    txlab_testkit::builder::builds_every_named_variant::<txlab_silo::Silo>();
    txlab_testkit::builder::refuses_bad_input::<txlab_silo::Silo>();
}
