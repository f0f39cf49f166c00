//! MVTO in the shared correctness kit: Hermitage schedules, random schedules, threaded stress,
//! and a mutant the kit must catch.
//!
//! Histories are held to serializability (`STRICT = false`): the kit builds engines with
//! `AckMode::AtCommit`, under which MVTO's timestamp order need not follow real time (a younger
//! worker's clock may lag); strict serializability needs `AckMode::EpochStable` (see
//! `docs/protocols/mvto.md`).

use std::sync::Arc;
use txlab_check::MemoryRecorder;
use txlab_core::{Error, Schema};
use txlab_mvto::{Mutation, Mvto, MvtoConfig};
use txlab_testkit::{Expect, Hermitage, Protocol};

mod hermitage;

struct MvtoKit;

impl Protocol for MvtoKit {
    type Engine = Mvto<MemoryRecorder>;
    const NAME: &'static str = "mvto";
    const STRICT: bool = false;

    fn build(schema: &Schema, recorder: Arc<MemoryRecorder>) -> Result<Self::Engine, Error> {
        Mvto::builder()
            .config(MvtoConfig::manual())
            .recorder(recorder)
            .build(schema)
    }

    /// Plain MVTO's outcomes (`hermitage/mod.rs`).
    fn expect(test: Hermitage) -> Expect {
        hermitage::mvto(test)
    }
}

txlab_testkit::protocol_kit!(MvtoKit);

/// The commit rule's read term (`txlab_testkit::tid_rule`).
#[test]
fn written_versions_follow_reads() {
    txlab_testkit::tid_rule::written_versions_follow_reads::<MvtoKit>(
        txlab_testkit::tid_rule::Order::Above,
    );
}

struct MvtoSkipWriteTooLate;

impl Protocol for MvtoSkipWriteTooLate {
    type Engine = Mvto<MemoryRecorder>;
    const NAME: &'static str = "mvto-skip-write-too-late";
    const STRICT: bool = false;

    fn build(schema: &Schema, recorder: Arc<MemoryRecorder>) -> Result<Self::Engine, Error> {
        let cfg = MvtoConfig::manual().with_mutation(Mutation::SkipWriteTooLate);
        Mvto::builder().config(cfg).recorder(recorder).build(schema)
    }
}

#[test]
fn kit_catches_a_skipped_write_too_late_check() {
    txlab_testkit::mutation::assert_caught::<MvtoSkipWriteTooLate>();
}

/// `Mvto::builder()` builds `mvto`, `mvto-nwr` and `mvto-nwr-single` by name and refuses
/// bad input with a clear error (`txlab_testkit::builder`).
#[test]
fn builder_builds_named_variants_and_refuses_bad_input() {
    txlab_testkit::builder::builds_every_named_variant::<txlab_mvto::Mvto>();
    txlab_testkit::builder::refuses_bad_input::<txlab_mvto::Mvto>();
}
