//! TicToc in the correctness kit: Hermitage schedules with TicToc's outcomes, random schedules,
//! threaded stress, and mutants the kit must catch.

use std::sync::Arc;
use txlab_check::MemoryRecorder;
use txlab_core::{Error, Schema};
use txlab_testkit::{Expect, Hermitage, Protocol};

mod hermitage;
use txlab_tictoc::{Mutation, TicToc, TicTocConfig};

struct TicTocKit;

impl Protocol for TicTocKit {
    type Engine = TicToc<MemoryRecorder>;
    const NAME: &'static str = "tictoc";
    // TicToc serializes in commit-timestamp order, which may invert real time (a transaction
    // that finished earlier can be ordered later); its histories are serializable, not strictly.
    const STRICT: bool = false;

    fn build(schema: &Schema, recorder: Arc<MemoryRecorder>) -> Result<Self::Engine, Error> {
        TicToc::builder()
            .config(TicTocConfig::manual())
            .recorder(recorder)
            .build(schema)
    }

    fn expect(test: Hermitage) -> Expect {
        hermitage::tictoc(test)
    }
}

txlab_testkit::protocol_kit!(TicTocKit);

/// The commit rule's read term (`txlab_testkit::tid_rule`).
#[test]
fn written_versions_follow_reads() {
    txlab_testkit::tid_rule::written_versions_follow_reads::<TicTocKit>(
        txlab_testkit::tid_rule::Order::AtLeast,
    );
}

macro_rules! mutant {
    ($name:ident, $test:ident, $mutation:expr) => {
        struct $name;
        impl Protocol for $name {
            type Engine = TicToc<MemoryRecorder>;
            const NAME: &'static str = stringify!($name);
            const STRICT: bool = false;
            fn build(
                schema: &Schema,
                recorder: Arc<MemoryRecorder>,
            ) -> Result<Self::Engine, Error> {
                TicToc::builder()
                    .config(TicTocConfig::manual().with_mutation($mutation))
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
    TicTocSkipReadValidation,
    kit_catches_skipped_read_validation,
    Mutation::SkipReadValidation
);
mutant!(
    TicTocSkipRtsExtension,
    kit_catches_skipped_rts_extension,
    Mutation::SkipRtsExtension
);
mutant!(
    TicTocSkipPhantomValidation,
    kit_catches_skipped_phantom_validation,
    Mutation::SkipPhantomValidation
);

/// The partitioned phantom of the kit (`txlab_testkit::phantom::insert_into_scanned_partition`)
/// is stopped only by phantom validation: without it both transactions commit.
#[test]
#[should_panic(expected = "both committed")]
fn partition_phantom_needs_phantom_validation() {
    txlab_testkit::phantom::insert_into_scanned_partition::<TicTocSkipPhantomValidation>();
}

/// `TicToc::builder()` builds `tictoc`, `tictoc-nwr` and `tictoc-nwr-single` by name and refuses
/// bad input with a clear error (`txlab_testkit::builder`).
#[test]
fn builder_builds_named_variants_and_refuses_bad_input() {
    txlab_testkit::builder::builds_every_named_variant::<txlab_tictoc::TicToc>();
    txlab_testkit::builder::refuses_bad_input::<txlab_tictoc::TicToc>();
}
