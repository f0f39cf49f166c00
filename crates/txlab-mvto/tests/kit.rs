//! MVTO in the shared correctness kit: Hermitage schedules, random schedules, threaded stress,
//! and a mutant the kit must catch.
//!
//! Histories are held to serializability (`STRICT = false`): the kit builds engines with
//! `AckMode::AtCommit`, under which MVTO's timestamp order need not follow real time (a younger
//! worker's clock may lag); strict serializability needs `AckMode::EpochStable` (see
//! `docs/protocols/mvto.md`).

mod common;

use common::MvtoHooks;
use txlab_mvto::Mutation;
use txlab_testkit::family::{Kit, NoNwr};

type MvtoKit = Kit<MvtoHooks>;

txlab_testkit::protocol_kit!(MvtoKit);

/// The commit rule's read term (`txlab_testkit::tid_rule`).
#[test]
fn written_versions_follow_reads() {
    txlab_testkit::tid_rule::written_versions_follow_reads::<MvtoKit>(
        txlab_testkit::tid_rule::Order::Above,
    );
}

txlab_testkit::family_mutant!(
    MvtoHooks,
    NoNwr,
    MvtoSkipWriteTooLate,
    kit_catches_a_skipped_write_too_late_check,
    Mutation::SkipWriteTooLate
);

/// `Mvto::builder()` builds `mvto`, `mvto-nwr` and `mvto-nwr-single` by name and refuses
/// bad input with a clear error (`txlab_testkit::builder`).
#[test]
fn builder_builds_named_variants_and_refuses_bad_input() {
    txlab_testkit::builder::builds_every_named_variant::<txlab_mvto::Mvto>();
    txlab_testkit::builder::refuses_bad_input::<txlab_mvto::Mvto>();
}
