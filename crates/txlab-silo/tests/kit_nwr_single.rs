//! Silo+NWR with single-write omitters (`SiloNwrSingle`, engine `silo-nwr-single`) in the
//! correctness kit: Hermitage schedules, random schedules (reads, blind writes,
//! read-modify-writes, inserts, deletes and scans), threaded stress across epochs, the NWR
//! mutants, and the schedules that show which reads this rule marks.
//!
//! As in `kit_nwr.rs`: manual epochs and `AckMode::EpochStable`; the kit checks histories for
//! serializability, and strictness with acknowledgement times is checked by the last test here
//! (as `tests/nwr.rs` does for `silo-nwr`). The check-order mutant needs a preemption inside a
//! commit and is caught in `tests/shuttle.rs`.

use std::sync::Arc;
use std::time::Duration;
use txlab_check::MemoryRecorder;
use txlab_core::protocol::epoch::EpochConfig;
use txlab_core::{AckMode, Error, Schema};
use txlab_nwr::NwrMutation;
use txlab_silo::{Mutation, SiloConfig, SiloNwrSingle};
use txlab_silo::{NwrSingleWrite, Silo};
use txlab_testkit::{Expect, Hermitage, Protocol};

mod hermitage;

fn config() -> SiloConfig {
    SiloConfig::manual().with_ack(AckMode::EpochStable)
}

struct SiloNwrSingleKit;

impl Protocol for SiloNwrSingleKit {
    type Engine = SiloNwrSingle<MemoryRecorder>;
    const NAME: &'static str = "silo-nwr-single";
    const STRICT: bool = false;

    fn build(schema: &Schema, recorder: Arc<MemoryRecorder>) -> Result<Self::Engine, Error> {
        Silo::builder()
            .nwr(NwrSingleWrite)
            .config(config())
            .recorder(recorder)
            .build(schema)
    }

    /// Plain Silo's outcomes (`hermitage/mod.rs`): the Hermitage schedules that NWR changes for
    /// `silo-nwr` (G0, OTV) omit transactions that write two items, which this rule never does.
    fn expect(test: Hermitage) -> Expect {
        hermitage::silo(test)
    }
}

txlab_testkit::protocol_kit!(SiloNwrSingleKit);

/// Which reads leave a mark under this rule, and the scan-miss mark (`txlab_testkit::nwr`).
#[test]
fn nwr_single_write_marks() {
    txlab_testkit::nwr::single_write_marks::<SiloNwrSingleKit>();
}

/// A background epoch every millisecond, so stress runs cross many epoch boundaries.
struct SiloNwrSingleTimed;

impl Protocol for SiloNwrSingleTimed {
    type Engine = SiloNwrSingle<MemoryRecorder>;
    const NAME: &'static str = "silo-nwr-single-1ms-epochs";
    const STRICT: bool = false;

    fn build(schema: &Schema, recorder: Arc<MemoryRecorder>) -> Result<Self::Engine, Error> {
        let cfg = config().with_epoch(EpochConfig::every(Duration::from_millis(1))?);
        Silo::builder()
            .nwr(NwrSingleWrite)
            .config(cfg)
            .recorder(recorder)
            .build(schema)
    }
}

// YCSB, read-mostly YCSB-B and hot blind writes with epochs advancing underneath
// (`txlab_testkit::nwr_epoch_stress`).
txlab_testkit::nwr_epoch_stress!(SiloNwrSingleTimed);

/// SmallBank (read-modify-writes of balances, audit ledger), epochs advancing underneath: the
/// invariants and the history checked.
#[test]
fn stress_smallbank_across_epochs() {
    txlab_testkit::stress::smallbank::<SiloNwrSingleTimed>(&[2, 4], 1_500);
}

macro_rules! mutant {
    ($name:ident, $test:ident, $mutation:expr) => {
        struct $name;
        impl Protocol for $name {
            type Engine = SiloNwrSingle<MemoryRecorder>;
            const NAME: &'static str = stringify!($name);
            const STRICT: bool = false;
            fn build(
                schema: &Schema,
                recorder: Arc<MemoryRecorder>,
            ) -> Result<Self::Engine, Error> {
                Silo::builder()
                    .nwr(NwrSingleWrite)
                    .config(config().with_mutation($mutation))
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
    NwrSingleSkipEpochCheck,
    kit_catches_skipped_epoch_check,
    Mutation::Nwr(NwrMutation::SkipEpochCheck)
);
// Under this rule the mRS slot only holds the pivot writer's own read of the item (and scan
// misses), so the random schedules must find the lost update through a read-modify-write pivot.
mutant!(
    NwrSingleSkipMergedReadCheck,
    kit_catches_skipped_mrs_check,
    Mutation::Nwr(NwrMutation::SkipMergedReadCheck)
);

/// The engine reports its own name, and counts read-only commits as unmarked readers.
#[test]
fn engine_name_and_unmarked_read_only_commits() {
    txlab_testkit::nwr::single_write_engine_name_and_unmarked_readers::<SiloNwrSingleKit>(
        "silo-nwr-single",
    );
}

/// Strict serializability across epoch boundaries, epochs advanced by hand
/// (`txlab_testkit::nwr::single_write_strict_with_acknowledgements`).
#[test]
fn strict_serializable_with_group_commit_acknowledgements() {
    txlab_testkit::nwr::single_write_strict_with_acknowledgements::<SiloNwrSingleKit>(|db| {
        db.epochs().advance()
    });
}

/// The pivot writer's mark (`PIVOT_READ` in the TID word) lasts one epoch
/// (`txlab_testkit::nwr::single_write_mark_lasts_one_epoch`).
#[test]
fn the_pivot_writers_mark_lasts_one_epoch() {
    txlab_testkit::nwr::single_write_mark_lasts_one_epoch::<SiloNwrSingleKit>(|db| {
        db.epochs().advance()
    });
}
