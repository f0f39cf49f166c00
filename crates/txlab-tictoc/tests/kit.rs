//! TicToc in the correctness kit: Hermitage schedules with TicToc's outcomes, random schedules,
//! threaded stress, and mutants the kit must catch.

mod common;

use common::TicTocHooks;
use txlab_testkit::family::{Kit, NoNwr};
use txlab_tictoc::Mutation;

type TicTocKit = Kit<TicTocHooks>;

txlab_testkit::protocol_kit!(TicTocKit);

/// The commit rule's read term (`txlab_testkit::tid_rule`).
#[test]
fn written_versions_follow_reads() {
    txlab_testkit::tid_rule::written_versions_follow_reads::<TicTocKit>(
        txlab_testkit::tid_rule::Order::AtLeast,
    );
}

txlab_testkit::family_mutant!(
    TicTocHooks,
    NoNwr,
    TicTocSkipReadValidation,
    kit_catches_skipped_read_validation,
    Mutation::SkipReadValidation
);
txlab_testkit::family_mutant!(
    TicTocHooks,
    NoNwr,
    TicTocSkipRtsExtension,
    kit_catches_skipped_rts_extension,
    Mutation::SkipRtsExtension
);
txlab_testkit::family_mutant!(
    TicTocHooks,
    NoNwr,
    TicTocSkipPhantomValidation,
    kit_catches_skipped_phantom_validation,
    Mutation::SkipPhantomValidation
);

/// The partitioned phantom of the kit (`txlab_testkit::phantom::insert_into_scanned_partition`)
/// is stopped only by phantom validation: without it both transactions commit.
#[test]
#[should_panic(expected = "both committed")]
fn partition_phantom_needs_phantom_validation() {
    txlab_testkit::phantom::insert_into_scanned_partition::<
        Kit<TicTocHooks, NoNwr, TicTocSkipPhantomValidation>,
    >();
}

/// `TicToc::builder()` builds `tictoc`, `tictoc-nwr` and `tictoc-nwr-single` by name and refuses
/// bad input with a clear error (`txlab_testkit::builder`).
#[test]
fn builder_builds_named_variants_and_refuses_bad_input() {
    txlab_testkit::builder::builds_every_named_variant::<txlab_tictoc::TicToc>();
    txlab_testkit::builder::refuses_bad_input::<txlab_tictoc::TicToc>();
}
