//! Silo in the correctness kit: Hermitage schedules with Silo's expected aborts, random
//! schedules, threaded stress, and the mutants the kit must catch.

use std::sync::Arc;
use txlab_check::MemoryRecorder;
use txlab_core::{Error, Schema};
use txlab_silo::{Mutation, Silo, SiloConfig};
use txlab_testkit::{Expect, Hermitage, Protocol};

mod hermitage;

struct SiloKit;

impl Protocol for SiloKit {
    type Engine = Silo<MemoryRecorder>;
    const NAME: &'static str = "silo";
    // Silo's serialization point (after locking, at the epoch read) lies between begin and the
    // return of commit, so its histories are strictly serializable.
    const STRICT: bool = true;

    fn build(schema: &Schema, recorder: Arc<MemoryRecorder>) -> Result<Self::Engine, Error> {
        Silo::builder()
            .config(SiloConfig::manual())
            .recorder(recorder)
            .build(schema)
    }

    fn expect(test: Hermitage) -> Expect {
        hermitage::silo(test)
    }
}

txlab_testkit::protocol_kit!(SiloKit);

/// The commit rule's read term (`txlab_testkit::tid_rule`).
#[test]
fn written_versions_follow_reads() {
    txlab_testkit::tid_rule::written_versions_follow_reads::<SiloKit>(
        txlab_testkit::tid_rule::Order::Above,
    );
}

macro_rules! mutant {
    ($name:ident, $test:ident, $mutation:expr) => {
        struct $name;
        impl Protocol for $name {
            type Engine = Silo<MemoryRecorder>;
            const NAME: &'static str = stringify!($name);
            const STRICT: bool = true;
            fn build(
                schema: &Schema,
                recorder: Arc<MemoryRecorder>,
            ) -> Result<Self::Engine, Error> {
                Silo::builder()
                    .config(SiloConfig::manual().with_mutation($mutation))
                    .recorder(recorder)
                    .build(schema)
            }
        }
        #[test]
        fn $test() {
            txlab_testkit::mutation::assert_caught::<$name>();
        }
    };
}

mutant!(
    SiloSkipReadValidation,
    kit_catches_skipped_read_validation,
    Mutation::SkipReadValidation
);
mutant!(
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
    txlab_testkit::phantom::insert_into_scanned_partition::<SiloSkipPhantomValidation>();
}

/// `Silo::builder()` builds `silo`, `silo-nwr` and `silo-nwr-single` by name and refuses
/// bad input with a clear error (`txlab_testkit::builder`).
#[test]
fn builder_builds_named_variants_and_refuses_bad_input() {
    txlab_testkit::builder::builds_every_named_variant::<txlab_silo::Silo>();
    txlab_testkit::builder::refuses_bad_input::<txlab_silo::Silo>();
}
