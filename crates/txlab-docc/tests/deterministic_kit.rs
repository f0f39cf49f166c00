//! The deterministic kit (`txlab_testkit::deterministic`) for the three DOCC modes: random logs
//! executed at 1, 2 and 4 workers must match the serial execution in log order (results, final
//! state, strict history under the sequence clock).

use std::sync::Arc;
use txlab_check::MemoryRecorder;
use txlab_core::{Error, Schema};
use txlab_docc::calvin::{Calvin, CalvinConfig};
use txlab_docc::{Chain, Docc, DoccConfig, InPlace};
use txlab_testkit::deterministic::DeterministicProtocol;

macro_rules! docc_kit {
    ($module:ident, $layout:ty, $prefetch:expr, $name:expr) => {
        mod $module {
            use super::*;

            pub struct Kit;

            impl DeterministicProtocol for Kit {
                type Engine = Docc<$layout, MemoryRecorder>;
                const NAME: &'static str = $name;

                fn build(
                    schema: &Schema,
                    recorder: Arc<MemoryRecorder>,
                ) -> Result<Self::Engine, Error> {
                    let config = DoccConfig {
                        prefetch: $prefetch,
                        sequence_clock: true,
                        ..DoccConfig::default()
                    };
                    Docc::builder()
                        .config(config)
                        .recorder(recorder)
                        .build(schema)
                }
            }

            txlab_testkit::deterministic_kit!(Kit);
        }
    };
}

docc_kit!(basic, InPlace, false, "docc-basic");
docc_kit!(snapshot, Chain, false, "docc-snapshot");
docc_kit!(full, Chain, true, "docc");

macro_rules! calvin_kit {
    ($module:ident, $managers:expr, $name:expr) => {
        mod $module {
            use super::*;

            pub struct Kit;

            impl DeterministicProtocol for Kit {
                type Engine = Calvin<MemoryRecorder>;
                const NAME: &'static str = $name;

                fn build(
                    schema: &Schema,
                    recorder: Arc<MemoryRecorder>,
                ) -> Result<Self::Engine, Error> {
                    let config = CalvinConfig {
                        workers: 4,
                        lock_managers: $managers,
                        sequence_clock: true,
                        ..CalvinConfig::default()
                    };
                    Calvin::builder()
                        .config(config)
                        .recorder(recorder)
                        .build(schema)
                }
            }

            txlab_testkit::deterministic_kit!(Kit);
        }
    };
}

calvin_kit!(calvin, 1, "calvin");
calvin_kit!(calvin_two_lock_managers, 2, "calvin (2 lock managers)");

/// A DOCC engine with one step broken (`txlab_docc::Mutation`), which the kit must catch.
macro_rules! mutant {
    ($test:ident, $layout:ty, $prefetch:expr, $mutation:ident) => {
        #[test]
        fn $test() {
            struct Kit;

            impl DeterministicProtocol for Kit {
                type Engine = Docc<$layout, MemoryRecorder>;
                const NAME: &'static str = concat!("mutant ", stringify!($mutation));

                fn build(
                    schema: &Schema,
                    recorder: Arc<MemoryRecorder>,
                ) -> Result<Self::Engine, Error> {
                    let config = DoccConfig {
                        prefetch: $prefetch,
                        sequence_clock: true,
                        mutation: Some(txlab_docc::Mutation::$mutation),
                        ..DoccConfig::default()
                    };
                    Docc::builder()
                        .config(config)
                        .recorder(recorder)
                        .build(schema)
                }
            }

            txlab_testkit::deterministic::assert_caught::<Kit>();
        }
    };
}

mutant!(
    kit_catches_basic_skipping_the_wait,
    InPlace,
    false,
    SkipWait
);
mutant!(
    kit_catches_snapshot_skipping_the_wait,
    Chain,
    true,
    SkipWait
);
mutant!(
    kit_catches_basic_skipping_validation,
    InPlace,
    false,
    SkipValidation
);
mutant!(
    kit_catches_snapshot_skipping_validation,
    Chain,
    true,
    SkipValidation
);
mutant!(
    kit_catches_basic_settling_one_rank_early,
    InPlace,
    false,
    SettleEarly
);
mutant!(
    kit_catches_snapshot_settling_one_rank_early,
    Chain,
    true,
    SettleEarly
);
mutant!(
    kit_catches_snapshot_reads_ignoring_their_bound,
    Chain,
    true,
    SnapshotIgnoresBound
);
mutant!(
    kit_catches_installed_writes_of_a_read_only_claim,
    Chain,
    false,
    InstallReadOnlyWrites
);
mutant!(
    kit_catches_garbage_collection_ignoring_running_transactions,
    Chain,
    true,
    GcIgnoresRunning
);
mutant!(
    kit_catches_a_prefetching_retry_reusing_references_by_position,
    Chain,
    true,
    PrefetchByPosition
);

/// A Calvin engine with a broken lock manager, which the kit must catch.
macro_rules! calvin_mutant {
    ($test:ident, $mutation:ident) => {
        #[test]
        fn $test() {
            struct Kit;

            impl DeterministicProtocol for Kit {
                type Engine = Calvin<MemoryRecorder>;
                const NAME: &'static str = concat!("calvin mutant ", stringify!($mutation));

                fn build(
                    schema: &Schema,
                    recorder: Arc<MemoryRecorder>,
                ) -> Result<Self::Engine, Error> {
                    let config = CalvinConfig {
                        workers: 4,
                        sequence_clock: true,
                        mutation: Some(txlab_docc::Mutation::$mutation),
                        ..CalvinConfig::default()
                    };
                    Calvin::builder()
                        .config(config)
                        .recorder(recorder)
                        .build(schema)
                }
            }

            txlab_testkit::deterministic::assert_caught::<Kit>();
        }
    };
}

calvin_mutant!(
    kit_catches_calvin_granting_out_of_order,
    CalvinGrantOutOfOrder
);
calvin_mutant!(kit_catches_calvin_skipping_a_lock, CalvinSkipLock);
