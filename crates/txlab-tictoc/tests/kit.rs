//! TicToc in the correctness kit: Hermitage schedules with TicToc's outcomes, random schedules,
//! threaded stress, and mutants the kit must catch.

use std::sync::Arc;
use txlab_check::MemoryRecorder;
use txlab_core::{Error, Schema};
use txlab_testkit::{Expect, Hermitage, Protocol};
use txlab_tictoc::{Mutation, TicToc, TicTocConfig};

struct TicTocKit;

impl Protocol for TicTocKit {
    type Engine = TicToc<MemoryRecorder>;
    const NAME: &'static str = "tictoc";
    // TicToc serializes in commit-timestamp order, which may invert real time (a transaction
    // that finished earlier can be ordered later); its histories are serializable, not strictly.
    const STRICT: bool = false;

    fn build(schema: &Schema, recorder: Arc<MemoryRecorder>) -> Result<Self::Engine, Error> {
        TicToc::with_recorder(schema, TicTocConfig::manual(), recorder)
    }

    fn expect(test: Hermitage) -> Expect {
        probe(test)
    }
}

fn probe(test: Hermitage) -> Expect {
    // Same outcomes as Silo on these schedules except G2: in each, the transaction that aborts
    // read a version that was overwritten before it could extend the read's rts past a writer, or
    // scanned a range in which another transaction announced the first write of a new key at
    // commit (`txlab_tictoc::stripe_clock`). In G2 (T0 scan, T1 scan, T0 insert, T1 insert, T0
    // commit, T1 commit) only T0's own first write touched its stripe when it commits, so T0
    // commits and T1, whose scan T0's announce invalidated, aborts; Silo's physical stripe check
    // aborts both, because linking each insert's absent record already counts as a change.
    match test {
        Hermitage::G0 | Hermitage::G1a => Expect::NoConflicts,
        Hermitage::G1b
        | Hermitage::G1c
        | Hermitage::PmpWrite
        | Hermitage::P4
        | Hermitage::G2Item
        | Hermitage::G2 => Expect::Aborts(&[1]),
        Hermitage::Otv => Expect::Aborts(&[2]),
        Hermitage::Pmp | Hermitage::GSingle => Expect::Aborts(&[0]),
        _ => Expect::Serializable,
    }
}

txlab_testkit::protocol_kit!(TicTocKit);

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
                TicToc::with_recorder(
                    schema,
                    TicTocConfig::manual().with_mutation($mutation),
                    recorder,
                )
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
